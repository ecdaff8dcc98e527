//! # envdist-curriculum
//!
//! Which task a trainer plays next. The crate holds the HDC (Hierarchical Difficulty
//! Curriculum) of the paper and the task-ordering methods a user would pick instead, all
//! behind one interface, [`CurriculumSampler`] (a [`TaskSampler`] with a name, snapshots,
//! trace lines, retargeting), built by name from one tagged JSON object
//! ([`SamplerConfig`]: `{"kind": "sec", "temperature": 0.4}`) as a
//! `Box<dyn CurriculumSampler>`.
//!
//! ## HDC
//!
//! [`HdcSampler`]: per environment a harness level (H0 = all auxiliary text .. H4 = bare
//! pixels) and a sliding window over the environment's state scale. A success-rate EMA,
//! counted only on the current stage and gated by a minimum number of episodes, decides
//! competence: a competent window slides up one scale; at the top scale a competent
//! environment weakens its harness one level and its window restarts at the bottom. After a
//! level change, earlier levels keep being sampled with probability proportional to
//! `exp(-lambda * (current - j))` for the first `decay_span` levels. Environments are drawn
//! by caller-given weights. Ablation modes and two baselines are configuration ([`Mode`]);
//! every number lives in [`HdcConfig`] with documented defaults. [`SharedSampler`] shares one
//! machine among rollout workers.
//!
//! ## Rivals
//!
//! Each rival ([`rivals`]) is a [`Rule`]: its state, its distribution over *arms*
//! ((environment, harness level) crossed with each scale unless noted; rivals that do not
//! model the harness default to H4), how an outcome moves it, how a saved body is checked,
//! and its scores. One generic [`RuleSampler`] runs any rule and implements [`TaskSampler`]
//! and [`CurriculumSampler`] once: sampling, counters, the saved state's envelope,
//! snapshots, trace lines, retargeting. The samplers keep their names as aliases
//! (`SecSampler = RuleSampler<SecRule>`). A rule may choose an exact task rather than an arm:
//! PLR replays levels, and its [`TaskSampler::trains_on`] is false for new levels under
//! robust PLR.
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
//! ## What every sampler offers
//!
//! - Determinism and resume: one [`envdist_core::Rng`] per sampler, drawn only when sampling,
//!   so the tasks depend only on the seed and the order of `sample`/`update` calls; the saved
//!   state (config hash, RNG, counters, the sampler's own state) resumes bit-identically, and
//!   a state from another sampler, configuration or environment set is refused with an
//!   [`envdist_core::InvalidValue`] naming the field that differs.
//! - Trace: [`CurriculumSampler::trace_event`] says where the played environment stands after
//!   an outcome; built with [`BuildOptions::trace`], the sampler ([`Traced`]) keeps one line
//!   per outcome in its saved state, so a resumed run keeps its whole trace.
//! - Retarget: [`CurriculumSampler::retarget`] moves to a new environment set (a selection
//!   that changes during training); kept environments keep their state.
//! - HDC's own introspection (harness probabilities, stage status) through
//!   [`CurriculumSampler::hdc`].
//! - [`simulate`] drives any sampler with a [`SyntheticLearner`] (`xtask curriculum
//!   simulate`).
//!
//! Main design decision: every sampler is an explicit, fully serialisable state machine, and
//! the variation between methods is confined to a small rule, so that resume, refusal of
//! foreign states, traces and retargeting are written (and tested) once.
//!
//! ```
//! use envdist_core::TaskSampler;
//! use envdist_curriculum::{
//!     BuildOptions, LearnerParams, SamplerConfig, SimulateOptions, SyntheticLearner, simulate,
//!     synthetic_specs,
//! };
//!
//! let envs = synthetic_specs("maze", &[(3, 6), (2, 4)]);
//! for json in [
//!     serde_json::json!({"kind": "hdc", "min_episodes": 5}),
//!     serde_json::json!({"kind": "sec", "temperature": 0.4}),
//! ] {
//!     let config = SamplerConfig::from_json(&json).unwrap();
//!     let options = BuildOptions { trace: true, ..Default::default() };
//!     let mut sampler = config.build_with(&envs, 42, options).unwrap();
//!     let mut learner = SyntheticLearner::new(&envs, LearnerParams::default(), 42);
//!     let run = SimulateOptions { steps: 500, seed: 42, trace: false };
//!     let sim = simulate(sampler.as_mut(), &mut learner, run, &mut |_, _, _| {}).unwrap();
//!     assert_eq!((sim.steps, sampler.trace().len()), (500, 500));
//!     // The state (with its trace) resumes bit-identically under another seed.
//!     let mut resumed = config.build_with(&envs, 0, options).unwrap();
//!     resumed.restore(&sampler.state()).unwrap();
//!     assert_eq!(sampler.sample(), resumed.sample());
//!     // A new selection: maze/e0 and maze/e1 keep their state, maze/e2 starts fresh.
//!     sampler.retarget(&synthetic_specs("maze", &[(3, 6), (2, 4), (1, 2)])).unwrap();
//!     let snap = sampler.snapshot();
//!     assert!(snap[0].episodes > 0 && snap[2].episodes == 0);
//!     // HDC's stage status is there when the sampler is HDC.
//!     assert_eq!(sampler.hdc().is_some(), sampler.kind() == "hdc");
//! }
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
pub use registry::{
    BuildOptions, LadderSampler, LearnabilitySampler, LearningProgressSampler, PassRateSampler,
    PlrSampler, SamplerConfig, SecSampler,
};
pub use rivals::ladder::LadderConfig;
pub use rivals::learnability::{LearnabilityConfig, LearnabilitySampling};
pub use rivals::learning_progress::LearningProgressConfig;
pub use rivals::pass_rate::{PassRateConfig, Pool};
pub use rivals::plr::{PlrConfig, PlrScore, ReplaySchedule, ScoreTransform};
pub use rivals::sec::{AdvantageEstimate, SecConfig};
pub use rivals::{RIVAL_STATE_SCHEMA_VERSION, Retired, Rule, RuleConfig, RuleSampler};
pub use sampler::{
    EnvEntry, EnvState, EnvStatus, HdcSampler, STATE_SCHEMA_VERSION, STATUS_SCHEMA_VERSION,
    SavedState, StatusFile, TRACE_SCHEMA_VERSION, TraceEvent, UpdateEffect,
};
pub use shared::SharedSampler;
pub use synthetic::{
    LearnerParams, SimulateOptions, Simulation, SimulationFiles, SyntheticLearner, simulate,
    staggered_ranges, synthetic_specs,
};
pub use traced::Traced;

#[cfg(test)]
pub(crate) mod test_support {
    use envdist_core::{EnvId, EnvSpec, EpisodeOutcome, HarnessLevel, Task};

    use crate::{HdcConfig, HdcSampler, Mode, synthetic_specs};

    /// The sampler of the HDC unit tests: three environments with scales 2..=5, competence
    /// after 3 episodes, seed 11.
    pub fn sampler(mode: Mode) -> HdcSampler {
        hdc_with(&specs(3, 2, 5), 11, |c| c.mode = mode)
    }

    /// HDC over `envs`, seeded, in [`sampler`]'s configuration (mode full, competence after
    /// 3 episodes) with `edit` made.
    pub fn hdc_with(envs: &[EnvSpec], seed: u64, edit: impl FnOnce(&mut HdcConfig)) -> HdcSampler {
        let mut config = HdcConfig {
            min_episodes: 3,
            ..Default::default()
        };
        edit(&mut config);
        HdcSampler::new(envs, None, config, seed).unwrap()
    }

    /// A configuration from the JSON of its fields (the rest default).
    pub fn config<T: serde::de::DeserializeOwned>(fields: serde_json::Value) -> T {
        serde_json::from_value(fields).unwrap()
    }

    /// `n` environments `fam/e0..` with scale range `min..=max`.
    pub fn specs(n: usize, min: u32, max: u32) -> Vec<EnvSpec> {
        synthetic_specs("fam", &vec![(min, max); n])
    }

    /// `task` played for one step: solved or not, its return the success.
    pub fn played(task: Task, success: bool) -> EpisodeOutcome {
        EpisodeOutcome {
            task,
            success,
            episode_return: success as u32 as f32,
            steps: 1,
        }
    }

    /// The outcome of `env`'s task (seed 0) at `harness` and `scale`.
    pub fn outcome(
        env: &EnvId,
        harness: HarnessLevel,
        scale: u32,
        success: bool,
    ) -> EpisodeOutcome {
        let task = Task {
            env: env.clone(),
            seed: 0,
            harness,
            scale,
        };
        played(task, success)
    }

    /// The outcome of the first environment's task at H4 and `scale`: an arm of the rival
    /// unit tests, which run over one environment.
    pub fn at_h4(scale: u32, success: bool) -> EpisodeOutcome {
        outcome(&EnvId::new("fam/e0"), HarnessLevel::H4, scale, success)
    }
}
