//! A training run ([`Trainer`]): the backend-free facade over the RL loop, its per-update
//! statistics, its log and checkpoints, and starting a run from an existing policy (every arm
//! of a study continues from the same base weights with a fresh optimizer).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use envdist_core::env::EnvFactory;
use envdist_core::{InvalidValue, TaskSampler};
use serde::{Deserialize, Serialize};

use crate::device::CpuB;
#[cfg(feature = "tch")]
use crate::device::TchB;
#[cfg(any(not(feature = "cuda"), not(feature = "tch")))]
use crate::device::unavailable;
#[cfg(feature = "cuda")]
use crate::device::{CudaB, cuda_device};
use crate::policy::ModelInner;
use crate::trainer::Core;
use crate::{Device, PolicyModel, TrainConfig, TrainerError};

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
    /// Of `rollout_seconds`, the batched inference (encoding the batch, uploading it, the
    /// forward pass and reading the logits back); the rest is env stepping and restarts.
    #[serde(default)]
    pub rollout_infer_seconds: f32,
    /// Seconds spent learning (forward, backward and Adam over every epoch).
    #[serde(default)]
    pub learn_seconds: f32,
    /// Seconds for the whole update.
    pub seconds: f32,
    /// Environment steps per second over the whole update, learning included.
    pub env_steps_per_second: f32,
    /// Whether this update fitted the value head alone (critic warm-up).
    #[serde(default)]
    pub value_only: bool,
    /// Mean KL divergence `KL(start || now)` between the policy the run started from and the
    /// updated one, over this rollout's last 256 states (runs started from a policy only).
    #[serde(default)]
    pub kl_to_start: Option<f32>,
    /// With a KL penalty (`kl_coef` > 0): the penalty's KL, `KL(now || start)` over each
    /// minibatch's states before its step, averaged over the minibatches (the loss adds it
    /// times `kl_coef`). `None` without a penalty, and then not written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kl_loss: Option<f32>,
    /// Mean harness level (0 for H0 to 4 for H4) of the episodes that ended in this rollout:
    /// where a curriculum stands. `None` if none ended.
    #[serde(default)]
    pub mean_harness_level: Option<f32>,
    /// Their mean scale.
    #[serde(default)]
    pub mean_scale: Option<f32>,
    /// Per environment, the mean harness level and mean scale of its episodes that ended in
    /// this rollout (`[level, scale]`; the environments of `env_outcomes`).
    #[serde(default)]
    pub env_level_scale: std::collections::BTreeMap<envdist_core::EnvId, [f32; 2]>,
    /// Per environment, the episodes that ended in this rollout and how many succeeded
    /// (`[episodes, successes]`).
    #[serde(default)]
    pub env_outcomes: std::collections::BTreeMap<envdist_core::EnvId, [u32; 2]>,
}

impl UpdateStats {
    /// The update's numbers as TensorBoard scalars `(tag, value)`, at step `env_steps`: every
    /// number of its training-log line, under the tags RL users know (CleanRL's and SB3's
    /// groups). Statistics of ended episodes are left out when none ended.
    ///
    /// | tag | field |
    /// |---|---|
    /// | `train/success_rate`, `train/mean_return`, `train/episodes` | `success_rate`, `mean_return`, `episodes` |
    /// | `train/update`, `train/value_only` (0 or 1) | `update`, `value_only` |
    /// | `loss/policy`, `loss/value`, `loss/entropy`, `loss/kl` | `policy_loss`, `value_loss`, `entropy` (nats), `kl_loss` |
    /// | `policy/approx_kl`, `policy/kl_to_start`, `policy/clip_fraction` | `approx_kl`, `kl_to_start`, `clip_fraction` |
    /// | `optim/grad_norm`, `optim/lr` | `grad_norm`, `lr` |
    /// | `curriculum/mean_harness_level`, `curriculum/mean_scale` | `mean_harness_level`, `mean_scale` |
    /// | `env/<id>/episodes`, `env/<id>/success_rate` | `env_outcomes` |
    /// | `env/<id>/harness_level`, `env/<id>/scale` | `env_level_scale` |
    /// | `perf/env_steps_per_second`, `perf/update_seconds`, `perf/rollout_seconds`, `perf/rollout_infer_seconds`, `perf/learn_seconds` | `env_steps_per_second`, `seconds`, `rollout_seconds`, `rollout_infer_seconds`, `learn_seconds` |
    pub fn tensorboard_scalars(&self) -> Vec<(String, f32)> {
        let mut out: Vec<(String, f32)> = Vec::new();
        let mut put = |tag: &str, v: Option<f32>| {
            if let Some(v) = v {
                out.push((tag.to_string(), v));
            }
        };
        put("train/success_rate", self.success_rate);
        put("train/mean_return", self.mean_return);
        put("train/episodes", Some(self.episodes as f32));
        put("train/update", Some(self.update as f32));
        put(
            "train/value_only",
            Some(f32::from(u8::from(self.value_only))),
        );
        put("loss/policy", Some(self.policy_loss));
        put("loss/value", Some(self.value_loss));
        put("loss/entropy", Some(self.entropy));
        put("policy/approx_kl", Some(self.approx_kl));
        put("policy/kl_to_start", self.kl_to_start);
        put("loss/kl", self.kl_loss);
        put("policy/clip_fraction", Some(self.clip_fraction));
        put("optim/grad_norm", Some(self.grad_norm));
        put("optim/lr", Some(self.lr));
        put("curriculum/mean_harness_level", self.mean_harness_level);
        put("curriculum/mean_scale", self.mean_scale);
        for (env, [episodes, successes]) in &self.env_outcomes {
            put(&format!("env/{env}/episodes"), Some(*episodes as f32));
            put(
                &format!("env/{env}/success_rate"),
                (*episodes > 0).then(|| *successes as f32 / *episodes as f32),
            );
        }
        for (env, [level, scale]) in &self.env_level_scale {
            put(&format!("env/{env}/harness_level"), Some(*level));
            put(&format!("env/{env}/scale"), Some(*scale));
        }
        put("perf/env_steps_per_second", Some(self.env_steps_per_second));
        put("perf/update_seconds", Some(self.seconds));
        put("perf/rollout_seconds", Some(self.rollout_seconds));
        put(
            "perf/rollout_infer_seconds",
            Some(self.rollout_infer_seconds),
        );
        put("perf/learn_seconds", Some(self.learn_seconds));
        out
    }

    /// The update as one TensorBoard event at step `env_steps`.
    pub fn tensorboard_event(&self, wall_time: f64) -> crate::tensorboard::Event {
        crate::tensorboard::Event {
            wall_time,
            step: i64::try_from(self.env_steps).unwrap_or(i64::MAX),
            body: crate::tensorboard::EventBody::Scalars(self.tensorboard_scalars()),
        }
    }
}

/// Schema version of training-log lines.
pub const LOG_SCHEMA_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct LogLine {
    schema_version: u32,
    #[serde(flatten)]
    stats: UpdateStats,
}

/// The file a checkpoint directory writes last, naming the files of a complete checkpoint:
/// a directory without it holds no checkpoint.
pub const CHECKPOINT_STATE_FILE: &str = "state.json";

/// The files a training run keeps in its output directory, named here and nowhere else: the
/// study's run layout and `xtask train` compose it rather than spell the names.
///
/// ```text
/// <dir>/train_log.jsonl      one line of UpdateStats per update (schema_version'd)
/// <dir>/checkpoint/          model, optimizer and state.json (written last)
/// <dir>/events.out.tfevents.<secs>.<host>
///                            the same numbers for TensorBoard, one event per update at
///                            step env_steps (UpdateStats::tensorboard_scalars)
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFiles {
    dir: PathBuf,
}

impl RunFiles {
    /// The files of a run writing into `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The run's output directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The latest checkpoint (model, optimizer, sampler state): what [`Trainer::resume`] and
    /// [`crate::PolicyModel::load`] read.
    pub fn checkpoint(&self) -> PathBuf {
        self.dir.join("checkpoint")
    }

    /// Whether a complete checkpoint was written (its state file exists).
    pub fn has_checkpoint(&self) -> bool {
        self.checkpoint().join(CHECKPOINT_STATE_FILE).exists()
    }

    /// One line of statistics per update.
    pub fn train_log(&self) -> PathBuf {
        self.dir.join("train_log.jsonl")
    }

    /// The run's TensorBoard event files, oldest first (names sort by their creation time);
    /// a run keeps one ([`Trainer::run`]).
    pub fn tensorboard_events(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|d| {
                d.flatten()
                    .filter(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .starts_with(crate::tensorboard::EVENTS_FILE_PREFIX)
                            && e.file_type().is_ok_and(|t| t.is_file())
                    })
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// The name TensorBoard's own writers give an event file started at `unix_seconds` on
    /// `host`: `events.out.tfevents.<secs, 10 digits>.<host>`.
    pub fn new_tensorboard_events(&self, unix_seconds: u64, host: &str) -> PathBuf {
        self.dir.join(format!(
            "{}{unix_seconds:010}.{host}",
            crate::tensorboard::EVENTS_FILE_PREFIX
        ))
    }

    /// The run's statistics so far (empty when no log was written).
    pub fn read_log(&self) -> Result<Vec<UpdateStats>, TrainerError> {
        let path = self.train_log();
        if !path.exists() {
            return Ok(Vec::new());
        }
        Ok(
            envdist_core::io::read_jsonl::<LogLine>(&path, Some(LOG_SCHEMA_VERSION))?
                .into_iter()
                .map(|l| l.stats)
                .collect(),
        )
    }
}

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
        cfg: &crate::CloneConfig,
        on_step: &mut dyn FnMut(u64),
    ) -> Result<crate::CloneSummary, TrainerError> {
        dispatch!(&mut self.inner, TrainerInner, c => c.clone_behaviour(sampler, cfg, on_step))
    }

    /// Save a checkpoint into `dir` (created if missing); [`CHECKPOINT_STATE_FILE`] is written
    /// last.
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
