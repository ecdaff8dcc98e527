//! # envdist-core
//!
//! The shared vocabulary of envdist: environment ids and specs, tasks, observations with
//! harness text, the one named action space, trajectories, ability profiles, gradient sets,
//! and the small traits ([`Env`], [`Policy`], [`TaskSampler`]) through which the sibling
//! crates (`envs`, `profiling`, `selection`, `curriculum`, `trainer`) meet. No sibling
//! depends on another; each depends on this crate only.
//!
//! Main design decision: plain data with public fields across crate boundaries, serde only on
//! boundary types, a `schema_version` in every file, and one seedable, serialisable RNG
//! ([`Rng`]) so that every episode is a replayable [`Task`] tuple.
//!
//! ```
//! use envdist_core::{ActionId, HarnessLevel, HarnessSchedule, HarnessText, EnvId, Task};
//!
//! let task = Task { env: EnvId::new("maze/classic"), seed: 7, harness: HarnessLevel::H2, scale: 5 };
//! let mut text = HarnessText {
//!     observation: Some("#A.G#".into()),
//!     state: Some("agent at (1,0)".into()),
//!     hints: Some("go right".into()),
//!     rules: Some("walls block".into()),
//! };
//! text.apply_level(task.harness, &HarnessSchedule::default());
//! // H2 (the paper's order): no text observation, no text state; hints and rules remain.
//! assert!(text.observation.is_none() && text.state.is_none() && text.hints.is_some());
//! assert_eq!("right".parse::<ActionId>().unwrap(), ActionId::RIGHT);
//! ```
#![warn(missing_docs)]

pub mod action;
pub mod answer;
pub mod data;
pub mod env;
pub mod error;
#[cfg(any(test, feature = "fuzz"))]
pub mod fuzz;
pub mod harness;
pub mod hash;
pub mod image;
pub mod io;
pub mod near;
pub mod policy;
pub mod rank;
pub mod rng;
pub mod serde_words;

pub use action::{
    ACTION_NAMES_EXPECTED, ActionId, ActionMask, NUM_ACTIONS, NUM_ANSWERS, ParseActionError,
    ParseActionTextError,
};
pub use answer::{AnswerVocabulary, Direction, Meaning};
pub use data::{
    AbilityProfile, AbilityTransition, CONFLICT_COSINE, CosineAgreement, GRADIENT_SCHEMA_VERSION,
    GradientSet, MetaAbility, PROFILE_SCHEMA_VERSION, PairSummary, ProfileSet,
    TRAJECTORY_SCHEMA_VERSION, Trajectory, TrajectoryStep, cosine,
};
pub use env::{
    Env, EnvFactory, EnvId, EnvSpec, EpisodeOutcome, Observation, ScaleRange, Split, Step, Task,
    Turn, UnknownEnv,
};
pub use error::{Checked, InvalidValue, Validate};
pub use harness::{HarnessChannel, HarnessLevel, HarnessSchedule, HarnessText, ParseHarnessError};
pub use image::Rgb8Image;
pub use io::FileError;
pub use near::nearest_ids;
pub use policy::{OutcomeError, Policy, PolicyInput, SamplerStateError, TaskSampler, check_issued};
pub use rng::Rng;
pub use serde_words::{invalid_from_serde, plain_serde_message};
