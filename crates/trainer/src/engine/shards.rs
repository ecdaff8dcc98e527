//! A minibatch's loss and gradients, whole or in row shards learned side by side: what each
//! shard reads, its loss and gradients, the shards' thread pools, and how their gradients add
//! up.

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor, TensorData};

use crate::config::NUM_CHANNELS;
use crate::config::TrainConfig;
use crate::encode::{BatchBuffers, Features};
use crate::model::{ConvGeometry, Inputs, PolicyNet, text_from_buffers};
use crate::ppo::{LossRows, Reduction, clipped_ppo_loss};

/// What every shard of one minibatch reads: the update's resident rollout, and the
/// minibatch's totals (its rows and kept weight), so that shards' losses add up to the
/// minibatch's.
pub(super) struct MinibatchShard<'a, B: AutodiffBackend> {
    pub features: &'a [Features],
    pub patches: &'a Tensor<B, 2>,
    pub present: &'a Tensor<B, 2>,
    pub mask: &'a Tensor<B, 2>,
    pub old_logp: &'a Tensor<B, 1>,
    pub adv: &'a Tensor<B, 1>,
    pub ret: &'a Tensor<B, 1>,
    pub weight: &'a Tensor<B, 1>,
    pub acts: &'a Tensor<B, 1, Int>,
    pub cfg: &'a TrainConfig,
    pub device: &'a B::Device,
    /// Rows of the whole minibatch.
    pub rows_total: usize,
    /// Kept weight of the whole minibatch (at least 1).
    pub w_sum: f32,
    pub value_only: bool,
    pub masked: bool,
    /// The KL penalty's reference: the start's log-probabilities at every rollout state
    /// (with `kl_coef` > 0 only).
    pub start_logp: Option<&'a Tensor<B, 2>>,
}

impl<B: AutodiffBackend> MinibatchShard<'_, B> {
    /// The PPO loss of rows `chunk` (indices into the rollout) under `net`, its gradients, and
    /// its statistics (policy loss, value loss, entropy, approximate KL, clip fraction), each
    /// the shard's part of the minibatch's: means are sums over the shard divided by the
    /// minibatch's rows, so the shards' parts add up to the minibatch's. A shard that is the
    /// whole minibatch takes plain means, the records' arithmetic. `chunk_adv`: the rows'
    /// standardised advantages when they are standardised per minibatch.
    pub(super) fn grads(
        &self,
        net: PolicyNet<B>,
        chunk: &[usize],
        chunk_adv: Option<&[f32]>,
        bufs: &mut BatchBuffers,
    ) -> (GradientsParams, Vec<Tensor<B::InnerBackend, 1>>) {
        let (cfg, dev, m) = (self.cfg, self.device, chunk.len());
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
        let terms = clipped_ppo_loss(
            LossRows {
                logits,
                values,
                actions: acts,
                old_logp,
                advantages: adv_t,
                returns: ret_t,
                weight: w_t,
                start_logp,
            },
            Reduction {
                whole: m == self.rows_total,
                rows_total: self.rows_total,
                masked: self.masked,
                w_sum: self.w_sum,
            },
            cfg,
            self.value_only,
        );
        let grads = terms.loss.backward();
        let gp = GradientsParams::from_grads(grads, &net);
        let mut stats = vec![
            terms.policy.detach().inner(),
            terms.value.detach().inner(),
            terms.entropy.detach().inner(),
            terms.approx_kl.detach().inner(),
            terms.clip_fraction.detach().inner(),
        ];
        // Last, after the gradient norm the update puts at index 5.
        stats.extend(terms.kl.map(|kl| kl.detach().inner()));
        (gp, stats)
    }
}

/// The gradients and statistics of one minibatch (rows `chunk` of the rollout; `chunk_adv`
/// their advantages when standardised per minibatch) under `model`: in one piece, or in
/// `shards` row shards each with its own copy of the parameters (fresh autodiff leaves, so
/// each shard's graph is its own and the backward passes do not share burn's per-graph
/// lock), their gradients summed in shard order: the same sums in the same order whether the
/// shards ran side by side (`side_by_side`, in `pools`) or one after another, so the numbers
/// do not depend on the thread count. `bufs` holds a host buffer per shard.
#[allow(clippy::too_many_arguments)]
pub(super) fn minibatch_grads<B: AutodiffBackend>(
    shard: &MinibatchShard<'_, B>,
    model: &PolicyNet<B>,
    bufs: &mut [BatchBuffers],
    pools: &mut ShardPools,
    chunk: &[usize],
    chunk_adv: Option<&[f32]>,
    shards: usize,
    side_by_side: bool,
) -> (GradientsParams, Vec<Tensor<B::InnerBackend, 1>>) {
    let m = chunk.len();
    if shards == 1 {
        return shard.grads(model.clone(), chunk, chunk_adv, &mut bufs[0]);
    }
    let bounds: Vec<usize> = (0..=shards).map(|k| k * m / shards).collect();
    let jobs: Vec<_> = bufs[..shards]
        .iter_mut()
        .enumerate()
        .map(|(k, buf)| {
            let (lo, hi) = (bounds[k], bounds[k + 1]);
            let net = if k == 0 {
                model.clone()
            } else {
                model.clone().map(&mut FreshLeaves)
            };
            (net, &chunk[lo..hi], chunk_adv.map(|a| &a[lo..hi]), buf)
        })
        .collect();
    let run =
        |(net, rows_k, adv_k, buf): (PolicyNet<B>, &[usize], Option<&[f32]>, &mut BatchBuffers)| {
            shard.grads(net, rows_k, adv_k, buf)
        };
    let outs: Vec<_> = if side_by_side {
        pools.run(jobs, &run)
    } else {
        jobs.into_iter().map(run).collect()
    };
    let mut outs = outs.into_iter();
    let (mut gp, mut stats) = outs.next().expect("at least one shard");
    for (g, s) in outs {
        model.visit(&mut AddGrads::<B> {
            into: &mut gp,
            from: g,
            _backend: std::marker::PhantomData,
        });
        stats = stats.into_iter().zip(s).map(|(a, b)| a + b).collect();
    }
    (gp, stats)
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
pub(super) struct ShardPools {
    pools: Vec<rayon::ThreadPool>,
}

impl ShardPools {
    /// Run `jobs[k]` in pool k, side by side, and their outputs in job order.
    pub(super) fn run<J: Send, R: Send>(
        &mut self,
        jobs: Vec<J>,
        run: &(impl Fn(J) -> R + Sync),
    ) -> Vec<R> {
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

/// Gives every parameter a new autodiff leaf (the same values, no copy): a minibatch shard's
/// own copy of the network, whose graph is not the other shards'.
pub(super) struct FreshLeaves;

impl<B: AutodiffBackend> burn::module::ModuleMapper<B> for FreshLeaves {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        // `detach` keeps the tensor's `require_grad` and gives it a new node.
        param.map(|t| t.detach())
    }
}

/// Adds `from`'s gradients into `into`, parameter by parameter (`into + from`, in that order).
pub(super) struct AddGrads<'a, B: AutodiffBackend> {
    pub into: &'a mut GradientsParams,
    pub from: GradientsParams,
    pub _backend: std::marker::PhantomData<B>,
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
