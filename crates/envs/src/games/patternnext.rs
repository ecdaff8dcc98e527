//! `pattern-next` (single-turn): which colour continues the cycle?

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Meaning, Rng};

use super::single::{answer_action, judge};
use crate::env::{Game, Status};
use crate::render::{Cell, Grid, OBJECT_COL_NAMES, OBJECT_COLS, Shape};

/// `pattern-next`: the top row repeats a colour cycle; which of the four candidates in the
/// bottom row comes next? Scale 1..=3: period 2, 3, 4 (shown length period + 2).
#[derive(Default)]
pub struct PatternNext {
    seq: Vec<usize>,
    cands: Vec<usize>,
    answer: usize,
    period: usize,
}

impl Game for PatternNext {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.period = scale as usize + 1;
        let mut cols: Vec<usize> = (0..8).collect();
        rng.shuffle(&mut cols);
        let cycle = cols[..self.period].to_vec();
        let len = self.period + 2;
        self.seq = (0..len).map(|i| cycle[i % self.period]).collect();
        let next = cycle[len % self.period];
        let mut others: Vec<usize> = (0..8).filter(|c| *c != next).collect();
        rng.shuffle(&mut others);
        self.cands = others[..3].to_vec();
        self.answer = rng.index(4);
        self.cands.insert(self.answer, next);
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["sequence-induce", "colour-cycle"]);
        judge(a, self.answer)
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(4)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer)
    }
    fn draw(&self, g: &mut Grid) {
        let w = self.seq.len().max(4);
        g.reset(w, 3, Cell::FLOOR);
        for (i, c) in self.seq.iter().enumerate() {
            g.set(
                i,
                0,
                Cell::obj(Shape::Circle, OBJECT_COLS[*c], b'a' + *c as u8),
            );
        }
        for (i, c) in self.cands.iter().enumerate() {
            g.set(
                i,
                2,
                Cell::obj(Shape::Full, OBJECT_COLS[*c], b'a' + *c as u8),
            );
        }
    }
    fn state_text(&self, out: &mut String) {
        let names = |v: &[usize]| {
            v.iter()
                .map(|c| OBJECT_COL_NAMES[*c])
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "sequence: {}; candidates 0..3: {}",
            names(&self.seq),
            names(&self.cands)
        ));
    }
    fn hint(&mut self, out: &mut String) {
        out.push_str(&format!(
            "the colours repeat every {} items, so the next is {} (candidate {})",
            self.period, OBJECT_COL_NAMES[self.cands[self.answer]], self.answer
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str(
            "find the cycle of colours in the top row, then the colour after its last disc",
        );
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "The discs in the top row follow a repeating cycle of colours. answer_k picks \
             candidate k (the squares of the bottom row, left to right) as the next colour. \
             Text letters are colours: a red, b blue, c green, d yellow, e purple, f orange, \
             g cyan, h pink.",
        );
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        for (k, c) in self.cands.iter().enumerate() {
            out.push(
                answer_action(k),
                [
                    Meaning::Colour(OBJECT_COL_NAMES[*c]),
                    Meaning::Item(k as u32),
                ],
            );
        }
    }
}
