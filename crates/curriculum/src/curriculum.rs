//! [`CurriculumSampler`]: what every sampler of this crate offers beyond [`TaskSampler`], so
//! that a caller holds any of them, HDC included, as one `Box<dyn CurriculumSampler>`.

use std::path::Path;

use envdist_core::io::{read_json, write_json_atomic};
use envdist_core::{EnvSpec, EpisodeOutcome, TaskSampler};

use crate::error::CurriculumError;
use crate::sampler::HdcSampler;
use crate::trace::{EnvSnapshot, TraceEvent};

/// What every sampler of this crate offers beyond [`TaskSampler`]: its name, a
/// per-environment snapshot for plots and reports, trace lines, and a move to another set of
/// environments. (Whether a trainer learns from an episode is [`TaskSampler::trains_on`].)
pub trait CurriculumSampler: TaskSampler {
    /// The sampler's name as written in configs (`hdc`, `pass_rate`, `sec`, ...).
    fn kind(&self) -> &'static str;
    /// One snapshot per environment, in sampler order; the probabilities sum to 1.
    fn snapshot(&self) -> Vec<EnvSnapshot>;
    /// Tasks drawn so far.
    fn samples(&self) -> u64;
    /// Outcomes of known environments reported so far.
    fn updates(&self) -> u64;
    /// A trace line for `outcome`, numbered `step`, with the environment's position as it is
    /// now (call after reporting the outcome); `None` for an unknown environment. HDC writes
    /// the environment's current level and scale window; the rivals the most probable level of
    /// its next task and the scales that task can take (see [`TraceEvent`]).
    fn trace_event(&self, step: u64, outcome: &EpisodeOutcome) -> Option<TraceEvent>;
    /// Every trace line so far, one per outcome of a known environment, when the sampler was
    /// built with tracing on ([`crate::Traced`]); empty otherwise.
    fn trace(&self) -> &[TraceEvent] {
        &[]
    }
    /// Move to another set of environments (a selection that changes during training):
    /// environments in both, with the same scale range, keep their state; new ones start
    /// fresh; dropped ones are forgotten; the random stream and the counters carry on. On
    /// error (an unusable environment list) nothing changes.
    fn retarget(&mut self, envs: &[EnvSpec]) -> Result<(), CurriculumError>;
    /// The HDC sampler inside, for its own introspection (harness probabilities, stage
    /// status); `None` for the rivals.
    fn hdc(&self) -> Option<&HdcSampler> {
        None
    }
    /// Write [`TaskSampler::state`] to `path` atomically (pretty JSON).
    fn save_state_file(&self, path: &Path) -> Result<(), CurriculumError> {
        write_json_atomic(path, &self.state())?;
        Ok(())
    }
    /// Restore the state saved at `path`; the error names the file and what differs.
    fn load_state_file(&mut self, path: &Path) -> Result<(), CurriculumError> {
        let v: serde_json::Value = read_json(path, None)?;
        self.restore(&v).map_err(|e| CurriculumError::State {
            path: Some(path.to_path_buf()),
            message: e.0,
        })
    }
}
