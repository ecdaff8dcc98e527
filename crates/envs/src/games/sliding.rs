//! `sliding-puzzle`: slide coloured tiles into reading order (red, blue, green, ... with the
//! gap last). Scale 1..=3: 2x2, 2x3 and 3x3 boards, scrambled by `4 + 4*scale` random gap
//! moves. A move names the direction the tile moves into the gap. Solver: breadth-first
//! search, planned once and replanned when the board leaves the plan; a level's plans are kept
//! by the board they start from (a 3x3 search can visit all 181,440 boards, and the sub-H4
//! hints ask for the plan's length on every step).

use std::collections::{HashMap, VecDeque};

use envdist_core::{ActionId, ActionMask, Rng};

use super::util::{PackedStateHash, prose_list};
use crate::env::{Game, Status};
use crate::render::{Cell, Grid, OBJECT_COL_NAMES, OBJECT_COLS, Shape};

#[derive(Default, Clone)]
pub struct Sliding {
    w: usize,
    h: usize,
    /// Row-major tiles, 0 = gap, k = tile k (colour OBJECT_COLS[k-1]).
    tiles: Vec<u8>,
    plan: Vec<ActionId>,
    plan_for: Vec<u8>,
    /// The solver's plan (reversed) from every packed board it was asked about on this level:
    /// the search is a function of the level's size and the board alone, so a kept plan is the
    /// plan a new search would return.
    plans: HashMap<u64, Vec<ActionId>, PackedStateHash>,
}

/// A search's parents and queue, one per thread and kept between searches: a 3x3 search fills
/// up to 181,440 entries, and growing a fresh table to that size each time was half its cost.
type SearchScratch = (
    HashMap<u64, (u64, ActionId), PackedStateHash>,
    VecDeque<u64>,
);

thread_local! {
    static SEARCH: std::cell::RefCell<SearchScratch> = std::cell::RefCell::default();
}

/// A board as one `u64`: tile `i` in bits `4i..4i+4`.
fn pack(t: &[u8]) -> u64 {
    t.iter()
        .enumerate()
        .fold(0u64, |acc, (i, v)| acc | (*v as u64) << (4 * i))
}

impl Sliding {
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
    /// Breadth-first search over boards packed as 4-bit tiles in a `u64` (moves made on the
    /// packed board: the gap's nibble and the sliding tile's swap); returns the plan reversed
    /// (next action last).
    fn solve(&self) -> Vec<ActionId> {
        let (w, h) = (self.w as i32, self.h as i32);
        let cells = self.w * self.h;
        let goal = pack(&self.goal());
        let start = pack(&self.tiles);
        SEARCH.with_borrow_mut(|(prev, q)| {
            prev.clear();
            q.clear();
            prev.insert(start, (start, ActionId::WAIT));
            q.push_back(start);
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
                let g = (0..cells).find(|i| k >> (4 * i) & 15 == 0).unwrap_or(0);
                let (gx, gy) = ((g % self.w) as i32, (g / self.w) as i32);
                for a in ActionId::MOVES {
                    // As `apply`: move `a` slides the tile on the gap's opposite side into it.
                    let Some((dx, dy)) = a.delta() else { continue };
                    let (sx, sy) = (gx - dx, gy - dy);
                    if sx < 0 || sy < 0 || sx >= w || sy >= h {
                        continue;
                    }
                    let s = (sy * w + sx) as usize;
                    let tile = k >> (4 * s) & 15;
                    let key = (k & !(15 << (4 * s))) | tile << (4 * g);
                    if let std::collections::hash_map::Entry::Vacant(e) = prev.entry(key) {
                        e.insert((k, a));
                        q.push_back(key);
                    }
                }
            }
            Vec::new()
        })
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
        self.plans.clear();
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
            let key = pack(&self.tiles);
            self.plan = if let Some(plan) = self.plans.get(&key) {
                plan.clone()
            } else {
                let plan = self.solve();
                self.plans.insert(key, plan.clone());
                plan
            };
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

#[cfg(test)]
mod tests {
    use super::super::util::ask_twins_then_move;
    use super::*;

    /// The packed moves are `apply`'s and the kept plans change no answer: along random walks,
    /// every oracle action and hint equals the one of a twin that forgets its plans before each
    /// question (as the solver did before it kept them), and the search's first move, made on
    /// the packed board, lands where `apply` does.
    #[test]
    fn kept_plans_answer_as_a_new_search_would() {
        let mut reused = 0;
        for seed in 0..18u64 {
            let mut rng = Rng::seed_from_u64(seed);
            let mut kept = Sliding::default();
            kept.reset(&mut rng, 1 + (seed % 3) as u32);
            let mut fresh = kept.clone();
            let mut walk = Rng::seed_from_u64(500 + seed);
            for _ in 0..80 {
                reused += usize::from(kept.plans.contains_key(&pack(&kept.tiles)));
                fresh.plans.clear();
                let won =
                    ask_twins_then_move(&mut kept, &mut fresh, &mut walk, &rng, |kept, next| {
                        if let Some(after) = kept.apply(&kept.tiles, next) {
                            // The plan from the board the solver's move leads to is one move shorter.
                            let mut there = kept.clone();
                            there.tiles = after;
                            assert_eq!(there.solve().len() + 1, kept.plan.len(), "seed {seed}");
                        }
                    });
                if won {
                    break;
                }
            }
        }
        assert!(reused > 100, "kept plans reused {reused} times");
    }
}
