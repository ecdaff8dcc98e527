//! # envdist-profiling
//!
//! AES's first half: what each environment exercises. Trajectories (rolled out here by two
//! different policies, or read from a log made elsewhere) are cut into atomic abilities by a
//! [`Segmenter`]; per environment we count abilities and the transitions between consecutive
//! ones; over the pool a petgraph transition graph weighted by probability is built; atomic
//! abilities are clustered into meta-abilities; each environment's profile is its
//! meta-ability coverage plus its atomic counts and transitions, as an
//! [`envdist_core::ProfileSet`].
//!
//! Main design decision: the library works on any [`envdist_core::env::EnvFactory`] and on plain
//! [`envdist_core::Trajectory`] values, never on a concrete environment suite, and every step
//! that could depend on scheduling (parallel rollouts, parallel segmentation, clustering) is
//! made order-independent (per-environment seed streams from the env id, results collected in
//! order, sums over environments sorted by id), so the same seed gives the same profiles on
//! any number of threads.
//!
//! ```
//! use envdist_core::{ActionId, EnvId, HarnessLevel, Task, Trajectory, TrajectoryStep};
//! use envdist_profiling::{MetaConfig, TagSegmenter, profile_trajectories};
//!
//! let step = |tags: &[&str]| TrajectoryStep {
//!     action: ActionId::RIGHT,
//!     reward: 0.0,
//!     abilities: tags.iter().map(|t| t.to_string()).collect(),
//! };
//! let trajectory = Trajectory {
//!     schema_version: envdist_core::TRAJECTORY_SCHEMA_VERSION,
//!     task: Task { env: EnvId::new("maze/classic"), seed: 1, harness: HarnessLevel::H0, scale: 5 },
//!     policy: "demo".into(),
//!     steps: vec![step(&["navigate"]), step(&["navigate"]), step(&["goal-localise"])],
//!     success: true,
//!     episode_return: 1.0,
//! };
//! let pool = profile_trajectories(&[trajectory], &TagSegmenter::default(), &MetaConfig::default())?;
//! let profile = &pool.profiles.profiles[0];
//! assert_eq!(profile.atomic_counts["navigate"], 1); // a run of one ability is one segment
//! assert_eq!(profile.transitions[0].probability, 1.0); // navigate -> goal-localise
//! # Ok::<(), envdist_profiling::ProfilingError>(())
//! ```
#![warn(missing_docs)]

pub mod graph;
pub mod llm;
pub mod log;
pub mod meta;
pub mod pipeline;
pub mod policy;
pub mod rollout;
pub mod segment;
pub mod stats;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod toy;

pub use graph::{AbilityEdge, AbilityGraph, AbilityNode};
pub use llm::{LlmConfig, LlmSegmenter, SYSTEM_PROMPT};
pub use log::{
    ChatMessage, ChatRecord, EpisodeKey, LogCheck, LogRead, ReplayReport, StepRecord, UnknownEnvId,
    check_trajectories, read_log, read_trajectory_log, replay_abilities,
};
pub use meta::{MetaConfig, cluster, coverage, meta_of, similarity_matrix};
pub use pipeline::{
    LogProfile, OutputFiles, PoolProfile, SVG_MIN_EDGE_PROBABILITY, check_usable, coverage_cosine,
    profile_log, profile_sequences, profile_trajectories, segment_all, write_outputs,
};
pub use policy::{Explorer, NoisyOracle};
pub use rollout::{PolicyMaker, RolloutConfig, rollout, rollout_env, rollout_pool};
pub use segment::{SegmentError, Segmenter, TagSegmenter};
pub use stats::EnvAbilityStats;

use envdist_core::{EnvId, FileError, InvalidValue};

/// Errors of profiling: bad configuration, unknown environments, segmentation and file IO.
#[derive(Debug, thiserror::Error)]
pub enum ProfilingError {
    /// Reading or writing a file failed (the error names the file, line and field).
    #[error(transparent)]
    File(#[from] FileError),
    /// The environment factory cannot make this environment.
    #[error("unknown environment \"{0}\": the environment factory cannot make it")]
    UnknownEnv(EnvId),
    /// A configuration value is out of range.
    #[error("profiling config: {0}")]
    Config(#[from] InvalidValue),
    /// A log whose trajectories exercise no ability at all: nothing to profile.
    #[error("{}: no usable trajectory: none of its {trajectories} trajectories has an ability tag after segmentation{hint}", path.display())]
    NoUsableTrajectory {
        /// The log file.
        path: std::path::PathBuf,
        /// Trajectories read from it.
        trajectories: usize,
        /// What would help (starts with `; ` when not empty).
        hint: String,
    },
    /// A trajectory could not be segmented.
    #[error("segmenting trajectory {index} (environment {env}): {source}")]
    Segment {
        /// Environment of the trajectory.
        env: String,
        /// Position of the trajectory in the input.
        index: usize,
        /// Why.
        #[source]
        source: SegmentError,
    },
}
