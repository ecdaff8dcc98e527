//! The trainer's one error type.

use envdist_core::{EnvId, InvalidValue};

/// Errors of the trainer. Each names the offending value and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum TrainerError {
    /// A configuration field is out of range.
    #[error("trainer config: {0}")]
    Config(#[from] InvalidValue),
    /// The factory does not know this environment.
    #[error("unknown environment \"{0}\"")]
    UnknownEnv(EnvId),
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
    /// The sampler refused an outcome (a task it could not have issued, or a non-finite
    /// return): a bug of the sampler, which drew the task.
    #[error("sampler: {0}")]
    Outcome(#[from] envdist_core::OutcomeError),
    /// Reading or writing a file failed (the error names the file and field).
    #[error(transparent)]
    File(#[from] envdist_core::FileError),
    /// The tensor backend reported an error.
    #[error("tensor backend: {0}")]
    Backend(String),
}
