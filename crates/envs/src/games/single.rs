//! Helpers shared by the single-turn families odd-one-out, relative-position, pattern-next,
//! symmetry, dice-sum, largest-region, clock-direction and shape-match (one module each):
//! judging an answer, the oracle's answer action, the shape tables, and the answer
//! vocabularies the families share (numbers, yes/no). In each of them the rules text says
//! what every answer means and the legal mask is exactly the valid answers.

use envdist_core::{ActionId, AnswerVocabulary, Meaning, NUM_ANSWERS};

use crate::env::Status;
use crate::render::Shape;

pub(super) fn judge(a: ActionId, answer: usize) -> Status {
    if a.answer_value() == Some(answer) {
        Status::Won
    } else {
        Status::Lost
    }
}

pub(super) fn answer_action(k: usize) -> ActionId {
    ActionId::answer(k).unwrap_or(ActionId::WAIT)
}

pub(super) const SHAPES: [Shape; 6] = [
    Shape::Full,
    Shape::Circle,
    Shape::Diamond,
    Shape::Ring,
    Shape::Cross,
    Shape::Bar,
];
pub(super) const SHAPE_NAMES: [&str; 6] = ["square", "disc", "diamond", "ring", "plus", "bar"];
pub(super) const SHAPE_CH: [u8; 6] = [b'S', b'C', b'D', b'R', b'P', b'B'];

/// `answer_k` means the number k (counts, sums, differences), whichever k the mask allows now:
/// the meaning of a slot does not depend on the state, its legality does.
pub(super) fn numbers(out: &mut AnswerVocabulary) {
    for k in 0..NUM_ANSWERS {
        out.push(answer_action(k), [Meaning::Number(k as u32)]);
    }
}

/// A yes/no question: `answer_1` = yes, `answer_0` = no. `yes` are the adjectives a yes
/// asserts (`reachable` for "Can the agent reach the goal?"), `no` those a no asserts
/// (`blocked`); each also reads negated as the other answer (`not blocked` is a yes).
pub(super) fn yes_no(out: &mut AnswerVocabulary, yes: &[&'static str], no: &[&'static str]) {
    for (slot, truth) in [(1, true), (0, false)] {
        let claims = yes
            .iter()
            .map(move |w| Meaning::claim(w, truth))
            .chain(no.iter().map(move |w| Meaning::claim(w, !truth)));
        out.push(
            answer_action(slot),
            std::iter::once(Meaning::Truth(truth)).chain(claims),
        );
    }
}
