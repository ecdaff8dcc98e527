//! Errors of the curriculum crate.

use std::path::PathBuf;

use envdist_core::{FileError, InvalidValue};

/// Everything that can go wrong building, saving or restoring a curriculum sampler.
#[derive(Debug, thiserror::Error)]
pub enum CurriculumError {
    /// A configuration field has an unacceptable value.
    #[error("curriculum config: {0}")]
    Config(InvalidValue),
    /// The environment list or weights given to the sampler are unusable.
    #[error("curriculum environments: {0}")]
    Envs(InvalidValue),
    /// A saved state could not be restored (config or environments differ, or it is corrupt).
    #[error("cannot restore curriculum state{}: {message}", path.as_ref().map(|p| format!(" from {}", p.display())).unwrap_or_default())]
    State {
        /// The state file, when it came from one.
        path: Option<PathBuf>,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error(transparent)]
    File(#[from] FileError),
}
