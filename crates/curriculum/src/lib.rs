//! # envdist-curriculum
//!
//! The HDC (Hierarchical Difficulty Curriculum) of the paper as a [`TaskSampler`]: per
//! environment a harness level (H0 = all auxiliary text .. H4 = bare pixels) and a sliding
//! window over the environment's state scale. A success-rate EMA, counted only on the
//! current stage and gated by a minimum number of episodes, decides competence: a
//! competent window slides up one scale; at the top scale a competent environment weakens
//! its harness one level and its window restarts at the bottom. After a level change,
//! earlier levels keep being sampled with probability proportional to
//! `exp(-lambda * (current - j))` for the first `decay_span` levels. Environments are drawn
//! by caller-given weights. Ablation modes and two baselines are configuration
//! ([`Mode`]); every number lives in [`HdcConfig`] with documented defaults.
//!
//! Main design decision: an explicit, fully serialisable state machine driven by one
//! [`envdist_core::Rng`]. `update` never draws randomness, so the tasks depend only on the
//! seed and the order of `sample`/`update` calls; the saved state (config hash, RNG, per-env
//! state) resumes bit-identically, and a state from another configuration is refused with the
//! differing fields named. [`SharedSampler`] shares one machine among rollout workers.
//!
//! ```
//! use envdist_core::{EnvId, EnvSpec, EpisodeOutcome, HarnessLevel, ScaleRange, Split, TaskSampler, Turn};
//! use envdist_curriculum::{HdcConfig, HdcSampler, Mode};
//!
//! let spec = |id: &str| EnvSpec {
//!     id: EnvId::new(id), family: "maze".into(), variant: "classic".into(), turn: Turn::Multi,
//!     scale: ScaleRange { min: 3, max: 6 }, split: Split::Pool, abilities: vec![],
//!     conflict_twin: None, instruction: "reach the goal".into(), max_steps: 50,
//! };
//! let envs = [spec("maze/a"), spec("maze/b")];
//! let config = HdcConfig { mode: Mode::Full, min_episodes: 5, ..Default::default() };
//! let mut hdc = HdcSampler::new(&envs, None, config, 42).unwrap();
//! for _ in 0..200 {
//!     let task = hdc.sample();
//!     assert!((3..=6).contains(&task.scale));
//!     hdc.update(&EpisodeOutcome { task, success: true, episode_return: 1.0, steps: 4 });
//! }
//! // Always succeeding, both environments climbed past H0.
//! assert!(hdc.status().iter().all(|e| e.harness > HarnessLevel::H0));
//! let saved = hdc.state();
//! let mut resumed = HdcSampler::new(&envs, None, hdc.config().clone(), 0).unwrap();
//! resumed.restore(&saved).unwrap();
//! assert_eq!(hdc.sample(), resumed.sample());
//! ```
#![warn(missing_docs)]

mod config;
mod error;
mod registry;
pub mod rivals;
mod sampler;
mod shared;
pub mod synthetic;

pub use config::{FixedScale, HdcConfig, Mode};
pub use envdist_core::TaskSampler;
pub use error::CurriculumError;
pub use registry::SamplerConfig;
pub use rivals::ladder::{LadderConfig, LadderSampler};
pub use rivals::learnability::{LearnabilityConfig, LearnabilitySampler, LearnabilitySampling};
pub use rivals::learning_progress::{LearningProgressConfig, LearningProgressSampler};
pub use rivals::pass_rate::{PassRateConfig, PassRateSampler, Pool};
pub use rivals::plr::{PlrConfig, PlrSampler, PlrScore, ReplaySchedule, ScoreTransform};
pub use rivals::sec::{AdvantageEstimate, SecConfig, SecSampler};
pub use rivals::{CurriculumSampler, EnvSnapshot, RIVAL_STATE_SCHEMA_VERSION};
pub use sampler::{
    EnvEntry, EnvState, EnvStatus, HdcSampler, STATE_SCHEMA_VERSION, SavedState,
    TRACE_SCHEMA_VERSION, TraceEvent, UpdateEffect,
};
pub use shared::SharedSampler;
pub use synthetic::{LearnerParams, SyntheticLearner, staggered_ranges, synthetic_specs};

#[cfg(test)]
pub(crate) mod test_support {
    use envdist_core::{
        EnvId, EnvSpec, EpisodeOutcome, HarnessLevel, ScaleRange, Split, Task, Turn,
    };

    /// `n` environments `fam/v0..` with scale range `min..=max`.
    pub fn specs(n: usize, min: u32, max: u32) -> Vec<EnvSpec> {
        (0..n)
            .map(|i| EnvSpec {
                id: EnvId::new(format!("fam/v{i}")),
                family: "fam".into(),
                variant: format!("v{i}"),
                turn: Turn::Multi,
                scale: ScaleRange { min, max },
                split: Split::Pool,
                abilities: vec![],
                conflict_twin: None,
                instruction: String::new(),
                max_steps: 10,
            })
            .collect()
    }

    pub fn outcome(
        env: &EnvId,
        harness: HarnessLevel,
        scale: u32,
        success: bool,
    ) -> EpisodeOutcome {
        EpisodeOutcome {
            task: Task {
                env: env.clone(),
                seed: 0,
                harness,
                scale,
            },
            success,
            episode_return: 0.0,
            steps: 1,
        }
    }
}
