//! `pipe-rotation`: a cursor moves over a board of pipe pieces (straights and elbows) and
//! `interact` turns the piece under it a quarter turn clockwise; water runs from the source
//! through pieces whose open ends meet, and the episode is won when it reaches the drain.
//! Scale 1..=3: boards 3x3, 4x4, 5x5, the source and the drain at least a side minus one
//! apart. The solver turns the pieces of the route that needs the fewest quarter turns,
//! nearest piece first.

use envdist_core::{ActionId, ActionMask, Rng};

use super::super::util::{Pos, agent_xy, count_of, step_pos};
use super::super::{cursor_moves, cursor_toward};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

/// Open-side bits of a piece, as [`Shape::Pipe`] reads them.
const N: u8 = 1;
const E: u8 = 2;
const S: u8 = 4;
const W: u8 = 8;
/// The two straights and the four elbows.
const PIECES: [u8; 6] = [N | S, E | W, N | E, E | S, S | W, W | N];
/// Random-walk steps before falling back on an L-shaped route (far more than a walk on 25
/// cells needs to reach the drain; the bound keeps `reset` finite).
const WALK_LIMIT: usize = 100_000;
/// Route extensions the solver's search may try before settling for the best route found
/// (searches on 5x5 boards take a few hundred; the bound keeps a step's time bounded).
const SEARCH_BUDGET: usize = 50_000;

/// The piece turned a quarter clockwise: up becomes right, right down, down left, left up.
fn turned(sides: u8) -> u8 {
    ((sides << 1) | (sides >> 3)) & 15
}

/// The side bit facing a move in direction `a`.
fn side(a: ActionId) -> u8 {
    match a {
        ActionId::UP => N,
        ActionId::DOWN => S,
        ActionId::LEFT => W,
        _ => E,
    }
}

/// The side of `from` that faces `to`, one of its four neighbours.
fn facing(from: Pos, to: Pos) -> u8 {
    match (to.0 as i64 - from.0 as i64, to.1 as i64 - from.1 as i64) {
        (0, -1) => N,
        (1, 0) => E,
        (0, 1) => S,
        _ => W,
    }
}

/// Quarter turns that bring `sides` to `want`, if any.
fn turns_to(sides: u8, want: u8) -> Option<u32> {
    let mut s = sides;
    for k in 0..4 {
        if s == want {
            return Some(k);
        }
        s = turned(s);
    }
    None
}

/// The text character of a piece: the pipe-drawing convention `| - L F 7 J`.
fn piece_char(sides: u8) -> u8 {
    match sides {
        x if x == N | S => b'|',
        x if x == E | W => b'-',
        x if x == N | E => b'L',
        x if x == E | S => b'F',
        x if x == S | W => b'7',
        _ => b'J',
    }
}

#[derive(Default)]
pub struct Pipes {
    n: usize,
    /// Open sides of each cell's piece (0 on the source and the drain).
    pieces: Vec<u8>,
    source: Pos,
    drain: Pos,
    cursor: Pos,
    /// The route the level was made from (source to drain): still a way to win after any
    /// turns, since turning never changes a piece's kind.
    route: Vec<Pos>,
}

impl Pipes {
    fn at(&self, p: Pos) -> usize {
        p.1 * self.n + p.0
    }
    /// Whether water leaving `p` by side `b` enters `q` (the drain takes water from any side).
    fn joins(&self, p: Pos, q: Pos, b: u8) -> bool {
        let out = p == self.source || self.pieces[self.at(p)] & b != 0;
        let into = q == self.drain || self.pieces[self.at(q)] & turned(turned(b)) != 0;
        out && into && q != self.source
    }
    /// The cells water reaches from the source (the source included).
    fn wet(&self) -> Vec<bool> {
        let mut wet = vec![false; self.n * self.n];
        wet[self.at(self.source)] = true;
        let mut stack = vec![self.source];
        while let Some(p) = stack.pop() {
            if p == self.drain {
                continue;
            }
            for a in ActionId::MOVES {
                if let Some(q) = step_pos(p, a, self.n, self.n)
                    && !wet[self.at(q)]
                    && self.joins(p, q, side(a))
                {
                    wet[self.at(q)] = true;
                    stack.push(q);
                }
            }
        }
        wet
    }
    fn solved(&self) -> bool {
        self.wet()[self.at(self.drain)]
    }
    /// The sides a piece on `route` must open to carry water along it.
    fn wanted(route: &[Pos], i: usize) -> u8 {
        facing(route[i], route[i - 1]) | facing(route[i], route[i + 1])
    }
    /// Quarter turns each piece of `route` still needs, or `None` where a piece's kind cannot
    /// carry the route (a straight at a bend).
    fn route_turns(&self, route: &[Pos]) -> Option<Vec<(Pos, u32)>> {
        (1..route.len() - 1)
            .map(|i| {
                turns_to(self.pieces[self.at(route[i])], Self::wanted(route, i))
                    .map(|k| (route[i], k))
            })
            .collect()
    }
    /// The route from the source to the drain that needs the fewest quarter turns: a
    /// depth-first search over routes that go through each cell at most once, each piece
    /// leaving by a side its kind allows (a straight goes on, an elbow bends), bounded by the
    /// best route so far, starting from the level's own route.
    fn best_route(&self) -> Vec<Pos> {
        let cost = |r: &[Pos]| {
            self.route_turns(r)
                .map_or(u32::MAX, |t| t.iter().map(|(_, k)| k).sum())
        };
        let mut best = (cost(&self.route), self.route.clone());
        let mut route = vec![self.source];
        let mut on_route = vec![false; self.n * self.n];
        on_route[self.at(self.source)] = true;
        let mut budget = SEARCH_BUDGET;
        self.extend(&mut route, &mut on_route, 0, &mut best, &mut budget);
        best.1
    }
    fn extend(
        &self,
        route: &mut Vec<Pos>,
        on_route: &mut [bool],
        spent: u32,
        best: &mut (u32, Vec<Pos>),
        budget: &mut usize,
    ) {
        let here = route[route.len() - 1];
        for a in ActionId::MOVES {
            let Some(next) = step_pos(here, a, self.n, self.n) else {
                continue;
            };
            if on_route[self.at(next)] || *budget == 0 {
                continue;
            }
            *budget -= 1;
            // What the piece at `here` costs once the route leaves it toward `next`.
            let step_cost = if here == self.source {
                Some(0)
            } else {
                let from = route[route.len() - 2];
                turns_to(self.pieces[self.at(here)], facing(here, from) | side(a))
            };
            let Some(c) = step_cost.map(|c| spent + c) else {
                continue;
            };
            if c >= best.0 {
                continue;
            }
            route.push(next);
            if next == self.drain {
                *best = (c, route.clone());
            } else {
                on_route[self.at(next)] = true;
                self.extend(route, on_route, c, best, budget);
                on_route[self.at(next)] = false;
            }
            route.pop();
        }
    }
    /// The pieces of the cheapest route that still need turning, with their quarter turns.
    fn todo(&self) -> Vec<(Pos, u32)> {
        let mut t = self.route_turns(&self.best_route()).unwrap_or_default();
        t.retain(|(_, k)| *k > 0);
        t
    }
    /// Of `todo`, the piece to turn next: the nearest (route order breaks ties).
    fn next_piece(&self, todo: &[(Pos, u32)]) -> Option<(Pos, u32)> {
        let d = |p: Pos| p.0.abs_diff(self.cursor.0) + p.1.abs_diff(self.cursor.1);
        todo.iter().copied().min_by_key(|(p, _)| d(*p))
    }
    /// A random route from the source to the drain: a loop-erased random walk.
    fn walk(&self, rng: &mut Rng) -> Vec<Pos> {
        let mut route = vec![self.source];
        for _ in 0..WALK_LIMIT {
            let here = route[route.len() - 1];
            if here == self.drain {
                return route;
            }
            let Some(next) = step_pos(here, ActionId::MOVES[rng.index(4)], self.n, self.n) else {
                continue;
            };
            match route.iter().position(|p| *p == next) {
                Some(i) => route.truncate(i + 1),
                None => route.push(next),
            }
        }
        // Along the source's row, then the drain's column.
        let (s, d) = (self.source, self.drain);
        let xs: Vec<Pos> = if s.0 <= d.0 {
            (s.0..=d.0).map(|x| (x, s.1)).collect()
        } else {
            (d.0..=s.0).rev().map(|x| (x, s.1)).collect()
        };
        let ys: Vec<Pos> = if s.1 <= d.1 {
            (s.1 + 1..=d.1).map(|y| (d.0, y)).collect()
        } else {
            (d.1..s.1).rev().map(|y| (d.0, y)).collect()
        };
        xs.into_iter().chain(ys).collect()
    }
}

impl Game for Pipes {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.n = 2 + scale as usize;
        let n = self.n;
        self.source = (rng.index(n), rng.index(n));
        loop {
            self.drain = (rng.index(n), rng.index(n));
            // A side minus one apart at least, so that every route crosses several pieces.
            let d = self.drain.0.abs_diff(self.source.0) + self.drain.1.abs_diff(self.source.1);
            if d + 1 >= n {
                break;
            }
        }
        self.route = self.walk(rng);
        self.pieces = (0..n * n)
            .map(|_| PIECES[rng.index(PIECES.len())])
            .collect();
        for i in 1..self.route.len() - 1 {
            let at = self.at(self.route[i]);
            self.pieces[at] = Self::wanted(&self.route, i);
        }
        let (s, d) = (self.at(self.source), self.at(self.drain));
        (self.pieces[s], self.pieces[d]) = (0, 0);
        for i in 0..n * n {
            for _ in 0..rng.index(4) {
                self.pieces[i] = turned(self.pieces[i]);
            }
        }
        // A board that starts solved teaches nothing: turn every piece next to the drain until
        // it no longer opens toward it (the source is never next to the drain). The level's
        // route still exists: turning never changes a piece's kind.
        if self.solved() {
            for a in ActionId::MOVES {
                let toward_drain = turned(turned(side(a)));
                if let Some(q) = step_pos(self.drain, a, n, n) {
                    let at = self.at(q);
                    while self.pieces[at] & toward_drain != 0 {
                        self.pieces[at] = turned(self.pieces[at]);
                    }
                }
            }
        }
        self.cursor = self.source;
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        if a == ActionId::INTERACT {
            let before = self.wet().iter().filter(|w| **w).count();
            let at = self.at(self.cursor);
            self.pieces[at] = turned(self.pieces[at]);
            tags.push("tile-rotate");
            if self.wet().iter().filter(|w| **w).count() > before {
                tags.push("pipe-connect");
            }
        } else if let Some(q) = step_pos(self.cursor, a, self.n, self.n) {
            self.cursor = q;
            tags.push("cursor-move");
        }
        if self.solved() {
            Status::Won
        } else {
            Status::Running
        }
    }
    fn legal(&self) -> ActionMask {
        let m = cursor_moves(self.cursor, self.n);
        if self.pieces[self.at(self.cursor)] != 0 {
            m.with(ActionId::INTERACT)
        } else {
            m
        }
    }
    fn oracle(&mut self) -> ActionId {
        match self.next_piece(&self.todo()) {
            Some((p, _)) => cursor_toward(self.cursor, p),
            // Nothing left to turn means solved, which ends the episode; kept total anyway.
            None => self.legal().iter().next().unwrap_or(ActionId::WAIT),
        }
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.n, self.n, Cell::FLOOR);
        let wet = self.wet();
        for y in 0..self.n {
            for x in 0..self.n {
                let i = y * self.n + x;
                let sides = self.pieces[i];
                let mut cell = if (x, y) == self.source {
                    Cell::solid(Col::Blue, b'S')
                } else if (x, y) == self.drain {
                    Cell::solid(Col::Goal, b'G')
                } else {
                    let fg = if wet[i] { Col::Blue } else { Col::Grey };
                    Cell::obj(Shape::Pipe(sides), fg, piece_char(sides))
                };
                if (x, y) == self.cursor {
                    // The cursor lights the cell's ground; on the solid source or drain, whose
                    // ground is their colour, it is a dot.
                    cell = if sides == 0 {
                        Cell {
                            shape: Shape::Small,
                            fg: Col::Agent,
                            ..cell
                        }
                    } else {
                        Cell {
                            base: Col::Agent,
                            ..cell
                        }
                    };
                }
                g.cells[i] = cell;
            }
        }
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.cursor)
    }
    fn state_text(&self, out: &mut String) {
        let wet = self.wet();
        let reached = (0..self.n * self.n)
            .filter(|i| wet[*i] && self.pieces[*i] != 0)
            .count();
        out.push_str(&format!(
            "cursor at ({},{}); source at ({},{}); drain at ({},{}); water runs through {}",
            self.cursor.0,
            self.cursor.1,
            self.source.0,
            self.source.1,
            self.drain.0,
            self.drain.1,
            count_of(reached, "pipe", "pipes")
        ));
    }
    fn hint(&mut self, out: &mut String) {
        self.subgoal(out);
    }
    fn subgoal(&mut self, out: &mut String) {
        // Which piece and how many quarter turns are left, never the move to it.
        let todo = self.todo();
        let left: u32 = todo.iter().map(|(_, k)| k).sum();
        match self.next_piece(&todo) {
            Some((p, k)) => out.push_str(&format!(
                "the pipe at ({},{}) needs {}; {} in all on the cheapest route",
                p.0,
                p.1,
                count_of(k as usize, "quarter turn", "quarter turns"),
                count_of(left as usize, "quarter turn", "quarter turns")
            )),
            None => out.push_str("the water already reaches the drain"),
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move the cursor (the highlighted cell) with up/down/left/right; interact turns the \
             pipe under it a quarter turn clockwise. Water runs from the blue source through \
             pipes whose open ends meet (it turns blue); make it reach the green drain. Text: | \
             - L F 7 J pipes by their open ends (L up and right, F right and down, 7 down and \
             left, J left and up), S source, G drain; (x,y) with y growing downward.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        12 + 10 * scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fewest quarter turns that make the board carry water to the drain, by trying every
    /// orientation of every piece (3x3 boards: 4^7 boards).
    fn fewest_turns_by_brute_force(level: &Pipes) -> u32 {
        let cells: Vec<usize> = (0..level.n * level.n)
            .filter(|i| level.pieces[*i] != 0)
            .collect();
        let mut board = Pipes {
            pieces: level.pieces.clone(),
            route: level.route.clone(),
            ..*level
        };
        let mut best = u32::MAX;
        for code in 0..4u32.pow(cells.len() as u32) {
            let mut spent = 0;
            for (k, i) in cells.iter().enumerate() {
                let turns = code / 4u32.pow(k as u32) % 4;
                spent += turns;
                board.pieces[*i] = (0..turns).fold(level.pieces[*i], |s, _| turned(s));
            }
            if spent < best && board.solved() {
                best = spent;
            }
        }
        best
    }

    #[test]
    fn the_solver_turns_as_few_pieces_as_any_solution_needs() {
        for seed in 0..40 {
            let mut level = Pipes::default();
            level.reset(&mut Rng::seed_from_u64(seed), 1);
            let route = level.best_route();
            let turns: u32 = level.route_turns(&route).unwrap().iter().map(|t| t.1).sum();
            assert_eq!(turns, fewest_turns_by_brute_force(&level), "seed {seed}");
            assert!(!level.solved(), "seed {seed}: the board starts solved");
        }
    }

    #[test]
    fn a_piece_turns_clockwise_and_back_after_four_turns() {
        assert_eq!(turned(N | E), E | S);
        assert_eq!(turned(W | N), N | E);
        assert_eq!(turned(turned(N | S)), N | S);
        for p in PIECES {
            assert_eq!((0..4).fold(p, |s, _| turned(s)), p);
            let straight = p == N | S || p == E | W;
            let back = turned(turned(turned(p)));
            assert_eq!(turns_to(p, back), Some(if straight { 1 } else { 3 }));
        }
        assert_eq!(turns_to(N | S, N | E), None);
    }
}
