//! `dice-sum` (single-turn): how many pips do the dice show in all?

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Rng};

use super::single::{answer_action, judge, numbers};
use super::util::random_cells;
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

/// `dice-sum`: add the pips of the dice on a 3x3 board. Scale = dice, 1..=3 (with three dice
/// faces go up to 5, so the sum stays within the 16 answers).
#[derive(Default)]
pub struct DiceSum {
    dice: Vec<((usize, usize), u8)>,
}

impl DiceSum {
    fn sum(&self) -> usize {
        self.dice.iter().map(|d| d.1 as usize).sum()
    }
    fn max_sum(&self) -> usize {
        self.dice.len() * if self.dice.len() >= 3 { 5 } else { 6 }
    }
}

impl Game for DiceSum {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        let top = if n >= 3 { 5 } else { 6 };
        let cells = random_cells(3, 3, n, rng, |_| true);
        self.dice = cells
            .into_iter()
            .map(|p| (p, rng.range_inclusive(1, top) as u8))
            .collect();
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.push("pip-count");
        if self.dice.len() > 1 {
            tags.push("add");
        }
        judge(a, self.sum())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.max_sum() + 1)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.sum())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(3, 3, Cell::FLOOR);
        for (p, v) in &self.dice {
            g.set(p.0, p.1, Cell::obj(Shape::Die(*v), Col::White, b'0' + *v));
        }
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!("{} dice on a 3x3 board", self.dice.len()));
    }
    fn hint(&mut self, out: &mut String) {
        let faces: Vec<String> = self.dice.iter().map(|d| d.1.to_string()).collect();
        out.push_str(&format!(
            "the faces show {} = {}",
            faces.join(" + "),
            self.sum()
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str("count the pips of every die, then add them");
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "Add the pips of all dice. answer_k means the sum is k (0..={}). Text: digits are die \
             faces, . empty.",
            self.max_sum()
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        numbers(out);
    }
}
