//! Experiment configuration: presets and every knob of the study, serialisable so that a
//! config file can override any field and so that each stage's cache key is the part of the
//! config it depends on.

use envdist_core::{InvalidValue, Validate};
use envdist_curriculum::{HdcConfig, SamplerConfig};
use envdist_envs::HintStyle;
use envdist_trainer::{Device, GradientParams, ScaleChoice, TrainPreset};
use serde::{Deserialize, Serialize};

/// Schema version of `config.json` and of the experiment's other files.
pub const EXPERIMENT_SCHEMA_VERSION: u32 = 2;

/// Named presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Tiny pool and budget: every stage and arm in a few minutes (CI runs it and compares
    /// it with the committed record).
    Smoke,
    /// The default: the study at laptop scale on 2 CPU cores (at most 45 minutes).
    Cpu,
    /// One H200 and 16 cores, at most 8 minutes (`--device cuda`, `--features cuda`).
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
            Preset::GpuLite => "gpu-lite",
            Preset::Gpu => "gpu",
        }
    }
}

/// The training arms of the study: the paper's main table and ablations, the methods users
/// would pick instead, online re-selection, the control pool and the hint-style question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Arm {
    /// The pretrained model before RL: the reference of every gain.
    #[serde(rename = "base")]
    Base,
    /// Every pool environment, no curriculum (H4, scale uniform).
    #[serde(rename = "all-pool")]
    AllPool,
    /// k random pool environments (a new draw per seed), no curriculum.
    #[serde(rename = "random-k")]
    RandomK,
    /// The AES selection, no curriculum.
    #[serde(rename = "aes")]
    Aes,
    /// The AES selection with the full HDC curriculum.
    #[serde(rename = "aes+hdc", alias = "aes-hdc")]
    AesHdc,
    /// k random environments with the full HDC curriculum.
    #[serde(rename = "random-k+hdc", alias = "random-k-hdc")]
    RandomKHdc,
    /// AES without the conflict term, no curriculum (the paper's key ablation).
    #[serde(rename = "aes-no-conflict")]
    AesNoConflict,
    /// AES with harness weakening only.
    #[serde(rename = "aes+harness-only", alias = "aes-harness-only")]
    AesHarnessOnly,
    /// AES with state-scale progression only.
    #[serde(rename = "aes+scale-only", alias = "aes-scale-only")]
    AesScaleOnly,
    /// AES+HDC whose selection is recomputed every `online.every_steps` from fresh cheap
    /// gradients of the current policy, the kept environments keeping their curriculum.
    #[serde(rename = "aes+hdc-online")]
    AesHdcOnline,
    /// AES+HDC trained with the other hint style than the study's (the hint question).
    #[serde(rename = "aes+hdc-other-hints")]
    AesHdcOtherHints,
    /// Online pass-rate filtering over the whole pool (DAPO / prime-rl).
    #[serde(rename = "pass-rate")]
    PassRate,
    /// Learning progress over the whole pool (Syllabus).
    #[serde(rename = "learning-progress")]
    LearningProgress,
    /// The SEC bandit over (env, harness, scale) of the whole pool.
    #[serde(rename = "sec")]
    Sec,
    /// The RLVE difficulty ladder over the whole pool.
    #[serde(rename = "ladder")]
    Ladder,
    /// Robust prioritized level replay over the whole pool.
    #[serde(rename = "plr")]
    Plr,
    /// AES on the control pool (no designed conflict twins), no curriculum.
    #[serde(rename = "control-aes")]
    ControlAes,
    /// k random control-pool environments, no curriculum.
    #[serde(rename = "control-random-k")]
    ControlRandomK,
}

impl Arm {
    /// Every arm in report order.
    pub const ALL: [Arm; 18] = [
        Arm::Base,
        Arm::AllPool,
        Arm::RandomK,
        Arm::Aes,
        Arm::AesHdc,
        Arm::RandomKHdc,
        Arm::AesNoConflict,
        Arm::AesHarnessOnly,
        Arm::AesScaleOnly,
        Arm::AesHdcOnline,
        Arm::AesHdcOtherHints,
        Arm::PassRate,
        Arm::LearningProgress,
        Arm::Sec,
        Arm::Ladder,
        Arm::Plr,
        Arm::ControlAes,
        Arm::ControlRandomK,
    ];

    /// The name used in files, configs and tables (also its serde name).
    pub fn name(self) -> &'static str {
        match self {
            Arm::Base => "base",
            Arm::AllPool => "all-pool",
            Arm::RandomK => "random-k",
            Arm::Aes => "aes",
            Arm::AesHdc => "aes+hdc",
            Arm::RandomKHdc => "random-k+hdc",
            Arm::AesNoConflict => "aes-no-conflict",
            Arm::AesHarnessOnly => "aes+harness-only",
            Arm::AesScaleOnly => "aes+scale-only",
            Arm::AesHdcOnline => "aes+hdc-online",
            Arm::AesHdcOtherHints => "aes+hdc-other-hints",
            Arm::PassRate => "pass-rate",
            Arm::LearningProgress => "learning-progress",
            Arm::Sec => "sec",
            Arm::Ladder => "ladder",
            Arm::Plr => "plr",
            Arm::ControlAes => "control-aes",
            Arm::ControlRandomK => "control-random-k",
        }
    }

    /// The rival sampler an arm trains with, if it is one of the methods users would pick
    /// instead of AES + HDC (each over the whole pool, with its published defaults).
    pub fn rival(self) -> Option<SamplerConfig> {
        let kind = match self {
            Arm::PassRate => "pass_rate",
            Arm::LearningProgress => "learning_progress",
            Arm::Sec => "sec",
            Arm::Ladder => "ladder",
            Arm::Plr => "plr",
            _ => return None,
        };
        SamplerConfig::default_for(kind).ok()
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
        }
    }
}

/// What AES does with environments whose per-env gradient is exactly zero (the base never
/// solved them in any sampled episode): the conflict term cannot see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
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
    /// Zero-gradient environments.
    pub zero_gradient: ZeroGradient,
    /// Also take the gradients at H0 (all text), to measure whether gradient cosines are
    /// more polarised on bare pixels (H4) than with text, as the paper reports.
    pub polarisation: bool,
    /// Parameters the gradients are taken with respect to: `all` (default) or `policy_head`
    /// (a cheaper estimate; see docs/conflict-estimates.md). Not written when `all`, so
    /// configs and records of earlier runs read and compare as before.
    #[serde(skip_serializing_if = "is_all_params")]
    pub params: GradientParams,
    /// Cut every gradient episode after this many steps (default: none, each env's own
    /// limit; see docs/conflict-estimates.md). Not written when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_episode_steps: Option<u32>,
}

/// Whether gradients are taken with respect to every parameter (the default).
pub fn is_all_params(p: &GradientParams) -> bool {
    *p == GradientParams::All
}

impl Default for GradientsConfig {
    fn default() -> Self {
        Self {
            episodes: 128,
            dim: 1024,
            zero_gradient: ZeroGradient::Exclude,
            polarisation: true,
            params: GradientParams::All,
            max_episode_steps: None,
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
    /// Bootstrap replicates of every interval.
    pub bootstrap: u32,
}

impl Default for EvalConfig {
    fn default() -> Self {
        Self {
            episodes: 12,
            scales: vec![ScaleChoice::Min, ScaleChoice::Mid],
            bootstrap: 2000,
        }
    }
}

/// RL settings of the arms that differ from the network preset's (`None`: the preset's).
/// The base is a behaviour clone whose value head was never trained, so the preset's
/// from-scratch settings are not necessarily right for fine-tuning it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FinetuneConfig {
    /// Adam learning rate.
    pub lr: Option<f32>,
    /// Entropy bonus coefficient.
    pub entropy_coef: Option<f32>,
    /// Value loss coefficient.
    pub value_coef: Option<f32>,
}

impl FinetuneConfig {
    /// `t` with these overrides.
    pub fn apply(&self, t: &mut envdist_trainer::TrainConfig) {
        if let Some(v) = self.lr {
            t.lr = v;
        }
        if let Some(v) = self.entropy_coef {
            t.entropy_coef = v;
        }
        if let Some(v) = self.value_coef {
            t.value_coef = v;
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
        ..HdcConfig::default()
    }
}

/// Every knob of the study. Defaults come from [`ExperimentConfig::preset`].
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
    /// Canvas (pixels per side) the policy sees.
    pub canvas: u32,
    /// Trainer network and RL preset.
    pub model: TrainPreset,
    /// RL settings of the arms that differ from the preset's.
    #[serde(default)]
    pub finetune: FinetuneConfig,
    /// Pool size used (a seeded subset that keeps conflict pairs together; 200 = all).
    pub pool_size: usize,
    /// Selection budget k.
    pub k: usize,
    /// Held-out (OOD) environments evaluated (0 = all).
    pub ood_envs: usize,
    /// Trajectories per environment for profiling (half per policy).
    pub profile_trajectories: u32,
    /// The base model.
    pub base: BaseConfig,
    /// Per-environment gradients.
    pub gradients: GradientsConfig,
    /// Environment steps per training arm and seed (equal for every arm).
    pub train_steps: u64,
    /// Evaluation.
    pub eval: EvalConfig,
    /// The HDC curriculum of the HDC arms (and its ablations, which change only its mode).
    pub hdc: HdcConfig,
    /// Hint style of the harness's hint channel in training (evaluation is at H4, no hints).
    pub hint_style: HintStyle,
    /// The online re-selection arm.
    pub online: OnlineConfig,
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
            seeds: 5,
            device: Device::Cpu,
            canvas: 32,
            model: TrainPreset::Cpu,
            // A one-seed pilot on the `cpu` preset (aes, random-k, aes+hdc; Δ whole-pool ID
            // vs base): the preset's lr 5e-4 lost up to 3.1 points to forgetting, lr 1e-4
            // with value coefficient 0.1 moved the arms by -1.3..+0.8 (lr 5e-5: ±0.4, i.e.
            // barely trained; lr 2e-4 with entropy 0.001: -1.0..-1.5). docs/experiments.
            finetune: FinetuneConfig {
                lr: Some(1e-4),
                value_coef: Some(0.1),
                entropy_coef: None,
            },
            pool_size: 200,
            k: 30,
            ood_envs: 0,
            profile_trajectories: 40,
            base: BaseConfig::default(),
            gradients: GradientsConfig::default(),
            train_steps: 24_000,
            eval: EvalConfig::default(),
            hdc: study_hdc(),
            hint_style: HintStyle::Action,
            online: OnlineConfig {
                every_steps: 8_000,
                ..OnlineConfig::default()
            },
            scaling_sizes: vec![10, 100],
            arms: Arm::ALL.to_vec(),
        };
        match preset {
            Preset::Smoke => Self {
                seeds: 2,
                canvas: 16,
                // The unit-test network: 128 steps per update, so even a tiny budget has
                // several updates (checkpoints, re-selections, resume all get exercised).
                model: TrainPreset::Tiny,
                pool_size: 40,
                // Full ability coverage of a 40-env pool takes about 13 picks.
                k: 14,
                ood_envs: 8,
                profile_trajectories: 4,
                base: BaseConfig {
                    samples: 2_048,
                    ..BaseConfig::default()
                },
                gradients: GradientsConfig {
                    episodes: 4,
                    dim: 64,
                    ..GradientsConfig::default()
                },
                train_steps: 1_024,
                eval: EvalConfig {
                    episodes: 2,
                    bootstrap: 200,
                    ..EvalConfig::default()
                },
                online: OnlineConfig {
                    every_steps: 512,
                    episodes: 2,
                    dim: 32,
                },
                scaling_sizes: vec![4],
                ..base
            },
            Preset::Cpu => base,
            Preset::GpuLite => Self {
                device: Device::Cuda(0),
                base: BaseConfig {
                    samples: 200_000,
                    ..BaseConfig::default()
                },
                gradients: GradientsConfig {
                    episodes: 256,
                    ..GradientsConfig::default()
                },
                train_steps: 200_000,
                eval: EvalConfig {
                    episodes: 24,
                    ..EvalConfig::default()
                },
                online: OnlineConfig {
                    every_steps: 50_000,
                    episodes: 32,
                    ..OnlineConfig::default()
                },
                scaling_sizes: vec![10, 60, 100],
                ..base
            },
            Preset::Gpu => Self {
                seeds: 8,
                device: Device::Cuda(0),
                canvas: 64,
                model: TrainPreset::Gpu,
                base: BaseConfig {
                    samples: 1_000_000,
                    ..BaseConfig::default()
                },
                gradients: GradientsConfig {
                    episodes: 512,
                    ..GradientsConfig::default()
                },
                train_steps: 2_000_000,
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
                ..base
            },
        }
    }

    /// The hint style of the `aes+hdc-other-hints` arm.
    pub fn other_hint_style(&self) -> HintStyle {
        match self.hint_style {
            HintStyle::Action => HintStyle::Subgoal,
            HintStyle::Subgoal => HintStyle::Action,
        }
    }
}

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
        if !(16..=128).contains(&self.canvas) {
            return fail("canvas", "16..=128", self.canvas.to_string());
        }
        if self.pool_size < 2 {
            return fail("pool_size", "at least 2", self.pool_size.to_string());
        }
        if self.k == 0 || self.k > self.pool_size {
            return fail(
                "k",
                &format!("1..={} (pool_size)", self.pool_size),
                self.k.to_string(),
            );
        }
        if self.profile_trajectories < 2 {
            return fail(
                "profile_trajectories",
                "at least 2 (half per policy)",
                self.profile_trajectories.to_string(),
            );
        }
        if self.base.samples < 256 {
            return fail(
                "base.samples",
                "at least 256 (one minibatch)",
                self.base.samples.to_string(),
            );
        }
        if self.gradients.episodes < 2
            || self.gradients.dim == 0
            || self.gradients.max_episode_steps == Some(0)
        {
            return fail(
                "gradients",
                "episodes >= 2 (two halves), dim >= 1 and max_episode_steps >= 1 when set",
                format!("{:?}", self.gradients),
            );
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
        if self.eval.bootstrap < 100 {
            return fail(
                "eval.bootstrap",
                "at least 100 replicates",
                self.eval.bootstrap.to_string(),
            );
        }
        self.hdc.validate().map_err(|e| match e {
            envdist_curriculum::CurriculumError::Config(v) => v.within("hdc"),
            other => InvalidValue::new("hdc", "a valid HDC config", other),
        })?;
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
            .find(|s| **s == 0 || **s > self.pool_size)
        {
            return fail(
                "scaling_sizes",
                &format!("sizes in 1..={}", self.pool_size),
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
    fn arm_serde_names_are_the_table_names() {
        for arm in Arm::ALL {
            let json = serde_json::to_string(&arm).unwrap();
            assert_eq!(json, format!("\"{}\"", arm.name()));
            assert_eq!(serde_json::from_str::<Arm>(&json).unwrap(), arm);
        }
        for arm in [
            Arm::PassRate,
            Arm::LearningProgress,
            Arm::Sec,
            Arm::Ladder,
            Arm::Plr,
        ] {
            assert!(arm.rival().is_some(), "{}", arm.name());
        }
    }

    #[test]
    fn presets_validate_and_bad_fields_are_named() {
        for p in [Preset::Smoke, Preset::Cpu, Preset::GpuLite, Preset::Gpu] {
            ExperimentConfig::preset(p).validate().unwrap();
        }
        let mut c = ExperimentConfig::preset(Preset::Cpu);
        c.k = 500;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("`k`") && e.contains("1..=200"), "{e}");
        let mut c = ExperimentConfig::preset(Preset::Cpu);
        c.hdc.window_width = 0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("hdc.window_width"), "{e}");
        // Typed fields refuse bad values when the file is read, before any stage runs.
        let mut v = serde_json::to_value(ExperimentConfig::preset(Preset::Cpu)).unwrap();
        v["model"] = "huge".into();
        let e = serde_json::from_value::<ExperimentConfig>(v)
            .unwrap_err()
            .to_string();
        assert!(e.contains("huge"), "{e}");
        let mut v = serde_json::to_value(ExperimentConfig::preset(Preset::Cpu)).unwrap();
        v["device"] = "tpu".into();
        assert!(serde_json::from_value::<ExperimentConfig>(v).is_err());
    }
}
