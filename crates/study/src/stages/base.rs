//! Stage `base`: the pretrained model every arm starts from: behaviour cloning of the solvers
//! on the pool's environments at harness levels and scales drawn uniformly, no RL.

use std::sync::Arc;

use envdist_core::{EnvFactory, TaskSampler, Turn};
use envdist_curriculum::{HdcConfig, HdcSampler, Mode, StepBalanced};
use envdist_envs::Suite;
use envdist_trainer::{CloneConfig, CloneSummary, RunOptions, TrainConfig, Trainer};
use serde::{Deserialize, Serialize};

use super::pool::PoolStage;
use super::specs_of;
use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::ExperimentConfig;
use crate::error::Result;
use crate::layout::RunLayout;
use crate::observer::Observer;

/// Base output (the checkpoint is `checkpoint/` in the stage directory).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BaseStage {
    /// What cloning did.
    pub clone: CloneSummary,
    /// The critic warm-up's value loss per update (empty when there was none).
    #[serde(default)]
    pub critic_value_loss: Vec<f32>,
}

/// The stage's key: the pool, the master seed, the suite (canvas, hints), the network, the
/// device and the `base` section, over the code of the suite, curriculum and trainer.
pub fn key(cfg: &ExperimentConfig, code: &CodeVersion, pool: &StageKey) -> Result<StageKey> {
    StageKey::new(
        code,
        &[Crate::Core, Crate::Envs, Crate::Curriculum, Crate::Trainer],
    )?
    .after("pool", pool)?
    .with("seed", &cfg.seed)?
    .with("suite", &cfg.suite)?
    .with("model", &cfg.model)?
    .with_some("network", cfg.custom_network())?
    .with("device", &cfg.device)?
    .with("base", &cfg.base)
}

/// Clone the solvers into a fresh network, checkpointed at the layout's base checkpoint.
pub fn run(
    cfg: &ExperimentConfig,
    suite: Arc<Suite>,
    pool: &PoolStage,
    layout: &RunLayout,
    observer: &dyn Observer,
) -> Result<BaseStage> {
    let specs = specs_of(&suite, &pool.pool)?;
    let uniform = HdcConfig {
        mode: Mode::BaselineUniform,
        ..HdcConfig::default()
    };
    let seed = cfg.seed ^ 0x4243_4c4e;
    let mut sampler: Box<dyn TaskSampler> = if cfg.base.balance_turns {
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
    let mut train = TrainConfig::of(cfg.model);
    // The network is the arms' (they start from these weights); the preset gives the rest.
    train.model = cfg.rl.model.clone();
    train.total_env_steps = 1;
    train.seed = cfg.seed;
    let mut trainer = Trainer::new(train, factory.clone(), cfg.device)?;
    let progress = observer.progress("base: cloning the solvers", cfg.base.samples);
    let clone = trainer.clone_behaviour(
        sampler.as_mut(),
        &CloneConfig {
            samples: cfg.base.samples,
            noise: cfg.base.noise,
            seed: cfg.seed,
            ..CloneConfig::default()
        },
        &mut |n| progress.set(n),
    )?;
    progress.finish();
    let updates = cfg.base.critic_warmup_updates;
    if updates == 0 {
        trainer.save_checkpoint(&layout.base_checkpoint(), sampler.as_ref())?;
        return Ok(BaseStage {
            clone,
            critic_value_loss: vec![],
        });
    }
    // The critic warm-up: value-only updates on the base's own rollouts of the same mixture.
    let mut warm = TrainConfig::of(cfg.model);
    warm.model = cfg.rl.model.clone();
    warm.seed = cfg.seed ^ 0x4352_4954;
    warm.lr = cfg.base.critic_lr;
    warm.value_warmup_updates = updates;
    warm.total_env_steps = updates * warm.batch_size() as u64;
    let mut critic = Trainer::from_policy(warm, factory, &trainer.policy())?;
    let progress = observer.progress("base: warming the critic", updates);
    let mut losses = Vec::new();
    critic.run(sampler.as_mut(), &RunOptions::default(), &mut |s| {
        losses.push(s.value_loss);
        progress.set(s.update);
    })?;
    progress.finish();
    critic.save_checkpoint(&layout.base_checkpoint(), sampler.as_ref())?;
    Ok(BaseStage {
        clone,
        critic_value_loss: losses,
    })
}
