//! `count-objects` (single-turn): how many objects of the asked colour are there?
//! Scale = number of objects, 3..=12. Rule 0 counts red; rule 1 (the `count-blue` twin)
//! counts blue: the same image asks for another answer.

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Rng};

use super::single::{answer_action, judge, numbers};
use super::util::{Pos, random_cells};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

const SHAPES: [Shape; 3] = [Shape::Full, Shape::Circle, Shape::Diamond];

#[derive(Default)]
pub struct Count {
    pub(super) rule: u8,
    side: usize,
    objs: Vec<(Pos, bool, Shape)>,
}

impl Count {
    fn target_red(&self) -> bool {
        self.rule == 0
    }
    fn answer(&self) -> usize {
        self.objs
            .iter()
            .filter(|o| o.1 == self.target_red())
            .count()
    }
}

impl Game for Count {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        self.side = if n <= 5 {
            4
        } else if n <= 9 {
            5
        } else {
            6
        };
        let reds = rng.range_inclusive(1, n as u32 - 1) as usize;
        let cells = random_cells(self.side, self.side, n, rng, |_| true);
        self.objs = cells
            .into_iter()
            .enumerate()
            .map(|(i, p)| (p, i < reds, SHAPES[rng.index(3)]))
            .collect();
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["count", "colour-filter"]);
        judge(a, self.answer())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.objs.len() + 1)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.side, self.side, Cell::FLOOR);
        for (p, red, s) in &self.objs {
            let (c, ch) = if *red {
                (Col::Red, b'r')
            } else {
                (Col::Blue, b'b')
            };
            g.set(p.0, p.1, Cell::obj(*s, c, ch));
        }
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "{} objects on a {}x{} grid",
            self.objs.len(),
            self.side,
            self.side
        ));
    }
    fn hint(&mut self, out: &mut String) {
        let want = self.target_red();
        let cells: Vec<String> = self
            .objs
            .iter()
            .filter(|o| o.1 == want)
            .map(|o| format!("({},{})", o.0.0, o.0.1))
            .collect();
        out.push_str(&format!(
            "the {} objects are at {}: {} in all",
            if want { "red" } else { "blue" },
            cells.join(" "),
            cells.len()
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str(if self.target_red() {
            "count the red objects; shapes do not matter"
        } else {
            "count the blue objects; shapes do not matter"
        });
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "Answer answer_k where k is the number of {} objects (k from 0 to {}); shapes do not \
             matter. Text: r red, b blue, . empty.",
            if self.target_red() { "red" } else { "blue" },
            self.objs.len()
        ));
    }
    fn horizon(&self, _scale: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        numbers(out);
    }
}
