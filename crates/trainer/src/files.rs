//! The files a training run keeps in its output directory ([`RunFiles`]), named here and
//! nowhere else.

use std::path::{Path, PathBuf};

use crate::error::TrainerError;
use crate::stats::{LOG_SCHEMA_VERSION, LogLine, UpdateStats};

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

    /// The latest checkpoint (model, optimizer, sampler state): what [`crate::run::Trainer::resume`] and
    /// [`crate::policy::PolicyModel::load`] read.
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
    /// a run keeps one ([`crate::run::Trainer::run`]).
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
