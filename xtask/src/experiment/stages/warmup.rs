//! Stage `warmup`: the base model every arm starts from, PPO on the whole pool with harness
//! level and scale drawn uniformly.

use std::path::Path;
use std::sync::Arc;

use envdist_core::EnvFactory;
use envdist_curriculum::{HdcConfig, HdcSampler, Mode};
use envdist_envs::Suite;
use envdist_trainer::{Device, RunOptions, TrainConfig, TrainPreset, Trainer};
use serde::{Deserialize, Serialize};

use super::pool::PoolStage;
use super::{bar, relative, specs_of};

/// What the warm-up depends on (besides the pool).
#[derive(Debug, Clone, Serialize)]
pub struct WarmupKey {
    /// Environment steps.
    pub steps: u64,
    /// Network and RL preset.
    pub model: TrainPreset,
    /// Device trained on.
    pub device: Device,
    /// Master seed.
    pub seed: u64,
}

/// Warm-up output: the base model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarmupStage {
    /// Checkpoint directory (relative to the run directory).
    pub checkpoint: String,
    /// Environment steps trained.
    pub env_steps: u64,
    /// Throughput, learning included.
    pub env_steps_per_second: f32,
    /// Rollouts alone, env steps/s.
    #[serde(default)]
    pub rollout_steps_per_second: f32,
    /// Learning alone, samples/s (each sample counted once per epoch).
    #[serde(default)]
    pub learn_samples_per_second: f32,
}

/// The trainer config of a run of `steps` steps from `seed`.
pub fn train_config(model: TrainPreset, steps: u64, seed: u64) -> TrainConfig {
    let mut t = TrainConfig::of(model);
    t.total_env_steps = steps;
    t.seed = seed;
    t
}

/// Train the base model into `dir/checkpoint`.
pub fn run(
    key: &WarmupKey,
    suite: Arc<Suite>,
    pool: &PoolStage,
    dir: &Path,
    run_root: &Path,
) -> anyhow::Result<WarmupStage> {
    let specs = specs_of(&suite, &pool.pool)?;
    let hdc = HdcConfig {
        mode: Mode::BaselineUniform,
        ..HdcConfig::default()
    };
    let mut sampler = HdcSampler::new(&specs, None, hdc, key.seed ^ 0x5741_524d)?;
    let tcfg = train_config(key.model, key.steps, key.seed);
    let factory: Arc<dyn EnvFactory> = suite;
    let mut trainer = Trainer::new(tcfg, factory, key.device)?;
    let pb = bar(key.steps, "warm-up (env steps)");
    let opts = RunOptions {
        out_dir: Some(dir.to_path_buf()),
        checkpoint_every: 20,
    };
    let summary = trainer.run(&mut sampler, &opts, &mut |s| {
        pb.set_position(s.env_steps);
        if let Some(r) = s.success_rate {
            pb.set_message(format!("success {r:.2}"));
        }
    })?;
    pb.finish_and_clear();
    Ok(WarmupStage {
        checkpoint: relative(&dir.join("checkpoint"), run_root),
        env_steps: trainer.env_steps(),
        env_steps_per_second: summary.env_steps_per_second,
        rollout_steps_per_second: summary.rollout_steps_per_second,
        learn_samples_per_second: summary.learn_samples_per_second,
    })
}
