//! Stage `base`: the pretrained model every arm starts from: behaviour cloning of the solvers
//! on the pool's environments at harness levels and scales drawn uniformly, no RL.

use std::path::Path;
use std::sync::Arc;

use envdist_core::{EnvFactory, TaskSampler, Turn};
use envdist_curriculum::{HdcConfig, HdcSampler, Mode, StepBalanced};
use envdist_envs::Suite;
use envdist_trainer::{CloneConfig, CloneSummary, Device, TrainConfig, TrainPreset, Trainer};
use serde::{Deserialize, Serialize};

use super::pool::PoolStage;
use super::{bar, relative, specs_of};
use crate::experiment::config::BaseConfig;

/// What the base depends on (besides the pool).
#[derive(Debug, Clone, Serialize)]
pub struct BaseKey {
    /// Demonstrations.
    pub base: BaseConfig,
    /// Network preset.
    pub model: TrainPreset,
    /// Device trained on.
    pub device: Device,
    /// Master seed.
    pub seed: u64,
}

/// Base output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BaseStage {
    /// Checkpoint directory (relative to the run directory).
    pub checkpoint: String,
    /// What cloning did.
    pub clone: CloneSummary,
}

/// The trainer config of a run of `steps` steps from `seed`.
pub fn train_config(model: TrainPreset, steps: u64, seed: u64) -> TrainConfig {
    let mut t = TrainConfig::of(model);
    t.total_env_steps = steps;
    t.seed = seed;
    t
}

/// Clone the solvers into a fresh network, checkpointed in `dir/checkpoint`.
pub fn run(
    key: &BaseKey,
    suite: Arc<Suite>,
    pool: &PoolStage,
    dir: &Path,
    run_root: &Path,
) -> anyhow::Result<BaseStage> {
    let specs = specs_of(&suite, &pool.pool)?;
    let uniform = HdcConfig {
        mode: Mode::BaselineUniform,
        ..HdcConfig::default()
    };
    let seed = key.seed ^ 0x4243_4c4e;
    let mut sampler: Box<dyn TaskSampler> = if key.base.balance_turns {
        // One sample per step: uniform over environments, the one-step single-turn tasks
        // would get a few percent of the demonstrations. Half the steps go to each kind.
        let mut parts = Vec::new();
        for (i, turn) in [Turn::Single, Turn::Multi].into_iter().enumerate() {
            let of_kind: Vec<_> = specs.iter().filter(|s| s.turn == turn).cloned().collect();
            if of_kind.is_empty() {
                continue;
            }
            let ids = of_kind.iter().map(|s| s.id.clone()).collect();
            let part: Box<dyn TaskSampler> = Box::new(HdcSampler::new(
                &of_kind,
                None,
                uniform.clone(),
                seed + i as u64,
            )?);
            parts.push((ids, part));
        }
        Box::new(StepBalanced::new(parts, seed)?)
    } else {
        Box::new(HdcSampler::new(&specs, None, uniform, seed)?)
    };
    let factory: Arc<dyn EnvFactory> = suite;
    let mut trainer = Trainer::new(train_config(key.model, 1, key.seed), factory, key.device)?;
    let pb = bar(key.base.samples, "base: cloning the solvers");
    let clone = trainer.clone_behaviour(
        sampler.as_mut(),
        &CloneConfig {
            samples: key.base.samples,
            noise: key.base.noise,
            seed: key.seed,
            ..CloneConfig::default()
        },
        &mut |n| pb.set_position(n),
    )?;
    pb.finish_and_clear();
    let ckpt = dir.join("checkpoint");
    trainer.save_checkpoint(&ckpt, sampler.as_ref())?;
    Ok(BaseStage {
        checkpoint: relative(&ckpt, run_root),
        clone,
    })
}
