//! The engine: the RL loop generic over an autodiff backend. [`Core`] holds a run's network,
//! optimizer, RNG and env slots; one update is a rollout ([`rollout`]), then the update
//! ([`update`]: advantages, the rollout uploaded once, epochs of minibatches, each learned
//! whole or in row shards ([`shards`]) and stepped after global-norm clipping
//! ([`grad_ops`])). Checkpoints ([`persist`]) and behaviour cloning ([`behaviour_clone`]) run
//! on the same state. The backend-free [`crate::run::Trainer`] drives it.

mod behaviour_clone;
pub(crate) mod grad_ops;
mod persist;
mod rollout;
mod shards;
mod update;

use std::sync::Arc;
use std::time::Instant;

use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;
use envdist_core::env::EnvFactory;
use envdist_core::{Rng, TaskSampler};

use crate::adam::{TrainerAdam, adam};
use crate::config::{LrSchedule, TrainConfig};
use crate::encode::BatchBuffers;
use crate::error::TrainerError;
use crate::model::PolicyNet;
use crate::play::Slot;
use crate::stats::UpdateStats;
use shards::ShardPools;

/// A run's state on one backend: what a checkpoint saves.
pub(crate) struct Core<B: AutodiffBackend> {
    pub(crate) cfg: TrainConfig,
    pub(crate) device: B::Device,
    pub(crate) model: PolicyNet<B>,
    optim: TrainerAdam<B>,
    rng: Rng,
    factory: Arc<dyn EnvFactory>,
    slots: Vec<Slot>,
    pub(crate) update: u64,
    pub(crate) env_steps: u64,
    /// Host buffers of one batch: at least two, so a rollout's inference can fill its halves
    /// at once, and one a shard when minibatches are learned in more shards than that.
    bufs: Vec<BatchBuffers>,
    /// Thread pools of this trainer's learning shards, one a shard (made on first use): each
    /// shard's threaded products run in its own pool, see [`ShardPools`].
    shard_pools: ShardPools,
    /// The policy the run started from (runs started from a policy), for the KL to it.
    start: Option<PolicyNet<B::InnerBackend>>,
}

impl<B: AutodiffBackend> Core<B> {
    /// A fresh run: a network initialised from `cfg.seed`, a fresh optimizer, no slots yet.
    pub(crate) fn new(cfg: TrainConfig, factory: Arc<dyn EnvFactory>, device: B::Device) -> Self {
        let model = PolicyNet::init(&cfg.model, cfg.seed, &device);
        Self {
            rng: Rng::derive(cfg.seed, 0x7261),
            optim: adam(),
            model,
            cfg,
            device,
            factory,
            slots: Vec::new(),
            update: 0,
            env_steps: 0,
            bufs: vec![BatchBuffers::default(), BatchBuffers::default()],
            shard_pools: ShardPools::default(),
            start: None,
        }
    }

    /// Start from `net`'s weights (a fresh optimizer) and measure the KL to it.
    pub(crate) fn start_from(&mut self, net: PolicyNet<B>) {
        self.start = Some(net.valid());
        self.model = net;
    }

    /// The learning rate of the next update under the configured schedule.
    fn lr(&self) -> f64 {
        let total = self
            .cfg
            .total_env_steps
            .div_ceil(self.cfg.batch_size() as u64)
            .max(1);
        let progress = (self.update as f64 / total as f64).min(1.0);
        let lr = self.cfg.lr as f64;
        match self.cfg.lr_schedule {
            LrSchedule::Constant => lr,
            LrSchedule::Linear { final_fraction } => {
                lr * (1.0 - progress * (1.0 - final_fraction as f64))
            }
        }
    }

    /// One rollout and one PPO update.
    pub(crate) fn train_update(
        &mut self,
        sampler: &mut dyn TaskSampler,
    ) -> Result<UpdateStats, TrainerError> {
        let t0 = Instant::now();
        let mut r = self.rollout(sampler)?;
        let rollout_s = t0.elapsed().as_secs_f32();
        let value_only = self.update < self.cfg.value_warmup_updates;
        let targets = update::targets(&r, &self.cfg, value_only);
        let lr = self.lr();
        let learn_start = Instant::now();
        let resident = self.upload(&mut r, &targets)?;
        let (sums, batches) = self.learn(&r.features, &targets, &resident, lr, value_only)?;
        // The read of the sums waited for the device: the learning time is complete.
        let learn_s = learn_start.elapsed().as_secs_f32();
        let kl_loss = resident.start_logp.is_some();
        let kl_to_start = self.kl_to_start(&r.features, resident)?;
        let sum = |k: usize| sums.get(k).copied().unwrap_or(0.0);
        let (env_level_scale, level_scale) = rollout::level_scale_means(&r);
        // Saturating: a resumed checkpoint may hold any count.
        self.update = self.update.saturating_add(1);
        let b = batches.max(1) as f64;
        let seconds = t0.elapsed().as_secs_f32();
        Ok(UpdateStats {
            update: self.update,
            env_steps: self.env_steps,
            episodes: r.finished,
            success_rate: (r.finished > 0).then(|| r.successes as f32 / r.finished as f32),
            mean_return: (r.finished > 0).then(|| r.return_sum / r.finished as f32),
            policy_loss: (sum(0) / b) as f32,
            value_loss: (sum(1) / b) as f32,
            entropy: (sum(2) / b) as f32,
            approx_kl: (sum(3) / b) as f32,
            clip_fraction: (sum(4) / b) as f32,
            grad_norm: (sum(5) / b) as f32,
            lr: lr as f32,
            rollout_seconds: rollout_s,
            rollout_infer_seconds: r.infer_seconds as f32,
            learn_seconds: learn_s,
            seconds,
            env_steps_per_second: (self.cfg.batch_size() as f32 / seconds.max(1e-6)),
            value_only,
            kl_to_start,
            kl_loss: kl_loss.then(|| (sum(6) / b) as f32),
            mean_harness_level: level_scale.map(|m| m[0]),
            mean_scale: level_scale.map(|m| m[1]),
            env_level_scale,
            env_outcomes: std::mem::take(&mut r.env_outcomes),
        })
    }
}
