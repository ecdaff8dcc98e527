//! `shape-match` (single-turn): which candidate has the reference shape?

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Meaning, Rng};

use super::single::{SHAPE_CH, SHAPE_NAMES, SHAPES, answer_action, judge};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, OBJECT_COLS};

/// `shape-match`: the reference shape is in the top row; which candidate in the bottom row
/// has the same shape (colours are random and do not matter)? Scale = candidates, 2..=6.
#[derive(Default)]
pub struct ShapeMatch {
    reference: (usize, Col),
    cands: Vec<(usize, Col)>,
    answer: usize,
}

impl Game for ShapeMatch {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let k = scale as usize;
        let mut shapes: Vec<usize> = (0..6).collect();
        rng.shuffle(&mut shapes);
        let col = |rng: &mut Rng| OBJECT_COLS[rng.index(8)];
        self.reference = (shapes[0], col(rng));
        self.answer = rng.index(k);
        self.cands.clear();
        let mut next = 1;
        for i in 0..k {
            let s = if i == self.answer {
                shapes[0]
            } else {
                next += 1;
                shapes[next - 1]
            };
            let c = col(rng);
            self.cands.push((s, c));
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["match-shape", "compare-shape"]);
        judge(a, self.answer)
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.cands.len())
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer)
    }
    fn draw(&self, g: &mut Grid) {
        let w = self.cands.len().max(3);
        g.reset(w, 3, Cell::FLOOR);
        g.set(
            w / 2,
            0,
            Cell::obj(
                SHAPES[self.reference.0],
                self.reference.1,
                SHAPE_CH[self.reference.0],
            ),
        );
        for (i, (s, c)) in self.cands.iter().enumerate() {
            g.set(i, 2, Cell::obj(SHAPES[*s], *c, SHAPE_CH[*s]));
        }
    }
    fn state_text(&self, out: &mut String) {
        let c: Vec<&str> = self.cands.iter().map(|c| SHAPE_NAMES[c.0]).collect();
        out.push_str(&format!(
            "reference: {}; candidates: {}",
            SHAPE_NAMES[self.reference.0],
            c.join(", ")
        ));
    }
    fn hint(&mut self, out: &mut String) {
        out.push_str(&format!(
            "candidate {} is also a {}",
            self.answer, SHAPE_NAMES[self.reference.0]
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str("compare each candidate's outline with the reference; colours do not matter");
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "The top row shows a reference shape; the bottom row shows candidates 0..{} left to \
             right. answer_k picks the candidate with the same shape; colour does not matter. \
             Text letters are shapes: S square, C disc, D diamond, R ring, P plus, B bar.",
            self.cands.len() - 1
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        // Candidates' shapes are distinct; their colours are random and do not matter.
        for (k, (s, _)) in self.cands.iter().enumerate() {
            out.push(
                answer_action(k),
                [Meaning::Shape(SHAPE_NAMES[*s]), Meaning::Item(k as u32)],
            );
        }
    }
}
