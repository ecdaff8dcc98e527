//! The per-environment gradient estimators: sampled episodes with a baseline, and the exact
//! expectation over a single-turn instance's answers.

use std::time::Instant;

use burn::module::AutodiffModule;
use burn::optim::GradientsParams;
use burn::tensor::activation::{log_softmax, softmax};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Tensor, TensorData};
use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, Env, EnvId, EnvSpec, InvalidValue, NUM_ACTIONS, Rng, Task, Turn};
use rayon::prelude::*;

use super::projection::param_range;
use super::{Baseline, GradientConfig, GradientCost, GradientParams, SingleTurn};
use crate::backend::to_inner_device;
use crate::config::ModelConfig;
use crate::encode::{BatchBuffers, Features, encode};
use crate::engine::grad_ops::flat_gradient;
use crate::error::TrainerError;
use crate::eval::specs_for;
use crate::model::{Inputs, PolicyNet};
use crate::play::{Mode, Played, Recorded, play_episodes};

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
pub(super) fn advantages<'a>(
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
