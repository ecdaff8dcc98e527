//! `merge-2048`: slide all tiles; equal tiles merge into their sum; a 2 (or 4) appears after
//! each move. Reach the goal tile. Scale 1..=4: 3x3 to 16, 3x3 to 32, 4x4 to 64, 4x4 to 128.
//! Solver: one-ply greedy on empty cells, merges and keeping the largest tile in a corner.

use envdist_core::{ActionId, ActionMask, Rng};

use super::util::count_of;
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

#[derive(Default)]
pub struct Merge {
    n: usize,
    /// log2 of tile values, 0 = empty.
    t: Vec<u8>,
    goal: u8,
}

impl Merge {
    /// Slide `a`; returns the new board and the merges made.
    fn slide(&self, a: ActionId) -> (Vec<u8>, u32) {
        let n = self.n;
        let mut out = vec![0u8; n * n];
        let mut merges = 0;
        for line in 0..n {
            // Cells of this line from the side the tiles move toward.
            let idx = |k: usize| -> usize {
                match a {
                    ActionId::LEFT => line * n + k,
                    ActionId::RIGHT => line * n + (n - 1 - k),
                    ActionId::UP => k * n + line,
                    _ => (n - 1 - k) * n + line,
                }
            };
            let vals: Vec<u8> = (0..n).map(|k| self.t[idx(k)]).filter(|v| *v > 0).collect();
            let mut k = 0;
            let mut i = 0;
            while i < vals.len() {
                if i + 1 < vals.len() && vals[i] == vals[i + 1] {
                    out[idx(k)] = vals[i] + 1;
                    merges += 1;
                    i += 2;
                } else {
                    out[idx(k)] = vals[i];
                    i += 1;
                }
                k += 1;
            }
        }
        (out, merges)
    }
    fn spawn(&mut self, rng: &mut Rng) {
        let empty: Vec<usize> = (0..self.t.len()).filter(|i| self.t[*i] == 0).collect();
        if let Some(&i) = rng.choose(&empty) {
            self.t[i] = if rng.chance(0.1) { 2 } else { 1 };
        }
    }
    fn max(&self) -> u8 {
        self.t.iter().copied().max().unwrap_or(0)
    }
}

impl Game for Merge {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.n = if scale <= 2 { 3 } else { 4 };
        self.goal = 3 + scale as u8;
        self.t = vec![0; self.n * self.n];
        self.spawn(rng);
        self.spawn(rng);
    }
    fn step(&mut self, a: ActionId, rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        let (next, merges) = self.slide(a);
        self.t = next;
        tags.push("count-value");
        if merges > 0 {
            tags.push("merge");
        }
        let n = self.n;
        let corners = [0, n - 1, n * (n - 1), n * n - 1];
        if corners.iter().any(|c| self.t[*c] == self.max()) {
            tags.push("corner-strategy");
        }
        if self.max() >= self.goal {
            return Status::Won;
        }
        self.spawn(rng);
        if self.legal().count() == 0 {
            return Status::Lost;
        }
        Status::Running
    }
    fn legal(&self) -> ActionMask {
        let mut m = ActionMask::NONE;
        for a in ActionId::MOVES {
            if self.slide(a).0 != self.t {
                m = m.with(a);
            }
        }
        m
    }
    fn oracle(&mut self) -> ActionId {
        let n = self.n;
        let mut best = (i64::MIN, ActionId::WAIT);
        for a in [
            ActionId::DOWN,
            ActionId::LEFT,
            ActionId::RIGHT,
            ActionId::UP,
        ] {
            let (b, merges) = self.slide(a);
            if b == self.t {
                continue;
            }
            let empty = b.iter().filter(|v| **v == 0).count() as i64;
            let max = b.iter().copied().max().unwrap_or(0);
            let corner = (b[n * n - n] == max) as i64;
            // Monotone bottom row toward the bottom-left corner.
            let mono: i64 = (0..n - 1)
                .map(|x| (b[n * (n - 1) + x] >= b[n * (n - 1) + x + 1]) as i64)
                .sum();
            let penalty = if a == ActionId::UP { 30 } else { 0 };
            let score =
                10 * empty + 6 * merges as i64 + 25 * corner + 4 * mono + 50 * max as i64 - penalty;
            if score > best.0 {
                best = (score, a);
            }
        }
        best.1
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.n, self.n, Cell::FLOOR);
        for (i, v) in self.t.iter().enumerate() {
            if *v > 0 {
                g.cells[i] = Cell::obj(Shape::Full, Col::Num(*v), b'0' + *v);
            }
        }
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "largest tile {}; goal tile {}; {} empty cells",
            1u32 << self.max(),
            1u32 << self.goal,
            self.t.iter().filter(|v| **v == 0).count()
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        let n = self.n;
        let max = self.max();
        let corners = [0, n - 1, n * (n - 1), n * n - 1];
        // A largest tile already in a corner if there is one (that is the one to keep there).
        let at = corners
            .iter()
            .copied()
            .find(|c| self.t[*c] == max)
            .or_else(|| self.t.iter().position(|v| *v == max))
            .unwrap_or(0);
        let pairs = (0..n * n)
            .filter(|i| self.t[*i] > 0)
            .map(|i| {
                let east = i % n + 1 < n && self.t[i + 1] == self.t[i];
                let south = i + n < n * n && self.t[i + n] == self.t[i];
                east as usize + south as usize
            })
            .sum::<usize>();
        out.push_str(&format!(
            "merge toward a corner; the largest tile is {} at ({},{}){}; {} side by side",
            1u32 << max,
            at % n,
            at / n,
            if corners.contains(&at) {
                ", in a corner"
            } else {
                ""
            },
            count_of(pairs, "equal pair", "equal pairs")
        ));
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "up/down/left/right slide every tile that way; two equal tiles that meet merge into \
             one of double value; a new 2 (sometimes 4) appears after each move. Make a tile of \
             {}. A full board with no move fails. Tile colours warm up with value. Text: digit k \
             is a tile of 2^k, . empty.",
            1u32 << self.goal
        ));
    }
    fn horizon(&self, scale: u32) -> u32 {
        [0, 24, 40, 70, 130][scale.min(4) as usize]
    }
}
