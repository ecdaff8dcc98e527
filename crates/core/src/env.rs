//! Environments: ids, specs, tasks, observations, steps, and the [`Env`] trait.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::action::{ActionId, ActionMask};
use crate::answer::AnswerVocabulary;
use crate::error::InvalidValue;
use crate::harness::{HarnessLevel, HarnessText};
use crate::image::Rgb8Image;

/// A stable environment id such as `maze/mirrored` (family `/` variant).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EnvId(pub String);

impl EnvId {
    /// Wrap a string id.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A stable 64-bit hash of the id ([`crate::hash::fnv1a`]): the key of per-environment
    /// random streams, so that an environment's stream does not depend on which other
    /// environments are in the same call, or in which order.
    pub fn stable_hash(&self) -> u64 {
        crate::hash::fnv1a(self.0.as_bytes())
    }
}

impl fmt::Display for EnvId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for EnvId {
    fn from(s: &str) -> Self {
        Self(s.to_string())
    }
}

/// Single-turn (one observation, one answer) or multi-turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Turn {
    /// Single-turn: answer one question about one image.
    #[serde(rename = "ST")]
    Single,
    /// Multi-turn: act over several steps.
    #[serde(rename = "MT")]
    Multi,
}

impl fmt::Display for Turn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Turn::Single => "ST",
            Turn::Multi => "MT",
        })
    }
}

/// Whether an environment belongs to the training pool, the held-out (OOD) set, or the
/// confirmatory held-out set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// In the pool that selection chooses from (in-distribution).
    Pool,
    /// Held out entirely: out-of-distribution evaluation.
    Ood,
    /// Held out for confirmation: evaluated only by confirmatory records, never by pilots.
    /// Its families are in neither the pool nor the OOD set, so a record that reports on it
    /// reports on environments no tuning has seen.
    Confirm,
}

impl Split {
    /// Every split, in the order the suite registers them.
    pub const ALL: [Split; 3] = [Split::Pool, Split::Ood, Split::Confirm];

    /// The serialised name (`pool`, `ood`, `confirm`).
    pub fn name(self) -> &'static str {
        match self {
            Split::Pool => "pool",
            Split::Ood => "ood",
            Split::Confirm => "confirm",
        }
    }
}

impl fmt::Display for Split {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The declared range of an environment's state scale (grid size, object count, ...).
/// Larger is harder. Scales are plain integers in the env's own unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScaleRange {
    /// Smallest (easiest) scale.
    pub min: u32,
    /// Largest (hardest) scale.
    pub max: u32,
}

impl ScaleRange {
    /// Whether `scale` lies inside the range.
    pub fn contains(&self, scale: u32) -> bool {
        (self.min..=self.max).contains(&scale)
    }
    /// Number of distinct scales (saturating at `u32::MAX` for the full `u32` range).
    pub fn len(&self) -> u32 {
        (self.max - self.min).saturating_add(1)
    }
    /// Always false: a range holds at least one scale.
    pub fn is_empty(&self) -> bool {
        false
    }
    /// The middle scale (rounded down).
    pub fn mid(&self) -> u32 {
        self.min + (self.max - self.min) / 2
    }

    /// `scale` if it lies inside the range, else the one error every consumer reports for a
    /// scale out of range (field `scale`, the inclusive range of `env`, the scale found): the
    /// trainer, `xtask envs render`, the Python binding and the samplers' outcome checks call
    /// this, never their own comparison.
    pub fn check(&self, env: &EnvId, scale: u32) -> Result<u32, InvalidValue> {
        if self.contains(scale) {
            return Ok(scale);
        }
        Err(InvalidValue::new(
            "scale",
            format!(
                "{}..={} (inclusive; the scale range of {env})",
                self.min, self.max
            ),
            scale,
        ))
    }
}

/// Static description of one environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvSpec {
    /// Unique id, `family/variant`.
    pub id: EnvId,
    /// Family name (e.g. `maze`).
    pub family: String,
    /// Variant name within the family (e.g. `classic`, `mirrored`, `theme-dark`).
    pub variant: String,
    /// Single- or multi-turn.
    pub turn: Turn,
    /// Declared scale range.
    pub scale: ScaleRange,
    /// Pool, held out (OOD) or held out for confirmation.
    pub split: Split,
    /// The atomic ability tags this environment's steps can carry.
    pub abilities: Vec<String>,
    /// The variant whose same pixels ask for the opposite action, if any.
    pub conflict_twin: Option<EnvId>,
    /// The instruction shown at every harness level.
    pub instruction: String,
    /// Step limit per episode at the largest scale (episodes at smaller scales may be shorter).
    pub max_steps: u32,
}

/// One replayable episode: environment, seed, harness level and state scale.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Task {
    /// Which environment.
    pub env: EnvId,
    /// Seed of the procedural generator; same task, same episode.
    pub seed: u64,
    /// Harness level of the text channels.
    pub harness: HarnessLevel,
    /// State scale, inside the env's declared range.
    pub scale: u32,
}

/// The task as one line, `env|harness|scale|seed` (`maze/classic|H2|5|123`): the ticket id of
/// the Python binding, so an error naming a task reads the same in Rust and in Python.
impl fmt::Display for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}|{}|{}|{}",
            self.env, self.harness, self.scale, self.seed
        )
    }
}

/// What the agent sees: pixels, the instruction, and the harness text of the task's level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// Rendered RGB frame on the env's fixed canvas.
    pub image: Rgb8Image,
    /// The task statement; present at every harness level.
    pub instruction: String,
    /// Auxiliary text; channels dropped by the harness level are `None`.
    pub harness: HarnessText,
}

/// The result of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Observation after the action.
    pub observation: Observation,
    /// Reward for this step.
    pub reward: f32,
    /// The episode ended by the rules (solved or failed).
    pub done: bool,
    /// The episode hit its step limit.
    pub truncated: bool,
    /// The episode ended solved (only meaningful when `done`).
    pub success: bool,
    /// Atomic ability tags this step exercised.
    pub abilities: Vec<&'static str>,
    /// Legal actions in the new state.
    pub legal: ActionMask,
}

/// A procedurally generated environment.
///
/// Pure: stepping never fails. An illegal action (outside [`Env::legal_actions`]) is a no-op
/// that costs a step. Scale and horizon are runtime values of the task, not constants.
pub trait Env: Send {
    /// Static description.
    fn spec(&self) -> &EnvSpec;
    /// Start the episode `task` describes (deterministic from `task.seed`).
    fn reset(&mut self, task: &Task) -> Observation;
    /// Apply one action.
    fn step(&mut self, action: ActionId) -> Step;
    /// Legal actions in the current state.
    fn legal_actions(&self) -> ActionMask;
    /// The built-in solver's action in the current state, if the env has one.
    fn oracle_action(&mut self) -> Option<ActionId> {
        None
    }
    /// What the answer actions mean in the current state (`answer_3` is the count 3, `yes`,
    /// the green candidate), for reading a reply written in words
    /// ([`AnswerVocabulary::parse`]). Empty (the default) where actions mean only their names.
    /// Never shown to the policy: it is how text is read, not what the env observes.
    fn answer_vocabulary(&self) -> AnswerVocabulary {
        AnswerVocabulary::default()
    }
}

/// Error making an environment from its id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown environment \"{0}\"")]
pub struct UnknownEnv(pub EnvId);

/// Builds environments by id: how crates that must not depend on `envdist-envs` (trainer,
/// profiling) get environments. The implementation fixes rendering options such as the canvas.
pub trait EnvFactory: Send + Sync {
    /// Specs of every environment this factory can make, pool and held-out alike.
    fn specs(&self) -> Vec<EnvSpec>;
    /// A fresh environment instance.
    fn make(&self, id: &EnvId) -> Result<Box<dyn Env>, UnknownEnv>;

    /// The specs of `ids`, in their order, or the first id this factory does not know: the
    /// one lookup from ids to specs (the study, the trainer, `xtask train` and the Python
    /// binding all use it).
    fn specs_of(&self, ids: &[EnvId]) -> Result<Vec<EnvSpec>, UnknownEnv> {
        let all = self.specs();
        ids.iter()
            .map(|id| {
                all.iter()
                    .find(|s| &s.id == id)
                    .cloned()
                    .ok_or_else(|| UnknownEnv(id.clone()))
            })
            .collect()
    }
}

/// How one episode ended, reported back to a [`crate::TaskSampler`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeOutcome {
    /// The task that was played.
    pub task: Task,
    /// Whether it was solved.
    pub success: bool,
    /// Sum of rewards.
    pub episode_return: f32,
    /// Steps taken.
    pub steps: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_and_split_serialise_as_documented() {
        assert_eq!(serde_json::to_string(&Turn::Single).unwrap(), "\"ST\"");
        assert_eq!(serde_json::to_string(&Turn::Multi).unwrap(), "\"MT\"");
        for split in Split::ALL {
            let json = serde_json::to_string(&split).unwrap();
            assert_eq!(json, format!("\"{split}\""));
            assert_eq!(serde_json::from_str::<Split>(&json).unwrap(), split);
        }
        assert_eq!(Split::Confirm.name(), "confirm");
        let task = Task {
            env: EnvId::new("maze/classic"),
            seed: 123,
            harness: HarnessLevel::H2,
            scale: 5,
        };
        assert_eq!(task.to_string(), "maze/classic|H2|5|123");
        let r = ScaleRange { min: 3, max: 7 };
        assert!(r.contains(3) && r.contains(7) && !r.contains(8));
        assert_eq!((r.len(), r.mid()), (5, 5));
    }
}
