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

mod adam;
pub mod bench;
pub mod config;
pub mod encode;
mod error;
pub mod eval;
pub mod gradients;
pub mod model;
mod play;
pub mod ppo;
pub mod pretrain;
pub mod sampler;
pub mod tensorboard;
mod text_bag;
pub mod toy;
mod trainer;

// The two macros that hide the backend type parameter; defined before the modules that use
// them (`device`, `policy`, `run`).
/// Run `$body` with `$x` bound to the backend-specific value inside `$e`.
macro_rules! dispatch {
    ($e:expr, $ty:ident, $x:ident => $body:expr) => {
        match $e {
            $ty::Cpu($x) => $body,
            #[cfg(feature = "cuda")]
            $ty::Cuda($x) => $body,
            #[cfg(feature = "tch")]
            $ty::LibTorch($x) => $body,
        }
    };
}

macro_rules! with_model {
    ($m:expr, |$net:ident, $dev:ident| $body:expr) => {
        match &$m.inner {
            $crate::policy::ModelInner::Cpu($net) => {
                let $dev = burn::backend::flex::FlexDevice;
                $body
            }
            #[cfg(feature = "cuda")]
            $crate::policy::ModelInner::Cuda($net, d) => {
                let $dev = d.clone();
                $body
            }
            #[cfg(feature = "tch")]
            $crate::policy::ModelInner::LibTorch($net) => {
                let $dev = burn::backend::libtorch::LibTorchDevice::Cpu;
                $body
            }
        }
    };
}

mod device;
mod policy;
mod run;

pub use bench::{THROUGHPUT_SCHEMA_VERSION, Throughput, UpdateProfile, measure_throughput};
pub use config::{
    AdvantageKind, CONV_STRIDE, ImageEncoder, LrSchedule, ModelConfig, TrainConfig, TrainPreset,
    WeightInit,
};
pub use eval::{
    EVAL_SCHEMA_VERSION, EnvScore, EvalReport, ScaleChoice, SplitScores, constant_answer_baseline,
};
pub use gradients::{
    Baseline, GradientConfig, GradientCost, GradientParams, ProjectionKind, SingleTurn, cosine,
    project,
};
pub use pretrain::{CloneConfig, CloneSummary};
pub use sampler::UniformSampler;
pub use trainer::CHECKPOINT_SCHEMA_VERSION;

pub use device::Device;
pub use error::TrainerError;
pub use policy::{
    GradientReport, PolicyModel, evaluate, full_gradients, per_env_gradients,
    per_env_gradients_report, play_greedy,
};
pub use run::{
    CHECKPOINT_STATE_FILE, LOG_SCHEMA_VERSION, RunFiles, RunOptions, RunSummary, Trainer,
    UpdateStats,
};

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;
