//! `odd-one-out` (single-turn): which item differs from the others in colour or shape?

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Meaning, Rng};

use super::single::{SHAPE_CH, SHAPE_NAMES, SHAPES, answer_action, judge};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, OBJECT_COL_NAMES, OBJECT_COLS, Shape};

/// `odd-one-out`: items in reading order on a 3x3 board; all alike but one, which differs in
/// colour or in shape. Answer its index. Scale = items, 4..=9.
#[derive(Default)]
pub struct OddOneOut {
    items: Vec<(Shape, Col, usize, usize)>,
    odd: usize,
    by_colour: bool,
}

impl Game for OddOneOut {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        let s = rng.index(6);
        let c = rng.index(8);
        self.by_colour = rng.chance(0.5);
        self.odd = rng.index(n);
        let (os, oc) = if self.by_colour {
            (s, (c + 1 + rng.index(7)) % 8)
        } else {
            ((s + 1 + rng.index(5)) % 6, c)
        };
        self.items = (0..n)
            .map(|i| {
                if i == self.odd {
                    (SHAPES[os], OBJECT_COLS[oc], os, oc)
                } else {
                    (SHAPES[s], OBJECT_COLS[c], s, c)
                }
            })
            .collect();
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.push(if self.by_colour {
            "compare-colour"
        } else {
            "compare-shape"
        });
        judge(a, self.odd)
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.items.len())
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.odd)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(3, 3, Cell::FLOOR);
        for (i, it) in self.items.iter().enumerate() {
            g.cells[i] = Cell::obj(it.0, it.1, SHAPE_CH[it.2]);
        }
    }
    fn state_text(&self, out: &mut String) {
        let list: Vec<String> = self
            .items
            .iter()
            .enumerate()
            .map(|(i, it)| format!("{i}: {} {}", OBJECT_COL_NAMES[it.3], SHAPE_NAMES[it.2]))
            .collect();
        out.push_str(&list.join("; "));
    }
    fn hint(&mut self, out: &mut String) {
        out.push_str(&format!(
            "item {} is the only one with a different {}",
            self.odd,
            if self.by_colour { "colour" } else { "shape" }
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        // Which attribute to compare, not which item differs.
        out.push_str(if self.by_colour {
            "compare the colours of the items and find the item that differs"
        } else {
            "compare the shapes of the items and find the item that differs"
        });
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "Items are numbered 0..{} in reading order (rows from the top, left to right). All \
             but one share colour and shape; answer_k names the odd one. Text letters are \
             shapes: S square, C disc, D diamond, R ring, P plus, B bar.",
            self.items.len() - 1
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        // An item is its place on the 3x3 board, its number, and its looks: the odd item's
        // colour (or shape) names it alone; the shared one names every other item.
        for (i, it) in self.items.iter().enumerate() {
            let cell = Meaning::Cell {
                row: (i / 3) as u8,
                col: (i % 3) as u8,
                rows: 3,
                cols: 3,
            };
            out.push(
                answer_action(i),
                [
                    cell,
                    Meaning::Item(i as u32),
                    Meaning::Colour(OBJECT_COL_NAMES[it.3]),
                    Meaning::Shape(SHAPE_NAMES[it.2]),
                ],
            );
        }
    }
}
