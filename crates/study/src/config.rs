//! The study's configuration: every knob, in sections. A section is what a stage depends on,
//! so a stage's cache key is made of the sections it reads (see [`crate::stages`]) rather than
//! of copied fields. The libraries' configurations are embedded as they are, never mirrored:
//! `rl` is the trainer's [`TrainConfig`], `gradients` its [`GradientConfig`], `selection`
//! selection's [`SelectConfig`], `hdc` the curriculum's [`HdcConfig`]; the study's choices for
//! them are presets ([`crate::presets`]). One override mechanism: a JSON object of any fields,
//! merged field by field over a value ([`crate::overlay`]). [`ExperimentConfig::checked`] validates
//! the whole configuration once, before any stage runs: each embedded configuration checks
//! itself, and this file keeps only the study's own fields and the rules across sections.

use envdist_core::{Checked, InvalidValue, Validate};
use envdist_curriculum::HdcConfig;
use envdist_envs::HintStyle;
use envdist_selection::SelectConfig;
use envdist_trainer::{
    Device, GradientConfig, LrSchedule, ModelConfig, ScaleChoice, TrainConfig, TrainPreset,
};
use serde::{Deserialize, Serialize};

pub use crate::model::{Arm, ClaimId};
pub use crate::presets::Preset;

/// Schema version of `config.json` and of the study's other files. 4: the libraries'
/// configurations embedded (`rl` is a `TrainConfig`, `gradients` a `GradientConfig`,
/// `selection` a `SelectConfig`).
pub const EXPERIMENT_SCHEMA_VERSION: u32 = 4;

/// How the environments render and what their hints say (training; evaluation is at H4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SuiteSection {
    /// Canvas (pixels per side) the policy sees.
    pub canvas: u32,
    /// Hint style of the harness's hint channel in training. The study's default is
    /// [`HintStyle::Subgoal`], a scaffold that does not hand over the action: measured by the
    /// harness probes (`preconditions.harness_transfer`, 60 sources fine-tuned at H0–H2 and
    /// evaluated at H4; pilots of the `cpu` preset without the KL penalty), training with
    /// subgoal hints gained +7.8 [+5.0, +11.0] points at H4 and with action hints −0.1
    /// [−3.1, +2.6]: with the action in the hint, what is learned below H3 is reading it
    /// (docs/experiments/HISTORY.md, v6).
    pub hint_style: HintStyle,
}

impl Default for SuiteSection {
    fn default() -> Self {
        Self {
            canvas: 32,
            hint_style: HintStyle::Subgoal,
        }
    }
}

/// Which environments the study uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PoolConfig {
    /// Pool environments (a seeded subset that keeps conflict pairs together; 200 = all).
    pub size: usize,
    /// Held-out (OOD) environments evaluated (0 = all).
    pub ood_envs: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            size: 200,
            ood_envs: 0,
        }
    }
}

/// Ability profiling of the pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProfilesConfig {
    /// Trajectories per environment (half per policy), as in the paper.
    pub trajectories: u32,
}

impl Default for ProfilesConfig {
    fn default() -> Self {
        Self { trajectories: 40 }
    }
}

/// How the base model is made: behaviour cloning of the solvers on the pool's environments
/// at harness levels and scales drawn uniformly, never RL (a stand-in for a pretrained VLM's
/// priors: real but partial competence).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BaseConfig {
    /// Demonstration samples.
    pub samples: u64,
    /// Probability of a random action during demonstrations (labels stay the solver's).
    pub noise: f32,
    /// Give single-turn and multi-turn environments equal shares of the demonstration
    /// *steps* (each kind uniform over its environments). Without it the draw is uniform over
    /// environments, hence over episodes, and one-step single-turn tasks get a few percent of
    /// the samples: the base then cannot see at H4 on them.
    pub balance_turns: bool,
    /// After cloning, updates that fit the value head alone on the base's own rollouts (the
    /// same task mixture as the demonstrations), so that every arm starts from a critic that
    /// knows the base policy's values (cloning fits the policy alone). 0: none.
    pub critic_warmup_updates: u64,
    /// Adam learning rate of the critic warm-up.
    pub critic_lr: f32,
}

impl Default for BaseConfig {
    fn default() -> Self {
        Self {
            // 60k samples left the base below the best constant answer on the single-turn
            // pool envs at H4 (44.9 vs 46.8 points); 200k puts it above (55.9), still far
            // below 60% on the whole pool (32.1).
            samples: 200_000,
            noise: 0.2,
            balance_turns: true,
            // 30 value-only updates (30k env steps of the cpu network) bring the critic's loss
            // to its floor on the base's rollouts (pilots: docs/experiments/HISTORY.md, v3).
            critic_warmup_updates: 30,
            critic_lr: 1e-3,
        }
    }
}

/// Evaluation: greedy, at H4, fixed instances per environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// Episodes per environment and scale (distinct instances per environment).
    pub episodes: u32,
    /// Scales evaluated (each env's `min`, `mid`, `max`).
    pub scales: Vec<ScaleChoice>,
}

impl Default for EvalConfig {
    fn default() -> Self {
        Self {
            // At 12 the evaluation's own binomial noise was up to 25-40% of the residual
            // variance of the primary comparisons between arms that train on different envs
            // (`scripts/eval_noise.py`), for 2-3% of an arm's time; 36 cuts that part to a third
            // for about 2 minutes of the study (docs/experiments/HISTORY.md).
            episodes: 36,
            scales: vec![ScaleChoice::Min, ScaleChoice::Mid, ScaleChoice::Max],
        }
    }
}

/// The analysis of the runs (computed on every run, never cached).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalysisConfig {
    /// Bootstrap replicates of every interval.
    pub bootstrap: u32,
    /// The primary claims, named before the run: their family-wise error is controlled with
    /// Holm's method; every other comparison is exploratory.
    pub primary: Vec<ClaimId>,
    /// Equivalence margin, points: a claim whose difference is shown to lie within ±margin
    /// (two one-sided tests; Holm over the primary claims) is "equivalent". Named before the
    /// run, as the primary claims are.
    pub equivalence_margin: f64,
    /// The difference, points, each claim's variance components are asked to detect: how
    /// many seeds or environments that would take.
    pub detect_points: f64,
}

impl Default for AnalysisConfig {
    fn default() -> Self {
        Self {
            bootstrap: 2000,
            primary: ClaimId::central(),
            equivalence_margin: 2.0,
            detect_points: 3.0,
        }
    }
}

/// The measured-transfer stages: one fine-tune per designed conflict pair, measured on the
/// source, its twin, a same-family and an other-family environment; the transfer matrix, one
/// fine-tune per sampled source measured on every environment; and the harness probes (see
/// [`crate::stages::transfer`] and [`crate::stages::preconditions`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TransferConfig {
    /// Conflict pairs probed (0: the stage is skipped).
    pub probes: usize,
    /// Environment steps of each single-environment fine-tune (the arms' RL settings).
    pub steps: u64,
    /// Evaluation instances per target and scale (more than the arms': transfer is small).
    pub eval_episodes: u32,
    /// Sources of the transfer matrix, each fine-tuned alone and evaluated on every pool and
    /// held-out environment (0: the matrix and the harness probes are skipped).
    pub matrix_probes: usize,
    /// Strata the matrix's sources are drawn from evenly, by their mean profile overlap with
    /// the rest of the pool.
    pub strata: usize,
    /// Matrix sources (the first ones drawn) also fine-tuned at H0–H2 only, for the harness
    /// precondition.
    pub harness_probes: usize,
    /// Matrix probes (the first ones drawn, spread over the strata) whose transfer response
    /// `aes-transfer` selects with. Their fine-tuning steps (this times `steps`) are charged to
    /// its budget: it trains `rl.total_env_steps` minus them, so that measured conflict is
    /// compared with gradient conflict at the same env steps.
    pub aes_transfer_probes: usize,
}

impl Default for TransferConfig {
    fn default() -> Self {
        Self {
            probes: 14,
            steps: 16_000,
            eval_episodes: 24,
            matrix_probes: 60,
            strata: 4,
            harness_probes: 48,
            aes_transfer_probes: 15,
        }
    }
}

/// The online re-selection arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OnlineConfig {
    /// Environment steps between re-selections (the first selection is the one-shot AES).
    pub every_steps: u64,
    /// Episodes per environment of the cheap gradients.
    pub episodes: u32,
    /// Projection dimension of the cheap gradients.
    pub dim: usize,
}

impl Default for OnlineConfig {
    fn default() -> Self {
        Self {
            every_steps: 10_000,
            episodes: 16,
            dim: 256,
        }
    }
}

/// Every knob of the study, in sections. Defaults come from [`ExperimentConfig::preset`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Always [`EXPERIMENT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The preset these values started from.
    pub preset: Preset,
    /// Master seed; every stage derives its own streams from it.
    pub seed: u64,
    /// Training seeds per arm (arms are paired by seed).
    pub seeds: u32,
    /// `cpu`, `cuda` or `cuda:N`.
    pub device: Device,
    /// Rendering and hints.
    pub suite: SuiteSection,
    /// The trainer preset of the base model: its cloning and critic warm-up run at this
    /// preset's settings. The network is `rl.model` (the arms start from the base's weights);
    /// the presets set it to this preset's network.
    pub model: TrainPreset,
    /// The environments used.
    pub pool: PoolConfig,
    /// Ability profiling.
    pub profiles: ProfilesConfig,
    /// The base model.
    pub base: BaseConfig,
    /// Per-environment gradients of the base: the trainer's configuration, but `seed` and
    /// `harness`, which each gradients stage sets (the master seed's stream; H4, and H0 for
    /// the polarisation stage).
    pub gradients: GradientConfig,
    /// Also take the gradients at H0 (all text), to measure whether gradient cosines are more
    /// polarised on bare pixels (H4) than with text, as the paper reports.
    pub polarisation: bool,
    /// The AES selection as the study runs it (selection's configuration; the preset is
    /// [`crate::presets::study_selection`]); `k` is capped at each pool's size, and the
    /// ablations and random-k draws take their budget from it.
    pub selection: SelectConfig,
    /// The arms' RL: the trainer's configuration, but `seed`, which each arm and probe derives
    /// from the master seed. `total_env_steps` is every arm's budget.
    pub rl: TrainConfig,
    /// Give single- and multi-turn environments equal shares of each arm's steps, as the base
    /// had (HDC's `balance_turns`; the arms with HDC or without a curriculum). The rivals draw
    /// as their references do.
    pub balance_turns: bool,
    /// Evaluation.
    pub eval: EvalConfig,
    /// Intervals and verdicts.
    pub analysis: AnalysisConfig,
    /// The HDC curriculum of the HDC arms (and its ablations, which change only its mode).
    pub hdc: HdcConfig,
    /// The online re-selection arm.
    pub online: OnlineConfig,
    /// The measured-transfer stage.
    pub transfer: TransferConfig,
    /// Pool sizes of the scaling study (random subsets; empty to skip it).
    pub scaling_sizes: Vec<usize>,
    /// Arms to run.
    pub arms: Vec<Arm>,
}

impl ExperimentConfig {
    /// The values of a preset.
    pub fn preset(preset: Preset) -> Self {
        crate::presets::values(preset)
    }

    /// The hint style of the hint-question arm ([`crate::model::HINT_PAIR`]).
    pub fn other_hint_style(&self) -> HintStyle {
        match self.suite.hint_style {
            HintStyle::Action => HintStyle::Subgoal,
            HintStyle::Subgoal => HintStyle::Action,
        }
    }

    /// `rl.model` where it is not the network of the `model` preset (a pilot's other image
    /// size or width), else `None`: the base's stage key names the network only then, so
    /// records at the presets' networks keep their keys.
    pub fn custom_network(&self) -> Option<&ModelConfig> {
        (self.rl.model != TrainConfig::of(self.model).model).then_some(&self.rl.model)
    }

    /// The env steps of `aes-transfer`'s probes, charged to its RL budget.
    pub fn aes_transfer_charge(&self) -> u64 {
        self.transfer.aes_transfer_probes as u64 * self.transfer.steps
    }

    /// The trainer configuration of one arm or probe: `rl` with its seed.
    pub fn train_config(&self, seed: u64) -> TrainConfig {
        TrainConfig {
            seed,
            ..self.rl.clone()
        }
    }

    /// The sum over updates of the learning rate times the Adam steps of one update: how
    /// far the arms' optimisation can move the base (the study reports it).
    pub fn optimisation(&self) -> f64 {
        let t = &self.rl;
        let updates = t.total_env_steps.div_ceil(t.batch_size() as u64);
        let steps_per_update = (t.batch_size().div_ceil(t.minibatch) * t.epochs) as f64;
        let learning = updates.saturating_sub(t.value_warmup_updates);
        let mean_lr = match t.lr_schedule {
            LrSchedule::Constant => t.lr as f64,
            LrSchedule::Linear { final_fraction } => {
                t.lr as f64 * (1.0 + final_fraction as f64) / 2.0
            }
        };
        learning as f64 * steps_per_update * mean_lr
    }

    /// The preset's values overlaid with `overrides` (a JSON object of any fields of
    /// `config.json`); `source` names where the overrides come from in errors.
    pub fn from_overrides(
        preset: Preset,
        overrides: &serde_json::Value,
        source: &str,
    ) -> Result<Self, InvalidValue> {
        crate::overlay::overlay(&Self::preset(preset), overrides, source)
    }
}

/// The study's configuration, validated: what [`crate::run_experiment`] takes.
pub type CheckedConfig = Checked<ExperimentConfig>;

fn at_least(field: &str, min: u64, found: u64, why: &str) -> Result<(), InvalidValue> {
    if found >= min {
        return Ok(());
    }
    let expected = match why {
        "" => format!("at least {min}"),
        why => format!("at least {min} ({why})"),
    };
    Err(InvalidValue::new(field, expected, found))
}

/// A trainer configuration's error as a field of the study's configuration: the trainer names
/// `TrainConfig`'s fields bare (`epochs`) and `GradientConfig`'s under `gradients.`.
fn trainer_field(section: &'static str) -> impl Fn(envdist_trainer::TrainerError) -> InvalidValue {
    move |e| match e {
        envdist_trainer::TrainerError::Config(v) if v.field.starts_with(section) => v,
        envdist_trainer::TrainerError::Config(v) => v.within(section),
        other => InvalidValue::new(section, "a valid configuration", other),
    }
}

impl Validate for ExperimentConfig {
    /// Check the whole configuration once, naming the offending field: the embedded
    /// configurations by their own rules (their fields named under their section), then the
    /// study's own fields and the rules across sections.
    fn validate(&self) -> Result<(), InvalidValue> {
        let fail = |field: &str, expected: &str, found: String| {
            Err(InvalidValue::new(field, expected, found))
        };
        if self.schema_version != EXPERIMENT_SCHEMA_VERSION {
            return fail(
                "schema_version",
                &EXPERIMENT_SCHEMA_VERSION.to_string(),
                self.schema_version.to_string(),
            );
        }
        self.rl.validate().map_err(trainer_field("rl"))?;
        self.gradients
            .validate()
            .map_err(trainer_field("gradients"))?;
        self.selection
            .validate_fields()
            .map_err(|v| v.within("selection"))?;
        self.hdc.validate().map_err(|e| match e {
            envdist_curriculum::CurriculumError::Config(v) => v.within("hdc"),
            other => InvalidValue::new("hdc", "a valid HDC config", other),
        })?;

        at_least("seeds", 1, self.seeds.into(), "")?;
        if !(16..=128).contains(&self.suite.canvas) {
            return fail("suite.canvas", "16..=128", self.suite.canvas.to_string());
        }
        at_least("pool.size", 2, self.pool.size as u64, "")?;
        let trajectories = self.profiles.trajectories.into();
        at_least("profiles.trajectories", 2, trajectories, "half per policy")?;
        if !(self.base.critic_lr.is_finite() && self.base.critic_lr > 0.0) {
            return fail(
                "base.critic_lr",
                "a positive learning rate",
                self.base.critic_lr.to_string(),
            );
        }
        at_least("base.samples", 256, self.base.samples, "one minibatch")?;
        let halves = self.gradients.rollouts_per_env as u64;
        at_least("gradients.rollouts_per_env", 2, halves, "two halves")?;
        at_least("rl.total_env_steps", 1, self.rl.total_env_steps, "")?;
        at_least("eval.episodes", 1, self.eval.episodes.into(), "")?;
        if self.eval.scales.is_empty()
            || self
                .eval
                .scales
                .iter()
                .any(|s| !matches!(s, ScaleChoice::Min | ScaleChoice::Mid | ScaleChoice::Max))
        {
            return fail(
                "eval.scales",
                "a non-empty list of `min`, `mid`, `max`",
                format!("{:?}", self.eval.scales),
            );
        }
        let replicates = self.analysis.bootstrap.into();
        at_least("analysis.bootstrap", 100, replicates, "replicates")?;
        for (field, v) in [
            (
                "analysis.equivalence_margin",
                self.analysis.equivalence_margin,
            ),
            ("analysis.detect_points", self.analysis.detect_points),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 100.0) {
                return fail(field, "points in (0, 100]", v.to_string());
            }
        }
        let t = &self.transfer;
        if (t.probes > 0 || t.matrix_probes > 0) && (t.steps == 0 || t.eval_episodes == 0) {
            return fail(
                "transfer",
                "steps >= 1 and eval_episodes >= 1 when probes or matrix_probes > 0",
                format!("{t:?}"),
            );
        }
        if t.matrix_probes > 0 && t.strata == 0 {
            return fail("transfer.strata", "at least 1", "0".into());
        }
        if t.matrix_probes == 0 && self.arms.contains(&Arm::AesTransfer) {
            return fail(
                "transfer.matrix_probes",
                "at least 1 when `arms` has aes-transfer (it selects with the transfer matrix)",
                "0".into(),
            );
        }
        if self.arms.contains(&Arm::AesTransfer) {
            if t.aes_transfer_probes < 2 || t.aes_transfer_probes > t.matrix_probes {
                return fail(
                    "transfer.aes_transfer_probes",
                    &format!(
                        "2 to transfer.matrix_probes ({}) when `arms` has aes-transfer (a \
                         response needs two probes to have a direction)",
                        t.matrix_probes
                    ),
                    t.aes_transfer_probes.to_string(),
                );
            }
            if self.aes_transfer_charge() >= self.rl.total_env_steps {
                return fail(
                    "transfer.aes_transfer_probes",
                    &format!(
                        "fewer than rl.total_env_steps / transfer.steps ({} / {}): its probes' \
                         steps are charged to aes-transfer's budget and must leave some to train",
                        self.rl.total_env_steps, t.steps
                    ),
                    t.aes_transfer_probes.to_string(),
                );
            }
        }
        if t.harness_probes > t.matrix_probes {
            return fail(
                "transfer.harness_probes",
                &format!("at most transfer.matrix_probes ({})", t.matrix_probes),
                t.harness_probes.to_string(),
            );
        }
        if self.online.every_steps == 0 || self.online.episodes < 2 || self.online.dim == 0 {
            return fail(
                "online",
                "every_steps >= 1, episodes >= 2, dim >= 1",
                format!("{:?}", self.online),
            );
        }

        // Rules across sections.
        if self.selection.k > self.pool.size {
            return fail(
                "selection.k",
                &format!("1..={} (pool.size)", self.pool.size),
                self.selection.k.to_string(),
            );
        }
        if !self.arms.iter().any(|a| a.is_base()) {
            return fail(
                "arms",
                "a list containing `base` (every gain is over it)",
                format!("{:?}", self.arms),
            );
        }
        if let Some(s) = self
            .scaling_sizes
            .iter()
            .find(|s| **s == 0 || **s > self.pool.size)
        {
            return fail(
                "scaling_sizes",
                &format!("sizes in 1..={}", self.pool.size),
                s.to_string(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate_and_bad_fields_are_named() {
        for p in Preset::ALL {
            ExperimentConfig::preset(p).validate().unwrap();
        }
        let mut c = ExperimentConfig::preset(Preset::Cpu);
        c.selection.k = 500;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("`selection.k`") && e.contains("1..=200"), "{e}");
        // Each embedded configuration is checked by its own rules, named under its section.
        for (patch, field) in [
            (serde_json::json!({"rl": {"epochs": 0}}), "`rl.epochs`"),
            (serde_json::json!({"rl": {"gamma": 2.0}}), "`rl.gamma`"),
            (
                serde_json::json!({"rl": {"model": {"patch": 7}}}),
                "`rl.model.patch`",
            ),
            (
                serde_json::json!({"gradients": {"dim": 0}}),
                "`gradients.dim`",
            ),
            (
                serde_json::json!({"gradients": {"lambda": 0.5}}),
                "`gradients.lambda`",
            ),
            (serde_json::json!({"selection": {"k": 0}}), "`selection.k`"),
            (
                serde_json::json!({"selection": {"weights": {"conflict": -1.0}}}),
                "`selection.weights.conflict`",
            ),
            (
                serde_json::json!({"hdc": {"window_width": 0}}),
                "`hdc.window_width`",
            ),
            // aes-transfer needs two probes for a response, and its probes are paid from its
            // budget: 30 x 16k steps would leave it none of the 480k.
            (
                serde_json::json!({"transfer": {"aes_transfer_probes": 1}}),
                "`transfer.aes_transfer_probes`",
            ),
            (
                serde_json::json!({"transfer": {"aes_transfer_probes": 30}}),
                "`transfer.aes_transfer_probes`",
            ),
        ] {
            let c = ExperimentConfig::from_overrides(Preset::Cpu, &patch, "pilot.json").unwrap();
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(field), "{patch}: {e}");
        }
        // Typed fields refuse bad values when the file is read, before any stage runs.
        for (patch, field) in [
            (serde_json::json!({"model": "huge"}), "model"),
            (serde_json::json!({"device": "tpu"}), "device"),
            (serde_json::json!({"rl": {"stpes": 3}}), "rl"),
            (serde_json::json!({"k": 3}), "k"),
        ] {
            let e = ExperimentConfig::from_overrides(Preset::Cpu, &patch, "pilot.json")
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("pilot.json") && e.contains(field),
                "{patch}: {e}"
            );
        }
        // A nested section merges field by field.
        let c = ExperimentConfig::from_overrides(
            Preset::Cpu,
            &serde_json::json!({"rl": {"total_env_steps": 5}}),
            "f",
        )
        .unwrap();
        let cpu = ExperimentConfig::preset(Preset::Cpu);
        assert_eq!((c.rl.total_env_steps, c.rl.lr), (5, cpu.rl.lr));
    }
}
