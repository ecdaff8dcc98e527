//! Policies that act in environments (for rollouts and profiling) and task samplers that
//! decide which episode to play next (the curriculum's interface).

use crate::action::{ActionId, ActionMask};
use crate::env::{EpisodeOutcome, Observation, Task};
use crate::error::InvalidValue;
use crate::rng::Rng;

/// What a policy sees when it must act.
#[derive(Debug, Clone, Copy)]
pub struct PolicyInput<'a> {
    /// The task being played.
    pub task: &'a Task,
    /// The current observation.
    pub observation: &'a Observation,
    /// Legal actions now.
    pub legal: ActionMask,
    /// The env's solver action, filled in only when [`Policy::wants_oracle`] is true.
    pub oracle: Option<ActionId>,
}

/// Anything that picks actions: a scripted solver with noise, a random explorer, a trained
/// network, an LLM.
pub trait Policy: Send {
    /// A short name recorded in trajectories (e.g. `oracle-eps0.1`).
    fn name(&self) -> &str;
    /// Whether the rollout loop should ask the env's solver for its action each step.
    fn wants_oracle(&self) -> bool {
        false
    }
    /// Choose an action; it should be in `input.legal`.
    fn act(&mut self, input: &PolicyInput<'_>, rng: &mut Rng) -> ActionId;
}

/// Error restoring a sampler's saved state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot restore sampler state: {0}")]
pub struct SamplerStateError(pub String);

/// A saved state is a value like any other: a bad field of it names the field, what was
/// expected and what was found.
impl From<InvalidValue> for SamplerStateError {
    fn from(v: InvalidValue) -> Self {
        Self(v.to_string())
    }
}

/// Decides which task to play next and learns from outcomes (e.g. the HDC curriculum).
pub trait TaskSampler: Send {
    /// The next task to play.
    fn sample(&mut self) -> Task;
    /// Report how an episode ended.
    fn update(&mut self, outcome: &EpisodeOutcome);
    /// The full state as JSON, so that `restore` continues bit-identically.
    fn state(&self) -> serde_json::Value;
    /// Restore a state written by `state`; refuses a state from a different configuration.
    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError>;
    /// Whether a trainer should take gradients from the episode of `task` (ask when the task
    /// is drawn). True for almost every sampler; robust prioritized level replay trains only on
    /// replayed levels and plays new ones for their scores alone. A trainer still reports
    /// every outcome.
    fn trains_on(&self, _task: &Task) -> bool {
        true
    }
}
