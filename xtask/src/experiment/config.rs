//! Experiment configuration: presets and every knob of the study, serialisable so that a
//! config file can override any field and so that each stage's cache key is the part of the
//! config it depends on.

use envdist_core::{InvalidValue, Validate};
use envdist_trainer::{Device, ScaleChoice, TrainPreset};
use serde::{Deserialize, Serialize};

/// Schema version of `config.json` and of the experiment's other files.
pub const EXPERIMENT_SCHEMA_VERSION: u32 = 1;

/// Named presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// Tiny pool and budget: the whole pipeline in a few minutes (CI runs it as a test).
    Smoke,
    /// The default: the study at laptop scale on 2 CPU cores.
    Cpu,
    /// Paper scale: 200 environments, k = 30, larger model, CUDA.
    Gpu,
}

impl Preset {
    /// The preset's name as given to `--preset`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Smoke => "smoke",
            Preset::Cpu => "cpu",
            Preset::Gpu => "gpu",
        }
    }
}

/// The training arms of the study (the paper's main table and ablations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arm {
    /// The model before RL (the warm-up model): the reference for relative gains.
    Base,
    /// Every pool environment, no curriculum.
    AllPool,
    /// k random pool environments (a new draw per seed), no curriculum.
    RandomK,
    /// The AES selection, no curriculum.
    Aes,
    /// The AES selection with the full HDC curriculum.
    #[serde(rename = "aes+hdc", alias = "aes-hdc")]
    AesHdc,
    /// k random environments with the full HDC curriculum.
    #[serde(rename = "random-k+hdc", alias = "random-k-hdc")]
    RandomKHdc,
    /// AES without the conflict term, no curriculum (the paper's key ablation: compare with
    /// `aes`).
    AesNoConflict,
    /// AES with harness weakening only.
    #[serde(rename = "aes+harness-only", alias = "aes-harness-only")]
    AesHarnessOnly,
    /// AES with state-scale progression only.
    #[serde(rename = "aes+scale-only", alias = "aes-scale-only")]
    AesScaleOnly,
}

impl Arm {
    /// Every arm in report order.
    pub const ALL: [Arm; 9] = [
        Arm::Base,
        Arm::AllPool,
        Arm::RandomK,
        Arm::Aes,
        Arm::AesHdc,
        Arm::RandomKHdc,
        Arm::AesNoConflict,
        Arm::AesHarnessOnly,
        Arm::AesScaleOnly,
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
        }
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
    /// Training seeds per arm.
    pub seeds: u32,
    /// `cpu`, `cuda` or `cuda:N`.
    pub device: Device,
    /// Canvas (pixels per side) the policy sees.
    pub canvas: u32,
    /// Pool size used (the first `pool_size` pool environments in a seeded shuffle that keeps
    /// every conflict pair together; 200 = the whole pool).
    pub pool_size: usize,
    /// Selection budget k.
    pub k: usize,
    /// Trajectories per environment for profiling (half per policy).
    pub profile_trajectories: u32,
    /// Environment steps of the warm-up run that makes the base model.
    pub warmup_steps: u64,
    /// Episodes per environment for per-env gradients.
    pub gradient_episodes: u32,
    /// Projection dimension of per-env gradients.
    pub gradient_dim: usize,
    /// Environment steps per training arm and seed (equal for every arm).
    pub train_steps: u64,
    /// Evaluation episodes per environment (fixed seeds, greedy actions, H4).
    pub eval_episodes: u32,
    /// Scale of evaluation episodes: `min`, `mid` or `max` of each env's range.
    pub eval_scale: ScaleChoice,
    /// Held-out (OOD) environments evaluated (0 = all).
    pub ood_envs: usize,
    /// Pool sizes of the scaling study (random subsets; empty to skip it).
    pub scaling_sizes: Vec<usize>,
    /// Our extension, off by default (the paper's method): exclude from the AES, no-conflict and
    /// coverage-only selections every environment whose per-env gradient is exactly zero (the
    /// base model never solved it, so the conflict term cannot see it and training on it gives
    /// no reward). See docs/experiments/README.md.
    #[serde(default)]
    pub exclude_no_signal: bool,
    /// Trainer network and RL preset (`cpu` or `gpu`).
    pub model: TrainPreset,
    /// Arms to run.
    pub arms: Vec<Arm>,
}

impl ExperimentConfig {
    /// The values of a preset.
    pub fn preset(preset: Preset) -> Self {
        // The `cpu` values are sized from measured throughput (about 2,000 env steps/s with
        // learning on 2 cores): about 35-45 minutes for the whole study.
        let base = Self {
            schema_version: EXPERIMENT_SCHEMA_VERSION,
            preset,
            seed: 2026,
            seeds: 3,
            device: Device::Cpu,
            canvas: 32,
            pool_size: 200,
            k: 30,
            profile_trajectories: 40,
            warmup_steps: 50_000,
            // Per-env gradient cosines change sign with the seed below a few hundred episodes.
            gradient_episodes: 256,
            gradient_dim: 1024,
            train_steps: 100_000,
            eval_episodes: 16,
            eval_scale: ScaleChoice::Min,
            ood_envs: 0,
            scaling_sizes: vec![10, 30, 100, 200],
            exclude_no_signal: false,
            model: TrainPreset::Cpu,
            arms: Arm::ALL.to_vec(),
        };
        match preset {
            Preset::Smoke => Self {
                seeds: 1,
                canvas: 16,
                pool_size: 40,
                k: 8,
                profile_trajectories: 4,
                warmup_steps: 1_500,
                gradient_episodes: 2,
                gradient_dim: 64,
                train_steps: 1_000,
                eval_episodes: 1,
                ood_envs: 8,
                scaling_sizes: vec![],
                ..base
            },
            Preset::Cpu => base,
            Preset::Gpu => Self {
                seeds: 3,
                device: Device::Cuda(0),
                canvas: 64,
                warmup_steps: 400_000,
                gradient_episodes: 512,
                train_steps: 2_000_000,
                eval_episodes: 32,
                eval_scale: ScaleChoice::Mid,
                scaling_sizes: vec![5, 10, 30, 60, 100, 200],
                model: TrainPreset::Gpu,
                ..base
            },
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
        if self.eval_episodes == 0 {
            return fail("eval_episodes", "at least 1", "0".into());
        }
        if !matches!(
            self.eval_scale,
            ScaleChoice::Min | ScaleChoice::Mid | ScaleChoice::Max
        ) {
            return fail(
                "eval_scale",
                "`min`, `mid` or `max`",
                format!("{:?}", self.eval_scale),
            );
        }
        if !self.arms.contains(&Arm::Base) {
            return fail(
                "arms",
                "a list containing `base` (relative gains need it)",
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
    }

    #[test]
    fn presets_validate_and_bad_fields_are_named() {
        for p in [Preset::Smoke, Preset::Cpu, Preset::Gpu] {
            ExperimentConfig::preset(p).validate().unwrap();
        }
        let mut c = ExperimentConfig::preset(Preset::Cpu);
        c.k = 500;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("`k`") && e.contains("1..=200"), "{e}");
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
