//! A training run ([`Trainer`]): the backend-free façade over the engine. It opens a run
//! (resuming its checkpoint or starting afresh, from a fresh network or from a policy: every
//! arm of a study continues from the same base weights with a fresh optimizer), drives it
//! update by update, and keeps the run's files ([`RunFiles`]) up to date.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use envdist_core::env::EnvFactory;
use envdist_core::{InvalidValue, TaskSampler};
use serde::{Deserialize, Serialize};

#[cfg(feature = "tch")]
use crate::backend::TchB;
#[cfg(any(not(feature = "cuda"), not(feature = "tch")))]
use crate::backend::unavailable;
use crate::backend::{CpuB, Device, dispatch};
#[cfg(feature = "cuda")]
use crate::backend::{CudaB, cuda_device};
use crate::config::TrainConfig;
use crate::engine::Core;
use crate::error::TrainerError;
use crate::files::RunFiles;
use crate::policy::{ModelInner, PolicyModel};
use crate::pretrain::{CloneConfig, CloneSummary};
use crate::stats::UpdateStats;
use crate::stats::{LOG_SCHEMA_VERSION, LogLine};

/// Where and how often [`Trainer::run`] writes.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Output directory, laid out as [`RunFiles`]. Nothing is written when `None`.
    pub out_dir: Option<PathBuf>,
    /// Save a checkpoint every this many updates (0: only at the end).
    pub checkpoint_every: u64,
    /// Stop (with a checkpoint) once this many environment steps are done, before the
    /// budget: a run in segments (e.g. to change its sampler between them) calls
    /// [`Trainer::run`] once per segment. `None`: run to the budget.
    pub stop_at: Option<u64>,
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

/// Where a run [`Trainer::open`] does not resume starts from.
#[derive(Debug, Clone, Copy)]
pub enum Start<'a> {
    /// A freshly initialised network (seeded by the configuration) on the run's device.
    Fresh,
    /// `policy`'s weights, on the policy's device, with a fresh optimizer; a KL penalty
    /// (`kl_coef`) anchors the run to it.
    From(&'a PolicyModel),
}

/// What [`Trainer::open`] is asked to open.
#[derive(Debug, Clone)]
pub struct RunSpec<'a> {
    /// The configuration of a run started afresh (a resumed run keeps its checkpoint's).
    pub config: TrainConfig,
    /// What a run started afresh starts from.
    pub start: Start<'a>,
    /// The device of a fresh network or a resumed run.
    pub device: Device,
    /// Resume the run directory's checkpoint when it has one (the caller decides whether
    /// that checkpoint is the run it means: a flag, or a key it keeps beside it).
    pub resume: bool,
}

/// Whether [`Trainer::open`] resumed a checkpoint or started a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// From the checkpoint in the run directory.
    Resumed,
    /// Afresh.
    Started,
}

enum TrainerInner {
    Cpu(Box<Core<CpuB>>),
    #[cfg(feature = "cuda")]
    Cuda(Box<Core<CudaB>>),
    #[cfg(feature = "tch")]
    LibTorch(Box<Core<TchB>>),
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

/// The error of a KL penalty without a policy to anchor it to.
pub(crate) fn no_kl_reference(kl_coef: f32) -> TrainerError {
    TrainerError::Config(InvalidValue::new(
        "kl_coef",
        "0 for a run that starts from no policy (the KL penalty anchors the policy to the one \
         the run started from: start it from a policy)",
        kl_coef.to_string(),
    ))
}

impl Trainer {
    /// A fresh run with `cfg` (validated here) on `device`.
    pub fn new(
        cfg: TrainConfig,
        factory: Arc<dyn EnvFactory>,
        device: Device,
    ) -> Result<Self, TrainerError> {
        cfg.validate()?;
        if cfg.kl_coef > 0.0 {
            return Err(no_kl_reference(cfg.kl_coef));
        }
        let inner = match device {
            Device::Cpu => TrainerInner::Cpu(Box::new(Core::new(cfg, factory, Default::default()))),
            #[cfg(feature = "cuda")]
            Device::Cuda(i) => {
                TrainerInner::Cuda(Box::new(Core::new(cfg, factory, cuda_device(i))))
            }
            #[cfg(not(feature = "cuda"))]
            d @ Device::Cuda(_) => return Err(unavailable(d)),
            #[cfg(feature = "tch")]
            Device::LibTorch => {
                TrainerInner::LibTorch(Box::new(Core::new(cfg, factory, Default::default())))
            }
            #[cfg(not(feature = "tch"))]
            d @ Device::LibTorch => return Err(unavailable(d)),
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
            #[cfg(feature = "tch")]
            Device::LibTorch => TrainerInner::LibTorch(Box::new(Core::load(
                dir,
                factory,
                Default::default(),
                Some(sampler),
            )?)),
            #[cfg(not(feature = "tch"))]
            d @ Device::LibTorch => return Err(unavailable(d)),
        };
        Ok(Self { inner })
    }

    /// The run in `files`: resumed from its checkpoint when `spec.resume` is set and one
    /// exists (model, optimizer, RNG, step counts, `sampler`'s state and each env slot's
    /// episode in progress), else started afresh from `spec.start` with `spec.config`. The one
    /// way the composition roots open a run (the study's arms, `xtask train`).
    pub fn open(
        files: &RunFiles,
        spec: RunSpec<'_>,
        factory: Arc<dyn EnvFactory>,
        sampler: &mut dyn TaskSampler,
    ) -> Result<(Self, Opened), TrainerError> {
        if spec.resume && files.has_checkpoint() {
            let trainer = Self::resume(&files.checkpoint(), factory, spec.device, sampler)?;
            return Ok((trainer, Opened::Resumed));
        }
        let trainer = match spec.start {
            Start::Fresh => Self::new(spec.config, factory, spec.device)?,
            Start::From(policy) => Self::from_policy(spec.config, factory, policy)?,
        };
        Ok((trainer, Opened::Started))
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

    /// Behaviour-clone the environments' solvers on tasks from `sampler` before any RL (see
    /// [`crate::pretrain`]); `on_step(samples so far)` after each gradient step. Uses its own
    /// optimizer; the run's optimizer, counters and schedule are untouched.
    pub fn clone_behaviour(
        &mut self,
        sampler: &mut dyn TaskSampler,
        cfg: &CloneConfig,
        on_step: &mut dyn FnMut(u64),
    ) -> Result<CloneSummary, TrainerError> {
        dispatch!(&mut self.inner, TrainerInner, c => c.clone_behaviour(sampler, cfg, on_step))
    }

    /// Save a checkpoint into `dir` (created if missing); [`crate::files::CHECKPOINT_STATE_FILE`]
    /// is written last.
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
            #[cfg(feature = "tch")]
            TrainerInner::LibTorch(c) => ModelInner::LibTorch(c.model.clone()),
        };
        PolicyModel { cfg, inner }
    }

    /// Train until `config().total_env_steps`, calling `on_update` after each update. With
    /// an output directory, keeps its [`RunFiles`] up to date: the training log (rewritten
    /// atomically, earlier lines of a resumed run kept), the checkpoint, and the TensorBoard
    /// event file (one event appended per update; on a resume, cut back to the checkpoint's
    /// step like the log: see `open_tensorboard`).
    pub fn run(
        &mut self,
        sampler: &mut dyn TaskSampler,
        opts: &RunOptions,
        on_update: &mut dyn FnMut(&UpdateStats),
    ) -> Result<RunSummary, TrainerError> {
        let t0 = Instant::now();
        let start_steps = self.env_steps();
        let start_updates = self.updates();
        let files = opts.out_dir.as_ref().map(RunFiles::new);
        let log_path = files.as_ref().map(RunFiles::train_log);
        let mut log: Vec<LogLine> = match &log_path {
            Some(p) if p.exists() => {
                envdist_core::io::read_jsonl::<LogLine>(p, Some(LOG_SCHEMA_VERSION))?
                    .into_iter()
                    .filter(|l| l.stats.update <= start_updates)
                    .collect()
            }
            _ => Vec::new(),
        };
        let mut events = match &files {
            Some(f) => Some(open_tensorboard(f, start_steps)?),
            None => None,
        };
        let mut recent: Vec<f32> = Vec::new();
        let (mut rollout_s, mut learn_s) = (0.0f64, 0.0f64);
        let save =
            |t: &Self, log: &[LogLine], sampler: &dyn TaskSampler| -> Result<(), TrainerError> {
                if let (Some(files), Some(lp)) = (&files, &log_path) {
                    envdist_core::io::write_jsonl_atomic(lp, log)?;
                    t.save_checkpoint(&files.checkpoint(), sampler)?;
                }
                Ok(())
            };
        let end = opts.stop_at.map_or(self.config().total_env_steps, |s| {
            s.min(self.config().total_env_steps)
        });
        while self.env_steps() < end {
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
            if let Some(events) = events.as_mut() {
                events.write(&stats.tensorboard_event(crate::tensorboard::now_seconds()))?;
            }
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

/// The run's TensorBoard event file, continued from step `start_steps` (its env steps when
/// [`Trainer::run`] starts; see [`crate::tensorboard::EventWriter::restart`]). A run that
/// resumes keeps its newest file's name and the events up to its checkpoint, so however often
/// it is interrupted, TensorBoard sees each step once. A run from step 0 starts a new file and
/// removes the directory's older ones, as it starts its training log afresh: they belong to
/// an earlier run in the same directory.
fn open_tensorboard(
    files: &RunFiles,
    start_steps: u64,
) -> Result<crate::tensorboard::EventWriter, TrainerError> {
    let now = crate::tensorboard::now_seconds();
    let mut existing = files.tensorboard_events();
    let path = match existing.pop() {
        Some(newest) if start_steps > 0 => newest,
        newest => {
            for old in existing.into_iter().chain(newest) {
                std::fs::remove_file(&old)
                    .map_err(|source| envdist_core::FileError::Io { path: old, source })?;
            }
            files.new_tensorboard_events(now as u64, &host_name())
        }
    };
    let keep_through = i64::try_from(start_steps).unwrap_or(i64::MAX);
    Ok(crate::tensorboard::EventWriter::restart(
        &path,
        keep_through,
        now,
    )?)
}

/// This machine's name, which TensorBoard's writers put in event file names (file-name-safe
/// characters only; `localhost` when unknown).
fn host_name() -> String {
    let raw = ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .unwrap_or_default();
    let safe: String = raw
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    if safe.is_empty() {
        "localhost".into()
    } else {
        safe
    }
}

impl Trainer {
    /// A fresh run (new optimizer state, step counters at zero) whose network starts from
    /// `policy`'s weights, on `policy`'s device. `cfg.model` must equal the policy's shape.
    pub fn from_policy(
        cfg: TrainConfig,
        factory: Arc<dyn EnvFactory>,
        policy: &PolicyModel,
    ) -> Result<Self, TrainerError> {
        cfg.validate()?;
        if &cfg.model != policy.config() {
            return Err(TrainerError::Config(InvalidValue::new(
                "model",
                format!("the starting policy's shape {:?}", policy.config()),
                format!("{:?}", cfg.model),
            )));
        }
        let inner = match &policy.inner {
            ModelInner::Cpu(net) => {
                let mut core = Core::new(cfg, factory, Default::default());
                core.start_from(net.clone());
                TrainerInner::Cpu(Box::new(core))
            }
            #[cfg(feature = "cuda")]
            ModelInner::Cuda(net, device) => {
                let mut core = Core::new(cfg, factory, device.clone());
                core.start_from(net.clone());
                TrainerInner::Cuda(Box::new(core))
            }
            #[cfg(feature = "tch")]
            ModelInner::LibTorch(net) => {
                let mut core = Core::new(cfg, factory, Default::default());
                core.start_from(net.clone());
                TrainerInner::LibTorch(Box::new(core))
            }
        };
        Ok(Self { inner })
    }
}
