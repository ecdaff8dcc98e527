//! `minesweeper`: reveal every safe cell with a cursor; revealing a mine fails. Numbers are
//! drawn as die pips (count of neighbouring mines). Scale 1..=3: 5x5 with 3 mines, 6x6 with
//! 5, 7x7 with 7; a zero region is open at the start. Solver: single-point deduction from the
//! numbers; only when deduction is stuck does it peek at a safe cell (a documented oracle
//! shortcut; the hint channel then says "guess").

use envdist_core::{ActionId, ActionMask, Rng};

use super::util::{agent_xy, draw_cursor, step_cursor};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

#[derive(Default)]
pub struct Mines {
    n: usize,
    mine: Vec<bool>,
    open: Vec<bool>,
    cursor: (usize, usize),
    last_guess: bool,
}

impl Mines {
    fn nbrs(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let n = self.n as i32;
        let (x, y) = ((i % self.n) as i32, (i / self.n) as i32);
        (-1..=1)
            .flat_map(move |dy| (-1..=1).map(move |dx| (x + dx, y + dy)))
            .filter(move |&(a, b)| (a, b) != (x, y) && a >= 0 && b >= 0 && a < n && b < n)
            .map(move |(a, b)| (b * n + a) as usize)
    }
    fn count(&self, i: usize) -> usize {
        self.nbrs(i).filter(|j| self.mine[*j]).count()
    }
    fn reveal(&mut self, i: usize) {
        let mut stack = vec![i];
        while let Some(c) = stack.pop() {
            if self.open[c] {
                continue;
            }
            self.open[c] = true;
            if self.count(c) == 0 {
                let next: Vec<usize> = self.nbrs(c).filter(|j| !self.open[*j]).collect();
                stack.extend(next);
            }
        }
    }
    fn idx(&self) -> usize {
        self.cursor.1 * self.n + self.cursor.0
    }
    /// Cells proven safe / proven mines by single-point deduction over revealed numbers.
    fn deduce(&self) -> (Vec<bool>, bool) {
        let cells = self.n * self.n;
        let mut known_mine = vec![false; cells];
        let mut safe = vec![false; cells];
        let mut changed = true;
        while changed {
            changed = false;
            for i in (0..cells).filter(|i| self.open[*i]) {
                let hidden: Vec<usize> = self.nbrs(i).filter(|j| !self.open[*j]).collect();
                let mines = hidden.iter().filter(|j| known_mine[**j]).count();
                let unknown: Vec<usize> = hidden
                    .iter()
                    .copied()
                    .filter(|j| !known_mine[*j] && !safe[*j])
                    .collect();
                let c = self.count(i);
                if unknown.is_empty() {
                    continue;
                }
                if c == mines {
                    for j in unknown {
                        safe[j] = true;
                    }
                    changed = true;
                } else if c - mines == unknown.len() {
                    for j in unknown {
                        known_mine[j] = true;
                    }
                    changed = true;
                }
            }
        }
        let any = (0..cells).any(|i| safe[i] && !self.open[i]);
        (safe, any)
    }
    fn target(&mut self) -> Option<usize> {
        let (safe, any) = self.deduce();
        let (cx, cy) = self.cursor;
        let dist = |i: &usize| (i % self.n).abs_diff(cx) + (i / self.n).abs_diff(cy);
        let cells = self.n * self.n;
        self.last_guess = !any;
        if any {
            (0..cells)
                .filter(|i| safe[*i] && !self.open[*i])
                .min_by_key(dist)
        } else {
            (0..cells)
                .filter(|i| !self.mine[*i] && !self.open[*i])
                .min_by_key(dist)
        }
    }
    fn won(&self) -> bool {
        (0..self.n * self.n).all(|i| self.mine[i] || self.open[i])
    }
}

impl Game for Mines {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.n = 4 + scale as usize;
        let mines = 2 * scale as usize + 1;
        let cells = self.n * self.n;
        loop {
            self.mine = vec![false; cells];
            let mut order: Vec<usize> = (0..cells).collect();
            rng.shuffle(&mut order);
            for &i in &order[..mines] {
                self.mine[i] = true;
            }
            let zeros: Vec<usize> = (0..cells)
                .filter(|i| !self.mine[*i] && self.count(*i) == 0)
                .collect();
            let Some(&start) = rng.choose(&zeros) else {
                continue;
            };
            self.open = vec![false; cells];
            self.reveal(start);
            if !self.won() {
                self.cursor = (start % self.n, start / self.n);
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        if a != ActionId::INTERACT {
            return step_cursor(&mut self.cursor, a, tags);
        }
        let i = self.idx();
        tags.extend(["reveal", "number-read"]);
        if self.mine[i] {
            return Status::Lost;
        }
        if self.deduce().0[i] {
            tags.push("deduce-safe");
        }
        self.reveal(i);
        if self.won() {
            Status::Won
        } else {
            Status::Running
        }
    }
    fn legal(&self) -> ActionMask {
        let m = super::cursor_moves(self.cursor, self.n);
        if self.open[self.idx()] {
            m
        } else {
            m.with(ActionId::INTERACT)
        }
    }
    fn oracle(&mut self) -> ActionId {
        let Some(t) = self.target() else {
            return ActionId::WAIT;
        };
        super::cursor_toward(self.cursor, (t % self.n, t / self.n))
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.n, self.n, Cell::FLOOR);
        for i in 0..self.n * self.n {
            g.cells[i] = if !self.open[i] {
                Cell::obj(Shape::Full, Col::Grey, b'#')
            } else {
                match self.count(i) {
                    0 => Cell::FLOOR,
                    c => Cell::obj(
                        Shape::Die(c.min(6) as u8),
                        Col::Num(c.min(4) as u8),
                        b'0' + c as u8,
                    ),
                }
            };
        }
        draw_cursor(g, self.idx(), Col::Red);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.cursor)
    }
    fn state_text(&self, out: &mut String) {
        let hidden = self.open.iter().filter(|o| !**o).count();
        let mines = self.mine.iter().filter(|m| **m).count();
        out.push_str(&format!(
            "cursor at ({},{}); {hidden} hidden cells, {mines} of them mines",
            self.cursor.0, self.cursor.1
        ));
    }
    fn hint(&mut self, out: &mut String) {
        if let Some(t) = self.target() {
            out.push_str(&format!(
                "({},{}) is {}",
                t % self.n,
                t / self.n,
                if self.last_guess {
                    "a guess"
                } else {
                    "provably safe"
                }
            ));
        }
    }
    fn subgoal(&mut self, out: &mut String) {
        // The action-style extra is already a subgoal (a cell to reveal), no move.
        self.hint(out);
        if out.is_empty() {
            out.push_str("every safe cell is revealed");
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move the red ring cursor with up/down/left/right; `interact` reveals the grey square \
             under it. A revealed cell shows a die with as many pips as mines among its 8 neighbours, coloured white, yellow, orange, red for 1, 2, 3, 4+ (none: empty floor); \
             revealing a mine fails. Reveal every safe cell. Text: # hidden, . no neighbouring \
             mine, digit = neighbouring mines.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        let n = 4 + scale;
        n * n + 10
    }
}
