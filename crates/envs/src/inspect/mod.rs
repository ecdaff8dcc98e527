//! Looking at the suite from outside, as `cargo xtask envs solvers|render|answer|bench` does:
//! how often each family's solver wins ([`solver_success`]), one solver episode written out as
//! frames and text ([`render_episode`]), one reply read and played as the env reads it
//! ([`answer_task`]), and how fast the suite steps ([`bench`]).
//!
//! Like the rest of the crate it draws and prints nothing: long loops report through a
//! callback, and the caller formats the records.

mod answer;
pub mod bench;
mod episode;
mod solvers;

use envdist_core::env::UnknownEnv;
use envdist_core::{FileError, InvalidValue, ParseActionTextError};

pub use answer::{AnswerWords, AnsweredReply, answer_task};
pub use episode::{
    EPISODE_SCHEMA_VERSION, EpisodeFile, EpisodeStep, RenderSummary, contact_sheet,
    episode_markdown, render_episode,
};
pub use solvers::{SolverRate, SolverRecord, solver_rate, solver_success};

use crate::{PngError, VecEnvError};

/// Why an inspection could not run; each names the value it refused.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// The suite has no environment with this id.
    #[error(transparent)]
    UnknownEnv(#[from] UnknownEnv),
    /// A value out of range (`scale` outside the environment's range, zero `seeds`/`steps`).
    #[error(transparent)]
    Invalid(#[from] InvalidValue),
    /// A reply names no action of the environment (the error lists its answers).
    #[error(transparent)]
    Reply(#[from] ParseActionTextError),
    /// A frame could not be written.
    #[error(transparent)]
    Png(#[from] PngError),
    /// A file could not be written.
    #[error(transparent)]
    File(#[from] FileError),
    /// The vectorised stepper refused (benchmark).
    #[error(transparent)]
    VecEnv(#[from] VecEnvError),
    /// A worker thread pool could not be built (benchmark).
    #[error("building a rayon pool of {threads} threads: {message}")]
    ThreadPool {
        /// Threads asked for.
        threads: usize,
        /// rayon's reason.
        message: String,
    },
}
