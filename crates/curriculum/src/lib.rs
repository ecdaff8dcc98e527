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
//! ## Rivals
//!
//! The task-ordering methods a user would pick instead of HDC live in [`rivals`], each a
//! [`TaskSampler`] and a [`CurriculumSampler`] (name, per-env [`EnvSnapshot`] for plots, and
//! the robust-PLR training flag), deterministic from a seed and resumable bit-identically
//! like HDC. [`SamplerConfig`] builds any of them, HDC included, from one tagged JSON
//! object (`{"kind": "sec", "temperature": 0.4}`). Arms are (environment, harness level)
//! crossed with each scale unless noted; rivals that do not model the harness default to H4.
//!
//! | kind | sampler | reference (rule taken) | parameters: default (source) |
//! |---|---|---|---|
//! | `hdc` | [`HdcSampler`] | the paper (harness x scale staircase) | [`HdcConfig`] (ours) |
//! | `pass_rate` | [`PassRateSampler`] | DAPO dynamic sampling (verl-recipe `dapo/`): keep a group only if `0 < mean < 1`; prime-rl `orchestrator/buffer.py`: easy/hard pools by the latest group mean, only normal tasks drawn, oldest filtered recycled past a cap | `group_size` 16 (DAPO `n_resp_per_prompt`), `low` 0.0 / `high` 1.0 (prime-rl `hard_threshold` / `easy_threshold` in its configs), `max_easy_fraction` 0.5 / `max_hard_fraction` 0.4 (prime-rl `BufferConfig`), `reprobe_epochs` 1.0 (DAPO meets each prompt once an epoch), `per_scale` true, levels `[H4]` |
//! | `learnability` | [`LearnabilitySampler`] | Syllabus `curricula/learnability.py`: `p (1 - p)`, top-k uniform with `learnable_prob`, rest uniform | `top_k` 10 (Syllabus `learnability_top10` run), `learnable_prob` 0.75 (ours: no evaluator, see docs), `ema_rate` 0.1 (Syllabus LP `ema_alpha`), `prior` 0.5 (ours), levels `[H4]` |
//! | `learning_progress` | [`LearningProgressSampler`] | Syllabus `curricula/online_learning_progress.py`: fast/slow EMA, reweighting `r(p)`, `|r(fast) - r(slow)|`, z-score, sigmoid, uniform mix | `ema_alpha` 0.1, `p_theta` 0.1, `uniform_prob` 0.25 (Syllabus), `update_interval` 256 episodes (ours), levels `[H4]` |
//! | `sec` | [`SecSampler`] | SEC (arXiv 2505.14970): bandit over categories, reward = mean abs advantage, `Q <- alpha r + (1 - alpha) Q`, `softmax(Q / tau)` | `alpha` 0.5, `temperature` 1.0 (SEC scripts), `batch_episodes` 256 (ours), advantage `group_normalized` with `group_size` 16, `estimate_rate` 0.1 (ours), levels all five |
//! | `ladder` | [`LadderSampler`] | RLVE `slime/ray/rollout_data_source.py`: difficulty uniform in a window below the env's top, top rises when top accuracy reaches a threshold | `window` 4, `threshold` 0.9, `check_episodes` 128 (8 prompts x 16 samples), `initial_rung` 0 (RLVE arguments), levels `[H4]` (rungs = level x scale) |
//! | `plr` | [`PlrSampler`] | level-replay / dcd `level_replay/level_sampler.py`: rank scores mixed with staleness, replay vs new, buffer replacement; robust = train on replays only | `buffer_size` 4000, `replay_prob` 0.5, `rho` 0.5, `temperature` 0.1, `staleness_coef` 0.3 (dcd robust PLR), rank transform, proportionate schedule, `alpha` 1.0, replay-support priority (dcd defaults), score `value_l1` against a category success EMA (rate 0.1, ours), `robust` true, levels `[H4]` |
//!
//! Each config's fields carry the exact reference file and value; the module docs of each
//! sampler say what was adapted and why (outcomes carry success, not advantages or value
//! losses; a sampler has no evaluator; arms are few per environment).
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

mod balanced;
mod config;
mod curriculum;
mod error;
mod registry;
pub mod rivals;
mod sampler;
mod shared;
pub mod synthetic;
mod traced;

pub use balanced::StepBalanced;
pub use config::{FixedScale, HdcConfig, Mode};
pub use curriculum::{CurriculumSampler, EnvSnapshot};
pub use envdist_core::TaskSampler;
pub use error::CurriculumError;
pub use registry::{BuildOptions, SamplerConfig};
pub use rivals::ladder::{LadderConfig, LadderSampler};
pub use rivals::learnability::{LearnabilityConfig, LearnabilitySampler, LearnabilitySampling};
pub use rivals::learning_progress::{LearningProgressConfig, LearningProgressSampler};
pub use rivals::pass_rate::{PassRateConfig, PassRateSampler, Pool};
pub use rivals::plr::{PlrConfig, PlrSampler, PlrScore, ReplaySchedule, ScoreTransform};
pub use rivals::sec::{AdvantageEstimate, SecConfig, SecSampler};
pub use rivals::{RIVAL_STATE_SCHEMA_VERSION, Rule, RuleSampler};
pub use sampler::{
    EnvEntry, EnvState, EnvStatus, HdcSampler, STATE_SCHEMA_VERSION, STATUS_SCHEMA_VERSION,
    SavedState, StatusFile, TRACE_SCHEMA_VERSION, TraceEvent, UpdateEffect,
};
pub use shared::SharedSampler;
pub use synthetic::{
    LearnerParams, SimulateOptions, Simulation, SyntheticLearner, simulate, staggered_ranges,
    synthetic_specs,
};
pub use traced::Traced;

#[cfg(test)]
pub(crate) mod test_support {
    use envdist_core::{
        EnvId, EnvSpec, EpisodeOutcome, HarnessLevel, ScaleRange, Split, Task, Turn,
    };

    use crate::{HdcConfig, HdcSampler, Mode};

    /// The sampler of the HDC unit tests: three environments with scales 2..=5, competence
    /// after 3 episodes, seed 11.
    pub fn sampler(mode: Mode) -> HdcSampler {
        let cfg = HdcConfig {
            mode,
            min_episodes: 3,
            ..Default::default()
        };
        HdcSampler::new(&specs(3, 2, 5), None, cfg, 11).unwrap()
    }

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
