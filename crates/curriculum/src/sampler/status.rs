//! Snapshots of the HDC sampler for plots, reports and traces: per-environment status, draw
//! probabilities, and trace lines.

use envdist_core::{EnvId, EpisodeOutcome, HarnessLevel};

use crate::trace::TraceEvent;
use serde::{Deserialize, Serialize};

use super::HdcSampler;

/// A snapshot of one environment for plots and reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvStatus {
    /// The environment.
    pub env: EnvId,
    /// Current harness level (the shared one in [`Mode::Global`](crate::Mode::Global); the
    /// fixed one in modes that do not move it; H4 for
    /// [`Mode::BaselineUniform`](crate::Mode::BaselineUniform), which draws every level).
    pub harness: HarnessLevel,
    /// Current scale window, inclusive.
    pub window: (u32, u32),
    /// Bias-corrected success EMA of the current stage (0 before any episode).
    pub competence: f32,
    /// Episodes counted in the current stage.
    pub stage_episodes: u32,
    /// Whether the current stage is mastered (enough episodes and competence >= threshold).
    pub competent: bool,
    /// Finished its mode's last stage (in [`Mode::Global`](crate::Mode::Global): waiting for
    /// the shared level).
    pub ready: bool,
    /// Outcomes reported in total.
    pub episodes: u64,
    /// Successes reported in total.
    pub successes: u64,
}

impl HdcSampler {
    /// A snapshot of environment `i`, or `None` if out of range.
    pub fn env_status(&self, i: usize) -> Option<EnvStatus> {
        let st = self.per_env.get(i)?;
        Some(EnvStatus {
            env: self.envs[i].id.clone(),
            harness: self.current_level(i),
            window: self.window(i),
            competence: self.competence_of(st),
            stage_episodes: st.stage_episodes,
            competent: self.is_competent(st),
            ready: st.ready,
            episodes: st.episodes,
            successes: st.successes,
        })
    }

    /// Snapshots of every environment, in sampler order.
    pub fn status(&self) -> Vec<EnvStatus> {
        (0..self.envs.len())
            .filter_map(|i| self.env_status(i))
            .collect()
    }

    /// The probability of drawing each environment (sums to 1).
    pub fn env_probabilities(&self) -> Vec<f64> {
        let total: f64 = self.envs.iter().map(|e| e.weight as f64).sum();
        self.envs.iter().map(|e| e.weight as f64 / total).collect()
    }

    /// A trace line for `outcome` at `step`, with the env's curriculum position as it is now
    /// (call after [`HdcSampler::record`]). `None` for an unknown environment.
    pub fn trace_event(&self, step: u64, outcome: &EpisodeOutcome) -> Option<TraceEvent> {
        let i = self.env_index(&outcome.task.env)?;
        Some(TraceEvent::new(
            step,
            outcome,
            self.current_level(i),
            self.window(i),
        ))
    }
}

/// Schema version of [`StatusFile`].
pub const STATUS_SCHEMA_VERSION: u32 = 1;

/// A file of [`EnvStatus`] snapshots (where every environment's curriculum stood).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusFile {
    /// Always [`STATUS_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// One status per environment, in sampler order.
    pub envs: Vec<EnvStatus>,
}

impl StatusFile {
    /// Wrap snapshots for writing.
    pub fn new(envs: Vec<EnvStatus>) -> Self {
        Self {
            schema_version: STATUS_SCHEMA_VERSION,
            envs,
        }
    }
}
