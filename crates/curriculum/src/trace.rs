//! What samplers report about themselves: a snapshot of where one environment stands, and
//! one line of a curriculum trace.

use envdist_core::{EnvId, EpisodeOutcome, HarnessLevel};
use serde::{Deserialize, Serialize};

/// Schema version of [`TraceEvent`] lines.
pub const TRACE_SCHEMA_VERSION: u32 = 1;

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

/// One line of a curriculum trace: what was played and where the env's curriculum stood
/// after the outcome was reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEvent {
    /// Always [`TRACE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Step number (0-based count of outcomes).
    pub step: u64,
    /// Environment played.
    pub env: EnvId,
    /// Harness level of the task played (may be a review level).
    pub harness: HarnessLevel,
    /// Scale of the task played.
    pub scale: u32,
    /// Whether it was solved.
    pub success: bool,
    /// The env's current level after the update.
    pub level: HarnessLevel,
    /// Bottom of the env's window after the update.
    pub window_lo: u32,
    /// Top of the env's window after the update.
    pub window_hi: u32,
}

impl TraceEvent {
    /// The line for `outcome`, numbered `step`, with the environment's position after it:
    /// `level` and the scale span `window`.
    pub fn new(
        step: u64,
        outcome: &EpisodeOutcome,
        level: HarnessLevel,
        window: (u32, u32),
    ) -> Self {
        Self {
            schema_version: TRACE_SCHEMA_VERSION,
            step,
            env: outcome.task.env.clone(),
            harness: outcome.task.harness,
            scale: outcome.task.scale,
            success: outcome.success,
            level,
            window_lo: window.0,
            window_hi: window.1,
        }
    }
}
