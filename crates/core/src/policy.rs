//! Policies that act in environments (for rollouts and profiling) and task samplers that
//! decide which episode to play next (the curriculum's interface).

use crate::action::{ActionId, ActionMask};
use crate::env::{EnvId, EpisodeOutcome, Observation, ScaleRange, Task};
use crate::error::InvalidValue;
use crate::harness::HarnessLevel;
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

/// An outcome a sampler refuses: its task is not one the sampler could have issued (an
/// environment it does not draw, a harness level it never uses, a scale outside the
/// environment's range) or its numbers are not finite. Names the task as
/// `env|harness|scale|seed` (the Python ticket id) and the field that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("outcome of task {task} refused: {problem}")]
pub struct OutcomeError {
    /// The task reported.
    pub task: Task,
    /// What is wrong with it.
    pub problem: InvalidValue,
}

/// The check every sampler makes of a reported outcome ([`TaskSampler::check_outcome`]), in
/// this order: a finite `episode_return`; an environment the sampler draws (`scale` is the
/// scale range of `outcome.task.env` when it draws that environment, `None` when not; `envs`
/// lists the ones it draws, read only for the error); a scale inside the range
/// ([`ScaleRange::check`]); a harness level among `levels`. (The scale before the level: a
/// scale out of range is wrong for every sampler, and its error names the range.)
pub fn check_issued<'a>(
    outcome: &EpisodeOutcome,
    scale: Option<ScaleRange>,
    envs: impl IntoIterator<Item = &'a EnvId>,
    levels: &[HarnessLevel],
) -> Result<(), OutcomeError> {
    let task = &outcome.task;
    let refuse = |problem| OutcomeError {
        task: task.clone(),
        problem,
    };
    if !outcome.episode_return.is_finite() {
        return Err(refuse(InvalidValue::new(
            "episode_return",
            "a finite number",
            outcome.episode_return,
        )));
    }
    let Some(range) = scale else {
        return Err(refuse(InvalidValue::new(
            "env",
            format!("one of this sampler's environments ({})", list(envs, 8)),
            &task.env,
        )));
    };
    range.check(&task.env, task.scale).map_err(refuse)?;
    if !levels.contains(&task.harness) {
        return Err(refuse(InvalidValue::new(
            "harness",
            format!(
                "one of the harness levels this sampler draws ({})",
                list(levels, 5)
            ),
            task.harness,
        )));
    }
    Ok(())
}

/// At most `shown` items, comma-separated, then how many more.
fn list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>, shown: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut more = 0usize;
    for item in items {
        if out.len() < shown {
            out.push(item.to_string());
        } else {
            more += 1;
        }
    }
    let mut text = out.join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// Decides which task to play next and learns from outcomes (e.g. the HDC curriculum).
pub trait TaskSampler: Send {
    /// The next task to play.
    fn sample(&mut self) -> Task;
    /// Whether `outcome` is one this sampler could have been told: its task one the sampler
    /// could have issued (an environment it draws, or drew before a retarget; a harness level
    /// it uses; a scale in the environment's range) and its numbers finite. Changes nothing;
    /// [`TaskSampler::update`] makes this check first, and a caller reporting a batch
    /// atomically checks every outcome before reporting any.
    fn check_outcome(&self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError>;
    /// Report how an episode ended. An outcome [`TaskSampler::check_outcome`] refuses is
    /// refused here with the same error, and nothing changes.
    fn update(&mut self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError>;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(env: &str, harness: HarnessLevel, scale: u32, ret: f32) -> EpisodeOutcome {
        EpisodeOutcome {
            task: Task {
                env: EnvId::new(env),
                seed: 1,
                harness,
                scale,
            },
            success: true,
            episode_return: ret,
            steps: 1,
        }
    }

    #[test]
    fn an_outcome_is_checked_for_its_return_env_level_and_scale() {
        let ids = [EnvId::new("maze/classic"), EnvId::new("maze/mirrored")];
        let range = Some(ScaleRange { min: 1, max: 9 });
        let levels = [HarnessLevel::H3, HarnessLevel::H4];
        let check = |o: &EpisodeOutcome, r| check_issued(o, r, &ids, &levels);
        check(&outcome("maze/classic", HarnessLevel::H4, 9, 1.0), range).unwrap();
        let e = check(&outcome("maze/classic", HarnessLevel::H4, 999, 1.0), range).unwrap_err();
        assert_eq!(e.problem.field, "scale");
        assert_eq!(
            e.to_string(),
            "outcome of task maze/classic|H4|999|1 refused: field `scale`: expected 1..=9 \
             (inclusive; the scale range of maze/classic), found 999"
        );
        let e = check(&outcome("maze/classic", HarnessLevel::H0, 1, 1.0), range).unwrap_err();
        assert!(e.to_string().contains("field `harness`: expected one of the harness levels this sampler draws (H3, H4), found H0"), "{e}");
        let e = check(&outcome("maze/zzz", HarnessLevel::H4, 1, 1.0), None).unwrap_err();
        assert!(
            e.to_string()
                .contains("(maze/classic, maze/mirrored), found maze/zzz"),
            "{e}"
        );
        let e = check(
            &outcome("maze/classic", HarnessLevel::H4, 1, f32::NAN),
            range,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("field `episode_return`: expected a finite number, found NaN"),
            "{e}"
        );
        assert_eq!(list(0..10, 3), "0, 1, 2 and 7 more");
    }
}
