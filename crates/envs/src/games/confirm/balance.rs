//! `balance-scale` (single-turn): which pan of a beam scale is heavier? A bar weighs 1, a
//! square 2, a disc 3, whatever its colour. answer_0 left, answer_1 right, answer_2
//! balanced. Scale = objects on both pans together, 2..=8; the three verdicts are equally
//! likely at every scale.

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Direction, Meaning, Rng};

use super::super::single::{answer_action, judge};
use super::super::util::{Pos, count_of, random_cells};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, OBJECT_COLS, Shape};

/// The object kinds: shape, text character, name, weight. Shapes that stay apart at 6-pixel
/// cells (a 32-pixel canvas), where a diamond or a plus draws as a disc does.
const KINDS: [(Shape, u8, &str, usize); 3] = [
    (Shape::Bar, b'b', "bar", 1),
    (Shape::Full, b's', "square", 2),
    (Shape::Circle, b'o', "disc", 3),
];
/// Board side: two columns of four slots per pan, the post between them, the beam below.
const SIDE: usize = 5;
/// Draws of the pans before settling for the last one (a bound that keeps `reset` finite; a
/// wanted verdict turns up within a few draws at every scale).
const TRIES: usize = 100;
/// What each answer means, in the words of the rules text.
const VERDICTS: [&str; 3] = [
    "the left pan is heavier",
    "the right pan is heavier",
    "the pans are balanced",
];

#[derive(Default)]
pub struct Balance {
    /// Per pan (left, right): each object's kind, colour and cell.
    pans: [Vec<(usize, Col, Pos)>; 2],
}

impl Balance {
    fn weight(&self, pan: usize) -> usize {
        self.pans[pan].iter().map(|o| KINDS[o.0].3).sum()
    }
    /// 0 left heavier, 1 right heavier, 2 balanced (the answer slots).
    fn verdict(&self) -> usize {
        match self.weight(0).cmp(&self.weight(1)) {
            std::cmp::Ordering::Greater => 0,
            std::cmp::Ordering::Less => 1,
            std::cmp::Ordering::Equal => 2,
        }
    }
}

impl Game for Balance {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        let want = rng.index(3);
        for _ in 0..TRIES {
            let left = rng.range_inclusive(1, n as u32 - 1) as usize;
            for (pan, count) in [(0, left), (1, n - left)] {
                let x0 = if pan == 0 { 0 } else { 3 };
                let cells = random_cells(SIDE, SIDE, count, rng, |p| {
                    (x0..x0 + 2).contains(&p.0) && p.1 < SIDE - 1
                });
                self.pans[pan] = cells
                    .into_iter()
                    .map(|p| (rng.index(KINDS.len()), OBJECT_COLS[rng.index(4)], p))
                    .collect();
            }
            if self.verdict() == want {
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["weigh", "compare-shape"]);
        if self.pans.iter().any(|p| p.len() > 1) {
            tags.push("add");
        }
        judge(a, self.verdict())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(VERDICTS.len())
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.verdict())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(SIDE, SIDE, Cell::FLOOR);
        let post = Cell {
            ch: b'|',
            ..Cell::WALL
        };
        for y in 0..SIDE {
            g.set(2, y, post);
        }
        // A solid beam, so that it is never taken for a bar on a pan.
        for x in [0, 1, 3, 4] {
            g.set(x, SIDE - 1, Cell::solid(Col::Orange, b'='));
        }
        for (kind, col, p) in self.pans.iter().flatten() {
            let (shape, ch, _, _) = KINDS[*kind];
            g.set(p.0, p.1, Cell::obj(shape, *col, ch));
        }
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "{} in the left pan, {} in the right pan",
            count_of(self.pans[0].len(), "object", "objects"),
            count_of(self.pans[1].len(), "object", "objects")
        ));
    }
    fn hint(&mut self, out: &mut String) {
        for (pan, name) in ["left", "right"].iter().enumerate() {
            let terms: Vec<String> = self.pans[pan]
                .iter()
                .map(|o| format!("{} {}", KINDS[o.0].2, KINDS[o.0].3))
                .collect();
            out.push_str(&format!(
                "{name} pan: {} = {}; ",
                terms.join(" + "),
                self.weight(pan)
            ));
        }
        out.push_str("so ");
        out.push_str(VERDICTS[self.verdict()]);
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str(
            "weigh each pan by the shapes in it, then compare the totals; colours do not matter",
        );
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "A beam scale holds objects in its left and right pans. A bar weighs 1, a square 2, a \
             disc 3, whatever its colour. Which pan is heavier? answer_0 left, answer_1 right, \
             answer_2 balanced. Text: b bar, s square, o disc, | post, = beam, . empty.",
        );
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        // "Which pan is heavier?": a side, or that neither is (`balanced`, `equal`; `not
        // balanced` fits both sides, so it narrows a side down and names none alone).
        let even = |holds| {
            [
                Meaning::claim("balanced", holds),
                Meaning::claim("equal", holds),
            ]
        };
        for (k, side) in [Direction::Left, Direction::Right].into_iter().enumerate() {
            out.push(answer_action(k), [Meaning::Direction(side)]);
            out.push(answer_action(k), even(false));
        }
        out.push(answer_action(2), even(true));
    }
}
