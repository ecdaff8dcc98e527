//! `sliding-puzzle`: slide coloured tiles into reading order (red, blue, green, ... with the
//! gap last). Scale 1..=3: 2x2, 2x3 and 3x3 boards, scrambled by `4 + 4*scale` random gap
//! moves. A move names the direction the tile moves into the gap. Solver: breadth-first
//! search, planned once and replanned when the board leaves the plan.

use std::collections::{HashMap, VecDeque};

use envdist_core::{ActionId, ActionMask, Rng};

use super::util::prose_list;
use crate::env::{Game, Status};
use crate::render::{Cell, Grid, OBJECT_COL_NAMES, OBJECT_COLS, Shape};

#[derive(Default)]
pub struct Sliding {
    w: usize,
    h: usize,
    /// Row-major tiles, 0 = gap, k = tile k (colour OBJECT_COLS[k-1]).
    tiles: Vec<u8>,
    plan: Vec<ActionId>,
    plan_for: Vec<u8>,
}

impl Sliding {
    pub fn boxed(_rule: u8) -> Box<dyn Game> {
        Box::<Self>::default()
    }
    fn gap(t: &[u8]) -> usize {
        t.iter().position(|v| *v == 0).unwrap_or(0)
    }
    /// Move `a` slides the tile on the opposite side of the gap into it.
    fn apply(&self, t: &[u8], a: ActionId) -> Option<Vec<u8>> {
        let g = Self::gap(t);
        let (gx, gy) = ((g % self.w) as i32, (g / self.w) as i32);
        let (dx, dy) = a.delta()?;
        let (sx, sy) = (gx - dx, gy - dy);
        if sx < 0 || sy < 0 || sx >= self.w as i32 || sy >= self.h as i32 {
            return None;
        }
        let s = sy as usize * self.w + sx as usize;
        let mut out = t.to_vec();
        out.swap(g, s);
        Some(out)
    }
    fn goal(&self) -> Vec<u8> {
        let n = self.w * self.h;
        (1..n as u8).chain(std::iter::once(0)).collect()
    }
    /// Breadth-first search over boards packed as 4-bit tiles in a `u64`; returns the plan
    /// reversed (next action last).
    fn solve(&self) -> Vec<ActionId> {
        let pack = |t: &[u8]| {
            t.iter()
                .enumerate()
                .fold(0u64, |acc, (i, v)| acc | (*v as u64) << (4 * i))
        };
        let cells = self.w * self.h;
        let unpack =
            |k: u64| -> Vec<u8> { (0..cells).map(|i| (k >> (4 * i) & 15) as u8).collect() };
        let goal = pack(&self.goal());
        let start = pack(&self.tiles);
        let mut prev: HashMap<u64, (u64, ActionId)> = HashMap::with_capacity(1024);
        prev.insert(start, (start, ActionId::WAIT));
        let mut q = VecDeque::from([start]);
        while let Some(k) = q.pop_front() {
            if k == goal {
                let mut plan = Vec::new();
                let mut cur = k;
                while cur != start {
                    let (p, a) = prev[&cur];
                    plan.push(a);
                    cur = p;
                }
                return plan;
            }
            let board = unpack(k);
            for a in ActionId::MOVES {
                if let Some(t) = self.apply(&board, a) {
                    let key = pack(&t);
                    if let std::collections::hash_map::Entry::Vacant(e) = prev.entry(key) {
                        e.insert((k, a));
                        q.push_back(key);
                    }
                }
            }
        }
        Vec::new()
    }
    fn misplaced(&self) -> usize {
        self.tiles
            .iter()
            .zip(self.goal())
            .filter(|(a, b)| **a != 0 && **a != *b)
            .count()
    }
}

impl Game for Sliding {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        (self.w, self.h) = match scale {
            1 => (2, 2),
            2 => (3, 2),
            _ => (3, 3),
        };
        loop {
            self.tiles = self.goal();
            let mut last: Option<ActionId> = None;
            for _ in 0..(4 + 4 * scale) {
                let opts: Vec<ActionId> = ActionId::MOVES
                    .iter()
                    .copied()
                    .filter(|a| self.apply(&self.tiles, *a).is_some())
                    .filter(|a| last.is_none_or(|l| l.delta().map(|(x, y)| (-x, -y)) != a.delta()))
                    .collect();
                let a = opts[rng.index(opts.len())];
                if let Some(t) = self.apply(&self.tiles, a) {
                    self.tiles = t;
                }
                last = Some(a);
            }
            if self.tiles != self.goal() {
                break;
            }
        }
        self.plan.clear();
        self.plan_for.clear();
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        let before = self.misplaced();
        let on_plan = self.plan_for == self.tiles && self.plan.last() == Some(&a);
        if let Some(t) = self.apply(&self.tiles, a) {
            self.tiles = t;
        }
        if on_plan {
            self.plan.pop();
            self.plan_for = self.tiles.clone();
        }
        tags.push("permute");
        if self.misplaced() < before {
            tags.push("tile-locate");
        } else {
            tags.push("plan-ahead");
        }
        if self.tiles == self.goal() {
            Status::Won
        } else {
            Status::Running
        }
    }
    fn legal(&self) -> ActionMask {
        let mut m = ActionMask::NONE;
        for a in ActionId::MOVES {
            if self.apply(&self.tiles, a).is_some() {
                m = m.with(a);
            }
        }
        m
    }
    fn oracle(&mut self) -> ActionId {
        if self.plan_for != self.tiles || self.plan.is_empty() {
            self.plan = self.solve();
            self.plan_for = self.tiles.clone();
        }
        self.plan.last().copied().unwrap_or(ActionId::WAIT)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.w, self.h, Cell::FLOOR);
        for (i, t) in self.tiles.iter().enumerate() {
            if *t > 0 {
                g.cells[i] = Cell::obj(Shape::Full, OBJECT_COLS[*t as usize - 1], b'0' + *t);
            }
        }
    }
    fn state_text(&self, out: &mut String) {
        let g = Self::gap(&self.tiles);
        out.push_str(&format!(
            "{}x{} board; gap at ({},{}); {} tiles out of place",
            self.w,
            self.h,
            g % self.w,
            g / self.w,
            self.misplaced()
        ));
    }
    fn hint(&mut self, out: &mut String) {
        out.push_str(&format!("{} moves to solve", self.plan.len()));
    }
    fn subgoal(&mut self, out: &mut String) {
        // The plan length needs a plan for this board; the solver replans only if stale.
        self.oracle();
        let goal = self.goal();
        // In tile order (the colour order of the rules), not board order.
        let mut tiles: Vec<u8> = self
            .tiles
            .iter()
            .zip(&goal)
            .filter(|(a, b)| **a != 0 && *a != *b)
            .map(|(a, _)| *a)
            .collect();
        tiles.sort_unstable();
        let off: Vec<&str> = tiles
            .iter()
            .map(|t| OBJECT_COL_NAMES[*t as usize - 1])
            .collect();
        let n = off.len();
        if n > 0 {
            out.push_str(&format!(
                "the {} {} out of place; ",
                prose_list(&off),
                if n == 1 { "tile is" } else { "tiles are" }
            ));
        }
        out.push_str(&format!("{} moves to solve", self.plan.len()));
    }
    fn rules(&self, out: &mut String) {
        let n = self.w * self.h - 1;
        let order: Vec<String> = (0..n)
            .map(|k| format!("{} {}", k + 1, OBJECT_COL_NAMES[k]))
            .collect();
        out.push_str(&format!(
            "A move slides the tile next to the gap into it: `up` moves the tile below the gap \
             up, and so on. Solve when tiles read {} in row order with the gap last. Text: \
             digits are tiles ({}), . the gap.",
            (1..=n).map(|k| k.to_string()).collect::<Vec<_>>().join(" "),
            order.join(", ")
        ));
    }
    fn horizon(&self, scale: u32) -> u32 {
        12 + 10 * scale
    }
}
