//! Per-environment policy gradients for AES's conflict term, reduced by a seeded random
//! projection (the LESS recipe).
//!
//! For each environment: `M` episodes sampled from the policy at a fixed harness level (H4 by
//! default: where twins' identical pixels ask for different actions) and scale; the
//! REINFORCE-with-baseline loss `-(1/T) sum_t (G_t - b) log pi(a_t|s_t)` over
//! all their steps; its gradient with respect to every parameter, flattened. The projection
//! `R` (`P x d`, entries `±1/sqrt(d)` or `N(0, 1/d)`) keeps inner products in expectation, so
//! cosines between projected gradients estimate the full ones with error about `1/sqrt(d)`.
//! `R` is never stored: rows are regenerated from `(seed, row block)`, so any two runs with
//! the same seed, parameter count and `d` project identically, whatever the env set.
//!
//! Cheaper estimates of the same directions (measured against the full one by
//! `cargo xtask conflict-estimates`, see docs/conflict-estimates.md): fewer episodes
//! (`rollouts_per_env`), a smaller `dim`, episodes cut after a few steps
//! (`max_episode_steps`), and the policy head's gradient alone ([`GradientParams::PolicyHead`]:
//! the trunk runs forward without autodiff, so backward stops at the head).

use std::ops::Range;
use std::time::Instant;

use burn::module::{AutodiffModule, Module, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::tensor::activation::log_softmax;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor, TensorData};
use envdist_core::InvalidValue;
use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, HarnessLevel, Rng, Task};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::TrainerError;
use crate::config::ModelConfig;
use crate::encode::BatchBuffers;
use crate::eval::{ScaleChoice, specs_for};
use crate::model::{Inputs, PolicyNet};
use crate::play::{Mode, Played, play_episodes, to_inner_device};
use crate::trainer::flat_gradient;

/// Distribution of the projection's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum ProjectionKind {
    /// `±1/sqrt(d)` with equal probability (fast to generate; the default).
    Rademacher,
    /// `N(0, 1)/sqrt(d)`.
    Gaussian,
}

/// How per-environment gradients are taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradientConfig {
    /// Episodes per environment (`M`).
    pub rollouts_per_env: usize,
    /// Harness level the episodes are played at.
    pub harness: HarnessLevel,
    /// Scale the episodes are played at.
    pub scale: ScaleChoice,
    /// Projected dimension `d`.
    pub dim: usize,
    /// Projection entries.
    pub projection: ProjectionKind,
    /// Seed of episode seeds, action sampling and the projection.
    pub seed: u64,
    /// Discount of the returns `G_t`.
    pub gamma: f32,
    /// What is subtracted from `G_t`.
    pub baseline: Baseline,
    /// Parameters the gradient is taken with respect to (serde default: all of them).
    #[serde(default)]
    pub params: GradientParams,
    /// Cut every episode after this many steps (serde default: none, each env's own step
    /// limit). Returns then count only the rewards of the first steps: a shorter rollout
    /// budget, not the same estimator.
    #[serde(default)]
    pub max_episode_steps: Option<u32>,
}

/// Which parameters a per-environment gradient is taken with respect to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum GradientParams {
    /// Every parameter of the network (the default).
    #[default]
    All,
    #[cfg_attr(feature = "clap", value(name = "head", alias = "policy-head"))]
    /// Only the policy head, the last linear layer from the fused features to the action
    /// logits (`hidden x NUM_ACTIONS` weights and `NUM_ACTIONS` biases). The trunk runs
    /// forward on the inner (non-autodiff) backend and its output enters the head as a
    /// constant, so nothing of the trunk is recorded or differentiated: backward is one small
    /// matrix product, and the projection reads a few thousand values instead of every
    /// parameter. The result is exactly the head's slice of the full gradient
    /// ([`crate::PolicyModel::gradient_param_range`]); whether its cosines rank env pairs
    /// like the full gradient's is an empirical question (docs/conflict-estimates.md).
    PolicyHead,
}

impl GradientConfig {
    /// Check the fields a gradient run cannot start without.
    pub fn validate(&self) -> Result<(), TrainerError> {
        let bad = |field: &str, expected: &str, found: String| {
            Err(TrainerError::Config(InvalidValue::new(
                format!("gradients.{field}"),
                expected,
                found,
            )))
        };
        if self.rollouts_per_env == 0 {
            return bad("rollouts_per_env", "at least 1", "0".into());
        }
        if self.dim == 0 {
            return bad("dim", "at least 1", "0".into());
        }
        if !(self.gamma.is_finite() && (0.0..=1.0).contains(&self.gamma)) {
            return bad("gamma", "a number in [0, 1]", self.gamma.to_string());
        }
        if self.max_episode_steps == Some(0) {
            return bad(
                "max_episode_steps",
                "at least 1 step (or none: each env's own limit)",
                "0".into(),
            );
        }
        Ok(())
    }
}

/// What computing a set of per-environment gradients took: the work done and where the wall
/// time went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GradientCost {
    /// Environments.
    pub envs: usize,
    /// Episodes played.
    pub episodes: usize,
    /// Environment steps played (each one is also differentiated).
    pub env_steps: usize,
    /// Backward passes (one per chunk of at most 512 steps of each half of an env's episodes).
    pub backward_passes: usize,
    /// Parameters differentiated: the length of one unprojected gradient.
    pub params: usize,
    /// Seconds playing the episodes (batched forward passes without autodiff, env steps).
    pub play_seconds: f64,
    /// Seconds in the gradient passes (forward with autodiff, backward, flattening).
    pub backward_seconds: f64,
    /// Seconds projecting the gradients (0 for [`full_gradients`](crate::full_gradients)).
    pub project_seconds: f64,
}

/// Baseline of the per-env policy gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// The mean return-to-go over the env's sampled steps (the default).
    Mean,
    /// The value head's estimate `V(s_t)`.
    Value,
}

impl Default for GradientConfig {
    fn default() -> Self {
        Self {
            // Per-env REINFORCE estimates are noisy: below a few hundred episodes the cosine
            // of a twin pair can change sign with the episode seed (measured on maze/collect).
            rollouts_per_env: 512,
            harness: HarnessLevel::H4,
            scale: ScaleChoice::Min,
            dim: 1024,
            projection: ProjectionKind::Rademacher,
            seed: 0,
            // Undiscounted: every step of a solved episode gets the same return, so the
            // gradient carries "what led to success" rather than "how late in the episode".
            gamma: 1.0,
            baseline: Baseline::Mean,
            params: GradientParams::All,
            max_episode_steps: None,
        }
    }
}

/// Ids of every float parameter of `module`, in visiting (= flattening) order, with sizes.
fn param_layout<B: Backend, M: Module<B>>(module: &M) -> Vec<(ParamId, usize)> {
    struct Layout(Vec<(ParamId, usize)>);
    impl<B: Backend> ModuleVisitor<B> for Layout {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            self.0.push((param.id, param.val().dims().iter().product()));
        }
    }
    let mut l = Layout(Vec::new());
    module.visit(&mut l);
    l.0
}

/// Where the gradient of `params` sits in the flattened gradient of every parameter (the
/// policy head's parameters are contiguous in the flattening order).
pub(crate) fn param_range<B: Backend>(net: &PolicyNet<B>, params: GradientParams) -> Range<usize> {
    let all = param_layout(net);
    let total: usize = all.iter().map(|(_, n)| n).sum();
    match params {
        GradientParams::All => 0..total,
        GradientParams::PolicyHead => {
            let head = param_layout(net.policy_head());
            let len: usize = head.iter().map(|(_, n)| n).sum();
            let mut start = 0;
            for (id, n) in &all {
                if head.first().is_some_and(|(h, _)| h == id) {
                    break;
                }
                start += n;
            }
            start..start + len
        }
    }
}

/// Rows of `R` generated per block (each block from its own derived stream).
const BLOCK: usize = 256;

/// Fill `out` (`rows x dim`) with projection rows starting at row block `block`.
fn projection_block(kind: ProjectionKind, seed: u64, block: usize, dim: usize, out: &mut [f32]) {
    let mut rng = Rng::derive(seed ^ 0x5052_4f4a, block as u64);
    let s = 1.0 / (dim as f32).sqrt();
    match kind {
        ProjectionKind::Rademacher => {
            for chunk in out.chunks_mut(64) {
                let bits = rng.next_u64();
                for (k, v) in chunk.iter_mut().enumerate() {
                    *v = if bits >> k & 1 == 1 { s } else { -s };
                }
            }
        }
        ProjectionKind::Gaussian => {
            for v in out.iter_mut() {
                *v = rng.normal() * s;
            }
        }
    }
}

/// Project each row of `grads` (all of the same length `P`) to `dim` values: `g R`.
/// Returns row-major `grads.len() x dim`.
pub fn project(grads: &[Vec<f32>], dim: usize, kind: ProjectionKind, seed: u64) -> Vec<f32> {
    let p = grads.first().map_or(0, Vec::len);
    let mut out = vec![0.0f32; grads.len() * dim];
    let mut block = vec![0.0f32; BLOCK * dim];
    for (b, start) in (0..p).step_by(BLOCK).enumerate() {
        let rows = BLOCK.min(p - start);
        projection_block(kind, seed, b, dim, &mut block[..rows * dim]);
        let block = &block;
        out.par_chunks_mut(dim.max(1))
            .zip(grads.par_iter())
            .for_each(|(o, g)| {
                for r in 0..rows {
                    let x = g[start + r];
                    if x == 0.0 {
                        continue;
                    }
                    for (oj, rj) in o.iter_mut().zip(&block[r * dim..(r + 1) * dim]) {
                        *oj += x * rj;
                    }
                }
            });
    }
    out
}

pub use envdist_core::cosine;

/// Returns-to-go minus the baseline for every step of `episodes`, as `(step, advantage)`.
fn advantages<'a>(
    episodes: &[&'a Played],
    gamma: f32,
    baseline: Baseline,
) -> Vec<(&'a crate::play::Recorded, f32)> {
    // Advantages: discounted return-to-go minus a baseline. The default baseline is the mean
    // return-to-go over this env's steps (GRPO-like): it does not depend on how well the value
    // head fits this env at this harness level, which would otherwise add a shared
    // "lower the probability of whatever was done" direction to every env's gradient.
    let mut steps = Vec::new();
    for ep in episodes {
        let mut g = 0.0f32;
        let mut ret = vec![0.0f32; ep.steps.len()];
        for (t, s) in ep.steps.iter().enumerate().rev() {
            g = s.reward + gamma * g;
            ret[t] = g;
        }
        steps.extend(ep.steps.iter().zip(ret));
    }
    let mean_g = steps.iter().map(|(_, g)| *g).sum::<f32>() / steps.len().max(1) as f32;
    for (s, a) in &mut steps {
        *a -= match baseline {
            Baseline::Mean => mean_g,
            Baseline::Value => s.value,
        };
    }
    steps
}

/// The network twice: with autodiff, and its inference copy (`AutodiffModule::valid`) for the
/// parts that are not differentiated.
pub(crate) struct Nets<'a, B: AutodiffBackend> {
    pub net: &'a PolicyNet<B>,
    pub inner: PolicyNet<B::InnerBackend>,
}

/// The sum over `steps` of `-(advantage) grad log pi(a|s)` with respect to `params`,
/// flattened (not yet divided by the step count, so that the sums of two halves add up to the
/// whole). Counts its backward passes in `cost`.
fn gradient_sum<B: AutodiffBackend>(
    nets: &Nets<'_, B>,
    cfg: &ModelConfig,
    device: &B::Device,
    params: GradientParams,
    steps: &[(&crate::play::Recorded, f32)],
    cost: &mut GradientCost,
) -> Result<Vec<f32>, TrainerError> {
    let net = nets.net;
    let head = net.policy_head();
    let mut sum: Option<Vec<f32>> = None;
    let mut bufs = BatchBuffers::default();
    for chunk in steps.chunks(512) {
        let m = chunk.len();
        bufs.fill(chunk.iter().map(|(s, _)| &s.features), cfg);
        let acts: Vec<i32> = chunk.iter().map(|(s, _)| s.action.index() as i32).collect();
        let acts = Tensor::<B, 2, Int>::from_data(TensorData::new(acts, [m, 1]), device);
        let adv: Vec<f32> = chunk.iter().map(|(_, a)| *a).collect();
        let adv = Tensor::<B, 1>::from_data(TensorData::new(adv, [m]), device);
        let logits = match params {
            GradientParams::All => net.forward(Inputs::<B>::from_buffers(&bufs, cfg, device)).0,
            GradientParams::PolicyHead => {
                // The trunk without autodiff: its output is a constant to the head, so the
                // backward pass below ends at the head's parameters.
                let x = Inputs::<B::InnerBackend>::from_buffers(
                    &bufs,
                    cfg,
                    &to_inner_device::<B>(device),
                );
                let (h, mask) = nets.inner.trunk(x);
                net.policy_logits(Tensor::from_inner(h), Tensor::from_inner(mask))
            }
        };
        let logp = log_softmax(logits, 1).gather(1, acts).reshape([m]);
        let loss = -(logp * adv).sum();
        let grads = loss.backward();
        cost.backward_passes += 1;
        let flat = match params {
            GradientParams::All => flat_gradient(net, &GradientsParams::from_grads(grads, net))?,
            GradientParams::PolicyHead => {
                flat_gradient(head, &GradientsParams::from_grads(grads, head))?
            }
        };
        match &mut sum {
            None => sum = Some(flat),
            Some(acc) => acc.iter_mut().zip(&flat).for_each(|(a, f)| *a += f),
        }
    }
    match (sum, params) {
        (Some(v), _) => Ok(v),
        (None, GradientParams::All) => flat_gradient(net, &GradientsParams::new()),
        (None, GradientParams::PolicyHead) => flat_gradient(head, &GradientsParams::new()),
    }
}

/// One environment's gradient and its two halves (episodes `0, 2, 4, ..` and `1, 3, 5, ..`),
/// each the mean over the steps it covers; `whole` is the step-weighted mean of the halves.
pub(crate) struct EnvGradient {
    pub whole: Vec<f32>,
    pub halves: [Vec<f32>; 2],
}

/// The policy gradient of one environment's episodes, with its split halves.
fn env_gradient<B: AutodiffBackend>(
    nets: &Nets<'_, B>,
    cfg: &ModelConfig,
    device: &B::Device,
    episodes: &[Played],
    gcfg: &GradientConfig,
    cost: &mut GradientCost,
) -> Result<EnvGradient, TrainerError> {
    let all: Vec<&Played> = episodes.iter().collect();
    let steps = advantages(&all, gcfg.gamma, gcfg.baseline);
    // Split by episode, keeping the baseline computed over all of them.
    let mut halves_steps: [Vec<(&crate::play::Recorded, f32)>; 2] = [Vec::new(), Vec::new()];
    let mut k = 0usize;
    for (e, ep) in episodes.iter().enumerate() {
        halves_steps[e % 2].extend_from_slice(&steps[k..k + ep.steps.len()]);
        k += ep.steps.len();
    }
    let sums = [
        gradient_sum(nets, cfg, device, gcfg.params, &halves_steps[0], cost)?,
        gradient_sum(nets, cfg, device, gcfg.params, &halves_steps[1], cost)?,
    ];
    let counts = [halves_steps[0].len(), halves_steps[1].len()];
    let total = (counts[0] + counts[1]).max(1) as f32;
    let whole: Vec<f32> = sums[0]
        .iter()
        .zip(&sums[1])
        .map(|(a, b)| (a + b) / total)
        .collect();
    let [s0, s1] = sums;
    let mean = |v: Vec<f32>, n: usize| -> Vec<f32> {
        let d = n.max(1) as f32;
        v.into_iter().map(|x| x / d).collect()
    };
    Ok(EnvGradient {
        whole,
        halves: [mean(s0, counts[0]), mean(s1, counts[1])],
    })
}

/// The random stream of environment `env` for `purpose` (episode seeds, action sampling):
/// keyed by the env id, never by its position in the call, so an env's gradient is the same
/// whatever other envs are computed with it, and two envs never replay the same instances
/// with the same random actions (which would correlate their gradients by construction).
fn env_stream(seed: u64, env: &EnvId, purpose: u64) -> Rng {
    Rng::derive(seed ^ env.stable_hash(), purpose)
}

/// Environments whose episodes are played in one batch (bounds memory: recorded steps).
const ENVS_PER_WAVE: usize = 16;

/// Unprojected per-env gradients (with respect to `gcfg.params`): `on_env(i, gradient)` for
/// each env `i` of `envs`, in order (so a caller can project each one and drop it: a full
/// gradient per env of a large pool would not fit in memory). Adds the work done to `cost`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn each_env_gradient<B: AutodiffBackend>(
    net: &PolicyNet<B>,
    cfg: &ModelConfig,
    device: &B::Device,
    factory: &dyn EnvFactory,
    envs: &[EnvId],
    gcfg: &GradientConfig,
    cost: &mut GradientCost,
    on_env: &mut dyn FnMut(usize, EnvGradient) -> Result<(), TrainerError>,
) -> Result<(), TrainerError> {
    gcfg.validate()?;
    let specs = specs_for(factory, envs)?;
    let nets = Nets {
        net,
        inner: net.valid(),
    };
    cost.params = param_range(net, gcfg.params).len();
    let m = gcfg.rollouts_per_env;
    let mut index = 0usize;
    for wave in specs.chunks(ENVS_PER_WAVE) {
        let mut tasks = Vec::with_capacity(wave.len() * m);
        let mut rngs = Vec::with_capacity(wave.len() * m);
        for spec in wave {
            let mut seeds = env_stream(gcfg.seed, &spec.id, 0x5345_4544);
            for k in 0..m {
                tasks.push(Task {
                    env: spec.id.clone(),
                    seed: seeds.next_u64(),
                    harness: gcfg.harness,
                    scale: gcfg.scale.for_spec(spec),
                });
                rngs.push(env_stream(gcfg.seed, &spec.id, 0x4143_5400 + k as u64));
            }
        }
        let t = Instant::now();
        let played = play_episodes(
            net,
            factory,
            cfg,
            device,
            &tasks,
            256,
            Mode::Sample(&mut rngs),
            true,
            gcfg.max_episode_steps,
        )?;
        cost.play_seconds += t.elapsed().as_secs_f64();
        cost.episodes += played.len();
        cost.env_steps += played.iter().map(|p| p.steps.len()).sum::<usize>();
        for eps in played.chunks(m) {
            let t = Instant::now();
            let g = env_gradient(&nets, cfg, device, eps, gcfg, cost)?;
            cost.backward_seconds += t.elapsed().as_secs_f64();
            cost.envs += 1;
            on_env(index, g)?;
            index += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn projection_is_deterministic_and_independent_of_the_env_set() {
        let a: Vec<f32> = (0..700).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..700).map(|i| (i as f32 * 0.11).cos()).collect();
        let both = project(&[a.clone(), b.clone()], 64, ProjectionKind::Rademacher, 3);
        let one = project(std::slice::from_ref(&b), 64, ProjectionKind::Rademacher, 3);
        assert_eq!(&both[64..], &one[..]);
        let other_seed = project(&[b], 64, ProjectionKind::Rademacher, 4);
        assert_ne!(one, other_seed);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Johnson-Lindenstrauss: with d = 1024, the projected cosine of two random vectors
        /// (of chosen true cosine) is within 0.15 of the true one (about 5 standard errors).
        #[test]
        fn projection_preserves_cosines(seed in 0u64..10_000, mix in -1.0f32..1.0, gauss in any::<bool>()) {
            let mut rng = envdist_core::Rng::seed_from_u64(seed);
            let p = 3000;
            let u: Vec<f32> = (0..p).map(|_| rng.normal()).collect();
            let w: Vec<f32> = (0..p).map(|_| rng.normal()).collect();
            let v: Vec<f32> = u.iter().zip(&w).map(|(a, b)| mix * a + (1.0 - mix.abs()) * b).collect();
            let kind = if gauss { ProjectionKind::Gaussian } else { ProjectionKind::Rademacher };
            let pr = project(&[u.clone(), v.clone()], 1024, kind, seed);
            let full = cosine(&u, &v);
            let proj = cosine(&pr[..1024], &pr[1024..]);
            prop_assert!((full - proj).abs() < 0.15, "full {full} projected {proj}");
        }
    }
}
