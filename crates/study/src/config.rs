//! The study's configuration: presets and every knob, in sections. A section is what a stage
//! depends on, so a stage's cache key is made of the sections it reads (see
//! [`crate::stages`]) rather than of copied fields, and a config file can override any field.
//! [`ExperimentConfig::checked`] validates it once; the study only ever takes the checked
//! value.

use envdist_core::{Checked, InvalidValue, Validate};
use envdist_curriculum::HdcConfig;
use envdist_envs::HintStyle;
use envdist_trainer::{
    AdvantageKind, Baseline, Device, GradientParams, LrSchedule, ScaleChoice, SingleTurn,
    TrainPreset,
};
use serde::{Deserialize, Serialize};

pub use crate::analysis::ClaimId;
pub use crate::arm::Arm;

/// Schema version of `config.json` and of the study's other files. 3: the configuration in
/// sections (`suite`, `pool`, `profiles`, `selection`, `rl`, `analysis`).
pub const EXPERIMENT_SCHEMA_VERSION: u32 = 3;

/// Named presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Tiny pool and budget: every stage and arm in well under a minute (a test runs it and
    /// compares it with the committed record).
    Smoke,
    /// The default: the paper's central comparisons at laptop scale on 2 CPU cores (at most
    /// 45 minutes).
    Cpu,
    /// Everything the `cpu` preset leaves out, at its scale: the HDC ablations, the rivals,
    /// online re-selection, the control pool, the hint styles, pool-size scaling and the H0
    /// gradients (resumable; hours).
    CpuFull,
    /// The `cpu` study on one GPU with 5 seeds (`--device cuda`, `--features cuda`; not yet run).
    GpuLite,
    /// The full study on a GPU.
    Gpu,
}

impl Preset {
    /// The preset's name as given to `--preset`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Smoke => "smoke",
            Preset::Cpu => "cpu",
            Preset::CpuFull => "cpu-full",
            Preset::GpuLite => "gpu-lite",
            Preset::Gpu => "gpu",
        }
    }
}

/// How the environments render and what their hints say (training; evaluation is at H4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SuiteSection {
    /// Canvas (pixels per side) the policy sees.
    pub canvas: u32,
    /// Hint style of the harness's hint channel in training.
    pub hint_style: HintStyle,
}

impl Default for SuiteSection {
    fn default() -> Self {
        Self {
            canvas: 32,
            hint_style: HintStyle::Action,
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
            // to its floor on the base's rollouts (pilots: docs/experiments/README.md).
            critic_warmup_updates: 30,
            critic_lr: 1e-3,
        }
    }
}

/// What AES does with environments whose per-env gradient is exactly zero (the base never
/// solved them in any sampled episode): the conflict term cannot see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum ZeroGradient {
    /// Treated as unknown and left out of the AES-family selections (default).
    #[default]
    Exclude,
    /// Kept as the paper's objective sees them: conflict-free.
    Keep,
}

/// Per-environment gradients of the base model, for AES's conflict term.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GradientsConfig {
    /// Episodes per environment.
    pub episodes: u32,
    /// Projection dimension.
    pub dim: usize,
    /// Parameters the gradients are taken with respect to: `all` (default) or `policy_head`
    /// (a cheaper estimate; see docs/conflict-estimates.md).
    pub params: GradientParams,
    /// Cut every gradient episode after this many steps (default: none, each env's own
    /// limit; see docs/conflict-estimates.md).
    pub max_episode_steps: Option<u32>,
    /// Single-turn envs: `exact` (default: the expectation over every answer of each sampled
    /// instance) or `sampled` (one sampled answer per instance).
    pub single_turn: SingleTurn,
    /// Baseline of the sampled (multi-turn) episodes: `mean` (their mean return-to-go) or
    /// `value` (the base's critic).
    pub baseline: Baseline,
    /// GAE's lambda with the `value` baseline (1: return-to-go minus the critic's value).
    pub lambda: f32,
}

impl Default for GradientsConfig {
    fn default() -> Self {
        Self {
            episodes: 128,
            dim: 1024,
            params: GradientParams::All,
            max_episode_steps: None,
            single_turn: SingleTurn::Exact,
            baseline: Baseline::Mean,
            lambda: 1.0,
        }
    }
}

/// The selections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelectionConfig {
    /// Budget k (the paper picks 30 of 200).
    pub k: usize,
    /// Zero-gradient environments in the AES-family selections.
    pub zero_gradient: ZeroGradient,
}

impl Default for SelectionConfig {
    fn default() -> Self {
        Self {
            k: 30,
            zero_gradient: ZeroGradient::Exclude,
        }
    }
}

/// The arms' RL: the budget, and the settings that differ from the network preset's
/// (`None`: the preset's). The base is a behaviour clone whose value head never learned, so
/// the preset's from-scratch settings are not necessarily right for fine-tuning it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RlConfig {
    /// Environment steps per training arm and seed (equal for every arm).
    pub steps: u64,
    /// Adam learning rate.
    pub lr: Option<f32>,
    /// Learning-rate schedule.
    pub lr_schedule: Option<LrSchedule>,
    /// Passes over each rollout.
    pub epochs: Option<usize>,
    /// Samples per gradient step.
    pub minibatch: Option<usize>,
    /// Environments stepped together.
    pub num_envs: Option<usize>,
    /// Steps per environment per rollout.
    pub rollout_len: Option<usize>,
    /// Entropy bonus coefficient.
    pub entropy_coef: Option<f32>,
    /// Value loss coefficient.
    pub value_coef: Option<f32>,
    /// Discount.
    pub gamma: Option<f32>,
    /// GAE lambda.
    pub gae_lambda: Option<f32>,
    /// Advantage estimator.
    pub advantage: Option<AdvantageKind>,
    /// Updates at the start of each arm that fit the value head alone (the critic warm-up;
    /// its steps count in the budget).
    pub value_warmup_updates: u64,
    /// Bootstrap the value at time-limit ends (the trainer's default: no, a time-out is a
    /// failed task).
    pub bootstrap_time_limits: Option<bool>,
    /// Give single- and multi-turn environments equal shares of each arm's steps, as the base
    /// had (HDC's `balance_turns`; the arms with HDC or without a curriculum). The rivals draw
    /// as their references do. Default true.
    pub balance_turns: bool,
}

impl Default for RlConfig {
    fn default() -> Self {
        Self {
            steps: 24_000,
            lr: None,
            lr_schedule: None,
            epochs: None,
            minibatch: None,
            num_envs: None,
            rollout_len: None,
            entropy_coef: None,
            value_coef: None,
            gamma: None,
            gae_lambda: None,
            advantage: None,
            value_warmup_updates: 0,
            bootstrap_time_limits: None,
            balance_turns: true,
        }
    }
}

impl RlConfig {
    /// The trainer configuration of an arm: the preset's, with this budget, `seed` and these
    /// overrides.
    pub fn train_config(&self, model: TrainPreset, seed: u64) -> envdist_trainer::TrainConfig {
        let mut t = envdist_trainer::TrainConfig::of(model);
        t.total_env_steps = self.steps;
        t.seed = seed;
        t.value_warmup_updates = self.value_warmup_updates;
        fn set<T: Copy>(slot: &mut T, v: Option<T>) {
            if let Some(v) = v {
                *slot = v;
            }
        }
        set(&mut t.lr, self.lr);
        set(&mut t.lr_schedule, self.lr_schedule);
        set(&mut t.epochs, self.epochs);
        set(&mut t.minibatch, self.minibatch);
        set(&mut t.num_envs, self.num_envs);
        set(&mut t.rollout_len, self.rollout_len);
        set(&mut t.entropy_coef, self.entropy_coef);
        set(&mut t.value_coef, self.value_coef);
        set(&mut t.gamma, self.gamma);
        set(&mut t.gae_lambda, self.gae_lambda);
        set(&mut t.advantage, self.advantage);
        set(&mut t.bootstrap_time_limits, self.bootstrap_time_limits);
        t
    }

    /// The sum over updates of the learning rate times the Adam steps of one update: how
    /// far the arms' optimisation can move the base (the study reports it).
    pub fn optimisation(&self, model: TrainPreset) -> f64 {
        let t = self.train_config(model, 0);
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
            episodes: 12,
            scales: vec![ScaleChoice::Min, ScaleChoice::Mid],
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
}

impl Default for AnalysisConfig {
    fn default() -> Self {
        Self {
            bootstrap: 2000,
            primary: ClaimId::central(),
        }
    }
}

/// The measured-transfer stage: one fine-tune per designed conflict pair, measured on the
/// source, its twin, a same-family and an other-family environment (see
/// [`crate::stages::transfer`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TransferConfig {
    /// Conflict pairs probed (0: the stage is skipped).
    pub probes: usize,
    /// Environment steps of each single-environment fine-tune (the arms' RL settings).
    pub steps: u64,
    /// Evaluation instances per target and scale (more than the arms': transfer is small).
    pub eval_episodes: u32,
}

impl Default for TransferConfig {
    fn default() -> Self {
        Self {
            probes: 14,
            steps: 16_000,
            eval_episodes: 24,
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

/// Training seeds of the `cpu` presets: three seeds of six trained arms at the budget below
/// fill the 45 minutes of the `cpu` preset on two cores.
const CPU_SEEDS: u32 = 3;

/// The arms' RL of the study. One-seed pilots from the critic-warmed base (docs/experiments/
/// README.md), gain of `aes` on its own 30 environments: 120k steps x 4 epochs +4.3 points
/// (lr 1e-3: +4.2; time limits bootstrapped: +3.6); 240k x 4 +8.3; 480k x 2 +11.9 (the
/// same learning compute as 240k x 4: env steps are cheap next to learning, so two epochs on
/// twice the steps learn more per second).
pub fn study_rl() -> RlConfig {
    RlConfig {
        steps: 480_000,
        lr: Some(3e-4),
        lr_schedule: Some(LrSchedule::Constant),
        epochs: Some(2),
        value_coef: Some(0.5),
        ..RlConfig::default()
    }
}

/// The HDC defaults of the study: sized so that a curriculum can reach H4 on most of its
/// environments well before the budget ends (the paper publishes none of these numbers).
pub fn study_hdc() -> HdcConfig {
    // Pilots on the `cpu` budget (about 57 episodes per env for 30 envs; one seed): fixed
    // 2-scale windows moving by 2 with a 16-episode cap left 0-3% of the envs at H4; with
    // 2- or 3-scale windows and a 3-4 episode cap, 8 of 30 (count-objects, maze, collect:
    // up to 12 scales, 3x the stages of the others) still never reached H4. Two windows per
    // level give every env 8 stages before H4: all 30 reached it, half of them within the
    // first 58% of the episodes.
    HdcConfig {
        windows_per_level: 2,
        min_episodes: 3,
        competence_threshold: 0.6,
        ema_rate: 0.5,
        max_stage_episodes: 4,
        // Evaluation plays each env's smallest and middle scale: once an env has mastered its
        // top window at H4, it plays its whole range (a pilot without it trained the HDC arms
        // on the top half alone and left them below the arms without a curriculum).
        consolidate: true,
        ..HdcConfig::default()
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
    /// Trainer network and RL preset.
    pub model: TrainPreset,
    /// The environments used.
    pub pool: PoolConfig,
    /// Ability profiling.
    pub profiles: ProfilesConfig,
    /// The base model.
    pub base: BaseConfig,
    /// Per-environment gradients.
    pub gradients: GradientsConfig,
    /// Also take the gradients at H0 (all text), to measure whether gradient cosines are more
    /// polarised on bare pixels (H4) than with text, as the paper reports.
    pub polarisation: bool,
    /// Take the H4 gradients a second time (other episodes, another projection) and report how
    /// many of AES's picks the rerun keeps: whether the conflict term is signal or noise.
    pub gradients_rerun: bool,
    /// The selections.
    pub selection: SelectionConfig,
    /// The arms' RL.
    pub rl: RlConfig,
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
        // The `cpu` values are sized from measured throughput on 2 cores (about 2,500-3,000
        // env steps/s with learning): the whole study in at most 45 minutes.
        let base = Self {
            schema_version: EXPERIMENT_SCHEMA_VERSION,
            preset,
            seed: 2026,
            seeds: CPU_SEEDS,
            device: Device::Cpu,
            suite: SuiteSection::default(),
            model: TrainPreset::Cpu,
            pool: PoolConfig::default(),
            profiles: ProfilesConfig::default(),
            base: BaseConfig::default(),
            gradients: GradientsConfig::default(),
            polarisation: false,
            gradients_rerun: true,
            selection: SelectionConfig::default(),
            rl: study_rl(),
            eval: EvalConfig::default(),
            analysis: AnalysisConfig::default(),
            hdc: study_hdc(),
            online: OnlineConfig {
                every_steps: 8_000,
                ..OnlineConfig::default()
            },
            transfer: TransferConfig::default(),
            scaling_sizes: vec![],
            arms: Arm::CENTRAL.to_vec(),
        };
        match preset {
            Preset::Smoke => Self {
                seeds: 2,
                suite: SuiteSection {
                    canvas: 16,
                    ..SuiteSection::default()
                },
                // The unit-test network: 128 steps per update, so even a tiny budget has
                // several updates (checkpoints, re-selections, resume all get exercised).
                model: TrainPreset::Tiny,
                pool: PoolConfig {
                    size: 40,
                    ood_envs: 8,
                },
                profiles: ProfilesConfig { trajectories: 4 },
                base: BaseConfig {
                    samples: 2_048,
                    critic_warmup_updates: 4,
                    ..BaseConfig::default()
                },
                gradients: GradientsConfig {
                    episodes: 4,
                    dim: 64,
                    ..GradientsConfig::default()
                },
                // Every arm and stage, so that a change anywhere moves the smoke record.
                polarisation: true,
                arms: Arm::ALL.to_vec(),
                // Full ability coverage of a 40-env pool takes about 13 picks.
                selection: SelectionConfig {
                    k: 14,
                    ..SelectionConfig::default()
                },
                rl: RlConfig {
                    steps: 1_024,
                    value_warmup_updates: 1,
                    ..base.rl.clone()
                },
                eval: EvalConfig {
                    episodes: 2,
                    ..EvalConfig::default()
                },
                analysis: AnalysisConfig {
                    bootstrap: 200,
                    ..AnalysisConfig::default()
                },
                online: OnlineConfig {
                    every_steps: 512,
                    episodes: 2,
                    dim: 32,
                },
                transfer: TransferConfig {
                    probes: 2,
                    steps: 512,
                    eval_episodes: 2,
                },
                scaling_sizes: vec![4],
                ..base
            },
            Preset::Cpu => base,
            Preset::CpuFull => Self {
                polarisation: true,
                scaling_sizes: vec![10, 100],
                arms: Arm::ALL.to_vec(),
                analysis: AnalysisConfig {
                    primary: ClaimId::central(),
                    ..AnalysisConfig::default()
                },
                ..base
            },
            // Not yet run (no GPU lent to this work): the `cpu` study on one GPU, with more
            // seeds; docs/gpu.md says what its first timed run must decide.
            Preset::GpuLite => Self {
                device: Device::Cuda(0),
                seeds: 5,
                ..base
            },
            Preset::Gpu => Self {
                seeds: 8,
                device: Device::Cuda(0),
                suite: SuiteSection {
                    canvas: 64,
                    ..SuiteSection::default()
                },
                model: TrainPreset::Gpu,
                base: BaseConfig {
                    samples: 1_000_000,
                    ..BaseConfig::default()
                },
                gradients: GradientsConfig {
                    episodes: 512,
                    ..GradientsConfig::default()
                },
                rl: RlConfig {
                    steps: 2_000_000,
                    ..base.rl.clone()
                },
                eval: EvalConfig {
                    episodes: 32,
                    ..EvalConfig::default()
                },
                online: OnlineConfig {
                    every_steps: 400_000,
                    episodes: 64,
                    ..OnlineConfig::default()
                },
                scaling_sizes: vec![5, 10, 60, 100],
                polarisation: true,
                arms: Arm::ALL.to_vec(),
                ..base
            },
        }
    }

    /// The hint style of the `aes+hdc-other-hints` arm.
    pub fn other_hint_style(&self) -> HintStyle {
        match self.suite.hint_style {
            HintStyle::Action => HintStyle::Subgoal,
            HintStyle::Subgoal => HintStyle::Action,
        }
    }

    /// The preset's values overlaid with `overrides` (a JSON object of any fields of
    /// `config.json`; nested sections merge field by field). `source` names where the
    /// overrides come from in errors.
    pub fn from_overrides(
        preset: Preset,
        overrides: &serde_json::Value,
        source: &str,
    ) -> Result<Self, InvalidValue> {
        let mut value = serde_json::to_value(Self::preset(preset))
            .map_err(|e| InvalidValue::new(".", "a serialisable preset", e))?;
        let Some(obj) = overrides.as_object() else {
            return Err(InvalidValue::new(
                source,
                "a JSON object of config fields",
                overrides.to_string(),
            ));
        };
        for (k, v) in obj {
            merge(&mut value[k], v);
        }
        serde_path_to_error::deserialize(value).map_err(|e| {
            InvalidValue::new(
                format!("{source}: {}", e.path()),
                "a field of config.json, of its type",
                e.inner(),
            )
        })
    }
}

/// Overlay `patch` on `base`: objects merge field by field (so a file can change one field of
/// a nested section), anything else replaces.
fn merge(base: &mut serde_json::Value, patch: &serde_json::Value) {
    match (base, patch) {
        (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// The study's configuration, validated: what [`crate::run`] takes.
pub type CheckedConfig = Checked<ExperimentConfig>;

impl Validate for ExperimentConfig {
    /// Check the values once, naming the offending field.
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
        if self.seeds == 0 {
            return fail("seeds", "at least 1", "0".into());
        }
        if !(16..=128).contains(&self.suite.canvas) {
            return fail("suite.canvas", "16..=128", self.suite.canvas.to_string());
        }
        if self.pool.size < 2 {
            return fail("pool.size", "at least 2", self.pool.size.to_string());
        }
        if self.selection.k == 0 || self.selection.k > self.pool.size {
            return fail(
                "selection.k",
                &format!("1..={} (pool.size)", self.pool.size),
                self.selection.k.to_string(),
            );
        }
        if self.profiles.trajectories < 2 {
            return fail(
                "profiles.trajectories",
                "at least 2 (half per policy)",
                self.profiles.trajectories.to_string(),
            );
        }
        if !(self.base.critic_lr.is_finite() && self.base.critic_lr > 0.0) {
            return fail(
                "base.critic_lr",
                "a positive learning rate",
                self.base.critic_lr.to_string(),
            );
        }
        if self.base.samples < 256 {
            return fail(
                "base.samples",
                "at least 256 (one minibatch)",
                self.base.samples.to_string(),
            );
        }
        if self.gradients.episodes < 2 {
            return fail(
                "gradients.episodes",
                "at least 2 (two halves)",
                self.gradients.episodes.to_string(),
            );
        }
        if self.gradients.dim == 0 {
            return fail("gradients.dim", "at least 1", "0".into());
        }
        if self.gradients.max_episode_steps == Some(0) {
            return fail(
                "gradients.max_episode_steps",
                "at least 1 when set",
                "0".into(),
            );
        }
        let lambda = self.gradients.lambda;
        if !(lambda.is_finite() && (0.0..=1.0).contains(&lambda)) {
            return fail("gradients.lambda", "a number in [0, 1]", lambda.to_string());
        }
        if self.gradients.baseline == Baseline::Mean && lambda != 1.0 {
            return fail(
                "gradients.lambda",
                "1 with baseline mean (lambda needs the value baseline)",
                lambda.to_string(),
            );
        }
        if self.rl.steps == 0 {
            return fail("rl.steps", "at least 1", "0".into());
        }
        if let Some(lr) = self.rl.lr
            && !(lr.is_finite() && lr > 0.0)
        {
            return fail("rl.lr", "a positive learning rate", lr.to_string());
        }
        if self.eval.episodes == 0 {
            return fail("eval.episodes", "at least 1", "0".into());
        }
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
        if self.analysis.bootstrap < 100 {
            return fail(
                "analysis.bootstrap",
                "at least 100 replicates",
                self.analysis.bootstrap.to_string(),
            );
        }
        self.hdc.validate().map_err(|e| match e {
            envdist_curriculum::CurriculumError::Config(v) => v.within("hdc"),
            other => InvalidValue::new("hdc", "a valid HDC config", other),
        })?;
        if self.transfer.probes > 0
            && (self.transfer.steps == 0 || self.transfer.eval_episodes == 0)
        {
            return fail(
                "transfer",
                "steps >= 1 and eval_episodes >= 1 when probes > 0",
                format!("{:?}", self.transfer),
            );
        }
        if self.online.every_steps == 0 || self.online.episodes < 2 || self.online.dim == 0 {
            return fail(
                "online",
                "every_steps >= 1, episodes >= 2, dim >= 1",
                format!("{:?}", self.online),
            );
        }
        if !self.arms.contains(&Arm::Base) {
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
        for p in [
            Preset::Smoke,
            Preset::Cpu,
            Preset::CpuFull,
            Preset::GpuLite,
            Preset::Gpu,
        ] {
            ExperimentConfig::preset(p).validate().unwrap();
        }
        let mut c = ExperimentConfig::preset(Preset::Cpu);
        c.selection.k = 500;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("`selection.k`") && e.contains("1..=200"), "{e}");
        let mut c = ExperimentConfig::preset(Preset::Cpu);
        c.hdc.window_width = 0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("hdc.window_width"), "{e}");
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
            &serde_json::json!({"rl": {"steps": 5}}),
            "f",
        )
        .unwrap();
        assert_eq!((c.rl.steps, c.rl.lr), (5, study_rl().lr));
    }
}
