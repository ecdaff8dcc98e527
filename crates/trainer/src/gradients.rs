//! Per-environment policy gradients for AES's conflict term, reduced by a seeded random
//! projection (the LESS recipe).
//!
//! For each environment, `M` instances (task seeds) at a fixed harness level (H4 by default:
//! where twins' identical pixels ask for different actions) and scale, and one of two
//! estimators of the policy gradient of the expected reward:
//!
//! * **Multi-turn envs** (and single-turn ones with [`SingleTurn::Sampled`]): one episode
//!   sampled from the policy per instance; the REINFORCE-with-baseline loss
//!   `-(1/T) sum_t A_t log pi(a_t|s_t)` over all their steps, with `A_t` the return-to-go
//!   minus the mean return-to-go over the env's steps ([`Baseline::Mean`], the default) or
//!   GAE(`gamma`, `lambda`) on the value head ([`Baseline::Value`]; `lambda = 1`: the
//!   return-to-go minus `V(s_t)`).
//! * **Single-turn envs** ([`SingleTurn::Exact`], the default): no sampled answer. Every legal
//!   answer `a` of the instance is played from a fresh reset for its reward `r(a)`, and the
//!   instance contributes `-sum_a pi(a|s) (r(a) - rbar(s)) log pi(a|s)` (weights held
//!   constant, `rbar(s) = sum_a pi(a|s) r(a)`), whose gradient is exactly that of the expected
//!   reward at `s`: no action-sampling noise is left, only the instances are sampled.
//!
//! The gradient is taken with respect to every parameter (or the policy head's alone) and
//! flattened. The projection `R` (`P x d`, entries `±1/sqrt(d)` or `N(0, 1/d)`) keeps inner
//! products in expectation, so cosines between projected gradients estimate the full ones with
//! error about `1/sqrt(d)`. `R` is never stored: rows are regenerated from `(seed, row
//! block)`, so any two runs with the same seed, parameter count and `d` project identically,
//! whatever the env set.
//!
//! Every env's gradient comes with the cosine of the gradients of its two halves of instances
//! (even and odd): the split-half reliability of its direction
//! ([`GradientReport`](crate::GradientReport)). What the estimators are worth, measured on the
//! study's base (docs/conflict-estimates.md): the exact single-turn estimator is as reliable
//! as about 1.8 times as many sampled episodes and agrees with the sampled one's expectation
//! (cosine 0.96 at 1,024 episodes on the same instances); the value baseline of a base whose
//! critic was warmed is *less* reliable than the mean baseline at `lambda = 1`, and `lambda <
//! 1` is more reproducible but biased (its pairwise cosines agree far less with a 1,024-episode
//! estimate than their reproducibility allows): the defaults stay mean, `lambda = 1`, and the
//! reliability comes from the episode count.
//!
//! Cheaper estimates of the same directions (measured against the full one by
//! `cargo xtask conflict-estimates`): fewer episodes (`rollouts_per_env`), a smaller `dim`,
//! episodes cut after a few steps (`max_episode_steps`), and the policy head's gradient alone
//! ([`GradientParams::PolicyHead`]: the trunk runs forward without autodiff, so backward stops
//! at the head).

use std::ops::Range;
use std::time::Instant;

use burn::module::{AutodiffModule, Module, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::tensor::activation::{log_softmax, softmax};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Tensor, TensorData};
use envdist_core::InvalidValue;
use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, Env, EnvId, EnvSpec, HarnessLevel, NUM_ACTIONS, Rng, Task, Turn};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::TrainerError;
use crate::config::ModelConfig;
use crate::encode::{BatchBuffers, Features, encode};
use crate::eval::{ScaleChoice, specs_for};
use crate::model::{Inputs, PolicyNet};
use crate::play::{Mode, Played, Recorded, play_episodes, to_inner_device};
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
    /// How single-turn environments' gradients are taken (serde default: exactly, over every
    /// answer).
    #[serde(default)]
    pub single_turn: SingleTurn,
    /// GAE's `lambda` for [`Baseline::Value`] (serde default 1: the return-to-go minus
    /// `V(s_t)`; below 1 the critic's later values stand in for part of the sampled return).
    /// Must be 1 with [`Baseline::Mean`].
    #[serde(default = "one")]
    pub lambda: f32,
}

fn one() -> f32 {
    1.0
}

/// How the gradient of a single-turn environment (one observation, one answer, episode over)
/// is estimated from its sampled instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum SingleTurn {
    /// Like a multi-turn env: one sampled answer per instance, REINFORCE with the config's
    /// baseline.
    Sampled,
    /// The exact expectation over the answers (the default): per instance `s`, every legal
    /// answer `a` is played from a fresh reset of the same task for its reward `r(a)`, and the
    /// instance contributes `sum_a pi(a|s) (r(a) - rbar(s)) grad log pi(a|s)` with
    /// `rbar(s) = sum_a pi(a|s) r(a)`: the gradient of the expected reward at `s`, with no
    /// action-sampling noise left (only the instances are sampled). An env whose legal answer
    /// leaves the episode running is an error (use `sampled` for it).
    #[default]
    Exact,
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
        if !(self.lambda.is_finite() && (0.0..=1.0).contains(&self.lambda)) {
            return bad("lambda", "a number in [0, 1]", self.lambda.to_string());
        }
        if self.baseline == Baseline::Mean && self.lambda != 1.0 {
            return bad(
                "lambda",
                "1 with baseline mean (GAE's lambda needs the value baseline)",
                self.lambda.to_string(),
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

/// Baseline of the per-env policy gradient of sampled episodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// The mean return-to-go over the env's sampled steps (the default: measured more reliable
    /// than the value baseline on the study's base, even with its critic warmed).
    Mean,
    /// The value head's estimate `V(s_t)`, with GAE's `lambda` ([`GradientConfig::lambda`]).
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
            single_turn: SingleTurn::Exact,
            lambda: 1.0,
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

/// What multiplies a state's log-probabilities in the per-env loss.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    /// A sampled action and its advantage: the term `-A log pi(a|s)`.
    Action(ActionId, f32),
    /// Every action's reward (0 for illegal ones): the term
    /// `-sum_a pi(a|s) (r(a) - rbar(s)) log pi(a|s)` with the weights `pi(a|s)` held constant.
    Answers(&'a [f32; NUM_ACTIONS]),
}

/// One row of the per-env loss: an encoded state and its target.
type Row<'a> = (&'a Features, Target<'a>);

/// Advantages for every step of `episodes`, as loss rows. [`Baseline::Mean`]: discounted
/// return-to-go minus its mean over the env's steps. [`Baseline::Value`]: GAE(`gamma`,
/// `lambda`) on the recorded values (`lambda = 1`: return-to-go minus `V(s_t)`); nothing is
/// bootstrapped after an episode's last step, as the return-to-go counts nothing there either.
fn advantages<'a>(
    episodes: &[&'a Played],
    gamma: f32,
    baseline: Baseline,
    lambda: f32,
) -> Vec<Row<'a>> {
    // The default baseline is the mean return-to-go over this env's steps (GRPO-like): it
    // does not depend on how well the value head fits this env at this harness level, which
    // would otherwise add a shared "lower the probability of whatever was done" direction to
    // every env's gradient.
    let mut steps: Vec<(&'a Recorded, f32)> = Vec::new();
    for ep in episodes {
        let mut adv = vec![0.0f32; ep.steps.len()];
        let mut acc = 0.0f32;
        for t in (0..ep.steps.len()).rev() {
            let s = &ep.steps[t];
            acc = match baseline {
                Baseline::Mean => s.reward + gamma * acc,
                Baseline::Value => {
                    let next = ep.steps.get(t + 1).map_or(0.0, |n| n.value);
                    let delta = s.reward + gamma * next - s.value;
                    delta + gamma * lambda * acc
                }
            };
            adv[t] = acc;
        }
        steps.extend(ep.steps.iter().zip(adv));
    }
    if baseline == Baseline::Mean {
        let mean_g = steps.iter().map(|(_, g)| *g).sum::<f32>() / steps.len().max(1) as f32;
        for (_, a) in &mut steps {
            *a -= mean_g;
        }
    }
    steps
        .into_iter()
        .map(|(s, a)| (&s.features, Target::Action(s.action, a)))
        .collect()
}

/// The network twice: with autodiff, and its inference copy (`AutodiffModule::valid`) for the
/// parts that are not differentiated.
pub(crate) struct Nets<'a, B: AutodiffBackend> {
    pub net: &'a PolicyNet<B>,
    pub inner: PolicyNet<B::InnerBackend>,
}

/// The sum over `rows` of their loss terms' gradients with respect to `params`, flattened
/// (not yet divided by the row count, so that the sums of two halves add up to the whole).
/// Counts its backward passes in `cost`.
fn gradient_sum<B: AutodiffBackend>(
    nets: &Nets<'_, B>,
    cfg: &ModelConfig,
    device: &B::Device,
    params: GradientParams,
    rows: &[Row<'_>],
    cost: &mut GradientCost,
) -> Result<Vec<f32>, TrainerError> {
    let net = nets.net;
    let head = net.policy_head();
    let mut sum: Option<Vec<f32>> = None;
    let mut bufs = BatchBuffers::default();
    for chunk in rows.chunks(512) {
        let m = chunk.len();
        bufs.fill(chunk.iter().map(|(f, _)| *f), cfg);
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
        // The weight of every (row, action) log-probability: the advantage at the sampled
        // action, or `pi (r - rbar)` at every action of an answered row.
        let mut fixed = vec![0.0f32; m * NUM_ACTIONS];
        let mut rewards = vec![0.0f32; m * NUM_ACTIONS];
        let mut answered = vec![0.0f32; m];
        for (i, (_, t)) in chunk.iter().enumerate() {
            match t {
                Target::Action(a, adv) => fixed[i * NUM_ACTIONS + a.index()] = *adv,
                Target::Answers(r) => {
                    rewards[i * NUM_ACTIONS..(i + 1) * NUM_ACTIONS].copy_from_slice(&r[..]);
                    answered[i] = 1.0;
                }
            }
        }
        let mut weights =
            Tensor::<B, 2>::from_data(TensorData::new(fixed, [m, NUM_ACTIONS]), device);
        if answered.iter().any(|&x| x != 0.0) {
            let p = softmax(logits.clone().detach(), 1);
            let r = Tensor::<B, 2>::from_data(TensorData::new(rewards, [m, NUM_ACTIONS]), device);
            let rbar = (p.clone() * r.clone()).sum_dim(1);
            let on = Tensor::<B, 2>::from_data(TensorData::new(answered, [m, 1]), device);
            weights = weights + p * (r - rbar) * on;
        }
        let loss = -(log_softmax(logits, 1) * weights.detach()).sum();
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

/// One environment's gradient and its two halves (instances `0, 2, 4, ..` and `1, 3, 5, ..`),
/// each the mean over the rows it covers; `whole` is the row-weighted mean of the halves.
pub(crate) struct EnvGradient {
    pub whole: Vec<f32>,
    pub halves: [Vec<f32>; 2],
}

/// The gradients of two halves of an env's rows, and of their union.
fn halves_gradient<B: AutodiffBackend>(
    nets: &Nets<'_, B>,
    cfg: &ModelConfig,
    device: &B::Device,
    params: GradientParams,
    halves: &[Vec<Row<'_>>; 2],
    cost: &mut GradientCost,
) -> Result<EnvGradient, TrainerError> {
    let sums = [
        gradient_sum(nets, cfg, device, params, &halves[0], cost)?,
        gradient_sum(nets, cfg, device, params, &halves[1], cost)?,
    ];
    let counts = [halves[0].len(), halves[1].len()];
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

/// The policy gradient of one environment's sampled episodes, with its split halves.
fn env_gradient<B: AutodiffBackend>(
    nets: &Nets<'_, B>,
    cfg: &ModelConfig,
    device: &B::Device,
    episodes: &[Played],
    gcfg: &GradientConfig,
    cost: &mut GradientCost,
) -> Result<EnvGradient, TrainerError> {
    let all: Vec<&Played> = episodes.iter().collect();
    let rows = advantages(&all, gcfg.gamma, gcfg.baseline, gcfg.lambda);
    // Split by episode, keeping the baseline computed over all of them.
    let mut halves: [Vec<Row<'_>>; 2] = [Vec::new(), Vec::new()];
    let mut k = 0usize;
    for (e, ep) in episodes.iter().enumerate() {
        halves[e % 2].extend_from_slice(&rows[k..k + ep.steps.len()]);
        k += ep.steps.len();
    }
    halves_gradient(nets, cfg, device, gcfg.params, &halves, cost)
}

/// A single-turn instance answered every way: its observation, encoded, and the reward of
/// each legal answer (0 for the others).
pub(crate) struct Answered {
    pub features: Features,
    pub rewards: [f32; NUM_ACTIONS],
}

/// Play every legal answer of every task, each from a fresh reset of the task (in parallel;
/// single-turn envs end after one answer).
pub(crate) fn answer_every_way(
    factory: &dyn EnvFactory,
    cfg: &ModelConfig,
    tasks: &[Task],
) -> Result<Vec<Answered>, TrainerError> {
    tasks
        .par_iter()
        .map_init(
            || None::<Box<dyn Env>>,
            |slot, task| -> Result<Answered, TrainerError> {
                if slot.as_ref().is_none_or(|e| e.spec().id != task.env) {
                    *slot = Some(
                        factory
                            .make(&task.env)
                            .map_err(|e| TrainerError::UnknownEnv(e.0))?,
                    );
                }
                let Some(env) = slot.as_mut() else {
                    unreachable!("made above")
                };
                let spec = env.spec();
                crate::play::check_scale(spec, task)?;
                let one_step = spec.max_steps <= 1;
                let obs = env.reset(task);
                let legal = env.legal_actions();
                let features = encode(&obs, legal, cfg);
                let mut rewards = [0.0f32; NUM_ACTIONS];
                for (n, a) in legal.iter().enumerate() {
                    if n > 0 {
                        env.reset(task);
                    }
                    let step = env.step(a);
                    if !(step.done || step.truncated || one_step) {
                        return Err(TrainerError::Config(InvalidValue::new(
                            format!("gradients.single_turn ({})", task.env),
                            "exact needs every legal answer to end the episode (or sampled)",
                            format!("{a} left it running (task seed {})", task.seed),
                        )));
                    }
                    rewards[a.index()] = step.reward;
                }
                Ok(Answered { features, rewards })
            },
        )
        .collect()
}

/// The exact expected policy gradient of one single-turn environment's answered instances,
/// with its split halves (instances `0, 2, 4, ..` and `1, 3, 5, ..`).
fn exact_env_gradient<B: AutodiffBackend>(
    nets: &Nets<'_, B>,
    cfg: &ModelConfig,
    device: &B::Device,
    answered: &[Answered],
    params: GradientParams,
    cost: &mut GradientCost,
) -> Result<EnvGradient, TrainerError> {
    let mut halves: [Vec<Row<'_>>; 2] = [Vec::new(), Vec::new()];
    for (i, a) in answered.iter().enumerate() {
        halves[i % 2].push((&a.features, Target::Answers(&a.rewards)));
    }
    halves_gradient(nets, cfg, device, params, &halves, cost)
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

/// Whether `spec`'s gradient is taken with [`SingleTurn::Exact`].
fn is_exact(gcfg: &GradientConfig, spec: &EnvSpec) -> bool {
    gcfg.single_turn == SingleTurn::Exact && spec.turn == Turn::Single
}

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
        // The same instances whichever way an env's gradient is taken.
        let (mut sampled, mut exact) = (Vec::new(), Vec::new());
        let mut rngs = Vec::new();
        for spec in wave {
            let mut seeds = env_stream(gcfg.seed, &spec.id, 0x5345_4544);
            for k in 0..m {
                let task = Task {
                    env: spec.id.clone(),
                    seed: seeds.next_u64(),
                    harness: gcfg.harness,
                    scale: gcfg.scale.for_spec(spec),
                };
                if is_exact(gcfg, spec) {
                    exact.push(task);
                } else {
                    sampled.push(task);
                    rngs.push(env_stream(gcfg.seed, &spec.id, 0x4143_5400 + k as u64));
                }
            }
        }
        let t = Instant::now();
        let played = if sampled.is_empty() {
            Vec::new()
        } else {
            play_episodes(
                net,
                factory,
                cfg,
                device,
                &sampled,
                256,
                Mode::Sample(&mut rngs),
                true,
                gcfg.max_episode_steps,
            )?
        };
        let answered = answer_every_way(factory, cfg, &exact)?;
        cost.play_seconds += t.elapsed().as_secs_f64();
        cost.episodes += played.len() + answered.len();
        cost.env_steps += played.iter().map(|p| p.steps.len()).sum::<usize>();
        cost.env_steps += answered
            .iter()
            .map(|a| a.features.legal.count())
            .sum::<usize>();
        let (mut played, mut answered) = (played.chunks(m), answered.chunks(m));
        for spec in wave {
            let t = Instant::now();
            let g = if is_exact(gcfg, spec) {
                let eps = answered.next().unwrap_or_default();
                exact_env_gradient(&nets, cfg, device, eps, gcfg.params, cost)?
            } else {
                let eps = played.next().unwrap_or_default();
                env_gradient(&nets, cfg, device, eps, gcfg, cost)?
            };
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
    use crate::{Device, PolicyModel, full_gradients, per_env_gradients_report};
    use envdist_core::env::UnknownEnv;
    use envdist_core::{
        ActionMask, EpisodeOutcome, HarnessText, Observation, Rgb8Image, ScaleRange, Split, Step,
    };
    use proptest::prelude::*;

    /// A single-turn question for the exact estimator: a lit cell among four on a 16x16
    /// canvas; answer `k` earns `REWARDS[(k - cell) mod 4]` (graded, so that the expected
    /// reward is not a function of one probability). `pick/fixed` lights cell 2 whatever the
    /// seed (one instance: the exact gradient is a constant), `pick/seeded` the seed's cell,
    /// `pick/long` is `pick/seeded` whose answers leave the episode running (not one-step).
    struct Pick {
        spec: EnvSpec,
        cell: usize,
    }

    const REWARDS: [f32; 4] = [1.0, 0.0, 0.5, 0.0];

    fn pick_spec(variant: &str) -> EnvSpec {
        EnvSpec {
            id: EnvId::new(format!("pick/{variant}")),
            family: "pick".into(),
            variant: variant.into(),
            turn: Turn::Single,
            scale: ScaleRange { min: 1, max: 1 },
            split: Split::Pool,
            abilities: vec!["look".into()],
            conflict_twin: None,
            instruction: "Which cell is lit?".into(),
            max_steps: if variant == "long" { 3 } else { 1 },
        }
    }

    impl Pick {
        fn observe(&self) -> Observation {
            let mut img = Rgb8Image::new(16, 16);
            img.fill([10, 10, 10]);
            let c = self.cell as i32;
            img.fill_rect((c % 2) * 8, (c / 2) * 8, 8, 8, [250, 250, 250]);
            Observation {
                image: img,
                instruction: self.spec.instruction.clone(),
                harness: HarnessText::default(),
            }
        }
    }

    impl Env for Pick {
        fn spec(&self) -> &EnvSpec {
            &self.spec
        }
        fn reset(&mut self, task: &Task) -> Observation {
            self.cell = if self.spec.variant == "fixed" {
                2
            } else {
                envdist_core::Rng::seed_from_u64(task.seed).below(4) as usize
            };
            self.observe()
        }
        fn step(&mut self, action: ActionId) -> Step {
            let k = action.answer_value().unwrap_or(0);
            let done = self.spec.variant != "long";
            Step {
                observation: self.observe(),
                reward: REWARDS[(k + 4 - self.cell) % 4],
                done,
                truncated: false,
                success: done && k == self.cell,
                abilities: vec!["look"],
                legal: self.legal_actions(),
            }
        }
        fn legal_actions(&self) -> ActionMask {
            ActionMask::answers(4)
        }
    }

    struct PickFactory;

    impl EnvFactory for PickFactory {
        fn specs(&self) -> Vec<EnvSpec> {
            ["fixed", "seeded", "long"].map(pick_spec).to_vec()
        }
        fn make(&self, id: &EnvId) -> Result<Box<dyn Env>, UnknownEnv> {
            self.specs()
                .into_iter()
                .find(|s| &s.id == id)
                .map(|spec| Box::new(Pick { spec, cell: 0 }) as Box<dyn Env>)
                .ok_or_else(|| UnknownEnv(id.clone()))
        }
    }

    fn norm(v: &[f32]) -> f32 {
        v.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    #[test]
    fn exact_single_turn_gradient_is_the_mean_of_sampled_ones() {
        let model = PolicyModel::new(&ModelConfig::tiny(), 7, Device::Cpu).unwrap();
        let envs = [EnvId::new("pick/fixed")];
        let exact_cfg = GradientConfig {
            rollouts_per_env: 4,
            ..GradientConfig::default()
        };
        assert_eq!(exact_cfg.single_turn, SingleTurn::Exact, "the default");
        let exact = full_gradients(&model, &PickFactory, &envs, &exact_cfg)
            .unwrap()
            .remove(0);
        assert!(norm(&exact) > 0.0);
        // One instance: every instance's exact gradient is the same, whatever the seed.
        let other = GradientConfig {
            seed: 9,
            rollouts_per_env: 6,
            ..exact_cfg.clone()
        };
        let again = full_gradients(&model, &PickFactory, &envs, &other)
            .unwrap()
            .remove(0);
        assert!(cosine(&exact, &again) > 0.9999);
        // The mean of many sampled estimates (M episodes each, mean baseline over the M, which
        // shrinks the expectation by 1 - 1/M) converges to it.
        let m = 64;
        let seeds = 100;
        let mut mean = vec![0.0f32; exact.len()];
        for seed in 0..seeds {
            let cfg = GradientConfig {
                rollouts_per_env: m,
                seed,
                single_turn: SingleTurn::Sampled,
                ..exact_cfg.clone()
            };
            let g = full_gradients(&model, &PickFactory, &envs, &cfg)
                .unwrap()
                .remove(0);
            mean.iter_mut()
                .zip(&g)
                .for_each(|(a, b)| *a += b / seeds as f32);
        }
        let shrink = 1.0 - 1.0 / m as f32;
        let ratio = norm(&mean) / (shrink * norm(&exact));
        let cos = cosine(&mean, &exact);
        eprintln!("mean of {seeds} sampled vs exact: cosine {cos:.4}, norm ratio {ratio:.3}");
        assert!(cos > 0.995, "cosine {cos}");
        assert!((ratio - 1.0).abs() < 0.05, "norm ratio {ratio}");
    }

    #[test]
    fn exact_single_turn_gradients_are_more_reliable_than_sampled_ones() {
        let model = PolicyModel::new(&ModelConfig::tiny(), 7, Device::Cpu).unwrap();
        let envs = [EnvId::new("pick/seeded")];
        let mean_split_half = |single_turn: SingleTurn| -> f32 {
            let seeds = 8;
            let mut total = 0.0;
            for seed in 0..seeds {
                let cfg = GradientConfig {
                    rollouts_per_env: 32,
                    seed,
                    single_turn,
                    ..GradientConfig::default()
                };
                let r = per_env_gradients_report(&model, &PickFactory, &envs, &cfg, &mut |_| {})
                    .unwrap();
                if single_turn == SingleTurn::Exact {
                    // Each instance answered all four ways; the same instances either way.
                    assert_eq!((r.cost.episodes, r.cost.env_steps), (32, 4 * 32));
                }
                total += r.split_half_cosine[0];
            }
            total / seeds as f32
        };
        let exact = mean_split_half(SingleTurn::Exact);
        let sampled = mean_split_half(SingleTurn::Sampled);
        eprintln!("mean split-half cosine at 32 instances: exact {exact:.3}, sampled {sampled:.3}");
        assert!(exact > sampled + 0.2, "exact {exact} sampled {sampled}");
        assert!(exact > 0.8, "exact {exact}");
    }

    #[test]
    fn exact_needs_one_step_answers_and_multi_turn_envs_are_sampled() {
        let model = PolicyModel::new(&ModelConfig::tiny(), 7, Device::Cpu).unwrap();
        let cfg = GradientConfig {
            rollouts_per_env: 4,
            ..GradientConfig::default()
        };
        let e = full_gradients(&model, &PickFactory, &[EnvId::new("pick/long")], &cfg)
            .unwrap_err()
            .to_string();
        assert!(e.contains("pick/long") && e.contains("sampled"), "{e}");
        let sampled = GradientConfig {
            single_turn: SingleTurn::Sampled,
            ..cfg.clone()
        };
        assert!(full_gradients(&model, &PickFactory, &[EnvId::new("pick/long")], &sampled).is_ok());
        // A multi-turn env's gradient is the same whichever single-turn estimator is asked for.
        let toy = [EnvId::new("toy/goal")];
        let factory = crate::toy::ToyFactory;
        assert_eq!(
            full_gradients(&model, &factory, &toy, &cfg).unwrap(),
            full_gradients(&model, &factory, &toy, &sampled).unwrap()
        );
        for bad in [
            GradientConfig {
                lambda: 1.5,
                baseline: Baseline::Value,
                ..cfg.clone()
            },
            GradientConfig {
                lambda: 0.9,
                ..cfg.clone()
            },
        ] {
            let e = full_gradients(&model, &factory, &toy, &bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains("gradients.lambda"), "{e}");
        }
    }

    fn played(steps: &[(f32, f32)]) -> Played {
        let features = Features {
            patches: Vec::new(),
            text: Default::default(),
            legal: ActionMask::ALL,
        };
        Played {
            outcome: EpisodeOutcome {
                task: Task {
                    env: EnvId::new("x/y"),
                    seed: 0,
                    harness: HarnessLevel::H4,
                    scale: 1,
                },
                success: false,
                episode_return: steps.iter().map(|s| s.0).sum(),
                steps: steps.len() as u32,
            },
            steps: steps
                .iter()
                .map(|&(reward, value)| Recorded {
                    features: features.clone(),
                    action: ActionId::WAIT,
                    reward,
                    value,
                })
                .collect(),
        }
    }

    #[test]
    fn advantages_are_returns_minus_a_baseline_or_gae() {
        // (reward, value) per step.
        let a = played(&[(0.0, 0.5), (0.0, 0.25), (1.0, 0.75)]);
        let b = played(&[(0.0, 0.5)]);
        let eps = [&a, &b];
        let adv = |baseline, gamma, lambda| -> Vec<f32> {
            advantages(&eps, gamma, baseline, lambda)
                .iter()
                .map(|(_, t)| match t {
                    Target::Action(_, x) => *x,
                    Target::Answers(_) => unreachable!(),
                })
                .collect()
        };
        let close = |x: &[f32], y: &[f32]| x.iter().zip(y).all(|(a, b)| (a - b).abs() < 1e-6);
        // Returns-to-go 1, 1, 1, 0; mean 0.75.
        assert!(close(
            &adv(Baseline::Mean, 1.0, 1.0),
            &[0.25, 0.25, 0.25, -0.75]
        ));
        // lambda 1: the return minus the value.
        assert!(close(
            &adv(Baseline::Value, 1.0, 1.0),
            &[0.5, 0.75, 0.25, -0.5]
        ));
        // lambda 0: one-step TD errors r + gamma V(s') - V(s), nothing after the last step.
        let g = 0.9;
        assert!(close(
            &adv(Baseline::Value, g, 0.0),
            &[g * 0.25 - 0.5, g * 0.75 - 0.25, 1.0 - 0.75, -0.5]
        ));
    }

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
