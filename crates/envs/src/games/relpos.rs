//! `relative-position` (single-turn): where is one object relative to another?

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Direction, Meaning, Rng};

use super::single::{answer_action, judge};
use super::util::random_cells;
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

/// `relative-position`: where is the red object relative to the blue one (same row or same
/// column)? answer_0 left, answer_1 right, answer_2 above, answer_3 below. Grey distractors.
/// Scale = objects, 2..=6. Rule 1 (the `mirrored` twin) asks where blue is relative to red.
#[derive(Default)]
pub struct RelPos {
    pub(super) rule: u8,
    red: (usize, usize),
    blue: (usize, usize),
    grey: Vec<(usize, usize)>,
}

impl RelPos {
    fn answer(&self) -> usize {
        let (a, b) = if self.rule == 0 {
            (self.red, self.blue)
        } else {
            (self.blue, self.red)
        };
        if a.1 == b.1 {
            if a.0 < b.0 { 0 } else { 1 }
        } else if a.1 < b.1 {
            2
        } else {
            3
        }
    }
}

const N5: usize = 5;

impl Game for RelPos {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.red = (rng.index(N5), rng.index(N5));
        loop {
            self.blue = if rng.chance(0.5) {
                (rng.index(N5), self.red.1)
            } else {
                (self.red.0, rng.index(N5))
            };
            if self.blue != self.red {
                break;
            }
        }
        let (r, b) = (self.red, self.blue);
        self.grey = random_cells(N5, N5, scale as usize - 2, rng, |p| p != r && p != b);
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.push(if self.answer() < 2 {
            "left-right"
        } else {
            "above-below"
        });
        if self.rule == 1 {
            tags.push("negation");
        }
        judge(a, self.answer())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(4)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(N5, N5, Cell::FLOOR);
        for p in &self.grey {
            g.set(p.0, p.1, Cell::obj(Shape::Full, Col::Grey, b'g'));
        }
        g.set(
            self.red.0,
            self.red.1,
            Cell::obj(Shape::Full, Col::Red, b'r'),
        );
        g.set(
            self.blue.0,
            self.blue.1,
            Cell::obj(Shape::Full, Col::Blue, b'b'),
        );
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "red at ({},{}); blue at ({},{}); {} grey distractors",
            self.red.0,
            self.red.1,
            self.blue.0,
            self.blue.1,
            self.grey.len()
        ));
    }
    fn hint(&mut self, out: &mut String) {
        const W: [&str; 4] = ["left of", "right of", "above", "below"];
        let (a, b) = if self.rule == 0 {
            ("red", "blue")
        } else {
            ("blue", "red")
        };
        out.push_str(&format!(
            "the {a} object is {} the {b} one",
            W[self.answer()]
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        // Which coordinate to compare, not how it compares.
        out.push_str(if self.red.1 == self.blue.1 {
            "the red and blue objects share a row: compare their columns"
        } else {
            "the red and blue objects share a column: compare their rows"
        });
    }
    fn rules(&self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "Where is the red object relative to the blue one? They share a row or a column. \
             answer_0 left of it, answer_1 right of it, answer_2 above it, answer_3 below it. \
             Text: r red, b blue, g grey, . empty."
        } else {
            "Where is the blue object relative to the red one? They share a row or a column. \
             answer_0 left of it, answer_1 right of it, answer_2 above it, answer_3 below it. \
             Text: r red, b blue, g grey, . empty."
        });
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        // Both twins ask where one object is relative to the other: the rules' order.
        for (k, d) in [
            Direction::Left,
            Direction::Right,
            Direction::Up,
            Direction::Down,
        ]
        .into_iter()
        .enumerate()
        {
            out.push(answer_action(k), [Meaning::Direction(d)]);
        }
    }
}
