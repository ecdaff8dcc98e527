//! `clock-direction` (single-turn): which way does the arrow point?

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Direction, Meaning, Rng};

use super::single::{answer_action, judge};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

/// `clock-direction`: which way does the arrow from the centre point? Scale 1 uses 4
/// directions (answer_0 up, 1 right, 2 down, 3 left); scale 2 uses 8, clockwise from up.
#[derive(Default)]
pub struct Clock {
    dirs: usize,
    dir: usize,
}

const DIR8: [(i32, i32); 8] = [
    (0, -1),
    (1, -1),
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
];
const DIR8_NAMES: [&str; 8] = [
    "up",
    "up-right",
    "right",
    "down-right",
    "down",
    "down-left",
    "left",
    "up-left",
];

impl Clock {
    fn vector(&self) -> (i32, i32) {
        DIR8[self.dir * (8 / self.dirs)]
    }
}

impl Game for Clock {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.dirs = if scale <= 1 { 4 } else { 8 };
        self.dir = rng.index(self.dirs);
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["angle-read", "orientation"]);
        judge(a, self.dir)
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.dirs)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.dir)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(7, 7, Cell::FLOOR);
        let (dx, dy) = self.vector();
        g.set(3, 3, Cell::obj(Shape::Circle, Col::White, b'o'));
        for k in 1..=2 {
            g.set(
                (3 + dx * k) as usize,
                (3 + dy * k) as usize,
                Cell::solid(Col::Yellow, b'*'),
            );
        }
        g.set(
            (3 + dx * 3) as usize,
            (3 + dy * 3) as usize,
            Cell::obj(Shape::Diamond, Col::Red, b'>'),
        );
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "an arrow from the centre; {} possible directions",
            self.dirs
        ));
    }
    fn hint(&mut self, out: &mut String) {
        let (dx, dy) = self.vector();
        out.push_str(&format!(
            "the red tip is at offset ({dx},{dy}) from the centre times 3: {}",
            DIR8_NAMES[self.dir * (8 / self.dirs)]
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str("follow the yellow shaft from the white centre disc to the red tip");
    }
    fn rules(&self, out: &mut String) {
        let names: Vec<String> = (0..self.dirs)
            .map(|k| format!("answer_{k} {}", DIR8_NAMES[k * (8 / self.dirs)]))
            .collect();
        out.push_str(&format!(
            "The yellow arrow starts at the white centre disc and ends at the red tip. Which way \
             does it point? {}. Text: o centre, * shaft, > tip.",
            names.join(", ")
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        for k in 0..self.dirs {
            let d = Direction::CLOCKWISE[k * (8 / self.dirs)];
            out.push(answer_action(k), [Meaning::Direction(d)]);
        }
    }
}
