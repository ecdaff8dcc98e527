//! [`StudyError`]: what can stop the study, each library's error kept as its source, with the
//! stage or file it happened in as context.

use envdist_core::{FileError, InvalidValue, SamplerStateError};

/// Why the study (or one of its stages) stopped.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// A configuration value is not acceptable (the field is named).
    #[error("experiment config: {0}")]
    Config(#[from] InvalidValue),
    /// A file could not be read or written (the file, and field or line, are named).
    #[error(transparent)]
    File(#[from] FileError),
    /// The environment suite refused.
    #[error(transparent)]
    Envs(#[from] envdist_envs::VecEnvError),
    /// Profiling failed.
    #[error(transparent)]
    Profiling(#[from] envdist_profiling::ProfilingError),
    /// A segmenter could not be built or refused (the LLM endpoint's settings).
    #[error(transparent)]
    Segment(#[from] envdist_profiling::SegmentError),
    /// Selection failed.
    #[error(transparent)]
    Select(#[from] envdist_selection::SelectError),
    /// A curriculum sampler refused.
    #[error(transparent)]
    Curriculum(#[from] envdist_curriculum::CurriculumError),
    /// A sampler state could not be restored.
    #[error("sampler state: {0}")]
    SamplerState(#[from] SamplerStateError),
    /// The trainer failed.
    #[error(transparent)]
    Trainer(#[from] envdist_trainer::TrainerError),
    /// A skill world refused (a configuration, a task a sampler drew).
    #[error(transparent)]
    World(#[from] envdist_world::WorldError),
    /// An environment id the suite does not know.
    #[error(transparent)]
    UnknownEnv(#[from] envdist_core::env::UnknownEnv),
    /// A value could not be turned into JSON (a cache key, a record).
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A figure could not be drawn.
    #[error(transparent)]
    Plot(#[from] envdist_plot::PlotError),
    /// Something the study checks itself (an inconsistent input, an interruption).
    #[error("{0}")]
    Message(String),
    /// An error with where it happened (`stage `arms/aes/seed0``, a file being read).
    #[error("{context}: {source}")]
    Context {
        /// Where.
        context: String,
        /// What.
        #[source]
        source: Box<StudyError>,
    },
}

/// The operating system refused an operation on `path`.
pub fn io_error(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> StudyError + '_ {
    move |source| {
        StudyError::File(FileError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// The study's result type.
pub type Result<T, E = StudyError> = std::result::Result<T, E>;

impl StudyError {
    /// An error of the study's own.
    pub fn msg(text: impl Into<String>) -> Self {
        Self::Message(text.into())
    }

    /// The innermost error, below every context.
    pub fn root(&self) -> &StudyError {
        match self {
            Self::Context { source, .. } => source.root(),
            other => other,
        }
    }
}

/// `.context(...)` / `.with_context(...)` on results whose error converts into a
/// [`StudyError`], as anyhow offers in binaries.
pub trait Context<T> {
    /// Wrap the error with `context`.
    fn context(self, context: impl Into<String>) -> Result<T>;
    /// Wrap the error with a lazily built context.
    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: Into<StudyError>> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|e| StudyError::Context {
            context: context.into(),
            source: Box::new(e.into()),
        })
    }

    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| StudyError::Context {
            context: f().into(),
            source: Box::new(e.into()),
        })
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.ok_or_else(|| StudyError::Message(context.into()))
    }

    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T> {
        self.ok_or_else(|| StudyError::Message(f().into()))
    }
}

/// Return early with a [`StudyError::Message`].
#[macro_export]
#[doc(hidden)]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::StudyError::Message(format!($($arg)*)))
    };
}

/// Return early with a [`StudyError::Message`] unless `cond` holds.
#[macro_export]
#[doc(hidden)]
macro_rules! ensure {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            $crate::bail!($($arg)*);
        }
    };
}
