//! The one error type of the crate.

use envdist_core::{InvalidValue, OutcomeError, Task};

/// What can go wrong building or running a world. Messages name the bad value.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// A configuration field (or an argument) that is not acceptable.
    #[error("world: {0}")]
    Config(#[from] InvalidValue),
    /// A sampler drew a task of an environment the world does not have.
    #[error("task {0} names an environment this world does not have")]
    UnknownEnv(Task),
    /// A sampler drew a task the world cannot play (a scale out of range).
    #[error("task {task} cannot be played: {problem}")]
    Task {
        /// The task.
        task: Task,
        /// What is wrong with it.
        problem: InvalidValue,
    },
    /// A sampler refused the outcome of a task it drew.
    #[error(transparent)]
    Outcome(#[from] OutcomeError),
}
