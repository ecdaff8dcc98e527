//! One reply to one task, read as the environment reads it (`cargo xtask envs answer`): which
//! action the words name, what that action means, and whether it solves the episode.

use envdist_core::env::{EnvFactory, UnknownEnv};
use envdist_core::{ActionId, Task};
use serde::Serialize;

use super::InspectError;
use crate::Suite;

/// What one answer action means, in words (the canonical phrase of each meaning first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnswerWords {
    /// The action.
    pub action: ActionId,
    /// The canonical phrase of each of its meanings (`yes`, `reachable`, ...).
    pub words: Vec<String>,
}

/// A reply read and played by [`answer_task`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnsweredReply {
    /// The episode.
    pub task: Task,
    /// Its question.
    pub instruction: String,
    /// What every answer action means at the start of the episode (empty for multi-turn envs).
    pub answers: Vec<AnswerWords>,
    /// The reply as given.
    pub reply: String,
    /// The action the reply names.
    pub action: ActionId,
    /// What that action means (empty if it is not an answer of this env).
    pub meaning: Vec<String>,
    /// Whether the action is legal in the episode's first state.
    pub legal: bool,
    /// The solver's action in that state.
    pub solver: Option<ActionId>,
    /// The reward of playing the action.
    pub reward: f32,
    /// Whether it solved the episode.
    pub success: bool,
}

/// Start `task`, read `reply` against the env's answers (`AnswerVocabulary::parse`: a
/// single-turn env's answer in words, or an action name) and play it as the first action.
/// An unknown environment, a scale outside its range, or a reply that names no action
/// (the error lists the env's answers) are errors.
pub fn answer_task(suite: &Suite, task: &Task, reply: &str) -> Result<AnsweredReply, InspectError> {
    let spec = suite
        .spec(&task.env)
        .ok_or_else(|| UnknownEnv(task.env.clone()))?;
    spec.scale.check(&task.env, task.scale)?;
    let mut env = suite.make(&task.env)?;
    env.reset(task);
    let vocabulary = env.answer_vocabulary();
    let action = vocabulary.parse(reply)?;
    let words = |ms: &[envdist_core::Meaning]| ms.iter().map(|m| m.phrase()).collect();
    let answers = vocabulary
        .answers()
        .iter()
        .map(|(a, ms)| AnswerWords {
            action: *a,
            words: words(ms),
        })
        .collect();
    let legal = env.legal_actions().contains(action);
    let solver = env.oracle_action();
    let step = env.step(action);
    Ok(AnsweredReply {
        task: task.clone(),
        instruction: spec.instruction.clone(),
        answers,
        reply: reply.to_string(),
        action,
        meaning: words(vocabulary.meanings(action)),
        legal,
        solver,
        reward: step.reward,
        success: step.success,
    })
}

#[cfg(test)]
mod tests {
    use envdist_core::HarnessLevel;

    use super::*;

    fn task(env: &str, scale: u32) -> Task {
        Task {
            env: env.into(),
            seed: 1,
            harness: HarnessLevel::H4,
            scale,
        }
    }

    #[test]
    fn a_reply_in_words_is_read_and_played() {
        let suite = Suite::with_canvas(16).unwrap();
        let t = task("symmetry/classic", 1);
        let solver = answer_task(&suite, &t, "answer_0").unwrap().solver.unwrap();
        let words = if solver == ActionId::answer(1).unwrap() {
            "yes"
        } else {
            "no"
        };
        let r = answer_task(&suite, &t, &format!("<answer>{words}</answer>")).unwrap();
        assert_eq!(
            (r.action, r.success, r.reward, r.legal),
            (solver, true, 1.0, true)
        );
        assert_eq!(r.meaning[0], words);
        assert_eq!(r.answers.len(), 2);
        let wrong = answer_task(&suite, &t, if words == "yes" { "no" } else { "yes" }).unwrap();
        assert!(!wrong.success && wrong.legal);
    }

    #[test]
    fn bad_input_is_an_error_naming_it() {
        let suite = Suite::with_canvas(16).unwrap();
        let e = answer_task(&suite, &task("nope/classic", 1), "yes").unwrap_err();
        assert!(e.to_string().contains("nope/classic"), "{e}");
        let e = answer_task(&suite, &task("symmetry/classic", 9), "yes").unwrap_err();
        assert!(e.to_string().contains("scale"), "{e}");
        let e = answer_task(&suite, &task("symmetry/classic", 1), "perhaps").unwrap_err();
        assert!(e.to_string().contains("yes / symmetric"), "{e}");
        // A move is still a move: illegal in a single-turn env, played as a no-op that fails.
        let r = answer_task(&suite, &task("symmetry/classic", 1), "left").unwrap();
        assert!(!r.legal && !r.success && r.meaning.is_empty());
    }
}
