//! Configuration: the network's shape and the RL hyper-parameters, with `cpu` and `gpu`
//! presets. Validated once ([`TrainConfig::validate`]) before anything is built.

mod network;
#[cfg(test)]
mod tests;

use envdist_core::InvalidValue;
use serde::{Deserialize, Serialize};

use crate::error::TrainerError;
pub use network::{CONV_STRIDE, ImageEncoder, ModelConfig, NUM_CHANNELS, WeightInit};

/// How advantages are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum AdvantageKind {
    /// Generalised advantage estimation from the value head (PPO's usual choice).
    Gae,
    /// GRPO-style: each finished episode's return, standardised within the group of episodes
    /// of the same environment finished in the same rollout, given to all of its steps. Steps
    /// of episodes still running at the end of a rollout get no advantage (masked out).
    Grpo,
}

/// Learning-rate schedule over the run's updates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum LrSchedule {
    /// The same rate throughout.
    Constant,
    /// Linear decay from `lr` to `lr * final_fraction` at the last update.
    Linear {
        /// Fraction of the initial rate left at the end.
        final_fraction: f32,
    },
}

/// A named network and RL preset ([`TrainConfig::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrainPreset {
    /// The `cpu` network, sized for two CPU cores.
    Cpu,
    /// The larger `gpu` network.
    Gpu,
    /// A very small network for unit tests.
    Tiny,
}

impl TrainPreset {
    /// The preset's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
            Self::Tiny => "tiny",
        }
    }
}

impl std::fmt::Display for TrainPreset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for TrainPreset {
    type Err = TrainerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            "tiny" => Ok(Self::Tiny),
            other => Err(TrainerError::Config(InvalidValue::new(
                "preset",
                "cpu, gpu or tiny",
                format!("{other:?}"),
            ))),
        }
    }
}

/// Most samples one update may hold ([`TrainConfig::batch_size`]).
pub const MAX_BATCH: usize = 1 << 24;
/// Most passes over one rollout ([`TrainConfig::epochs`]).
pub const MAX_EPOCHS: usize = 1_000;

/// RL hyper-parameters (PPO-clip by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    /// Network shape.
    pub model: ModelConfig,
    /// Environments stepped together; one batched forward per step.
    pub num_envs: usize,
    /// Steps per environment per rollout (an update sees `num_envs * rollout_len` samples).
    pub rollout_len: usize,
    /// Passes over each rollout.
    pub epochs: usize,
    /// Samples per gradient step.
    pub minibatch: usize,
    /// Adam learning rate.
    pub lr: f32,
    /// Learning-rate schedule.
    pub lr_schedule: LrSchedule,
    /// Discount.
    pub gamma: f32,
    /// GAE lambda.
    pub gae_lambda: f32,
    /// PPO clip range.
    pub clip: f32,
    /// Value-loss coefficient.
    pub value_coef: f32,
    /// Entropy-bonus coefficient.
    pub entropy_coef: f32,
    /// Global gradient-norm clip.
    pub max_grad_norm: f32,
    /// Advantage estimator.
    pub advantage: AdvantageKind,
    /// Seed of parameter initialisation, action sampling and minibatch shuffling.
    pub seed: u64,
    /// The run's budget in environment steps: the horizon of the learning-rate schedule and
    /// where [`crate::run::Trainer::run`] stops.
    pub total_env_steps: u64,
    /// Updates at the start of the run that fit the value head alone, on Monte-Carlo returns
    /// of the current policy's rollouts, before the policy moves: a critic warm-up for runs
    /// that start from a policy whose value head never learned (a behaviour clone). Their
    /// steps count in the budget. Default 0.
    #[serde(default)]
    pub value_warmup_updates: u64,
    /// Bootstrap the value of an episode cut by its time limit (`truncated`), as for an
    /// artificial cut-off. Default false: an envdist episode that reaches its step limit has
    /// failed its task (the limit is part of the task, and evaluation counts it as a failure),
    /// so its end is terminal, worth nothing more; bootstrapping it lets the critic keep
    /// valuing states from which the policy only ever times out.
    #[serde(default)]
    pub bootstrap_time_limits: bool,
    /// GAE: standardise the advantages within each minibatch (what Stable-Baselines3's PPO
    /// does) instead of once over the rollout. Default false, the records' choice.
    #[serde(default)]
    pub minibatch_advantage_norm: bool,
    /// Row shards of each minibatch: each shard's loss and gradients are computed on its own
    /// (side by side, one per thread, on the CPU backends), then the gradients are summed in
    /// shard order. The result depends on the shard count, never on the thread count. Default
    /// 1 (one graph per minibatch; the `cpu` preset's is 2), and then not written, so configs
    /// from before the field keep their text.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub learn_shards: usize,
    /// Weight of a KL penalty to the policy the run started from, added to the PPO loss:
    /// `kl_coef` x the mean over a minibatch's states of KL(policy ‖ start), the whole action
    /// distribution (legal actions; the action spaces are small, so no sampled estimator is
    /// needed). The reference-anchored loss of RLHF-style trainers (verl's `use_kl_loss`), for
    /// fine-tuning that should keep what it does not train. The start's log-probabilities are
    /// computed once per rollout. Only for runs started from a policy (`Trainer::from_policy`).
    /// Default 0 (no penalty, no extra work: the records' arithmetic), and then not written.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kl_coef: f32,
}

fn is_zero(x: &f32) -> bool {
    *x == 0.0
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

/// The most [`TrainConfig::learn_shards`]: far above any core count these runs see.
pub const MAX_LEARN_SHARDS: usize = 64;

impl TrainConfig {
    /// The CPU preset: the `cpu` network, 32 envs x 32 steps, 3 epochs of 256-sample batches.
    pub fn cpu() -> Self {
        Self {
            model: ModelConfig::cpu(),
            num_envs: 32,
            rollout_len: 32,
            epochs: 3,
            minibatch: 256,
            lr: 5e-4,
            lr_schedule: LrSchedule::Linear {
                final_fraction: 0.1,
            },
            gamma: 0.97,
            gae_lambda: 0.95,
            clip: 0.2,
            value_coef: 0.5,
            entropy_coef: 0.01,
            max_grad_norm: 0.5,
            advantage: AdvantageKind::Gae,
            seed: 0,
            total_env_steps: 200_000,
            value_warmup_updates: 0,
            bootstrap_time_limits: false,
            minibatch_advantage_norm: false,
            // Each minibatch learned as two shards side by side: about 1.5x faster on two
            // cores (docs/trainer.md, "Minibatch shards"), the same numbers at any thread
            // count (the shard count fixes the arithmetic, not the threads).
            learn_shards: 2,
            kl_coef: 0.0,
        }
    }

    /// The GPU preset: the `gpu` network, 256 envs x 64 steps, 1024-sample batches.
    pub fn gpu() -> Self {
        Self {
            model: ModelConfig::gpu(),
            num_envs: 256,
            rollout_len: 64,
            epochs: 3,
            minibatch: 1024,
            lr: 3e-4,
            // A device runs the shards one after another: no gain there.
            learn_shards: 1,
            ..Self::cpu()
        }
    }

    /// A preset by name: `cpu`, `gpu` or `tiny` (unit tests).
    pub fn preset(name: &str) -> Result<Self, TrainerError> {
        Ok(Self::of(name.parse()?))
    }

    /// The values of a preset.
    pub fn of(preset: TrainPreset) -> Self {
        match preset {
            TrainPreset::Cpu => Self::cpu(),
            TrainPreset::Gpu => Self::gpu(),
            TrainPreset::Tiny => Self {
                model: ModelConfig::tiny(),
                num_envs: 8,
                rollout_len: 16,
                epochs: 2,
                minibatch: 64,
                lr: 1e-3,
                ..Self::cpu()
            },
        }
    }

    /// Override one field by its dotted path (`lr`, `model.patch`, `lr_schedule.final_fraction`),
    /// the value written as JSON (`3e-4`, `4`, `[16,32,32]`, `"conv"`; a bare word is read as a
    /// string). The command line's `--set path=value`. The result is not validated here (so
    /// several overrides can be applied in any order); [`Self::validate`] checks it after.
    pub fn set(&mut self, path: &str, value: &str) -> Result<(), TrainerError> {
        let invalid = |expected: &str, found: &str| {
            TrainerError::Config(InvalidValue::new(path, expected, found))
        };
        let value: serde_json::Value = serde_json::from_str(value)
            .unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        let mut root =
            serde_json::to_value(&*self).map_err(|e| invalid("a config", &e.to_string()))?;
        // A field left out of the text while at its default (`model.init`, `learn_shards`,
        // `kl_coef`) can still be set.
        if let Some(fields) = root.as_object_mut() {
            fields
                .entry("learn_shards")
                .or_insert_with(|| serde_json::json!(1));
            fields
                .entry("kl_coef")
                .or_insert_with(|| serde_json::json!(0.0));
        }
        if let Some(model) = root.get_mut("model").and_then(|m| m.as_object_mut()) {
            model
                .entry("init")
                .or_insert_with(|| serde_json::json!(WeightInit::default()));
        }
        let mut slot = &mut root;
        for key in path.split('.') {
            let fields = match slot {
                serde_json::Value::Object(map) => map,
                _ => return Err(invalid("a path to a field of the trainer config", path)),
            };
            let known = fields.keys().cloned().collect::<Vec<_>>().join(", ");
            slot = fields.get_mut(key).ok_or_else(|| {
                invalid(
                    &format!("a field of the trainer config (at `{key}`: one of {known})"),
                    path,
                )
            })?;
        }
        let shown = value.to_string();
        // The new value must have the field's type: a number for a number, a list of three
        // for `model.conv_channels`, one of the enum's names for an enum. The error says so in
        // the user's words, with the field's current value as the example, not serde's.
        let expected = Self::kind_of(slot);
        *slot = value;
        *self = serde_json::from_value(root).map_err(|_| invalid(&expected, &shown))?;
        Ok(())
    }

    /// What a value of the same kind as `current` is, for [`Self::set`]'s errors.
    fn kind_of(current: &serde_json::Value) -> String {
        use serde_json::Value;
        match current {
            Value::Number(n) if n.is_u64() => {
                format!("a whole number of at least 0, like the current {n}")
            }
            // The config's reals are f32: shown as f32 (`0.0005`, not f64's widening of it,
            // `0.0005000000237487257`).
            Value::Number(n) => match n.as_f64() {
                Some(f) => format!("a number, like the current {}", f as f32),
                None => format!("a number, like the current {n}"),
            },
            Value::Bool(_) => "true or false".to_string(),
            Value::String(name) => format!("one of the field's names, like the current {name}"),
            Value::Array(items) => format!(
                "a list of {} values, like the current {current}",
                items.len()
            ),
            _ => format!("an object like the current {current}"),
        }
    }

    /// Samples per update.
    pub fn batch_size(&self) -> usize {
        self.num_envs * self.rollout_len
    }

    /// Check every field once; everything downstream trusts a validated config.
    pub fn validate(&self) -> Result<(), TrainerError> {
        self.model.validate()?;
        let bad = |field: &str, expected: &str, found: String| {
            Err(TrainerError::Config(InvalidValue::new(
                field, expected, found,
            )))
        };
        for (name, v) in [
            ("num_envs", self.num_envs),
            ("rollout_len", self.rollout_len),
            ("epochs", self.epochs),
            ("minibatch", self.minibatch),
            ("learn_shards", self.learn_shards),
        ] {
            if v == 0 {
                return bad(name, "a positive count", "0".into());
            }
        }
        // Upper bounds, so that no value allocates or loops without end: the presets sit far
        // below them (at most 16,384 samples per update, 3 epochs).
        if self
            .num_envs
            .checked_mul(self.rollout_len)
            .is_none_or(|b| b > MAX_BATCH)
        {
            return bad(
                "num_envs",
                &format!("num_envs x rollout_len at most {MAX_BATCH} samples per update"),
                format!("{} x {}", self.num_envs, self.rollout_len),
            );
        }
        if self.minibatch > MAX_BATCH {
            return bad(
                "minibatch",
                &format!("at most {MAX_BATCH} samples per gradient step"),
                self.minibatch.to_string(),
            );
        }
        if self.learn_shards > MAX_LEARN_SHARDS.min(self.minibatch) {
            return bad(
                "learn_shards",
                &format!(
                    "at most {} shards (each takes at least one row of the minibatch of {}, \
                     and there are at most {MAX_LEARN_SHARDS})",
                    MAX_LEARN_SHARDS.min(self.minibatch),
                    self.minibatch
                ),
                self.learn_shards.to_string(),
            );
        }
        if self.epochs > MAX_EPOCHS {
            return bad(
                "epochs",
                &format!("at most {MAX_EPOCHS} passes over a rollout"),
                self.epochs.to_string(),
            );
        }
        let unit = |name: &str, v: f32| -> Result<(), TrainerError> {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                bad(name, "a value in [0, 1]", v.to_string())
            }
        };
        unit("gamma", self.gamma)?;
        unit("gae_lambda", self.gae_lambda)?;
        if let LrSchedule::Linear { final_fraction } = self.lr_schedule {
            unit("lr_schedule.final_fraction", final_fraction)?;
        }
        for (name, v) in [
            ("lr", self.lr),
            ("clip", self.clip),
            ("max_grad_norm", self.max_grad_norm),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return bad(name, "a finite positive value", v.to_string());
            }
        }
        for (name, v) in [
            ("value_coef", self.value_coef),
            ("entropy_coef", self.entropy_coef),
            ("kl_coef", self.kl_coef),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(name, "a finite non-negative value", v.to_string());
            }
        }
        Ok(())
    }
}
