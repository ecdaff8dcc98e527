//! `symmetry` (single-turn): is the pattern mirror-symmetric?

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Rng};

use super::single::{answer_action, judge, yes_no};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid};

/// `symmetry`: is the two-colour pattern mirror-symmetric about its vertical axis? Scale
/// 1..=3: sides 4, 6, 8. answer_1 = yes. Rule 1 (the `asymmetric` twin) asks the inverse.
#[derive(Default)]
pub struct Symmetry {
    pub(super) rule: u8,
    n: usize,
    cells: Vec<bool>,
    symmetric: bool,
    broken: Option<(usize, usize)>,
}

impl Symmetry {
    fn answer(&self) -> usize {
        (self.symmetric == (self.rule == 0)) as usize
    }
}

impl Game for Symmetry {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = 2 + 2 * scale as usize;
        self.n = n;
        self.cells = vec![false; n * n];
        for y in 0..n {
            for x in 0..n / 2 {
                let v = rng.chance(0.45);
                self.cells[y * n + x] = v;
                self.cells[y * n + n - 1 - x] = v;
            }
        }
        self.symmetric = rng.chance(0.5);
        self.broken = None;
        if !self.symmetric {
            let (x, y) = (n / 2 + rng.index(n / 2), rng.index(n));
            self.cells[y * n + x] = !self.cells[y * n + x];
            self.broken = Some((x, y));
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["symmetry-detect", "compare-colour"]);
        if self.rule == 1 {
            tags.push("negation");
        }
        judge(a, self.answer())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(2)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.n, self.n, Cell::FLOOR);
        for (i, on) in self.cells.iter().enumerate() {
            g.cells[i] = if *on {
                Cell::solid(Col::Purple, b'#')
            } else {
                Cell::FLOOR
            };
        }
    }
    fn state_text(&self, out: &mut String) {
        let on = self.cells.iter().filter(|c| **c).count();
        out.push_str(&format!(
            "{}x{} pattern with {on} purple cells",
            self.n, self.n
        ));
    }
    fn hint(&mut self, out: &mut String) {
        match self.broken {
            None => out.push_str("every row reads the same from both ends"),
            Some((x, y)) => out.push_str(&format!(
                "cell ({x},{y}) differs from its mirror cell ({},{y})",
                self.n - 1 - x
            )),
        }
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str("check each row against its mirror image, cell by cell from both ends");
    }
    fn rules(&self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "Is the pattern of purple cells mirror-symmetric left to right? answer_1 = yes, \
             symmetric; answer_0 = no. Text: # purple, . empty."
        } else {
            "Is the pattern of purple cells asymmetric (not mirror-symmetric left to right)? \
             answer_1 = yes, asymmetric; answer_0 = no. Text: # purple, . empty."
        });
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        let (sym, asym): (&[&str], &[&str]) = (
            &["symmetric", "symmetrical"],
            &["asymmetric", "asymmetrical"],
        );
        if self.rule == 0 {
            yes_no(out, sym, asym);
        } else {
            yes_no(out, asym, sym);
        }
    }
}
