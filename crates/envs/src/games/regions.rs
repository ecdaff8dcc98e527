//! `largest-region` (single-turn): which colour's region is largest (or smallest)?

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Meaning, Rng};

use super::single::{answer_action, judge};
use super::util::random_cells;
use crate::env::{Game, Status};
use crate::render::{Cell, Grid, OBJECT_COL_NAMES, OBJECT_COLS, Shape};

/// `largest-region`: the board is split into one connected region per colour (nearest-seed
/// regions); which colour's region is largest? answer_k = the k-th colour of the rules list.
/// Scale 1..=3: 3, 4, 5 colours on 5x5, 6x6, 7x7. Rule 1 (the `smallest` twin) asks for the
/// smallest region.
#[derive(Default)]
pub struct Regions {
    pub(super) rule: u8,
    n: usize,
    k: usize,
    owner: Vec<usize>,
    sizes: Vec<usize>,
}

impl Regions {
    fn answer(&self) -> usize {
        let it = self.sizes.iter().enumerate();
        if self.rule == 0 {
            it.max_by_key(|(_, s)| **s).map_or(0, |(i, _)| i)
        } else {
            it.min_by_key(|(_, s)| **s).map_or(0, |(i, _)| i)
        }
    }
}

impl Game for Regions {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.k = 2 + scale as usize;
        self.n = 4 + scale as usize;
        let n = self.n;
        loop {
            let seeds = random_cells(n, n, self.k, rng, |_| true);
            self.owner = (0..n * n)
                .map(|i| {
                    let (x, y) = (i % n, i / n);
                    (0..self.k)
                        .min_by_key(|s| seeds[*s].0.abs_diff(x) + seeds[*s].1.abs_diff(y))
                        .unwrap_or(0)
                })
                .collect();
            self.sizes = (0..self.k)
                .map(|s| self.owner.iter().filter(|o| **o == s).count())
                .collect();
            let mut sorted = self.sizes.clone();
            sorted.sort();
            // Unique largest and unique smallest, so both twins have one right answer.
            if sorted[0] < sorted[1] && sorted[self.k - 2] < sorted[self.k - 1] {
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["region-fill", "compare-size"]);
        judge(a, self.answer())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.k)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.n, self.n, Cell::FLOOR);
        for (i, o) in self.owner.iter().enumerate() {
            g.cells[i] = Cell::obj(Shape::Full, OBJECT_COLS[*o], b'a' + *o as u8);
        }
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "{} coloured regions on a {}x{} board",
            self.k, self.n, self.n
        ));
    }
    fn hint(&mut self, out: &mut String) {
        let s: Vec<String> = (0..self.k)
            .map(|i| format!("{} {}", OBJECT_COL_NAMES[i], self.sizes[i]))
            .collect();
        out.push_str(&format!("region sizes: {}", s.join(", ")));
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "count the cells of each colour and find the largest area"
        } else {
            "count the cells of each colour and find the smallest area"
        });
    }
    fn rules(&self, out: &mut String) {
        let list: Vec<String> = (0..self.k)
            .map(|i| format!("answer_{i} {}", OBJECT_COL_NAMES[i]))
            .collect();
        out.push_str(&format!(
            "Which colour covers the {} area? {}. Text: letters a.. are the colours in that order.",
            if self.rule == 0 {
                "LARGEST"
            } else {
                "SMALLEST"
            },
            list.join(", ")
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        for (k, name) in OBJECT_COL_NAMES.iter().take(self.k).enumerate() {
            out.push(answer_action(k), [Meaning::Colour(name)]);
        }
    }
}
