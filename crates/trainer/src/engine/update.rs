//! One PPO update after its rollout, in the order CleanRL's `ppo.py` reads: advantages and
//! returns, the rollout uploaded once, then epochs of minibatches, each a loss, a clipped
//! gradient and an Adam step.

use burn::module::AutodiffModule;
use burn::tensor::activation::log_softmax;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor, TensorData};

use super::Core;
use super::grad_ops::clip_global_norm;
use super::rollout::Rollout;
use super::shards::{MinibatchShard, minibatch_grads};
use crate::backend::{host_reads_are_free, to_inner_device, to_vec};
use crate::config::NUM_CHANNELS;
use crate::config::{AdvantageKind, ModelConfig, TrainConfig};
use crate::encode::{BatchBuffers, Features};
use crate::error::TrainerError;
use crate::model::{ConvGeometry, GEMM_K_MAX, Inputs, text_from_buffers};
use crate::ppo::{gae, group_relative};

/// What the loss learns towards, per rollout step.
pub(super) struct Targets {
    /// Advantages, standardised over the rollout unless the configuration standardises them
    /// per minibatch (`per_minibatch`).
    pub adv: Vec<f32>,
    pub returns: Vec<f32>,
    /// 0 for steps of episodes the sampler plays for their scores only, else 1.
    pub weight: Vec<f32>,
    /// Some step weighs 0.
    pub masked: bool,
    /// Advantages are standardised per minibatch (SB3's habit), not here.
    pub per_minibatch: bool,
}

/// The advantages, returns and weights of rollout `r`. The critic warm-up (`value_only`)
/// learns on Monte-Carlo returns (lambda = 1: bootstrapping from a critic that has not
/// learned yet would teach it its own errors).
pub(super) fn targets<B: Backend>(r: &Rollout<B>, cfg: &TrainConfig, value_only: bool) -> Targets {
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
    Targets {
        adv,
        returns,
        weight,
        masked,
        per_minibatch,
    }
}

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

/// The whole rollout on the device, uploaded once: minibatches are gathered there by index,
/// and statistics are summed there and read back once per update, with no host round trip
/// per minibatch. Kept as matrices (one row per sample): gathering rows of a matrix is one
/// copy per row, while a rank-3 gather walks every inner row.
pub(super) struct Resident<B: AutodiffBackend> {
    pub patches: Tensor<B, 2>,
    pub present: Tensor<B, 2>,
    pub mask: Tensor<B, 2>,
    /// The KL penalty's reference: the start's log-probabilities at every rollout state, once
    /// per rollout (the start never changes), as a constant of the loss.
    pub start_logp: Option<Tensor<B, 2>>,
    pub old_logp: Tensor<B, 1>,
    pub adv: Tensor<B, 1>,
    pub ret: Tensor<B, 1>,
    pub weight: Tensor<B, 1>,
    pub acts: Tensor<B, 1, Int>,
}

impl<B: AutodiffBackend> Core<B> {
    /// Upload rollout `r` (its image inputs are taken out of it) and its targets `t`.
    pub(super) fn upload(
        &mut self,
        r: &mut Rollout<B::InnerBackend>,
        t: &Targets,
    ) -> Result<Resident<B>, TrainerError> {
        let total = r.rewards.len();
        let dev = &self.device;
        let resident = |parts: Vec<Tensor<B::InnerBackend, 3>>| -> Tensor<B, 2> {
            let t = Tensor::cat(parts, 0);
            let [rows, a, b] = t.dims();
            Tensor::from_inner(t.reshape([rows, a * b]))
        };
        let patches = resident(std::mem::take(&mut r.patches));
        let present = resident(std::mem::take(&mut r.present));
        let mask: Tensor<B, 2> = Tensor::from_inner(Tensor::cat(std::mem::take(&mut r.mask), 0));
        let start_logp = if self.cfg.kl_coef > 0.0 {
            let start = self
                .start
                .as_ref()
                .ok_or_else(|| crate::run::no_kl_reference(self.cfg.kl_coef))?;
            let inner_dev = to_inner_device::<B>(dev);
            let (patches, present, mask) = (
                patches.clone().inner(),
                present.clone().inner(),
                mask.clone().inner(),
            );
            let mut parts = Vec::with_capacity(total.div_ceil(GEMM_K_MAX));
            for lo in (0..total).step_by(GEMM_K_MAX) {
                let hi = (lo + GEMM_K_MAX).min(total);
                let x = rollout_inputs(
                    &mut self.bufs[0],
                    &r.features[lo..hi],
                    [&patches, &present, &mask],
                    lo..hi,
                    &self.cfg.model,
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
        let acts: Vec<i32> = r.actions.iter().map(|a| a.index() as i32).collect();
        Ok(Resident {
            patches,
            present,
            mask,
            start_logp,
            old_logp: column(&r.logp),
            adv: column(&t.adv),
            ret: column(&t.returns),
            weight: column(&t.weight),
            acts: Tensor::<B, 1, Int>::from_data(TensorData::new(acts, [total]), dev),
        })
    }

    /// `epochs` passes over the rollout in shuffled minibatches, each a loss, a gradient
    /// clipped to `max_grad_norm` and an Adam step at `lr`. Returns the statistics summed over
    /// the minibatches (see [`MinibatchShard::grads`]; the gradient norm at index 5, the KL
    /// penalty's term after it) and the number of minibatches.
    pub(super) fn learn(
        &mut self,
        features: &[Features],
        t: &Targets,
        res: &Resident<B>,
        lr: f64,
        value_only: bool,
    ) -> Result<(Vec<f64>, usize), TrainerError> {
        let cfg = self.cfg.clone();
        let total = t.adv.len();
        let mut idx: Vec<usize> = (0..total).collect();
        let mut sums: Option<Tensor<B::InnerBackend, 1>> = None;
        let mut batches = 0usize;
        let side_by_side = host_reads_are_free::<B::InnerBackend>();
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
                let chunk_adv: Option<Vec<f32>> = t.per_minibatch.then(|| {
                    let (mean, std) = kept_mean_std(&t.adv, &t.weight, chunk);
                    chunk
                        .iter()
                        .map(|&i| ((t.adv[i] as f64 - mean) / std) as f32)
                        .collect()
                });
                let w_sum: f32 = chunk.iter().map(|&i| t.weight[i]).sum::<f32>().max(1.0);
                let shard = MinibatchShard {
                    features,
                    patches: &res.patches,
                    present: &res.present,
                    mask: &res.mask,
                    old_logp: &res.old_logp,
                    adv: &res.adv,
                    ret: &res.ret,
                    weight: &res.weight,
                    acts: &res.acts,
                    cfg: &cfg,
                    device: &self.device,
                    rows_total: m,
                    w_sum,
                    value_only,
                    masked: t.masked,
                    start_logp: res.start_logp.as_ref(),
                };
                let (gp, stats) = minibatch_grads(
                    &shard,
                    &self.model,
                    &mut self.bufs,
                    &mut self.shard_pools,
                    chunk,
                    chunk_adv.as_deref(),
                    shard_cap.min(m),
                    side_by_side,
                );
                let stats = self.step(gp, stats, lr);
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
        Ok((sums, batches))
    }

    /// Clip the gradients `gp` to the configured global norm and take one Adam step at `lr`;
    /// returns the minibatch's statistics with the gradient norm put at index 5 (before the KL
    /// penalty's term, if any: a network without gradients has a zero norm, so the index
    /// holds).
    fn step(
        &mut self,
        mut gp: burn::optim::GradientsParams,
        mut stats: Vec<Tensor<B::InnerBackend, 1>>,
        lr: f64,
    ) -> Tensor<B::InnerBackend, 1> {
        use burn::optim::Optimizer;
        let norm = clip_global_norm(&self.model, &mut gp, self.cfg.max_grad_norm);
        let model = self.model.clone();
        self.model = self.optim.step(lr, model, gp);
        let kl_part = (stats.len() > 5).then(|| stats.remove(5));
        stats.push(norm.unwrap_or_else(|| Tensor::zeros([1], &to_inner_device::<B>(&self.device))));
        stats.extend(kl_part);
        Tensor::cat(stats, 0)
    }

    /// `KL(start || now)` over the rollout's last (at most) 256 states: a diagnostic, enough
    /// states at a fraction of an epoch's cost. `None` for a run that started from no policy.
    pub(super) fn kl_to_start(
        &mut self,
        features: &[Features],
        res: Resident<B>,
    ) -> Result<Option<f32>, TrainerError> {
        let Some(start) = &self.start else {
            return Ok(None);
        };
        let total = features.len();
        let now = self.model.valid();
        let inner_dev = to_inner_device::<B>(&self.device);
        let (patches, present, mask) = (res.patches.inner(), res.present.inner(), res.mask.inner());
        let mut kl = 0.0f64;
        let first = total.saturating_sub(256);
        for lo in (first..total).step_by(GEMM_K_MAX) {
            let hi = (lo + GEMM_K_MAX).min(total);
            let x = rollout_inputs(
                &mut self.bufs[0],
                &features[lo..hi],
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
        Ok(Some((kl / (total - first).max(1) as f64) as f32))
    }
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
    model: &ModelConfig,
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
