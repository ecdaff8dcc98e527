//! `lights-out`: switch every light off. A cursor moves over the board; `interact` presses
//! the cell under it. Rule 0 toggles the cell and its four neighbours; rule 1 (the
//! `neighbours-only` twin) toggles only the neighbours. Scale 1..=3: 3x3, 4x4, 5x5 boards.
//! The board is generated the same way for both rules (and kept only if both can solve it),
//! so the twins show the same pixels; the solver solves the GF(2) system of its rule.

use envdist_core::{ActionId, ActionMask, Rng};

use super::util::{agent_xy, draw_cursor, step_cursor};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

#[derive(Default)]
pub struct Lights {
    pub(super) rule: u8,
    n: usize,
    /// Bit i = cell i lit.
    lit: u32,
    cursor: (usize, usize),
    /// Presses that switch everything off (bit i = press cell i).
    todo: u32,
}

fn effect(n: usize, i: usize, rule: u8) -> u32 {
    let (x, y) = (i % n, i / n);
    let mut m = if rule == 0 { 1u32 << i } else { 0 };
    if x > 0 {
        m |= 1 << (i - 1);
    }
    if x + 1 < n {
        m |= 1 << (i + 1);
    }
    if y > 0 {
        m |= 1 << (i - n);
    }
    if y + 1 < n {
        m |= 1 << (i + n);
    }
    m
}

/// Minimum-weight press set `x` with `A x = pattern` over GF(2), if one exists.
fn solve(n: usize, rule: u8, pattern: u32) -> Option<u32> {
    let cells = n * n;
    // Rows: equation per cell; columns: press variables (bits) plus the right-hand side.
    let mut rows: Vec<(u32, bool)> = (0..cells)
        .map(|c| {
            let mut coeffs = 0u32;
            for p in 0..cells {
                if effect(n, p, rule) >> c & 1 == 1 {
                    coeffs |= 1 << p;
                }
            }
            (coeffs, pattern >> c & 1 == 1)
        })
        .collect();
    let mut pivots = Vec::new();
    let mut r = 0;
    for col in 0..cells {
        let Some(k) = (r..cells).find(|&k| rows[k].0 >> col & 1 == 1) else {
            continue;
        };
        rows.swap(r, k);
        for k in 0..cells {
            if k != r && rows[k].0 >> col & 1 == 1 {
                rows[k].0 ^= rows[r].0;
                rows[k].1 ^= rows[r].1;
            }
        }
        pivots.push(col);
        r += 1;
    }
    if rows[r..].iter().any(|row| row.1) {
        return None;
    }
    let free: Vec<usize> = (0..cells).filter(|c| !pivots.contains(c)).collect();
    let mut best: Option<u32> = None;
    for mask in 0u32..(1 << free.len().min(10)) {
        let mut x = 0u32;
        for (j, f) in free.iter().enumerate() {
            if mask >> j & 1 == 1 {
                x |= 1 << f;
            }
        }
        for (row, &pc) in pivots.iter().enumerate() {
            let rest = (rows[row].0 & !(1 << pc)) & x;
            if rows[row].1 ^ (rest.count_ones() % 2 == 1) {
                x |= 1 << pc;
            }
        }
        if best.is_none_or(|b| x.count_ones() < b.count_ones()) {
            best = Some(x);
        }
    }
    best
}

impl Lights {
    fn idx(&self) -> usize {
        self.cursor.1 * self.n + self.cursor.0
    }
}

impl Game for Lights {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.n = scale as usize + 2;
        let cells = self.n * self.n;
        loop {
            let mut lit = 0u32;
            for _ in 0..(scale + 1) {
                lit ^= effect(self.n, rng.index(cells), 0);
            }
            self.cursor = (rng.index(self.n), rng.index(self.n));
            if lit == 0 {
                continue;
            }
            let (a, b) = (solve(self.n, 0, lit), solve(self.n, 1, lit));
            if let (Some(a), Some(b)) = (a, b) {
                self.lit = lit;
                self.todo = if self.rule == 0 { a } else { b };
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        if a != ActionId::INTERACT {
            return step_cursor(&mut self.cursor, a, tags);
        }
        let i = self.idx();
        self.lit ^= effect(self.n, i, self.rule);
        // Presses commute and cancel in pairs, so the remaining solution just flips.
        self.todo ^= 1 << i;
        tags.extend(["toggle", "parity-reason"]);
        if self.lit == 0 {
            Status::Won
        } else {
            Status::Running
        }
    }
    fn legal(&self) -> ActionMask {
        super::cursor_moves(self.cursor, self.n).with(ActionId::INTERACT)
    }
    fn oracle(&mut self) -> ActionId {
        if self.todo >> self.idx() & 1 == 1 {
            return ActionId::INTERACT;
        }
        let (cx, cy) = self.cursor;
        let target = (0..self.n * self.n)
            .filter(|i| self.todo >> i & 1 == 1)
            .min_by_key(|i| (i % self.n).abs_diff(cx) + (i / self.n).abs_diff(cy));
        match target {
            None => ActionId::WAIT,
            Some(i) => super::cursor_toward((cx, cy), (i % self.n, i / self.n)),
        }
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.n, self.n, Cell::FLOOR);
        for i in 0..self.n * self.n {
            let on = self.lit >> i & 1 == 1;
            g.cells[i] = if on {
                Cell::solid(Col::Yellow, b'*')
            } else {
                Cell::obj(Shape::Small, Col::Grey, b'.')
            };
        }
        draw_cursor(g, self.idx(), Col::Agent);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.cursor)
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "cursor at ({},{}); {} lights on",
            self.cursor.0,
            self.cursor.1,
            self.lit.count_ones()
        ));
    }
    fn hint(&mut self, out: &mut String) {
        let cells: Vec<String> = (0..self.n * self.n)
            .filter(|i| self.todo >> i & 1 == 1)
            .map(|i| format!("({},{})", i % self.n, i / self.n))
            .collect();
        out.push_str(&format!("press {}", cells.join(" ")));
    }
    fn subgoal(&mut self, out: &mut String) {
        // The action-style extra is already a subgoal (the cells to press), no move.
        self.hint(out);
    }
    fn rules(&self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "Move the white ring cursor with up/down/left/right; `interact` toggles the cell under \
             it AND its four neighbours. Switch every yellow light off. Text: * lit, . off; the \
             cursor position is in the state."
        } else {
            "Move the white ring cursor with up/down/left/right; `interact` toggles ONLY the four \
             neighbours of the cell under it, not the cell itself. Switch every yellow light off. \
             Text: * lit, . off; the cursor position is in the state."
        });
    }
    fn horizon(&self, scale: u32) -> u32 {
        let n = scale + 2;
        n * n * 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gf2_solutions_switch_everything_off() {
        for n in 3..=5 {
            for rule in 0..2u8 {
                for pattern in [1u32, 0b1011, 0x1F0] {
                    if let Some(x) = solve(n, rule, pattern) {
                        let mut lit = pattern;
                        for i in 0..n * n {
                            if x >> i & 1 == 1 {
                                lit ^= effect(n, i, rule);
                            }
                        }
                        assert_eq!(lit, 0, "n={n} rule={rule}");
                    }
                }
            }
        }
    }
}
