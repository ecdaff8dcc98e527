//! Configuration: the network's shape and the RL hyper-parameters, with `cpu` and `gpu`
//! presets. Validated once ([`TrainConfig::validate`]) before anything is built.

use envdist_core::InvalidValue;
use serde::{Deserialize, Serialize};

use crate::TrainerError;

/// How the network reads the frame (see [`crate::model`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImageEncoder {
    /// `patch x patch` patches, one shared patch embedding (`patch_dim` wide), then one dense
    /// layer over every patch position: weights are shared across positions only within a
    /// patch. What every record up to v3 used, hence the default of a config that names none.
    #[default]
    PatchMlp,
    /// Three stride-2 convolutions (kernels `conv_kernels`, default 5, 3, 3; zero padding
    /// `conv_padding`, default none; `conv_channels` wide; ReLU), then a dense layer over the
    /// last feature map: features shared across positions, as in the small CNNs of
    /// Stable-Baselines3 or CleanRL.
    Conv,
}

impl ImageEncoder {
    /// The encoder's name in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::PatchMlp => "patch-mlp",
            Self::Conv => "conv",
        }
    }
}

impl std::str::FromStr for ImageEncoder {
    type Err = TrainerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "patch-mlp" => Ok(Self::PatchMlp),
            "conv" => Ok(Self::Conv),
            other => Err(TrainerError::Config(InvalidValue::new(
                "model.encoder",
                "patch-mlp or conv",
                format!("{other:?}"),
            ))),
        }
    }
}

/// How the network's dense and convolution weights are drawn (see [`crate::model`]). Biases
/// start at zero and the text embedding at unit variance either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeightInit {
    /// Kaiming-uniform (ReLU gain), the policy head at 0.01 of it and the value head at 0.5:
    /// what every record up to v3 used, hence the default of a config that names none.
    #[default]
    KaimingUniform,
    /// Orthogonal, as Stable-Baselines3's and CleanRL's PPO draw it: gain sqrt(2) on the
    /// hidden layers, 0.01 on the policy head, 1 on the value head.
    Orthogonal,
}

impl WeightInit {
    /// Whether this is the default (a config that names none), which is not serialised, so
    /// the configs of earlier records stay the same text.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Stride of every convolution of [`ImageEncoder::Conv`].
pub const CONV_STRIDE: usize = 2;

fn default_conv_channels() -> [usize; 3] {
    [16, 32, 32]
}

/// The kernels every config before `conv_kernels` existed used (the first convolution runs on
/// the host as an im2col of the frame, see [`crate::encode`]).
fn default_conv_kernels() -> [usize; 3] {
    [5, 3, 3]
}

/// Shape of the policy network (see [`crate::model`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Side of the square frame the network sees; env frames are box-filtered down to it.
    pub image_size: usize,
    /// The image encoder. Default (when a config names none): `patch-mlp`.
    #[serde(default)]
    pub encoder: ImageEncoder,
    /// `patch-mlp`: side of one square image patch (must divide `image_size`).
    pub patch: usize,
    /// `patch-mlp`: width of one patch embedding.
    pub patch_dim: usize,
    /// `conv`: widths of the three convolutions. Default `[16, 32, 32]`.
    #[serde(default = "default_conv_channels")]
    pub conv_channels: [usize; 3],
    /// `conv`: kernel sides of the three convolutions. Default `[5, 3, 3]`.
    #[serde(default = "default_conv_kernels")]
    pub conv_kernels: [usize; 3],
    /// `conv`: zeros added on every side of each convolution's input (1 with 3x3 kernels keeps
    /// the border cells in as many receptive fields as the inner ones). Default 0.
    #[serde(default)]
    pub conv_padding: usize,
    /// Width of the image feature (after the encoder's last dense layer).
    pub image_dim: usize,
    /// Hash buckets of the bag-of-tokens text encoder.
    pub vocab: usize,
    /// Width of one text channel's embedding.
    pub text_dim: usize,
    /// Width of the fused hidden layer that feeds both heads.
    pub hidden: usize,
    /// How the weights are drawn. Default (when a config names none): `kaiming-uniform`.
    #[serde(default, skip_serializing_if = "WeightInit::is_default")]
    pub init: WeightInit,
}

impl ModelConfig {
    /// Small enough to train at a few thousand env steps per second on two CPU cores:
    /// 32x32 frames in 8x8 patches (the patch-MLP of the anchor table), ~0.4 M parameters.
    pub fn cpu() -> Self {
        Self {
            image_size: 32,
            encoder: ImageEncoder::PatchMlp,
            patch: 8,
            patch_dim: 64,
            conv_channels: default_conv_channels(),
            conv_kernels: default_conv_kernels(),
            conv_padding: 0,
            init: WeightInit::KaimingUniform,
            image_dim: 256,
            vocab: 1024,
            text_dim: 32,
            hidden: 256,
        }
    }

    /// Larger for CUDA: 64x64 frames in 8x8 patches, wider layers (~4.5 M parameters).
    pub fn gpu() -> Self {
        Self {
            image_size: 64,
            encoder: ImageEncoder::PatchMlp,
            patch: 8,
            patch_dim: 128,
            conv_channels: [32, 64, 64],
            conv_kernels: default_conv_kernels(),
            conv_padding: 0,
            init: WeightInit::KaimingUniform,
            image_dim: 512,
            vocab: 4096,
            text_dim: 64,
            hidden: 512,
        }
    }

    /// A very small network for unit tests.
    pub fn tiny() -> Self {
        Self {
            image_size: 16,
            encoder: ImageEncoder::PatchMlp,
            patch: 4,
            patch_dim: 16,
            conv_channels: [8, 16, 16],
            conv_kernels: default_conv_kernels(),
            conv_padding: 0,
            init: WeightInit::KaimingUniform,
            image_dim: 64,
            vocab: 256,
            text_dim: 16,
            hidden: 64,
        }
    }

    /// Number of parameters of the network this shape builds (the length of an unprojected
    /// gradient of every parameter), or `None` when it does not fit in a `usize`. Known
    /// before anything is allocated: a checkpoint's config is checked against the size of its
    /// model file with it.
    pub fn num_params(&self) -> Option<usize> {
        let (actions, channels) = (envdist_core::NUM_ACTIONS, crate::encode::NUM_CHANNELS);
        let linear = |d_in: usize, d_out: usize, bias: bool| {
            d_in.checked_mul(d_out)?
                .checked_add(if bias { d_out } else { 0 })
        };
        let image: Vec<Option<usize>> = match self.encoder {
            ImageEncoder::PatchMlp => {
                let side = self.image_size.checked_div(self.patch)?;
                let patches = side.checked_mul(side)?;
                let patch_values = self.patch.checked_mul(self.patch)?.checked_mul(3)?;
                vec![
                    linear(patch_values, self.patch_dim, true),
                    linear(patches.checked_mul(self.patch_dim)?, self.image_dim, true),
                ]
            }
            ImageEncoder::Conv => {
                let [c1, c2, c3] = self.conv_channels;
                let [k1, k2, k3] = self.conv_kernels.map(|k| k.checked_mul(k));
                let side = self.conv_sides()?[2];
                vec![
                    linear(k1?.checked_mul(3)?, c1, true),
                    linear(k2?.checked_mul(c1)?, c2, true),
                    linear(k3?.checked_mul(c2)?, c3, true),
                    linear(
                        side.checked_mul(side)?.checked_mul(c3)?,
                        self.image_dim,
                        true,
                    ),
                ]
            }
        };
        let fused_in = channels
            .checked_mul(self.text_dim)?
            .checked_add(self.image_dim)?;
        image
            .into_iter()
            .chain([
                linear(self.vocab, self.text_dim, false),
                linear(channels, self.text_dim, false),
                linear(fused_in, self.hidden, true),
                linear(self.hidden, actions, true),
                linear(self.hidden, 1, true),
            ])
            .try_fold(0usize, |acc, n| acc.checked_add(n?))
    }

    /// `conv`: the side of each convolution's output map, or `None` when the frame is too
    /// small for the three layers (each needs a padded map at least as wide as its kernel).
    pub fn conv_sides(&self) -> Option<[usize; 3]> {
        let pad = self.conv_padding.checked_mul(2)?;
        let out = |side: usize, k: usize| {
            side.checked_add(pad)?
                .checked_sub(k)
                .map(|d| d / CONV_STRIDE + 1)
        };
        let [k1, k2, k3] = self.conv_kernels;
        let s1 = out(self.image_size, k1)?;
        let s2 = out(s1, k2)?;
        let s3 = out(s2, k3)?;
        Some([s1, s2, s3])
    }

    /// Rows the first image layer reads per frame: patches (`patch-mlp`) or the first
    /// convolution's output positions (`conv`).
    pub fn num_patches(&self) -> usize {
        match self.encoder {
            ImageEncoder::PatchMlp => (self.image_size / self.patch).pow(2),
            ImageEncoder::Conv => self.conv_sides().map_or(0, |s| s[0] * s[0]),
        }
    }

    /// Values of one such row (RGB): a patch, or the first convolution's receptive field.
    pub fn patch_values(&self) -> usize {
        match self.encoder {
            ImageEncoder::PatchMlp => self.patch * self.patch * 3,
            ImageEncoder::Conv => self.conv_kernels[0].saturating_mul(self.conv_kernels[0]) * 3,
        }
    }

    fn validate(&self) -> Result<(), TrainerError> {
        let bad = |field: &str, expected: &str, found: String| {
            Err(TrainerError::Config(InvalidValue::new(
                format!("model.{field}"),
                expected,
                found,
            )))
        };
        match self.encoder {
            ImageEncoder::PatchMlp => {
                if self.patch == 0
                    || self.image_size == 0
                    || !self.image_size.is_multiple_of(self.patch)
                {
                    return bad(
                        "patch",
                        "a positive divisor of image_size",
                        format!("patch {} for image_size {}", self.patch, self.image_size),
                    );
                }
            }
            ImageEncoder::Conv => {
                if let Some(i) = self.conv_kernels.iter().position(|&k| k == 0) {
                    return bad(
                        &format!("conv_kernels[{i}]"),
                        "a positive kernel side",
                        self.conv_kernels[i].to_string(),
                    );
                }
                if self.conv_padding >= self.conv_kernels.into_iter().min().unwrap_or(1) {
                    return bad(
                        "conv_padding",
                        &format!(
                            "less than the smallest kernel side, {:?} (a wider padding makes \
                             outputs that read only zeros)",
                            self.conv_kernels
                        ),
                        self.conv_padding.to_string(),
                    );
                }
                if self.conv_sides().is_none_or(|s| s[2] == 0) {
                    // The smallest frame the three layers fit, for the message.
                    let smallest = (1..=4096).find(|&size| {
                        let c = Self {
                            image_size: size,
                            ..self.clone()
                        };
                        c.conv_sides().is_some_and(|s| s[2] > 0)
                    });
                    return bad(
                        "image_size",
                        &format!(
                            "at least {} for the conv encoder (three stride-2 convolutions of \
                             kernels {:?}, padding {})",
                            smallest.map_or("?".into(), |s| s.to_string()),
                            self.conv_kernels,
                            self.conv_padding
                        ),
                        self.image_size.to_string(),
                    );
                }
                if let Some(i) = self.conv_channels.iter().position(|&c| c == 0) {
                    return bad(
                        &format!("conv_channels[{i}]"),
                        "a positive width",
                        "0".into(),
                    );
                }
            }
        }
        for (name, v) in [
            ("patch_dim", self.patch_dim),
            ("image_dim", self.image_dim),
            ("vocab", self.vocab),
            ("text_dim", self.text_dim),
            ("hidden", self.hidden),
        ] {
            if v == 0 {
                return bad(name, "a positive width", "0".into());
            }
        }
        if self.vocab > u16::MAX as usize + 1 {
            return bad("vocab", "at most 65536 buckets", self.vocab.to_string());
        }
        if self.num_params().is_none() {
            return bad(
                "image_size",
                "a network whose parameter count fits in memory",
                format!("{self:?}"),
            );
        }
        Ok(())
    }
}

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
    /// where [`crate::Trainer::run`] stops.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate_and_bad_values_are_named() {
        for p in ["cpu", "gpu", "tiny"] {
            TrainConfig::preset(p).unwrap().validate().unwrap();
        }
        let mut c = TrainConfig::cpu();
        c.model.patch = 7;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("model.patch") && e.contains("divisor"), "{e}");
        let mut c = TrainConfig::cpu();
        c.gamma = 1.5;
        assert!(c.validate().unwrap_err().to_string().contains("gamma"));
        assert!(TrainConfig::preset("huge").is_err());
        let json = serde_json::to_string(&TrainConfig::cpu()).unwrap();
        let back: TrainConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, TrainConfig::cpu());
        // The default initialiser is not written, so the configs of earlier records (and the
        // cache keys made of them) stay the same text; another one is written and read back.
        assert!(!json.contains("init"), "{json}");
        let mut c = TrainConfig::cpu();
        c.model.init = WeightInit::Orthogonal;
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains(r#""init":"orthogonal""#), "{json}");
        assert_eq!(serde_json::from_str::<TrainConfig>(&json).unwrap(), c);
        // One shard (every preset's, and every record's) is not written either; a config
        // without the field reads as one shard.
        let gpu = serde_json::to_string(&TrainConfig::gpu()).unwrap();
        assert!(!gpu.contains("learn_shards"), "{gpu}");
        assert_eq!(
            serde_json::from_str::<TrainConfig>(&gpu)
                .unwrap()
                .learn_shards,
            1
        );
        for (shards, ok) in [(0, false), (1, true), (2, true), (256, true), (257, false)] {
            let mut c = TrainConfig::cpu();
            c.minibatch = 256;
            c.learn_shards = shards;
            let got = c.validate();
            assert_eq!(
                got.is_ok(),
                ok && shards <= MAX_LEARN_SHARDS,
                "{shards}: {got:?}"
            );
            if let Err(e) = got {
                assert!(e.to_string().contains("learn_shards"), "{e}");
            }
        }
    }

    #[test]
    fn set_overrides_one_field_by_its_path_and_names_what_it_refuses() {
        let mut c = TrainConfig::cpu();
        c.set("lr", "3e-4").unwrap();
        c.set("model.patch", "4").unwrap();
        c.set("model.encoder", "conv").unwrap();
        c.set("model.conv_channels", "[8,16,16]").unwrap();
        c.set("lr_schedule", r#"{"kind":"constant"}"#).unwrap();
        // `model.init` is left out of the text at its default, and can be set all the same.
        c.set("model.init", "orthogonal").unwrap();
        let mut want = TrainConfig::cpu();
        want.model.init = WeightInit::Orthogonal;
        // So is `learn_shards` at one shard.
        let mut g = TrainConfig::gpu();
        g.set("learn_shards", "4").unwrap();
        assert_eq!(g.learn_shards, 4);
        want.lr = 3e-4;
        want.model.patch = 4;
        want.model.encoder = ImageEncoder::Conv;
        want.model.conv_channels = [8, 16, 16];
        want.lr_schedule = LrSchedule::Constant;
        assert_eq!(c, want);
        let before = c.clone();
        for (path, value, named) in [
            ("lrr", "1", "one of"),
            ("model.patchh", "4", "model.patchh"),
            ("lr.x", "1", "a path"),
            (
                "epochs",
                "-1",
                "a whole number of at least 0, like the current 3",
            ),
            // The f32 as written (3e-4), not as widened to f64 (0.0003000000142492354).
            ("lr", "fast", "a number, like the current 0.0003,"),
            ("model.conv_channels", "[1,2]", "a list of 3 values"),
            (
                "model.encoder",
                "cnn",
                "one of the field's names, like the current conv",
            ),
            (
                "lr_schedule",
                "1",
                "an object like the current {\"kind\":\"constant\"}",
            ),
        ] {
            let e = c.set(path, value).unwrap_err().to_string();
            assert!(e.contains(path) && e.contains(named), "{path}={value}: {e}");
            assert_eq!(c, before, "a refused override leaves the config as it was");
        }
    }
}
