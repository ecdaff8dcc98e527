//! [`CurriculumSampler`]: what every sampler of this crate offers beyond [`TaskSampler`], so
//! that a caller holds any of them, HDC included, as one `Box<dyn CurriculumSampler>`.

use std::path::Path;

use envdist_core::io::{read_json, write_json_atomic};
use envdist_core::{EnvId, EnvSpec, EpisodeOutcome, HarnessLevel, TaskSampler};
use serde::{Deserialize, Serialize};

use crate::error::CurriculumError;
use crate::{HdcSampler, TraceEvent};

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

/// Where one environment stands in a sampler, for plots: how likely it is drawn next, the
/// sampler's score for it, and which scales and harness levels its next task can take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvSnapshot {
    /// The environment.
    pub env: EnvId,
    /// Probability that the next task is in this environment.
    pub probability: f64,
    /// The sampler's priority statistic for this environment (documented per sampler: pass
    /// rate, learnability, learning progress, Q value, top-rung accuracy, replay score),
    /// averaged over its arms with the sampler's own weights.
    pub score: f64,
    /// The sampler's success estimate for this environment (NaN when it keeps none).
    pub success: f64,
    /// Most probable harness level of this environment's next task (ties: the weaker).
    pub harness: HarnessLevel,
    /// Expected harness level index (0 = H0 .. 4 = H4) of this environment's next task.
    pub mean_harness: f64,
    /// Smallest scale this environment's next task can have.
    pub scale_lo: u32,
    /// Largest scale this environment's next task can have.
    pub scale_hi: u32,
    /// Expected scale of this environment's next task.
    pub mean_scale: f64,
    /// Outcomes reported for this environment.
    pub episodes: u64,
    /// Successes reported for this environment.
    pub successes: u64,
}
