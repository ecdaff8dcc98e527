//! The RL loop, generic over an autodiff backend: batched rollouts, PPO-clip updates with
//! global gradient-norm clipping, the learning-rate schedule, and checkpoints that resume.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use burn::module::{AutodiffModule, Module, ModuleVisitor, Param};
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{GradientsParams, Optimizer};
use burn::record::{FullPrecisionSettings, NamedMpkBytesRecorder, Recorder};
use burn::tensor::activation::log_softmax;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor, TensorData};
use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, EnvId, NUM_ACTIONS, Rng, Task, TaskSampler};
use serde::{Deserialize, Serialize};

use crate::adam::OnePassAdam;
use crate::config::{AdvantageKind, LrSchedule, TrainConfig};
use crate::encode::{BatchBuffers, Features, NUM_CHANNELS};
use crate::model::{ConvGeometry, Inputs, PolicyNet, text_from_buffers};
use crate::play::{
    Slot, infer_rows, outcome, restart_slots, sample_action, step_slots, to_inner_device, to_vec,
};
use crate::ppo::{gae, group_relative};
use crate::{TrainerError, UpdateStats};

/// Schema version of `checkpoint/state.json`.
pub const CHECKPOINT_SCHEMA_VERSION: u32 = 1;

type Recorder_ = NamedMpkBytesRecorder<FullPrecisionSettings>;

/// One rollout, time-major (`[t][env]`).
struct Rollout<IB: Backend> {
    features: Vec<Features>,
    /// Each step's uploaded patches, presence and masks (`[num_envs, ..]`), reused as the
    /// update's training inputs: nothing image-sized is uploaded twice.
    patches: Vec<Tensor<IB, 3>>,
    present: Vec<Tensor<IB, 3>>,
    mask: Vec<Tensor<IB, 2>>,
    actions: Vec<ActionId>,
    logp: Vec<f32>,
    values: Vec<f32>,
    rewards: Vec<f32>,
    ends: Vec<bool>,
    terminal: Vec<bool>,
    episode: Vec<usize>,
    episode_group: Vec<usize>,
    episode_return: Vec<Option<f32>>,
    /// Per episode: whether its steps enter the loss (see `TaskSampler::trains_on`).
    episode_trains: Vec<bool>,
    last_values: Vec<f32>,
    finished: u32,
    successes: u32,
    return_sum: f32,
    env_outcomes: std::collections::BTreeMap<EnvId, [u32; 2]>,
    /// Per environment, the sums of the harness levels and scales of its ended episodes
    /// (where a curriculum stands; divided by `env_outcomes`' counts in the statistics).
    env_level_scale_sums: std::collections::BTreeMap<EnvId, [f64; 2]>,
    /// Seconds of batched inference (upload, forward, read back) during the rollout.
    infer_seconds: f64,
}

/// Saved mid-episode state of one env slot.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SlotState {
    task: Task,
    actions: Vec<ActionId>,
    /// Whether the sampler wanted gradients from this episode.
    #[serde(default = "yes")]
    trains: bool,
}

fn yes() -> bool {
    true
}

/// `checkpoint/state.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CheckpointState {
    pub schema_version: u32,
    pub config: TrainConfig,
    pub update: u64,
    pub env_steps: u64,
    rng: Rng,
    sampler: serde_json::Value,
    slots: Vec<SlotState>,
    model_file: String,
    optimizer_file: String,
    /// The policy the run started from ([`START_FILE`], runs started from a policy), so that
    /// a resumed run measures its KL to the same reference as the run it continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    start_file: Option<String>,
}

/// The file of a checkpoint holding the policy the run started from: it never changes during
/// a run, so it keeps one name.
pub(crate) const START_FILE: &str = "start.mpk";

pub(crate) struct Core<B: AutodiffBackend> {
    pub cfg: TrainConfig,
    pub device: B::Device,
    pub model: PolicyNet<B>,
    optim: TrainerAdam<B>,
    rng: Rng,
    pub(crate) factory: Arc<dyn EnvFactory>,
    slots: Vec<Slot>,
    pub update: u64,
    pub env_steps: u64,
    /// Host buffers of one batch: at least two, so a rollout's inference can fill its halves
    /// at once, and one a shard when minibatches are learned in more shards than that.
    bufs: Vec<BatchBuffers>,
    /// Thread pools of this trainer's learning shards, one a shard (made on first use): each
    /// shard's threaded products run in its own pool, see [`ShardPools`].
    shard_pools: ShardPools,
    /// The policy the run started from (runs started from a policy), for the KL to it.
    start: Option<PolicyNet<B::InnerBackend>>,
}

/// The trainer's optimizer: Adam, stepped in one pass on flex ([`OnePassAdam`]).
pub(crate) type TrainerAdam<B> = OptimizerAdaptor<OnePassAdam, PolicyNet<B>, B>;

pub(crate) fn adam<B: AutodiffBackend>() -> TrainerAdam<B> {
    OptimizerAdaptor::from(OnePassAdam::new())
}

impl<B: AutodiffBackend> Core<B> {
    pub fn new(cfg: TrainConfig, factory: Arc<dyn EnvFactory>, device: B::Device) -> Self {
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
    pub fn start_from(&mut self, net: PolicyNet<B>) {
        self.start = Some(net.valid());
        self.model = net;
    }

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

    fn rollout(
        &mut self,
        sampler: &mut dyn TaskSampler,
    ) -> Result<Rollout<B::InnerBackend>, TrainerError> {
        let cfg = self.cfg.clone();
        let n = cfg.num_envs;
        let mut groups: Vec<EnvId> = Vec::new();
        let mut group_of = |id: &EnvId| match groups.iter().position(|g| g == id) {
            Some(i) => i,
            None => {
                groups.push(id.clone());
                groups.len() - 1
            }
        };
        while self.slots.len() < n {
            let task = sampler.sample();
            let trains = sampler.trains_on(&task);
            let mut slot = Slot::start(self.factory.as_ref(), None, task, &cfg.model)?;
            slot.trains = trains;
            self.slots.push(slot);
        }
        let cap = n * cfg.rollout_len;
        let mut r = Rollout {
            features: Vec::with_capacity(cap),
            patches: Vec::with_capacity(cfg.rollout_len),
            present: Vec::with_capacity(cfg.rollout_len),
            mask: Vec::with_capacity(cfg.rollout_len),
            actions: Vec::with_capacity(cap),
            logp: Vec::with_capacity(cap),
            values: Vec::with_capacity(cap),
            rewards: Vec::with_capacity(cap),
            ends: Vec::with_capacity(cap),
            terminal: Vec::with_capacity(cap),
            episode: Vec::with_capacity(cap),
            episode_group: Vec::new(),
            episode_return: Vec::new(),
            episode_trains: Vec::new(),
            last_values: Vec::new(),
            finished: 0,
            successes: 0,
            return_sum: 0.0,
            env_outcomes: Default::default(),
            env_level_scale_sums: Default::default(),
            infer_seconds: 0.0,
        };
        let mut current: Vec<usize> = (0..n).collect();
        for s in &self.slots {
            r.episode_group.push(group_of(&s.task.env));
            r.episode_return.push(None);
            r.episode_trains.push(s.trains);
        }
        let inner = self.model.valid();
        let inner_device = to_inner_device::<B>(&self.device);
        for _ in 0..cfg.rollout_len {
            let t_infer = Instant::now();
            let rows: Vec<&Features> = self.slots.iter().map(|s| &s.features).collect();
            // The read back of the logits waits for the device: the time is the inference's.
            let mut out = infer_rows(
                &inner,
                two_buffers(&mut self.bufs),
                &rows,
                &cfg.model,
                &inner_device,
            )?;
            let (patches, present, mask) = out.kept_inputs();
            r.patches.push(patches);
            r.present.push(present);
            r.mask.push(mask);
            let (logits, values) = (out.logits, out.values);
            r.infer_seconds += t_infer.elapsed().as_secs_f64();
            let mut actions = Vec::with_capacity(n);
            for e in 0..n {
                let (a, lp) = sample_action(
                    &logits[e * NUM_ACTIONS..(e + 1) * NUM_ACTIONS],
                    &mut self.rng,
                );
                actions.push(a);
                r.logp.push(lp);
                r.values.push(values[e]);
                r.episode.push(current[e]);
                // The slot's features are replaced by the step (or the restart) below.
                r.features.push(std::mem::replace(
                    &mut self.slots[e].features,
                    Features {
                        patches: Vec::new(),
                        text: Default::default(),
                        legal: Default::default(),
                    },
                ));
            }
            let results = step_slots(&mut self.slots, &actions, &cfg.model);
            r.actions.extend(actions);
            // Outcomes are reported and new tasks drawn in slot order (the sampler is
            // sequential and its order fixes the run); the envs restart in parallel.
            let mut restarts: Vec<(usize, Task)> = Vec::new();
            let mut trains_next: Vec<bool> = Vec::new();
            for (e, res) in results.iter().enumerate() {
                r.rewards.push(res.reward);
                r.ends.push(res.ended);
                r.terminal.push(res.terminal);
                if res.ended {
                    let out = outcome(&self.slots[e], res.success);
                    sampler.update(&out)?;
                    r.finished += 1;
                    r.successes += res.success as u32;
                    r.return_sum += out.episode_return;
                    let counts = r.env_outcomes.entry(out.task.env.clone()).or_default();
                    counts[0] += 1;
                    counts[1] += res.success as u32;
                    let sums = r
                        .env_level_scale_sums
                        .entry(out.task.env.clone())
                        .or_default();
                    sums[0] += out.task.harness.index() as f64;
                    sums[1] += f64::from(out.task.scale);
                    r.episode_return[current[e]] = Some(out.episode_return);
                    let task = sampler.sample();
                    trains_next.push(sampler.trains_on(&task));
                    restarts.push((e, task));
                }
            }
            restart_slots(
                &mut self.slots,
                &restarts,
                self.factory.as_ref(),
                &cfg.model,
            )?;
            for ((e, task), trains) in restarts.iter().zip(trains_next) {
                self.slots[*e].trains = trains;
                current[*e] = r.episode_group.len();
                r.episode_group.push(group_of(&task.env));
                r.episode_return.push(None);
                r.episode_trains.push(trains);
            }
            self.env_steps = self.env_steps.saturating_add(n as u64);
        }
        let rows: Vec<&Features> = self.slots.iter().map(|s| &s.features).collect();
        r.last_values = infer_rows(
            &inner,
            two_buffers(&mut self.bufs),
            &rows,
            &cfg.model,
            &inner_device,
        )?
        .values;
        Ok(r)
    }

    /// One rollout and one PPO update.
    // `slice([lo..hi])` is burn's one-dimension slice, not a one-element range vector.
    #[allow(clippy::single_range_in_vec_init)]
    pub fn train_update(
        &mut self,
        sampler: &mut dyn TaskSampler,
    ) -> Result<UpdateStats, TrainerError> {
        let t0 = Instant::now();
        let mut r = self.rollout(sampler)?;
        let rollout_s = t0.elapsed().as_secs_f32();
        let cfg = self.cfg.clone();
        // Critic warm-up: the value head alone learns, on Monte-Carlo returns (lambda = 1:
        // bootstrapping from a critic that has not learned yet would teach it its own errors).
        let value_only = self.update < cfg.value_warmup_updates;
        let (gae_adv, returns) = gae(
            &r.rewards,
            &r.values,
            &r.ends,
            if cfg.bootstrap_time_limits {
                &r.terminal
            } else {
                &r.ends
            },
            &r.last_values,
            cfg.num_envs,
            cfg.gamma,
            if value_only { 1.0 } else { cfg.gae_lambda },
        );
        let (mut adv, mut weight) = match cfg.advantage {
            AdvantageKind::Gae => (gae_adv, vec![1.0f32; r.rewards.len()]),
            AdvantageKind::Grpo => group_relative(&r.episode, &r.episode_group, &r.episode_return),
        };
        // Steps of episodes the sampler plays for their scores only (robust PLR's new levels)
        // weigh nothing: no policy, value or entropy gradient comes from them.
        let masked = r.episode_trains.iter().any(|t| !t);
        if masked {
            for (w, &ep) in weight.iter_mut().zip(&r.episode) {
                if !r.episode_trains[ep] {
                    *w = 0.0;
                }
            }
        }
        let per_minibatch = cfg.advantage == AdvantageKind::Gae && cfg.minibatch_advantage_norm;
        if cfg.advantage == AdvantageKind::Gae && !per_minibatch {
            let all: Vec<usize> = (0..adv.len()).collect();
            let (mean, std) = kept_mean_std(&adv, &weight, &all);
            for a in &mut adv {
                *a = ((*a as f64 - mean) / std) as f32;
            }
        }
        let lr = self.lr();
        let learn_start = Instant::now();
        let total = r.rewards.len();
        let dev = &self.device;
        // The whole rollout goes to the device once; minibatches are gathered there by index,
        // and statistics are summed there and read back once per update: no host round trip
        // per minibatch.
        // Kept as matrices (one row per sample): gathering rows of a matrix is one copy per
        // row, while a rank-3 gather walks every inner row.
        let resident = |parts: Vec<Tensor<B::InnerBackend, 3>>| -> Tensor<B, 2> {
            let t = Tensor::cat(parts, 0);
            let [rows, a, b] = t.dims();
            Tensor::from_inner(t.reshape([rows, a * b]))
        };
        let patches_all = resident(std::mem::take(&mut r.patches));
        let present_all = resident(std::mem::take(&mut r.present));
        let mask_all: Tensor<B, 2> =
            Tensor::from_inner(Tensor::cat(std::mem::take(&mut r.mask), 0));
        // The KL penalty's reference: the start's log-probabilities at every rollout state,
        // once per rollout (the start never changes), as a constant of the loss.
        let start_logp_all: Option<Tensor<B, 2>> = if cfg.kl_coef > 0.0 {
            let start = self
                .start
                .as_ref()
                .ok_or_else(|| crate::run::no_kl_reference(cfg.kl_coef))?;
            let inner_dev = to_inner_device::<B>(dev);
            let (patches, present, mask) = (
                patches_all.clone().inner(),
                present_all.clone().inner(),
                mask_all.clone().inner(),
            );
            let mut parts = Vec::with_capacity(total.div_ceil(crate::model::GEMM_K_MAX));
            for lo in (0..total).step_by(crate::model::GEMM_K_MAX) {
                let hi = (lo + crate::model::GEMM_K_MAX).min(total);
                let x = rollout_inputs(
                    &mut self.bufs[0],
                    &r.features[lo..hi],
                    [&patches, &present, &mask],
                    lo..hi,
                    &cfg.model,
                    &inner_dev,
                );
                parts.push(log_softmax(start.forward(x).0, 1));
            }
            Some(Tensor::from_inner(Tensor::cat(parts, 0)))
        } else {
            None
        };
        let column = |v: &[f32]| -> Tensor<B, 1> {
            Tensor::from_data(TensorData::new(v.to_vec(), [total]), dev)
        };
        let old_logp_all = column(&r.logp);
        let adv_all = column(&adv);
        let ret_all = column(&returns);
        let w_all = column(&weight);
        let acts: Vec<i32> = r.actions.iter().map(|a| a.index() as i32).collect();
        let acts_all = Tensor::<B, 1, Int>::from_data(TensorData::new(acts, [total]), dev);
        let mut idx: Vec<usize> = (0..total).collect();
        let mut sums: Option<Tensor<B::InnerBackend, 1>> = None;
        let mut batches = 0usize;
        let cpu = host_reads_are_free::<B::InnerBackend>();
        let shard_cap = cfg.learn_shards.max(1);
        if self.bufs.len() < shard_cap {
            self.bufs.resize_with(shard_cap, BatchBuffers::default);
        }
        for _ in 0..cfg.epochs {
            self.rng.shuffle(&mut idx);
            for chunk in idx.chunks(cfg.minibatch) {
                let m = chunk.len();
                // SB3's per-minibatch standardisation is over the whole minibatch, whatever
                // its shards.
                let chunk_adv: Option<Vec<f32>> = per_minibatch.then(|| {
                    let (mean, std) = kept_mean_std(&adv, &weight, chunk);
                    chunk
                        .iter()
                        .map(|&i| ((adv[i] as f64 - mean) / std) as f32)
                        .collect()
                });
                let w_sum: f32 = chunk.iter().map(|&i| weight[i]).sum::<f32>().max(1.0);
                let shard = MinibatchShard {
                    features: &r.features,
                    patches: &patches_all,
                    present: &present_all,
                    mask: &mask_all,
                    old_logp: &old_logp_all,
                    adv: &adv_all,
                    ret: &ret_all,
                    weight: &w_all,
                    acts: &acts_all,
                    cfg: &cfg,
                    device: dev,
                    rows_total: m,
                    w_sum,
                    value_only,
                    masked,
                    start_logp: start_logp_all.as_ref(),
                };
                let shards = shard_cap.min(m);
                let (mut gp, stats) = if shards == 1 {
                    shard.grads(
                        self.model.clone(),
                        chunk,
                        chunk_adv.as_deref(),
                        &mut self.bufs[0],
                    )
                } else {
                    // Row shards, each with its own copy of the parameters (fresh autodiff
                    // leaves, so each shard's graph is its own and the two backward passes do
                    // not share burn's per-graph lock), their gradients summed in shard order:
                    // the same sums in the same order whether the shards ran side by side or
                    // one after another, so the numbers do not depend on the thread count.
                    let bounds: Vec<usize> = (0..=shards).map(|k| k * m / shards).collect();
                    let model = &self.model;
                    let jobs: Vec<_> = self.bufs[..shards]
                        .iter_mut()
                        .enumerate()
                        .map(|(k, buf)| {
                            let (lo, hi) = (bounds[k], bounds[k + 1]);
                            let net = if k == 0 {
                                model.clone()
                            } else {
                                model.clone().map(&mut FreshLeaves)
                            };
                            (
                                net,
                                &chunk[lo..hi],
                                chunk_adv.as_ref().map(|a| &a[lo..hi]),
                                buf,
                            )
                        })
                        .collect();
                    let run = |(net, rows_k, adv_k, buf): (
                        PolicyNet<B>,
                        &[usize],
                        Option<&[f32]>,
                        &mut BatchBuffers,
                    )| { shard.grads(net, rows_k, adv_k, buf) };
                    let outs: Vec<_> = if cpu {
                        self.shard_pools.run(jobs, &run)
                    } else {
                        jobs.into_iter().map(run).collect()
                    };
                    let mut outs = outs.into_iter();
                    let (mut gp, mut stats) = outs.next().expect("at least one shard");
                    for (g, s) in outs {
                        self.model.visit(&mut AddGrads::<B> {
                            into: &mut gp,
                            from: g,
                            _backend: std::marker::PhantomData,
                        });
                        stats = stats.into_iter().zip(s).map(|(a, b)| a + b).collect();
                    }
                    (gp, stats)
                };
                let norm = clip_global_norm(&self.model, &mut gp, cfg.max_grad_norm);
                let model = self.model.clone();
                self.model = self.optim.step(lr, model, gp);

                let mut parts = stats;
                // The KL penalty's statistic (if any) after the gradient norm, at index 6 (a
                // network without gradients has a zero norm, so the index holds).
                let kl_part = (parts.len() > 5).then(|| parts.remove(5));
                parts.push(norm.unwrap_or_else(|| Tensor::zeros([1], &to_inner_device::<B>(dev))));
                parts.extend(kl_part);
                let stats = Tensor::cat(parts, 0);
                sums = Some(match sums {
                    None => stats,
                    Some(acc) => acc + stats,
                });
                batches += 1;
            }
        }
        let sums: Vec<f64> = match sums {
            Some(t) => to_vec(t.into_data())?.iter().map(|v| *v as f64).collect(),
            None => Vec::new(),
        };
        // The read above waited for the device: the learning time is complete.
        let learn_s = learn_start.elapsed().as_secs_f32();
        let kl_to_start = match &self.start {
            None => None,
            Some(start) => {
                let now = self.model.valid();
                let inner_dev = to_inner_device::<B>(dev);
                let (patches, present, mask) =
                    (patches_all.inner(), present_all.inner(), mask_all.inner());
                // A diagnostic: the rollout's last (at most) 256 states are enough, and cost a
                // fraction of an epoch.
                let mut kl = 0.0f64;
                let first = total.saturating_sub(256);
                for lo in (first..total).step_by(crate::model::GEMM_K_MAX) {
                    let hi = (lo + crate::model::GEMM_K_MAX).min(total);
                    let x = rollout_inputs(
                        &mut self.bufs[0],
                        &r.features[lo..hi],
                        [&patches, &present, &mask],
                        lo..hi,
                        &self.cfg.model,
                        &inner_dev,
                    );
                    // Illegal actions have a large finite negative logit in both: they add
                    // `0 * (x - x)`, nothing.
                    let p0 = log_softmax(start.forward(x.clone()).0, 1);
                    let p1 = log_softmax(now.forward(x).0, 1);
                    let part = (p0.clone().exp() * (p0 - p1)).sum();
                    kl += to_vec(part.into_data())?.first().copied().unwrap_or(0.0) as f64;
                }
                Some((kl / (total - first).max(1) as f64) as f32)
            }
        };
        let sum = |k: usize| sums.get(k).copied().unwrap_or(0.0);
        let (env_level_scale, level_scale) = level_scale_means(&r);
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
            env_steps_per_second: (cfg.batch_size() as f32 / seconds.max(1e-6)),
            value_only,
            kl_to_start,
            kl_loss: start_logp_all.is_some().then(|| (sum(6) / b) as f32),
            mean_harness_level: level_scale.map(|m| m[0]),
            mean_scale: level_scale.map(|m| m[1]),
            env_level_scale,
            env_outcomes: std::mem::take(&mut r.env_outcomes),
        })
    }

    pub fn save(&self, dir: &Path, sampler: &dyn TaskSampler) -> Result<(), TrainerError> {
        let rec = Recorder_::default();
        let model_bytes = Recorder::<B>::record(&rec, self.model.clone().into_record(), ())
            .map_err(|e| TrainerError::Backend(e.to_string()))?;
        let optim_bytes = Recorder::<B>::record(&rec, self.optim.to_record(), ())
            .map_err(|e| TrainerError::Backend(e.to_string()))?;
        let model_file = format!("model-{:08}.mpk", self.update);
        let optimizer_file = format!("optimizer-{:08}.mpk", self.update);
        envdist_core::io::write_atomic(dir.join(&model_file), &model_bytes)?;
        envdist_core::io::write_atomic(dir.join(&optimizer_file), &optim_bytes)?;
        let start_file = match &self.start {
            Some(start) => {
                let bytes =
                    Recorder::<B::InnerBackend>::record(&rec, start.clone().into_record(), ())
                        .map_err(|e| TrainerError::Backend(e.to_string()))?;
                envdist_core::io::write_atomic(dir.join(START_FILE), &bytes)?;
                Some(START_FILE.to_string())
            }
            None => None,
        };
        let state = CheckpointState {
            schema_version: CHECKPOINT_SCHEMA_VERSION,
            config: self.cfg.clone(),
            update: self.update,
            env_steps: self.env_steps,
            rng: self.rng.clone(),
            sampler: sampler.state(),
            slots: self
                .slots
                .iter()
                .map(|s| SlotState {
                    task: s.task.clone(),
                    actions: s.actions.clone(),
                    trains: s.trains,
                })
                .collect(),
            model_file: model_file.clone(),
            optimizer_file: optimizer_file.clone(),
            start_file: start_file.clone(),
        };
        // state.json is written last and atomically: it names the files of a complete
        // checkpoint, so a crash mid-save leaves the previous checkpoint usable.
        envdist_core::io::write_json_atomic(dir.join(crate::run::CHECKPOINT_STATE_FILE), &state)?;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let stale = ((name.starts_with("model-") || name.starts_with("optimizer-"))
                    && name.ends_with(".mpk")
                    && name != model_file
                    && name != optimizer_file)
                    || (name == START_FILE && start_file.is_none());
                if stale {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(())
    }

    pub fn load(
        dir: &Path,
        factory: Arc<dyn EnvFactory>,
        device: B::Device,
        sampler: Option<&mut dyn TaskSampler>,
    ) -> Result<Self, TrainerError> {
        let state = read_state(dir)?;
        let mut core = Self::new(state.config.clone(), factory, device);
        core.model = load_model::<B>(dir, &state, &core.device)?;
        if let Some(start) = &state.start_file {
            core.start = Some(load_net::<B::InnerBackend>(
                &dir.join(start),
                "a burn model record (the start_file of state.json)",
                &state,
                &to_inner_device::<B>(&core.device),
            )?);
        }
        let rec = Recorder_::default();
        let opt_path = dir.join(&state.optimizer_file);
        let bytes = std::fs::read(&opt_path).map_err(|source| envdist_core::FileError::Io {
            path: opt_path.clone(),
            source,
        })?;
        let device = core.device.clone();
        core.optim = burn_load(
            &opt_path,
            "a burn optimizer record (the optimizer_file of state.json)",
            || {
                let record: AdamRecord<B> =
                    Recorder::<B>::load(&rec, bytes, &device).map_err(|e| e.to_string())?;
                // burn takes the moments as they come: one of another shape than its parameter
                // would only panic in the first step.
                let bad = optimizer_shape_mismatches(&core.model, &record);
                if let Some(first) = bad.first() {
                    return Err(format!(
                        "Adam moments of the model's parameter shapes; {} of them differ, first {first}",
                        bad.len()
                    ));
                }
                Ok(adam().load_record(record))
            },
        )?;
        core.rng = state.rng.clone();
        core.update = state.update;
        core.env_steps = state.env_steps;
        if let Some(sampler) = sampler {
            // Both come from state.json: their errors name it and the field.
            let in_state = |field: String, expected: &str, e: String| {
                envdist_core::FileError::invalid(
                    dir.join(crate::run::CHECKPOINT_STATE_FILE),
                    field,
                    expected,
                    e,
                )
            };
            sampler.restore(&state.sampler).map_err(|e| {
                in_state(
                    "sampler".into(),
                    "a state of the sampler being resumed",
                    e.0,
                )
            })?;
            for (i, s) in state.slots.iter().enumerate() {
                let mut slot = Slot::replay(
                    core.factory.as_ref(),
                    s.task.clone(),
                    &s.actions,
                    &core.cfg.model,
                )
                .map_err(|e| {
                    in_state(
                        format!("slots[{i}].task"),
                        "a task of the run's environments",
                        e.to_string(),
                    )
                })?;
                // An episode in progress must be one the sampler could have issued: its outcome
                // is reported to it later, and a refusal then would name no file.
                sampler.check_outcome(&outcome(&slot, false)).map_err(|e| {
                    in_state(
                        format!("slots[{i}].task"),
                        "a task the resumed sampler could have issued",
                        e.problem.to_string(),
                    )
                })?;
                slot.trains = s.trains;
                core.slots.push(slot);
            }
        }
        Ok(core)
    }
}

pub(crate) fn read_state(dir: &Path) -> Result<CheckpointState, TrainerError> {
    let path = dir.join(crate::run::CHECKPOINT_STATE_FILE);
    let state: CheckpointState =
        envdist_core::io::read_json(&path, Some(CHECKPOINT_SCHEMA_VERSION))?;
    state.config.validate().map_err(|e| match e {
        TrainerError::Config(v) => TrainerError::File(envdist_core::FileError::invalid(
            &path,
            format!("config.{}", v.field),
            v.expected,
            v.found,
        )),
        other => other,
    })?;
    let bad = |field: &str, expected: String, found: String| {
        TrainerError::File(envdist_core::FileError::invalid(
            &path, field, expected, found,
        ))
    };
    // The record files sit beside state.json (a name is never a path elsewhere) and exist:
    // state.json is written last, naming the files of a complete checkpoint.
    let mut sizes = [0u64; 3];
    let start_file = state.start_file.clone().unwrap_or_default();
    let files = [
        ("model_file", &state.model_file),
        ("optimizer_file", &state.optimizer_file),
        ("start_file", &start_file),
    ];
    let present = if state.start_file.is_some() { 3 } else { 2 };
    for (size, (field, name)) in sizes.iter_mut().zip(files).take(present) {
        let expected = || "a file in the checkpoint directory".to_string();
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(bad(field, expected(), format!("{name:?}")));
        }
        *size = std::fs::metadata(dir.join(name))
            .map_err(|e| bad(field, expected(), format!("{name:?} ({e})")))?
            .len();
    }
    if state.slots.len() > state.config.num_envs {
        return Err(bad(
            "slots",
            format!(
                "at most num_envs = {} episodes in progress",
                state.config.num_envs
            ),
            state.slots.len().to_string(),
        ));
    }
    // The network is built from `config.model` before its record is read: a config declaring
    // a network larger than the model file could hold is refused before allocating it.
    let params = state.config.model.num_params().unwrap_or(usize::MAX);
    for (k, (_, name)) in files.iter().enumerate().take(present) {
        if k != 1 && (params as u64).saturating_mul(4) > sizes[k] {
            return Err(bad(
                "config.model",
                format!("a network the {}-byte {name} can hold", sizes[k]),
                format!("{params} parameters (4 bytes each)"),
            ));
        }
    }
    Ok(state)
}

pub(crate) fn load_model<B: AutodiffBackend>(
    dir: &Path,
    state: &CheckpointState,
    device: &B::Device,
) -> Result<PolicyNet<B>, TrainerError> {
    load_net::<B>(
        &dir.join(&state.model_file),
        "a burn model record (the model_file of state.json)",
        state,
        device,
    )
}

/// A network of `state.config.model` from the record at `path` (`what` it should be, for the
/// error), its parameter shapes checked.
fn load_net<BB: Backend>(
    path: &Path,
    what: &str,
    state: &CheckpointState,
    device: &BB::Device,
) -> Result<PolicyNet<BB>, TrainerError> {
    let path: PathBuf = path.to_path_buf();
    let bytes = std::fs::read(&path).map_err(|source| envdist_core::FileError::Io {
        path: path.clone(),
        source,
    })?;
    let rec = Recorder_::default();
    let net = PolicyNet::<BB>::init(&state.config.model, state.config.seed, device);
    let expected = param_shapes(&net);
    let loaded = burn_load(&path, what, || {
        let record = Recorder::<BB>::load(&rec, bytes, device).map_err(|e| e.to_string())?;
        Ok(net.load_record(record))
    })?;
    // burn takes a record's tensors as they come: one of another shape would only fail (and
    // panic) in the first forward pass.
    let found = param_shapes(&loaded);
    if found != expected {
        return Err(envdist_core::FileError::invalid(
            &path,
            ".",
            format!("parameters of shapes {expected:?} (config.model of state.json)"),
            format!("{found:?}"),
        )
        .into());
    }
    Ok(loaded)
}

/// The shape of every parameter of `net`, in visiting order.
/// Mean and standard deviation (plus 1e-8) of the advantages `adv[i]`, `i` in `rows`, that
/// train (weight above 0); `(0, 1e-8)` when none does.
fn kept_mean_std(adv: &[f32], weight: &[f32], rows: &[usize]) -> (f64, f64) {
    let kept: Vec<f64> = rows
        .iter()
        .filter(|&&i| weight[i] > 0.0)
        .map(|&i| adv[i] as f64)
        .collect();
    let n = kept.len().max(1) as f64;
    let mean = kept.iter().sum::<f64>() / n;
    let var = kept.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt() + 1e-8)
}

/// Per environment and over all, the mean harness level and mean scale (`[level, scale]`) of
/// the rollout's ended episodes; `None` over all when none ended.
#[allow(clippy::type_complexity)]
fn level_scale_means<B: Backend>(
    r: &Rollout<B>,
) -> (
    std::collections::BTreeMap<EnvId, [f32; 2]>,
    Option<[f32; 2]>,
) {
    let (mut total, mut episodes) = ([0.0f64; 2], 0u64);
    let per_env = r
        .env_level_scale_sums
        .iter()
        .map(|(env, sums)| {
            let n = r.env_outcomes.get(env).map_or(0, |c| c[0]);
            total[0] += sums[0];
            total[1] += sums[1];
            episodes += u64::from(n);
            let n = f64::from(n.max(1));
            (env.clone(), [(sums[0] / n) as f32, (sums[1] / n) as f32])
        })
        .collect();
    let overall = (episodes > 0).then(|| {
        let n = episodes as f64;
        [(total[0] / n) as f32, (total[1] / n) as f32]
    });
    (per_env, overall)
}

/// What the trainer's optimizer saves: Adam's moments per parameter id.
type AdamRecord<B> = <TrainerAdam<B> as Optimizer<PolicyNet<B>, B>>::Record;

/// The parameters of `net` whose Adam moments in `record` have another shape than theirs
/// (`id: found vs expected`). A moment of another rank panics in burn's conversion, which the
/// caller's [`burn_load`] reports as the file's error.
fn optimizer_shape_mismatches<B: AutodiffBackend>(
    net: &PolicyNet<B>,
    record: &AdamRecord<B>,
) -> Vec<String> {
    struct Check<'a, B: AutodiffBackend> {
        record: &'a AdamRecord<B>,
        bad: Vec<String>,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Check<'_, B> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            let Some(r) = self.record.get(&param.id) else {
                return;
            };
            let want = param.val().dims();
            let m = r.clone().into_state::<D>().momentum;
            for found in [m.moment_1.dims(), m.moment_2.dims()] {
                if found != want {
                    self.bad
                        .push(format!("{}: {found:?} vs {want:?}", param.id));
                }
            }
        }
    }
    let mut check = Check {
        record,
        bad: Vec::new(),
    };
    net.visit(&mut check);
    check.bad
}

fn param_shapes<B: Backend, M: Module<B>>(net: &M) -> Vec<Vec<usize>> {
    struct Shapes(Vec<Vec<usize>>);
    impl<B: Backend> ModuleVisitor<B> for Shapes {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            self.0.push(param.val().dims().to_vec());
        }
    }
    let mut shapes = Shapes(Vec::new());
    net.visit(&mut shapes);
    shapes.0
}

/// Run one of burn's record loads, whose errors (and panics) are the file's. burn panics on
/// some malformed records instead of returning an error (an unreadable parameter id:
/// `ParamId::deserialize` documents it): caught here, at the one place a record enters, and
/// reported as the file's error like any other.
fn burn_load<T>(
    path: &Path,
    expected: &str,
    load: impl FnOnce() -> Result<T, String>,
) -> Result<T, TrainerError> {
    let found = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(load)) {
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(e)) => e,
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            format!("a record burn cannot load ({why})")
        }
    };
    Err(envdist_core::FileError::invalid(path, ".", expected, found).into())
}

/// Sum of squared gradient entries over all parameters, then the whole gradient scaled so
/// its norm is at most `max` (burn's own clipping is per parameter). Returns the norm before
/// clipping as a one-element tensor (`None` without gradients), computed and applied on the
/// device: reading it back would synchronise with the device once per minibatch.
pub(crate) fn clip_global_norm<B: AutodiffBackend>(
    model: &PolicyNet<B>,
    grads: &mut GradientsParams,
    max: f32,
) -> Option<Tensor<B::InnerBackend, 1>> {
    struct Norm<'a, B: AutodiffBackend> {
        grads: &'a GradientsParams,
        parts: Vec<Tensor<B::InnerBackend, 1>>,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Norm<'_, B> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            if let Some(g) = self.grads.get::<B::InnerBackend, D>(param.id) {
                self.parts.push(g.powi_scalar(2).sum());
            }
        }
    }
    struct Scale<'a, IB: Backend> {
        grads: &'a mut GradientsParams,
        factor: Tensor<IB, 1>,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Scale<'_, B::InnerBackend> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            if let Some(g) = self.grads.remove::<B::InnerBackend, D>(param.id) {
                let factor = self.factor.clone().reshape([1; D]);
                self.grads.register(param.id, g.mul(factor));
            }
        }
    }
    let mut n = Norm::<B> {
        grads,
        parts: Vec::new(),
    };
    model.visit(&mut n);
    if n.parts.is_empty() {
        return None;
    }
    let norm = Tensor::cat(n.parts, 0).sum().sqrt();
    if host_reads_are_free::<B::InnerBackend>() {
        // On the CPU a read costs nothing: scale only when needed, by a plain scalar (a
        // broadcast tensor product costs a pass over every parameter, every minibatch).
        let value = to_vec(norm.clone().into_data())
            .map(|v| v[0])
            .unwrap_or(0.0);
        if value.is_finite() && value > max {
            model.visit(&mut ScaleBy::<'_> {
                grads,
                factor: max / value,
            });
        }
        return Some(norm);
    }
    // max / norm, capped at 1: unchanged below the limit (and for a zero norm, whose
    // quotient is infinite), scaled onto it above.
    let factor = norm.clone().recip().mul_scalar(max).clamp_max(1.0);
    model.visit(&mut Scale::<B::InnerBackend> { grads, factor });
    Some(norm)
}

/// Global-norm clipping by a host scalar (see [`clip_global_norm`]).
struct ScaleBy<'a> {
    grads: &'a mut GradientsParams,
    factor: f32,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for ScaleBy<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(g) = self.grads.remove::<B::InnerBackend, D>(param.id) {
            self.grads.register(param.id, g.mul_scalar(self.factor));
        }
    }
}

/// Whether reading a tensor back to the host is free: true for burn's CPU backends (flex, and
/// LibTorch on the CPU, the only device this crate gives it), whose tensors already live in host
/// memory and whose operations run synchronously. A device backend instead queues work, and
/// every read waits for the queue to drain.
pub(crate) fn host_reads_are_free<IB: Backend>() -> bool {
    let id = std::any::TypeId::of::<IB>();
    #[cfg(feature = "tch")]
    if id == std::any::TypeId::of::<burn::backend::LibTorch<f32>>() {
        return true;
    }
    id == std::any::TypeId::of::<burn::backend::Flex>()
}

/// Every parameter's gradient, flattened in the module's visiting order (zeros for parameters
/// the loss does not reach, e.g. the value head under a policy-only loss). `model` is the
/// network or one of its layers (the policy head alone).
pub(crate) fn flat_gradient<B: AutodiffBackend, M: Module<B>>(
    model: &M,
    grads: &GradientsParams,
) -> Result<Vec<f32>, TrainerError> {
    struct Flat<'a, B: AutodiffBackend> {
        grads: &'a GradientsParams,
        parts: Vec<Tensor<B::InnerBackend, 1>>,
        device: burn::tensor::Device<B::InnerBackend>,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Flat<'_, B> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            let n: usize = param.val().dims().iter().product();
            let g = match self.grads.get::<B::InnerBackend, D>(param.id) {
                Some(g) => g.reshape([n]),
                None => Tensor::zeros([n], &self.device),
            };
            self.parts.push(g);
        }
    }
    let mut f = Flat::<B> {
        grads,
        parts: Vec::new(),
        device: crate::play::to_inner_device::<B>(
            &model.devices().into_iter().next().unwrap_or_default(),
        ),
    };
    model.visit(&mut f);
    to_vec(Tensor::cat(f.parts, 0).into_data())
}

/// The network's inputs at rollout rows `range` (the host features of those rows in
/// `features`; `[patches, present, mask]`: the whole rollout's resident matrices), on the
/// inner backend: for forward passes outside the loss (the KL penalty's reference, the KL
/// diagnostic).
// `slice([lo..hi])` is burn's one-dimension slice, not a one-element range vector.
#[allow(clippy::single_range_in_vec_init)]
fn rollout_inputs<B: Backend>(
    bufs: &mut BatchBuffers,
    features: &[Features],
    [patches, present, mask]: [&Tensor<B, 2>; 3],
    range: std::ops::Range<usize>,
    model: &crate::config::ModelConfig,
    dev: &B::Device,
) -> Inputs<B> {
    let m = range.len();
    let rows: Vec<&Features> = features.iter().collect();
    bufs.fill_text(&rows);
    let (tokens, token_segments, segment_weights) = text_from_buffers::<B>(bufs, dev);
    Inputs {
        patches: patches.clone().slice([range.clone()]).reshape([
            m,
            model.num_patches(),
            model.patch_values(),
        ]),
        tokens,
        token_segments,
        segment_weights,
        present: present
            .clone()
            .slice([range.clone()])
            .reshape([m, NUM_CHANNELS, 1]),
        mask: mask.clone().slice([range]),
        conv: ConvGeometry::of(model),
    }
}

/// The learning shards' thread pools: shard k runs in pool k, on a thread that only ever
/// runs shard k's work.
///
/// burn's autodiff holds a graph's lock through its backward pass. A rayon worker that waits
/// there for a threaded product runs other queued jobs of its pool meanwhile; were another
/// shard's job among them (of this trainer or of another one in the process), its graph
/// clean-up would wait for the lock that worker holds: a deadlock (seen in CI with two
/// trainers in one test process, when the shards were jobs of rayon's global pool). A pool
/// of its own per shard and per trainer leaves each worker only its own shard's products to
/// run. On these machines (as many shards as cores) each pool has one thread, so a shard's
/// products run in line, with no more threads than cores; where rayon has one thread, the
/// shards run one after another on the caller's. The numbers are those of any thread count
/// (products split along rows and columns, never along the sum; gradients summed in shard
/// order).
#[derive(Default)]
struct ShardPools {
    pools: Vec<rayon::ThreadPool>,
}

impl ShardPools {
    /// Run `jobs[k]` in pool k, side by side, and their outputs in job order.
    fn run<J: Send, R: Send>(&mut self, jobs: Vec<J>, run: &(impl Fn(J) -> R + Sync)) -> Vec<R> {
        let want = jobs.len();
        if rayon::current_num_threads() == 1 {
            // One thread to run on: the shards one after another, on this thread.
            return jobs.into_iter().map(run).collect();
        }
        if self.pools.len() < want {
            // Threads a pool: the cores rayon would use, shared among the shards.
            let threads = (rayon::current_num_threads() / want).max(1);
            self.pools.clear();
            for k in 0..want {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(move |i| format!("learn-shard-{k}-{i}"))
                    .build()
                    .expect("a learning shard's thread pool");
                self.pools.push(pool);
            }
        }
        let pools = &self.pools;
        std::thread::scope(|scope| {
            let mut jobs = jobs.into_iter().enumerate();
            let (_, first) = jobs.next().expect("at least one job");
            let others: Vec<_> = jobs
                .map(|(k, job)| scope.spawn(move || pools[k].install(|| run(job))))
                .collect();
            let mut outs = vec![pools[0].install(|| run(first))];
            outs.extend(
                others
                    .into_iter()
                    .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
            );
            outs
        })
    }
}

/// The first two of the host buffers (there are always at least two: the rollout's halves).
fn two_buffers(bufs: &mut [BatchBuffers]) -> &mut [BatchBuffers; 2] {
    bufs.first_chunk_mut::<2>()
        .expect("Core keeps at least two batch buffers")
}

/// What every shard of one minibatch reads: the update's resident rollout, and the
/// minibatch's totals (its rows and kept weight), so that shards' losses add up to the
/// minibatch's.
struct MinibatchShard<'a, B: AutodiffBackend> {
    features: &'a [Features],
    patches: &'a Tensor<B, 2>,
    present: &'a Tensor<B, 2>,
    mask: &'a Tensor<B, 2>,
    old_logp: &'a Tensor<B, 1>,
    adv: &'a Tensor<B, 1>,
    ret: &'a Tensor<B, 1>,
    weight: &'a Tensor<B, 1>,
    acts: &'a Tensor<B, 1, Int>,
    cfg: &'a TrainConfig,
    device: &'a B::Device,
    /// Rows of the whole minibatch.
    rows_total: usize,
    /// Kept weight of the whole minibatch (at least 1).
    w_sum: f32,
    value_only: bool,
    masked: bool,
    /// The KL penalty's reference: the start's log-probabilities at every rollout state
    /// (with `kl_coef` > 0 only).
    start_logp: Option<&'a Tensor<B, 2>>,
}

impl<B: AutodiffBackend> MinibatchShard<'_, B> {
    /// The PPO loss of rows `chunk` (indices into the rollout) under `net`, its gradients, and
    /// its statistics (policy loss, value loss, entropy, approximate KL, clip fraction), each
    /// the shard's part of the minibatch's: means are sums over the shard divided by the
    /// minibatch's rows, so the shards' parts add up to the minibatch's. A shard that is the
    /// whole minibatch takes plain means, the records' arithmetic. `chunk_adv`: the rows'
    /// standardised advantages when they are standardised per minibatch.
    fn grads(
        &self,
        net: PolicyNet<B>,
        chunk: &[usize],
        chunk_adv: Option<&[f32]>,
        bufs: &mut BatchBuffers,
    ) -> (GradientsParams, Vec<Tensor<B::InnerBackend, 1>>) {
        let (cfg, dev, m) = (self.cfg, self.device, chunk.len());
        let whole = m == self.rows_total;
        let mean = |t: Tensor<B, 1>| {
            if whole {
                t.mean()
            } else {
                t.sum() / self.rows_total as f32
            }
        };
        let (np, pv) = (cfg.model.num_patches(), cfg.model.patch_values());
        let rows: Vec<&Features> = chunk.iter().map(|&i| &self.features[i]).collect();
        bufs.fill_text(&rows);
        let (tokens, token_segments, segment_weights) = text_from_buffers::<B>(bufs, dev);
        let ids: Vec<i32> = chunk.iter().map(|&i| i as i32).collect();
        let ids = Tensor::<B, 1, Int>::from_data(TensorData::new(ids, [m]), dev);
        let pick = |t: &Tensor<B, 1>| t.clone().select(0, ids.clone());
        let x = Inputs {
            patches: self
                .patches
                .clone()
                .select(0, ids.clone())
                .reshape([m, np, pv]),
            tokens,
            token_segments,
            segment_weights,
            present: self
                .present
                .clone()
                .select(0, ids.clone())
                .reshape([m, NUM_CHANNELS, 1]),
            mask: self.mask.clone().select(0, ids.clone()),
            conv: ConvGeometry::of(&cfg.model),
        };
        let old_logp = pick(self.old_logp);
        let adv_t = match chunk_adv {
            Some(v) => Tensor::from_data(TensorData::new(v.to_vec(), [m]), dev),
            None => pick(self.adv),
        };
        let ret_t = pick(self.ret);
        let w_t = pick(self.weight);
        let w_sum = self.w_sum;
        let start_logp = self.start_logp.map(|t| t.clone().select(0, ids.clone()));
        let acts = self.acts.clone().select(0, ids).reshape([m, 1]);

        let (logits, values) = if self.value_only {
            // The trunk is a constant here: backward reaches the value head only.
            let (h, mask) = net.trunk(x);
            let h = h.detach();
            let logits = net.policy_logits(h.clone(), mask).detach();
            (logits, net.value_of(h))
        } else {
            net.forward(x)
        };
        let logp_all = log_softmax(logits, 1);
        let logp = logp_all.clone().gather(1, acts).reshape([m]);
        let log_ratio = logp - old_logp;
        let ratio = log_ratio.clone().exp();
        let s1 = ratio.clone() * adv_t.clone();
        let s2 = ratio.clone().clamp(1.0 - cfg.clip, 1.0 + cfg.clip) * adv_t;
        let pg = -(s1.min_pair(s2) * w_t.clone()).sum() / w_sum;
        let sq = (values - ret_t).powi_scalar(2) * 0.5;
        let ent = -(logp_all.clone().exp() * logp_all.clone())
            .sum_dim(1)
            .reshape([m]);
        let (v_loss, entropy) = if self.masked {
            (
                (sq * w_t.clone()).sum() / w_sum,
                (ent * w_t.clone()).sum() / w_sum,
            )
        } else {
            (mean(sq), mean(ent))
        };
        // KL(now || start) per state over the whole action distribution (illegal actions have
        // a large finite negative logit in both: they add `0 * (x - x)`, nothing).
        let kl = start_logp.map(|start| {
            let rows = (logp_all.clone().exp() * (logp_all.clone() - start))
                .sum_dim(1)
                .reshape([m]);
            if self.masked {
                (rows * w_t.clone()).sum() / w_sum
            } else {
                mean(rows)
            }
        });
        let mut loss = if self.value_only {
            v_loss.clone()
        } else {
            pg.clone() + v_loss.clone() * cfg.value_coef - entropy.clone() * cfg.entropy_coef
        };
        if let (Some(kl), false) = (&kl, self.value_only) {
            loss = loss + kl.clone() * cfg.kl_coef;
        }

        let approx_kl = mean((ratio.clone() - 1.0) - log_ratio);
        let clipped = mean((ratio - 1.0).abs().greater_elem(cfg.clip).float());
        let grads = loss.backward();
        let gp = GradientsParams::from_grads(grads, &net);
        let mut stats = vec![
            pg.detach().inner(),
            v_loss.detach().inner(),
            entropy.detach().inner(),
            approx_kl.detach().inner(),
            clipped.detach().inner(),
        ];
        // Last, after the gradient norm the update puts at index 5.
        stats.extend(kl.map(|kl| kl.detach().inner()));
        (gp, stats)
    }
}

/// Gives every parameter a new autodiff leaf (the same values, no copy): a minibatch shard's
/// own copy of the network, whose graph is not the other shards'.
struct FreshLeaves;

impl<B: AutodiffBackend> burn::module::ModuleMapper<B> for FreshLeaves {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        // `detach` keeps the tensor's `require_grad` and gives it a new node.
        param.map(|t| t.detach())
    }
}

/// Adds `from`'s gradients into `into`, parameter by parameter (`into + from`, in that order).
struct AddGrads<'a, B: AutodiffBackend> {
    into: &'a mut GradientsParams,
    from: GradientsParams,
    _backend: std::marker::PhantomData<B>,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for AddGrads<'_, B> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let Some(g) = self.from.remove::<B::InnerBackend, D>(param.id) else {
            return;
        };
        let sum = match self.into.remove::<B::InnerBackend, D>(param.id) {
            Some(acc) => acc + g,
            None => g,
        };
        self.into.register(param.id, sum);
    }
}
