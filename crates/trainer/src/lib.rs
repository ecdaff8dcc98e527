//! # envdist-trainer
//!
//! The only crate of envdist that knows burn. It trains a small multimodal policy with RL on
//! a mixture of environments, evaluates it, and extracts per-environment gradients for AES's
//! conflict term.
//!
//! - **Policy** ([`model`]): a patch-embedding image encoder (no convolutions: burn's CPU
//!   convolutions are ~7x slower than PyTorch's, its matrix products ~2x) and a hashed
//!   bag-of-tokens text encoder with one learned presence vector per channel (an absent
//!   harness channel contributes nothing), fused into masked action logits and a value.
//! - **RL**: PPO-clip with GAE (or GRPO-style group-relative advantages), batched rollouts
//!   over many environment slots stepped in parallel, one batched forward per step, tasks from
//!   any [`envdist_core::TaskSampler`] with outcomes reported back, entropy bonus, global
//!   gradient-norm clipping, a linear learning-rate schedule, a JSONL log.
//! - **Evaluation** ([`evaluate`]): fixed seeds, greedy actions, H4 by default; success per
//!   env and averaged over ST/MT and ID/OOD.
//! - **Per-env gradients** ([`per_env_gradients`]): mean policy gradient over `M` episodes per
//!   env, randomly projected (seeded) to `d` dimensions, as a core [`GradientSet`].
//! - **Checkpoints** that resume the same run: model, optimizer, sampler state, RNG, step
//!   count, and every env slot's episode so far (replayed on load: envs are deterministic).
//!
//! Main design decision: burn's backend type parameter stays inside this crate. Callers name a
//! [`Device`] (`cpu` = burn's `flex` backend; `cuda` with the `cuda` feature) and get
//! non-generic [`Trainer`] and [`PolicyModel`] handles.
//!
//! ```
//! use std::sync::Arc;
//! use envdist_core::{EnvId, HarnessLevel};
//! use envdist_trainer::{toy::ToyFactory, Device, ScaleChoice, TrainConfig, Trainer, UniformSampler};
//!
//! let factory = Arc::new(ToyFactory);
//! let envs = [EnvId::new("toy/goal")];
//! let mut cfg = TrainConfig::preset("tiny")?;
//! cfg.total_env_steps = 256;
//! let mut sampler = UniformSampler::new(factory.as_ref(), &envs, HarnessLevel::H0, Some(ScaleChoice::Min), 1)?;
//! let mut trainer = Trainer::new(cfg, factory.clone(), Device::Cpu)?;
//! let stats = trainer.train_update(&mut sampler)?;
//! assert_eq!(stats.env_steps, 128);
//! let report = envdist_trainer::evaluate(&trainer.policy(), factory.as_ref(), &envs, &[1, 2], HarnessLevel::H4, ScaleChoice::Min)?;
//! assert!((0.0..=1.0).contains(&report.mean));
//! # Ok::<(), envdist_trainer::TrainerError>(())
//! ```
#![warn(missing_docs)]

pub mod bench;
pub mod config;
pub mod encode;
pub mod eval;
pub mod gradients;
pub mod model;
mod play;
pub mod ppo;
pub mod sampler;
pub mod toy;
mod trainer;
mod warm_start;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use burn::backend::{Autodiff, Flex};
use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, GradientSet, HarnessLevel, InvalidValue, TaskSampler};
use serde::{Deserialize, Serialize};

pub use bench::{THROUGHPUT_SCHEMA_VERSION, Throughput, measure_throughput};
pub use config::{AdvantageKind, LrSchedule, ModelConfig, TrainConfig};
pub use eval::{EVAL_SCHEMA_VERSION, EnvScore, EvalReport, ScaleChoice};
pub use gradients::{Baseline, GradientConfig, ProjectionKind, cosine, project};
pub use sampler::UniformSampler;
pub use trainer::CHECKPOINT_SCHEMA_VERSION;

use model::PolicyNet;
use trainer::Core;

/// Errors of the trainer. Each names the offending value and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum TrainerError {
    /// A configuration field is out of range.
    #[error("trainer config: {0}")]
    Config(#[from] InvalidValue),
    /// The factory does not know this environment.
    #[error("unknown environment \"{0}\"")]
    UnknownEnv(EnvId),
    /// A task's scale is outside its env's declared range.
    #[error("scale {scale} of {env} is outside its declared range {min}..={max}")]
    ScaleOutOfRange {
        /// The env.
        env: String,
        /// The scale asked for.
        scale: u32,
        /// Smallest allowed.
        min: u32,
        /// Largest allowed.
        max: u32,
    },
    /// The device cannot be used in this build or on this machine.
    #[error("device {device}: {reason}")]
    Device {
        /// The device asked for.
        device: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// The sampler refused the checkpoint's sampler state.
    #[error("checkpoint sampler state: {0}")]
    Sampler(#[from] envdist_core::SamplerStateError),
    /// Reading or writing a file failed (the error names the file and field).
    #[error(transparent)]
    File(#[from] envdist_core::FileError),
    /// The tensor backend reported an error.
    #[error("tensor backend: {0}")]
    Backend(String),
}

/// Where tensors live. Parsed from `cpu`, `cuda` or `cuda:N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Device {
    /// burn's `flex` CPU backend.
    #[default]
    Cpu,
    /// burn's CUDA backend on GPU `N` (needs the `cuda` feature).
    Cuda(usize),
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

impl std::str::FromStr for Device {
    type Err = TrainerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || TrainerError::Device {
            device: s.to_string(),
            reason: "expected cpu, cuda or cuda:N".into(),
        };
        match s.trim() {
            "cpu" => Ok(Device::Cpu),
            "cuda" => Ok(Device::Cuda(0)),
            t => t
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Device::Cuda)
                .ok_or_else(bad),
        }
    }
}

impl Device {
    /// Whether this build can use the device (`cuda` needs the `cuda` feature).
    pub fn is_available(self) -> bool {
        match self {
            Device::Cpu => true,
            Device::Cuda(_) => cfg!(feature = "cuda"),
        }
    }
}

type CpuB = Autodiff<Flex>;
#[cfg(feature = "cuda")]
type CudaB = Autodiff<burn::backend::Cuda>;

#[cfg(feature = "cuda")]
fn cuda_device(i: usize) -> burn::backend::cuda::CudaDevice {
    burn::backend::cuda::CudaDevice::new(i)
}

#[cfg(not(feature = "cuda"))]
fn unavailable(device: Device) -> TrainerError {
    TrainerError::Device {
        device: device.to_string(),
        reason: "this build has no CUDA backend: rebuild with `--features cuda`".into(),
    }
}

/// Run `$body` with `$x` bound to the backend-specific value inside `$e`.
macro_rules! dispatch {
    ($e:expr, $ty:ident, $x:ident => $body:expr) => {
        match $e {
            $ty::Cpu($x) => $body,
            #[cfg(feature = "cuda")]
            $ty::Cuda($x) => $body,
        }
    };
}

#[derive(Clone)]
// Boxing would only move one allocation: models are few and long-lived.
#[allow(clippy::large_enum_variant)]
enum ModelInner {
    Cpu(PolicyNet<CpuB>),
    #[cfg(feature = "cuda")]
    Cuda(PolicyNet<CudaB>, burn::backend::cuda::CudaDevice),
}

/// A policy network on a device: what evaluation and gradient extraction take.
#[derive(Clone)]
pub struct PolicyModel {
    cfg: ModelConfig,
    inner: ModelInner,
}

impl std::fmt::Debug for PolicyModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyModel")
            .field("cfg", &self.cfg)
            .finish()
    }
}

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
        }
    };
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
        };
        Ok(Self {
            cfg: cfg.clone(),
            inner,
        })
    }

    /// The model of the checkpoint in `dir` (written by [`Trainer::save_checkpoint`]).
    pub fn load(dir: &Path, device: Device) -> Result<Self, TrainerError> {
        let state = trainer::read_state(dir)?;
        let inner = match device {
            Device::Cpu => ModelInner::Cpu(trainer::load_model::<CpuB>(
                dir,
                &state,
                &Default::default(),
            )?),
            #[cfg(feature = "cuda")]
            Device::Cuda(i) => {
                let d = cuda_device(i);
                ModelInner::Cuda(trainer::load_model::<CudaB>(dir, &state, &d)?, d)
            }
            #[cfg(not(feature = "cuda"))]
            d @ Device::Cuda(_) => return Err(unavailable(d)),
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

    /// Number of parameters (the length of an unprojected gradient).
    pub fn num_params(&self) -> usize {
        use burn::module::Module;
        with_model!(self, |net, _d| net.num_params())
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

/// Unprojected per-env policy gradients (one vector of [`PolicyModel::num_params`] values per
/// env). Large: meant for small models and for checking the projection.
pub fn full_gradients(
    model: &PolicyModel,
    factory: &dyn EnvFactory,
    envs: &[EnvId],
    cfg: &GradientConfig,
) -> Result<Vec<Vec<f32>>, TrainerError> {
    let mut out = Vec::with_capacity(envs.len());
    with_model!(model, |net, dev| gradients::each_env_gradient(
        net,
        &model.cfg,
        &dev,
        factory,
        envs,
        cfg,
        &mut |_, g| {
            out.push(g.whole);
            Ok(())
        }
    ))?;
    Ok(out)
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
    let flush = |pending: &mut Vec<Vec<f32>>,
                 values: &mut Vec<f32>,
                 split_half_cosine: &mut Vec<f32>| {
        let d = cfg.dim;
        let p = project(pending, d, cfg.projection, cfg.seed);
        for rows in p.chunks_exact(3 * d) {
            values.extend_from_slice(&rows[..d]);
            split_half_cosine.push(cosine(&rows[d..2 * d], &rows[2 * d..]));
        }
        pending.clear();
    };
    with_model!(model, |net, dev| gradients::each_env_gradient(
        net,
        &model.cfg,
        &dev,
        factory,
        envs,
        cfg,
        &mut |i, g| {
            let [h0, h1] = g.halves;
            pending.extend([g.whole, h0, h1]);
            if pending.len() >= 3 * PROJECT_BATCH {
                flush(&mut pending, &mut values, &mut split_half_cosine);
            }
            on_env(&envs[i]);
            Ok(())
        }
    ))?;
    if !pending.is_empty() {
        flush(&mut pending, &mut values, &mut split_half_cosine);
    }
    Ok(GradientReport {
        set: GradientSet {
            env_ids: envs.to_vec(),
            dim: cfg.dim,
            values,
            projection_seed: Some(cfg.seed),
        },
        split_half_cosine,
    })
}

/// Statistics of one update (one rollout plus its PPO epochs); one line of the training log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateStats {
    /// Updates done so far (this one included).
    pub update: u64,
    /// Environment steps so far.
    pub env_steps: u64,
    /// Episodes that ended during this rollout.
    pub episodes: u32,
    /// Their success rate (sampled actions), `None` if none ended.
    pub success_rate: Option<f32>,
    /// Their mean return.
    pub mean_return: Option<f32>,
    /// Mean clipped-surrogate policy loss.
    pub policy_loss: f32,
    /// Mean value loss.
    pub value_loss: f32,
    /// Mean policy entropy (nats).
    pub entropy: f32,
    /// Mean approximate KL between the rollout policy and the updated one.
    pub approx_kl: f32,
    /// Fraction of samples whose ratio was clipped.
    pub clip_fraction: f32,
    /// Mean global gradient norm before clipping.
    pub grad_norm: f32,
    /// Learning rate used.
    pub lr: f32,
    /// Seconds spent in the rollout (acting and stepping).
    pub rollout_seconds: f32,
    /// Seconds spent learning (forward, backward and Adam over every epoch).
    #[serde(default)]
    pub learn_seconds: f32,
    /// Seconds for the whole update.
    pub seconds: f32,
    /// Environment steps per second over the whole update, learning included.
    pub env_steps_per_second: f32,
}

/// Schema version of training-log lines.
pub const LOG_SCHEMA_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct LogLine {
    schema_version: u32,
    #[serde(flatten)]
    stats: UpdateStats,
}

/// Where and how often [`Trainer::run`] writes.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Output directory: `train_log.jsonl` and `checkpoint/`. Nothing is written when `None`.
    pub out_dir: Option<PathBuf>,
    /// Save a checkpoint every this many updates (0: only at the end).
    pub checkpoint_every: u64,
}

/// What a finished [`Trainer::run`] did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Updates run in this call.
    pub updates: u64,
    /// Environment steps in this call.
    pub env_steps: u64,
    /// Wall-clock seconds of this call.
    pub seconds: f32,
    /// Environment steps per second, learning included.
    pub env_steps_per_second: f32,
    /// Sampled-action success rate over the last (up to) 5 updates that ended episodes.
    pub recent_success_rate: Option<f32>,
    /// Rollout throughput alone (batched inference and env stepping), env steps per second.
    pub rollout_steps_per_second: f32,
    /// Learning throughput alone (forward, backward and Adam over `epochs` passes), samples
    /// per second: comparable to the network-only anchors of DESIGN.md.
    pub learn_samples_per_second: f32,
}

enum TrainerInner {
    Cpu(Box<Core<CpuB>>),
    #[cfg(feature = "cuda")]
    Cuda(Box<Core<CudaB>>),
}

/// A training run: model, optimizer, RNG and env slots on one device.
pub struct Trainer {
    inner: TrainerInner,
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("updates", &self.updates())
            .field("env_steps", &self.env_steps())
            .finish()
    }
}

impl Trainer {
    /// A fresh run with `cfg` (validated here) on `device`.
    pub fn new(
        cfg: TrainConfig,
        factory: Arc<dyn EnvFactory>,
        device: Device,
    ) -> Result<Self, TrainerError> {
        cfg.validate()?;
        let inner = match device {
            Device::Cpu => TrainerInner::Cpu(Box::new(Core::new(cfg, factory, Default::default()))),
            #[cfg(feature = "cuda")]
            Device::Cuda(i) => {
                TrainerInner::Cuda(Box::new(Core::new(cfg, factory, cuda_device(i))))
            }
            #[cfg(not(feature = "cuda"))]
            d @ Device::Cuda(_) => return Err(unavailable(d)),
        };
        Ok(Self { inner })
    }

    /// Continue the run saved in checkpoint directory `dir`: model, optimizer, RNG, step
    /// counts, `sampler`'s state, and each env slot's episode in progress (replayed).
    pub fn resume(
        dir: &Path,
        factory: Arc<dyn EnvFactory>,
        device: Device,
        sampler: &mut dyn TaskSampler,
    ) -> Result<Self, TrainerError> {
        let inner = match device {
            Device::Cpu => TrainerInner::Cpu(Box::new(Core::load(
                dir,
                factory,
                Default::default(),
                Some(sampler),
            )?)),
            #[cfg(feature = "cuda")]
            Device::Cuda(i) => TrainerInner::Cuda(Box::new(Core::load(
                dir,
                factory,
                cuda_device(i),
                Some(sampler),
            )?)),
            #[cfg(not(feature = "cuda"))]
            d @ Device::Cuda(_) => return Err(unavailable(d)),
        };
        Ok(Self { inner })
    }

    /// The run's configuration.
    pub fn config(&self) -> &TrainConfig {
        dispatch!(&self.inner, TrainerInner, c => &c.cfg)
    }

    /// Updates done.
    pub fn updates(&self) -> u64 {
        dispatch!(&self.inner, TrainerInner, c => c.update)
    }

    /// Environment steps done.
    pub fn env_steps(&self) -> u64 {
        dispatch!(&self.inner, TrainerInner, c => c.env_steps)
    }

    /// One rollout of `num_envs x rollout_len` steps with tasks from `sampler` (outcomes are
    /// reported to it), then one PPO update.
    pub fn train_update(
        &mut self,
        sampler: &mut dyn TaskSampler,
    ) -> Result<UpdateStats, TrainerError> {
        dispatch!(&mut self.inner, TrainerInner, c => c.train_update(sampler))
    }

    /// Save a checkpoint into `dir` (created if missing); `state.json` is written last.
    pub fn save_checkpoint(
        &self,
        dir: &Path,
        sampler: &dyn TaskSampler,
    ) -> Result<(), TrainerError> {
        dispatch!(&self.inner, TrainerInner, c => c.save(dir, sampler))
    }

    /// The current policy (a copy: training on does not change it).
    pub fn policy(&self) -> PolicyModel {
        let cfg = self.config().model.clone();
        let inner = match &self.inner {
            TrainerInner::Cpu(c) => ModelInner::Cpu(c.model.clone()),
            #[cfg(feature = "cuda")]
            TrainerInner::Cuda(c) => ModelInner::Cuda(c.model.clone(), c.device.clone()),
        };
        PolicyModel { cfg, inner }
    }

    /// Train until `config().total_env_steps`, calling `on_update` after each update. With
    /// an output directory, keeps `train_log.jsonl` (rewritten atomically, earlier lines of a
    /// resumed run kept) and `checkpoint/` up to date.
    pub fn run(
        &mut self,
        sampler: &mut dyn TaskSampler,
        opts: &RunOptions,
        on_update: &mut dyn FnMut(&UpdateStats),
    ) -> Result<RunSummary, TrainerError> {
        let t0 = Instant::now();
        let start_steps = self.env_steps();
        let start_updates = self.updates();
        let log_path = opts.out_dir.as_ref().map(|d| d.join("train_log.jsonl"));
        let mut log: Vec<LogLine> = match &log_path {
            Some(p) if p.exists() => {
                envdist_core::io::read_jsonl::<LogLine>(p, Some(LOG_SCHEMA_VERSION))?
                    .into_iter()
                    .filter(|l| l.stats.update <= start_updates)
                    .collect()
            }
            _ => Vec::new(),
        };
        let mut recent: Vec<f32> = Vec::new();
        let (mut rollout_s, mut learn_s) = (0.0f64, 0.0f64);
        let save =
            |t: &Self, log: &[LogLine], sampler: &dyn TaskSampler| -> Result<(), TrainerError> {
                if let (Some(dir), Some(lp)) = (&opts.out_dir, &log_path) {
                    envdist_core::io::write_jsonl_atomic(lp, log)?;
                    t.save_checkpoint(&dir.join("checkpoint"), sampler)?;
                }
                Ok(())
            };
        while self.env_steps() < self.config().total_env_steps {
            let stats = self.train_update(sampler)?;
            rollout_s += stats.rollout_seconds as f64;
            learn_s += stats.learn_seconds as f64;
            if let Some(s) = stats.success_rate {
                recent.push(s);
                if recent.len() > 5 {
                    recent.remove(0);
                }
            }
            on_update(&stats);
            log.push(LogLine {
                schema_version: LOG_SCHEMA_VERSION,
                stats,
            });
            if opts.checkpoint_every > 0 && self.updates().is_multiple_of(opts.checkpoint_every) {
                save(self, &log, sampler)?;
            }
        }
        save(self, &log, sampler)?;
        let seconds = t0.elapsed().as_secs_f32();
        let env_steps = self.env_steps() - start_steps;
        let updates = self.updates() - start_updates;
        let learned = (updates as usize * self.config().batch_size() * self.config().epochs) as f64;
        Ok(RunSummary {
            rollout_steps_per_second: (env_steps as f64 / rollout_s.max(1e-9)) as f32,
            learn_samples_per_second: (learned / learn_s.max(1e-9)) as f32,
            updates,
            env_steps,
            seconds,
            env_steps_per_second: env_steps as f32 / seconds.max(1e-6),
            recent_success_rate: (!recent.is_empty())
                .then(|| recent.iter().sum::<f32>() / recent.len() as f32),
        })
    }
}

#[cfg(test)]
mod tests;
