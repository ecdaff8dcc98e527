//! `path-length` (single-turn): how many steps long is the orange path from the white start
//! to the green end? Short side branches lead nowhere and do not count. Scale 1..=3: boards
//! 5x5, 6x6, 7x7 with paths of 3..=6, 6..=10, 9..=15 steps and 1, 2, 3 side branches.

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Rng};

use super::super::single::{answer_action, judge, numbers};
use super::super::util::{Pos, bfs_to, step_pos};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

/// Walks tried per level before settling for the longest one (a bound that keeps `reset`
/// finite; a walk of the wanted length turns up within a few tries at these sizes).
const TRIES: usize = 200;
/// Places tried per side branch before leaving it out.
const BRANCH_TRIES: usize = 20;

/// Path lengths in steps at `scale` (inclusive).
fn lengths(scale: u32) -> (u32, u32) {
    match scale {
        1 => (3, 6),
        2 => (6, 10),
        _ => (9, 15),
    }
}

#[derive(Default)]
pub struct PathLength {
    n: usize,
    scale: u32,
    /// Path and branch cells.
    track: Vec<bool>,
    start: Pos,
    end: Pos,
}

impl PathLength {
    fn on(&self, p: Pos) -> bool {
        self.track[p.1 * self.n + p.0]
    }
    /// Whether `q` can join the track next to `from` without touching any other track cell,
    /// so that the track never runs side by side with itself and the path stays one line.
    fn free_beside(&self, q: Pos, from: Pos) -> bool {
        !self.on(q)
            && ActionId::MOVES
                .into_iter()
                .filter_map(|a| step_pos(q, a, self.n, self.n))
                .all(|r| r == from || !self.on(r))
    }
    /// Steps from the start to the end along the track: the answer.
    fn answer(&self) -> usize {
        bfs_to(self.n, self.start, |p| self.on(p), self.end).map_or(0, |(_, d)| d as usize)
    }
    /// A self-avoiding walk of up to `steps` steps from a random cell, as track cells.
    fn walk(&mut self, rng: &mut Rng, steps: u32) -> Vec<Pos> {
        self.track = vec![false; self.n * self.n];
        let mut path = vec![(rng.index(self.n), rng.index(self.n))];
        self.track[path[0].1 * self.n + path[0].0] = true;
        for _ in 0..steps {
            let here = path[path.len() - 1];
            let options: Vec<Pos> = ActionId::MOVES
                .into_iter()
                .filter_map(|a| step_pos(here, a, self.n, self.n))
                .filter(|q| self.free_beside(*q, here))
                .collect();
            let Some(&next) = rng.choose(&options) else {
                break;
            };
            self.track[next.1 * self.n + next.0] = true;
            path.push(next);
        }
        path
    }
}

impl Game for PathLength {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.scale = scale;
        self.n = 4 + scale as usize;
        let (lo, hi) = lengths(scale);
        let want = rng.range_inclusive(lo, hi);
        let mut best: Vec<Pos> = Vec::new();
        for _ in 0..TRIES {
            let path = self.walk(rng, want);
            if path.len() > best.len() {
                best = path;
            }
            if best.len() > want as usize {
                break;
            }
        }
        self.track = vec![false; self.n * self.n];
        for p in &best {
            self.track[p.1 * self.n + p.0] = true;
        }
        self.start = best[0];
        self.end = best[best.len() - 1];
        // Side branches of one or two cells off the path's inner cells (never its ends, which
        // would no longer look like ends).
        for _ in 0..scale {
            for _ in 0..BRANCH_TRIES {
                if best.len() < 3 {
                    break;
                }
                let mut from = best[1 + rng.index(best.len() - 2)];
                let a = ActionId::MOVES[rng.index(4)];
                let cells = 1 + rng.index(2);
                let mut grown = 0;
                while grown < cells {
                    match step_pos(from, a, self.n, self.n).filter(|q| self.free_beside(*q, from)) {
                        Some(q) => {
                            self.track[q.1 * self.n + q.0] = true;
                            from = q;
                            grown += 1;
                        }
                        None => break,
                    }
                }
                if grown > 0 {
                    break;
                }
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["path-trace", "measure-length"]);
        judge(a, self.answer())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(lengths(self.scale).1 as usize + 1)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.n, self.n, Cell::FLOOR);
        let track = Cell {
            base: Col::Orange,
            shape: Shape::Small,
            fg: Col::Dark,
            ch: b'o',
        };
        for y in 0..self.n {
            for x in 0..self.n {
                if self.on((x, y)) {
                    g.set(x, y, track);
                }
            }
        }
        let end = |fg, ch| Cell {
            shape: Shape::Circle,
            fg,
            ch,
            ..track
        };
        g.set(self.start.0, self.start.1, end(Col::White, b'S'));
        g.set(self.end.0, self.end.1, end(Col::Green, b'E'));
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "start at ({},{}); end at ({},{}); {} track cells on a {}x{} board",
            self.start.0,
            self.start.1,
            self.end.0,
            self.end.1,
            self.track.iter().filter(|t| **t).count(),
            self.n,
            self.n
        ));
    }
    fn hint(&mut self, out: &mut String) {
        out.push_str(&format!(
            "the path from the start to the end is {} steps long",
            self.answer()
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str(
            "follow the path from the white start to the green end and count its steps; side \
             branches do not count",
        );
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "An orange path joins the white start S to the green end E; short side branches lead \
             nowhere. answer_k means the path from S to E is k steps long, a step being a move \
             to the next cell (k from 0 to {}). Text: o path, S start, E end, . empty; (x,y) \
             with y growing downward.",
            lengths(self.scale).1
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        numbers(out);
    }
}
