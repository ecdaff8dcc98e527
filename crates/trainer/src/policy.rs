//! A trained or fresh policy network on a device ([`PolicyModel`]) and what is done with one:
//! acting through the core `Policy` trait, evaluation, per-environment gradients.

use std::path::Path;

use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, GradientSet, HarnessLevel};

#[cfg(feature = "tch")]
use crate::backend::TchB;
#[cfg(any(not(feature = "cuda"), not(feature = "tch")))]
use crate::backend::unavailable;
use crate::backend::{CpuB, Device};
#[cfg(feature = "cuda")]
use crate::backend::{CudaB, cuda_device};
use crate::checkpoint::{load_model, read_state};
use crate::config::ModelConfig;
use crate::error::TrainerError;
use crate::eval::{EvalReport, ScaleChoice};
use crate::gradients::{
    EnvGradient, GradientConfig, GradientCost, GradientParams, cosine, project,
};
use crate::model::PolicyNet;
use crate::{encode, eval, gradients, play};

/// Run `$body` with `$net` bound to the handle's network and `$dev` to its device, whatever
/// the backend.
macro_rules! with_model {
    ($m:expr, |$net:ident, $dev:ident| $body:expr) => {
        match &$m.inner {
            ModelInner::Cpu($net) => {
                let $dev = burn::backend::flex::FlexDevice;
                $body
            }
            #[cfg(feature = "cuda")]
            ModelInner::Cuda($net, d) => {
                let $dev = d.clone();
                $body
            }
            #[cfg(feature = "tch")]
            ModelInner::LibTorch($net) => {
                let $dev = burn::backend::libtorch::LibTorchDevice::Cpu;
                $body
            }
        }
    };
}

#[derive(Clone)]
// Boxing would only move one allocation: models are few and long-lived.
#[allow(clippy::large_enum_variant)]
pub(crate) enum ModelInner {
    Cpu(PolicyNet<CpuB>),
    #[cfg(feature = "cuda")]
    Cuda(PolicyNet<CudaB>, burn::backend::cuda::CudaDevice),
    #[cfg(feature = "tch")]
    LibTorch(PolicyNet<TchB>),
}

/// A policy network on a device: what evaluation and gradient extraction take.
#[derive(Clone)]
pub struct PolicyModel {
    pub(crate) cfg: ModelConfig,
    pub(crate) inner: ModelInner,
}

impl std::fmt::Debug for PolicyModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyModel")
            .field("cfg", &self.cfg)
            .finish()
    }
}

impl PolicyModel {
    /// A freshly initialised network (e.g. the untrained "base" policy).
    pub fn new(cfg: &ModelConfig, seed: u64, device: Device) -> Result<Self, TrainerError> {
        let inner = match device {
            Device::Cpu => ModelInner::Cpu(PolicyNet::init(cfg, seed, &Default::default())),
            #[cfg(feature = "cuda")]
            Device::Cuda(i) => {
                let d = cuda_device(i);
                ModelInner::Cuda(PolicyNet::init(cfg, seed, &d), d)
            }
            #[cfg(not(feature = "cuda"))]
            d @ Device::Cuda(_) => return Err(unavailable(d)),
            #[cfg(feature = "tch")]
            Device::LibTorch => {
                ModelInner::LibTorch(PolicyNet::init(cfg, seed, &Default::default()))
            }
            #[cfg(not(feature = "tch"))]
            d @ Device::LibTorch => return Err(unavailable(d)),
        };
        Ok(Self {
            cfg: cfg.clone(),
            inner,
        })
    }

    /// The model of the checkpoint in `dir` (written by [`Trainer::save_checkpoint`]).
    pub fn load(dir: &Path, device: Device) -> Result<Self, TrainerError> {
        let state = read_state(dir)?;
        let inner = match device {
            Device::Cpu => ModelInner::Cpu(load_model::<CpuB>(dir, &state, &Default::default())?),
            #[cfg(feature = "cuda")]
            Device::Cuda(i) => {
                let d = cuda_device(i);
                ModelInner::Cuda(load_model::<CudaB>(dir, &state, &d)?, d)
            }
            #[cfg(not(feature = "cuda"))]
            d @ Device::Cuda(_) => return Err(unavailable(d)),
            #[cfg(feature = "tch")]
            Device::LibTorch => {
                ModelInner::LibTorch(load_model::<TchB>(dir, &state, &Default::default())?)
            }
            #[cfg(not(feature = "tch"))]
            d @ Device::LibTorch => return Err(unavailable(d)),
        };
        Ok(Self {
            cfg: state.config.model,
            inner,
        })
    }

    /// The network's shape.
    pub fn config(&self) -> &ModelConfig {
        &self.cfg
    }

    /// Number of parameters (the length of an unprojected gradient of every parameter).
    pub fn num_params(&self) -> usize {
        use burn::module::Module;
        with_model!(self, |net, _d| net.num_params())
    }

    /// Where the gradient with respect to `params` sits in the flattened gradient of every
    /// parameter (the order of [`full_gradients`] with [`GradientParams::All`]); its length is
    /// the length of an unprojected gradient with respect to `params`.
    pub fn gradient_param_range(&self, params: GradientParams) -> std::ops::Range<usize> {
        with_model!(self, |net, _d| gradients::param_range(net, params))
    }
}

/// A trained network acting in the core [`envdist_core::Policy`] interface (one observation
/// at a time: for profiling rollouts, not for speed), sampling from its action distribution.
impl envdist_core::Policy for PolicyModel {
    fn name(&self) -> &str {
        "trained"
    }

    fn act(
        &mut self,
        input: &envdist_core::PolicyInput<'_>,
        rng: &mut envdist_core::Rng,
    ) -> envdist_core::ActionId {
        let f = encode::encode(input.observation, input.legal, &self.cfg);
        let mut bufs = encode::BatchBuffers::default();
        bufs.fill([&f].into_iter(), &self.cfg);
        let logits = with_model!(self, |net, dev| play::infer(net, &bufs, &self.cfg, &dev));
        match logits {
            Ok((l, _)) => play::sample_action(&l, rng).0,
            // A backend failure cannot be reported through `Policy`; fall back to the first
            // legal action rather than panic.
            Err(_) => input
                .legal
                .iter()
                .next()
                .unwrap_or(envdist_core::ActionId::WAIT),
        }
    }
}

/// Greedy success of `model` on each env in `envs`, one episode per seed, at `harness` and the
/// chosen scale. Averages over ST/MT and pool/held-out are in the report.
pub fn evaluate(
    model: &PolicyModel,
    factory: &dyn EnvFactory,
    envs: &[EnvId],
    seeds: &[u64],
    harness: HarnessLevel,
    scale: ScaleChoice,
) -> Result<EvalReport, TrainerError> {
    with_model!(model, |net, dev| eval::evaluate_core(
        net, &model.cfg, &dev, factory, envs, seeds, harness, scale
    ))
}

/// Play every task greedily to its end; outcomes in task order. For evaluations whose tasks
/// are not one seed list shared by every env (distinct instances per env, several scales).
pub fn play_greedy(
    model: &PolicyModel,
    factory: &dyn EnvFactory,
    tasks: &[envdist_core::Task],
) -> Result<Vec<envdist_core::EpisodeOutcome>, TrainerError> {
    let played = with_model!(model, |net, dev| play::play_episodes(
        net,
        factory,
        &model.cfg,
        &dev,
        tasks,
        256,
        play::Mode::Greedy,
        false,
        None
    ))?;
    Ok(played.into_iter().map(|p| p.outcome).collect())
}

/// Unprojected per-env policy gradients with respect to `cfg.params` (one vector of
/// `model.gradient_param_range(cfg.params).len()` values per env: every parameter by
/// default). Large: meant for small models and for checking the projection.
pub fn full_gradients(
    model: &PolicyModel,
    factory: &dyn EnvFactory,
    envs: &[EnvId],
    cfg: &GradientConfig,
) -> Result<Vec<Vec<f32>>, TrainerError> {
    let mut out = Vec::with_capacity(envs.len());
    each_env_gradient(
        model,
        factory,
        envs,
        cfg,
        &mut GradientCost::default(),
        &mut |_, g| {
            out.push(g.whole);
            Ok(())
        },
    )?;
    Ok(out)
}

/// [`gradients::each_env_gradient`] on `model`'s network, whichever backend holds it.
fn each_env_gradient(
    model: &PolicyModel,
    factory: &dyn EnvFactory,
    envs: &[EnvId],
    cfg: &GradientConfig,
    cost: &mut GradientCost,
    on_env: &mut dyn FnMut(usize, EnvGradient) -> Result<(), TrainerError>,
) -> Result<(), TrainerError> {
    with_model!(model, |net, dev| gradients::each_env_gradient(
        net, &model.cfg, &dev, factory, envs, cfg, cost, on_env
    ))
}

/// Per-env policy gradients, projected to `cfg.dim` with the seeded projection: the input of
/// AES's conflict term.
pub fn per_env_gradients(
    model: &PolicyModel,
    factory: &dyn EnvFactory,
    envs: &[EnvId],
    cfg: &GradientConfig,
) -> Result<GradientSet, TrainerError> {
    Ok(per_env_gradients_report(model, factory, envs, cfg, &mut |_| {})?.set)
}

/// Environments whose full gradients are projected together (memory: 3 rows of every
/// parameter per env).
const PROJECT_BATCH: usize = 16;

/// Projected per-env gradients and how far each can be trusted.
#[derive(Debug, Clone)]
pub struct GradientReport {
    /// The projected gradients (row `i` = `envs[i]`).
    pub set: GradientSet,
    /// Per env, the cosine between the projected gradients of its two halves of episodes
    /// (even and odd): the split-half reliability of its direction. Near 1: the direction is
    /// a property of the env; near 0: noise of the sampled episodes. 0 when a half is zero.
    pub split_half_cosine: Vec<f32>,
    /// The work done and where the time went.
    pub cost: GradientCost,
}

impl GradientReport {
    /// Spearman-Brown corrected reliability of env `i`'s whole gradient, `2r / (1 + r)` for
    /// the split-half cosine `r` (clamped at 0 for negative `r`).
    pub fn reliability(&self, i: usize) -> f32 {
        let r = self.split_half_cosine[i].max(0.0);
        2.0 * r / (1.0 + r)
    }
}

/// [`per_env_gradients`] with split-half reliabilities, calling `on_env` after each env
/// (progress). Each env's episode seeds and action-sampling stream derive from its id, so a
/// row does not depend on the other envs of the call.
pub fn per_env_gradients_report(
    model: &PolicyModel,
    factory: &dyn EnvFactory,
    envs: &[EnvId],
    cfg: &GradientConfig,
    on_env: &mut dyn FnMut(&EnvId),
) -> Result<GradientReport, TrainerError> {
    let mut values = Vec::with_capacity(envs.len() * cfg.dim);
    let mut split_half_cosine = Vec::with_capacity(envs.len());
    // Full gradients wait here and are projected a batch at a time: the projection matrix is
    // regenerated block by block on every call, which costs as much as projecting many rows.
    let mut pending: Vec<Vec<f32>> = Vec::new();
    let mut project_seconds = 0.0f64;
    let mut flush =
        |pending: &mut Vec<Vec<f32>>, values: &mut Vec<f32>, split_half_cosine: &mut Vec<f32>| {
            let t = std::time::Instant::now();
            let d = cfg.dim;
            let p = project(pending, d, cfg.projection, cfg.seed);
            for rows in p.chunks_exact(3 * d) {
                values.extend_from_slice(&rows[..d]);
                split_half_cosine.push(cosine(&rows[d..2 * d], &rows[2 * d..]));
            }
            pending.clear();
            project_seconds += t.elapsed().as_secs_f64();
        };
    let mut cost = GradientCost::default();
    each_env_gradient(model, factory, envs, cfg, &mut cost, &mut |i, g| {
        let [h0, h1] = g.halves;
        pending.extend([g.whole, h0, h1]);
        if pending.len() >= 3 * PROJECT_BATCH {
            flush(&mut pending, &mut values, &mut split_half_cosine);
        }
        on_env(&envs[i]);
        Ok(())
    })?;
    if !pending.is_empty() {
        flush(&mut pending, &mut values, &mut split_half_cosine);
    }
    cost.project_seconds = project_seconds;
    Ok(GradientReport {
        set: GradientSet {
            env_ids: envs.to_vec(),
            dim: cfg.dim,
            values,
            projection_seed: Some(cfg.seed),
        },
        split_half_cosine,
        cost,
    })
}
