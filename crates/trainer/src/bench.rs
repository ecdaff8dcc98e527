//! Training throughput, measured the way the study trains: a fixed number of PPO updates
//! after warm-up updates (allocation, autotuning), split into rollout (batched inference and
//! env stepping) and learning (forward, backward and Adam over the rollout's epochs).

use envdist_core::InvalidValue;
use std::sync::Arc;

use envdist_core::TaskSampler;
use envdist_core::env::EnvFactory;
use serde::{Deserialize, Serialize};

use crate::backend::Device;
use crate::config::TrainConfig;
use crate::error::TrainerError;
use crate::run::Trainer;

/// Schema version of [`Throughput`] records.
pub const THROUGHPUT_SCHEMA_VERSION: u32 = 1;

/// One throughput measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Always [`THROUGHPUT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The device trained on.
    pub device: String,
    /// Threads of the rayon pool (env stepping, encoding, and the CPU backend's kernels).
    pub threads: usize,
    /// Parameters of the network.
    pub params: usize,
    /// Environments stepped together.
    pub num_envs: usize,
    /// Samples per update (`num_envs x rollout_len`).
    pub batch: usize,
    /// Minibatch size of the learning passes.
    pub minibatch: usize,
    /// Shards each minibatch is learned in ([`crate::TrainConfig::learn_shards`]; 1 in files
    /// written before the field).
    #[serde(default = "one_shard")]
    pub learn_shards: usize,
    /// Passes over each rollout.
    pub epochs: usize,
    /// Updates timed (after the warm-up updates).
    pub updates: u32,
    /// Environment steps per second, learning included.
    pub env_steps_per_s: f64,
    /// Rollout alone: environment steps per second of acting and stepping.
    pub rollout_steps_per_s: f64,
    /// Learning alone: samples per second through forward, backward and Adam (each sample
    /// counted once per epoch).
    pub learn_samples_per_s: f64,
    /// Seconds per update outside both (advantages, bookkeeping).
    pub other_seconds_per_update: f64,
    /// Where one update's time goes, seconds per update: env stepping (and restarts), batched
    /// inference (upload, forward, read back), learning (the rollout to the device once, then
    /// forward, backward, optimizer over every epoch; on a device, kernels run asynchronously
    /// and the time is counted where the final read waits for them), the rest.
    #[serde(default)]
    pub profile: UpdateProfile,
}

/// One update's time, split (see [`Throughput::profile`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateProfile {
    /// Env stepping, restarts, outcome bookkeeping.
    pub env_seconds: f64,
    /// Batched inference during the rollout.
    pub infer_seconds: f64,
    /// Learning.
    pub learn_seconds: f64,
    /// Advantages, statistics, the KL diagnostic.
    pub other_seconds: f64,
}

fn one_shard() -> usize {
    1
}

impl Throughput {
    /// End-to-end env steps/s predicted from the two parts alone: a rollout step costs
    /// `1/rollout` and learns `epochs` times at `1/learn` each.
    pub fn predicted_env_steps_per_s(&self) -> f64 {
        1.0 / (1.0 / self.rollout_steps_per_s.max(1e-9)
            + self.epochs as f64 / self.learn_samples_per_s.max(1e-9))
    }
}

/// Train `warmup` updates, then time `updates` more with tasks from `sampler`.
pub fn measure_throughput(
    cfg: TrainConfig,
    factory: Arc<dyn EnvFactory>,
    device: Device,
    sampler: &mut dyn TaskSampler,
    warmup: u32,
    updates: u32,
) -> Result<Throughput, TrainerError> {
    if updates == 0 {
        return Err(TrainerError::Config(InvalidValue::new(
            "updates",
            "at least 1 timed update",
            "0",
        )));
    }
    let mut cfg = cfg;
    // The learning-rate schedule's horizon only; the budget is the update count.
    cfg.total_env_steps = (warmup + updates) as u64 * cfg.batch_size() as u64;
    let mut trainer = Trainer::new(cfg.clone(), factory, device)?;
    for _ in 0..warmup {
        trainer.train_update(sampler)?;
    }
    let (mut total, mut rollout) = (0.0f64, 0.0f64);
    let (mut learn, mut infer) = (0.0f64, 0.0f64);
    for _ in 0..updates {
        let s = trainer.train_update(sampler)?;
        total += s.seconds as f64;
        rollout += s.rollout_seconds as f64;
        infer += s.rollout_infer_seconds as f64;
        learn += s.learn_seconds as f64;
    }
    let per = |x: f64| x / updates as f64;
    let steps = updates as f64 * cfg.batch_size() as f64;
    Ok(Throughput {
        schema_version: THROUGHPUT_SCHEMA_VERSION,
        device: device.to_string(),
        threads: rayon::current_num_threads(),
        params: trainer.policy().num_params(),
        num_envs: cfg.num_envs,
        batch: cfg.batch_size(),
        minibatch: cfg.minibatch,
        learn_shards: cfg.learn_shards,
        epochs: cfg.epochs,
        updates,
        env_steps_per_s: steps / total.max(1e-9),
        rollout_steps_per_s: steps / rollout.max(1e-9),
        learn_samples_per_s: steps * cfg.epochs as f64 / learn.max(1e-9),
        other_seconds_per_update: ((total - rollout - learn) / updates as f64).max(0.0),
        profile: UpdateProfile {
            env_seconds: per(rollout - infer),
            infer_seconds: per(infer),
            learn_seconds: per(learn),
            other_seconds: per(total - rollout - learn).max(0.0),
        },
    })
}
