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
//!   gradient-norm clipping, a linear learning-rate schedule, a JSONL log and the same
//!   numbers as TensorBoard event files ([`tensorboard`]).
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
//! The crate stands on three floors; a module imports only from its own floor or below:
//! 1. **Plain parts**: [`config`], `error`, `backend` (the device, the backend types and the
//!    macro that dispatches on them), `stats` (an update's statistics and their TensorBoard
//!    names), `files` (a run directory's files), `checkpoint` (its format and checks),
//!    [`tensorboard`], `encode`, `model`, `text_bag`, `adam`, `ppo` (the advantage estimators
//!    and the clipped objective), `play` (batched acting), [`eval`], [`pretrain`]'s settings.
//! 2. **The engine** (`engine/`): the RL loop generic over the backend: rollout, the update
//!    (advantages → minibatches → step), minibatch shards, gradient operations, checkpoint
//!    save and load, behaviour cloning; and [`gradients`], per-environment gradients.
//! 3. **The façade**: [`policy`] ([`PolicyModel`], evaluation and gradients on a device) and
//!    [`run`] ([`Trainer`]: open a run, resuming or starting, and drive it), [`bench`].
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

// Floor 1: plain parts.
mod adam;
mod backend;
mod checkpoint;
pub mod config;
mod encode;
mod error;
pub mod eval;
mod files;
mod model;
mod play;
mod ppo;
pub mod pretrain;
pub mod sampler;
mod stats;
pub mod tensorboard;
mod text_bag;
pub mod toy;
// Floor 2: the engine.
mod engine;
pub mod gradients;
// Floor 3: the façade.
pub mod bench;
pub mod policy;
pub mod run;

pub use backend::Device;
pub use bench::{THROUGHPUT_SCHEMA_VERSION, Throughput, UpdateProfile, measure_throughput};
pub use checkpoint::CHECKPOINT_SCHEMA_VERSION;
pub use config::{
    AdvantageKind, CONV_STRIDE, ImageEncoder, LrSchedule, ModelConfig, TrainConfig, TrainPreset,
    WeightInit,
};
pub use error::TrainerError;
pub use eval::{
    EVAL_SCHEMA_VERSION, EnvScore, EvalReport, ScaleChoice, SplitScores, constant_answer_baseline,
};
pub use files::{CHECKPOINT_STATE_FILE, RunFiles};
pub use gradients::{
    Baseline, GradientConfig, GradientCost, GradientParams, ProjectionKind, SingleTurn, cosine,
    project,
};
pub use policy::{
    GradientReport, PolicyModel, evaluate, full_gradients, per_env_gradients,
    per_env_gradients_report, play_greedy,
};
pub use pretrain::{CloneConfig, CloneSummary};
pub use run::{Opened, RunOptions, RunSpec, RunSummary, Start, Trainer};
pub use sampler::UniformSampler;
pub use stats::{LOG_SCHEMA_VERSION, UpdateStats};

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;
