//! Helpers shared by the single-turn families odd-one-out, relative-position, pattern-next,
//! symmetry, dice-sum, largest-region, clock-direction and shape-match (one module each):
//! judging an answer, the oracle's answer action, and the shape tables. In each of them the
//! rules text says what every answer means and the legal mask is exactly the valid answers.

use envdist_core::ActionId;

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
