//! Held-out families (never in the pool): their abilities overlap the pool's only partly,
//! as unseen benchmarks do.

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Rng};

use super::maze::{AGENT, GOAL};
use super::single::{answer_action, judge, numbers};
use super::util::{
    Pos, agent_xy, bfs_to, draw_room, first_move_to, flood, inside_walls, move_mask, random_cells,
    step_pos, won_at_goal,
};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, OBJECT_COL_NAMES, OBJECT_COLS, Shape};

// ---------------------------------------------------------------- frozen-lake

/// The agent standing on ice (frozen-lake, ice-slide).
pub(super) const AGENT_ON_ICE: Cell = Cell {
    base: Col::Cyan,
    ..AGENT
};

/// `frozen-lake`: cross slippery ice to the goal without falling into a hole. Each move fails
/// (you stay put) with probability 0.25. Scale 1..=3: sides 6, 7, 8 with 2, 4, 6 holes.
#[derive(Default)]
pub struct Frozen {
    n: usize,
    holes: Vec<bool>,
    agent: Pos,
    goal: Pos,
}

impl Frozen {
    fn inside(&self, p: Pos) -> bool {
        inside_walls(p, self.n, self.n)
    }
    fn safe(&self, p: Pos) -> bool {
        self.inside(p) && !self.holes[p.1 * self.n + p.0]
    }
}

impl Game for Frozen {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.n = 5 + scale as usize;
        let n = self.n;
        loop {
            let cells = random_cells(n, n, 2 + 2 * scale as usize, rng, |p| inside_walls(p, n, n));
            self.agent = cells[0];
            self.goal = cells[1];
            self.holes = vec![false; n * n];
            for h in &cells[2..] {
                self.holes[h.1 * n + h.0] = true;
            }
            let seen = flood(n, n, self.agent, |p| self.safe(p));
            let d = self.agent.0.abs_diff(self.goal.0) + self.agent.1.abs_diff(self.goal.1);
            if seen[self.goal.1 * n + self.goal.0] && d >= 2 {
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.push("navigate");
        if rng.chance(0.25) {
            tags.push("slip-adapt");
            return Status::Running;
        }
        if let Some(q) = step_pos(self.agent, a, self.n, self.n) {
            self.agent = q;
        }
        if self.holes[self.agent.1 * self.n + self.agent.0] {
            return Status::Lost;
        }
        if move_mask(self.agent, self.n, self.n, |q| {
            self.holes[q.1 * self.n + q.0]
        })
        .count()
            > 0
        {
            tags.push("hole-avoid");
        }
        won_at_goal(self.agent, self.goal, tags)
    }
    fn legal(&self) -> ActionMask {
        move_mask(self.agent, self.n, self.n, |q| self.inside(q))
    }
    fn oracle(&mut self) -> ActionId {
        first_move_to(self.n, self.agent, |q| self.safe(q), self.goal)
    }
    fn draw(&self, g: &mut Grid) {
        draw_room(g, self.n, |(x, y)| {
            if self.holes[y * self.n + x] {
                Cell::solid(Col::Dark, b'O')
            } else {
                Cell::solid(Col::Cyan, b'.')
            }
        });
        g.set(self.goal.0, self.goal.1, GOAL);
        g.set(self.agent.0, self.agent.1, AGENT_ON_ICE);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        super::maze::agent_goal_text(self.agent, self.goal, out);
    }
    fn subgoal(&mut self, out: &mut String) {
        match bfs_to(self.n, self.agent, |q| self.safe(q), self.goal) {
            Some((_, d)) => out.push_str(&format!("the goal is {d} steps away around the holes")),
            None => out.push_str("the holes cut the goal off"),
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move with up/down/left/right over the cyan ice to the green goal. The ice is \
             slippery: a move sometimes does nothing. Falling into a dark hole fails. Text: # \
             wall, . ice, O hole, A you, G goal.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        20 + 10 * scale
    }
}

// ---------------------------------------------------------------- connect-three

/// `connect-three` against a scripted opponent on a 4x4 board with gravity: `answer_k` drops
/// your red piece into column k. Three in a row (any direction) wins; a draw counts as
/// success. Scale 1..=2: the opponent plays randomly, or wins/blocks when it can.
/// Solver: depth-limited negamax.
#[derive(Default)]
pub struct Connect3 {
    level: u32,
    /// Row-major from the top, 0 empty, 1 you, 2 opponent.
    b: [u8; 16],
}

const C: usize = 4;

fn c3_line(b: &[u8; 16], p: u8) -> bool {
    for y in 0..C as i32 {
        for x in 0..C as i32 {
            for (dx, dy) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
                let ok = (0..3).all(|k| {
                    let (a, c) = (x + dx * k, y + dy * k);
                    a >= 0
                        && c >= 0
                        && a < C as i32
                        && c < C as i32
                        && b[(c as usize) * C + a as usize] == p
                });
                if ok {
                    return true;
                }
            }
        }
    }
    false
}

fn c3_drop(b: &[u8; 16], col: usize, p: u8) -> Option<[u8; 16]> {
    (0..C).rev().find(|y| b[y * C + col] == 0).map(|y| {
        let mut c = *b;
        c[y * C + col] = p;
        c
    })
}

fn negamax(b: &[u8; 16], p: u8, depth: u32) -> i32 {
    if c3_line(b, 3 - p) {
        return -100 - depth as i32;
    }
    if depth == 0 || b.iter().all(|c| *c != 0) {
        return 0;
    }
    (0..C)
        .filter_map(|col| c3_drop(b, col, p))
        .map(|c| -negamax(&c, 3 - p, depth - 1))
        .max()
        .unwrap_or(0)
}

impl Connect3 {
    fn status(&self) -> Status {
        if c3_line(&self.b, 1) {
            Status::Won
        } else if c3_line(&self.b, 2) {
            Status::Lost
        } else if self.b.iter().all(|c| *c != 0) {
            Status::Won
        } else {
            Status::Running
        }
    }
}

impl Game for Connect3 {
    fn reset(&mut self, _rng: &mut Rng, scale: u32) {
        self.level = scale;
        self.b = [0; 16];
    }
    fn step(&mut self, a: ActionId, rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        let Some(next) = a
            .answer_value()
            .and_then(|k| (k < C).then(|| c3_drop(&self.b, k, 1)).flatten())
        else {
            return Status::Running;
        };
        tags.extend(["gravity-drop", "turn-take"]);
        let col = a.answer_value().unwrap_or(0);
        if c3_drop(&self.b, col, 2).is_some_and(|o| c3_line(&o, 2)) {
            tags.push("block-threat");
        }
        self.b = next;
        if c3_line(&self.b, 1) {
            tags.push("line-build");
        }
        if self.status() != Status::Running {
            return self.status();
        }
        let cols: Vec<usize> = (0..C).filter(|c| self.b[*c] == 0).collect();
        let random = cols[rng.index(cols.len())];
        let pick = if self.level >= 2 {
            let win = |p: u8| {
                cols.iter()
                    .copied()
                    .find(|c| c3_drop(&self.b, *c, p).is_some_and(|o| c3_line(&o, p)))
            };
            win(2).or_else(|| win(1)).unwrap_or(random)
        } else {
            random
        };
        if let Some(o) = c3_drop(&self.b, pick, 2) {
            self.b = o;
        }
        self.status()
    }
    fn legal(&self) -> ActionMask {
        let mut m = ActionMask::NONE;
        for c in 0..C {
            if self.b[c] == 0
                && let Some(a) = ActionId::answer(c)
            {
                m = m.with(a);
            }
        }
        m
    }
    fn oracle(&mut self) -> ActionId {
        let mut best = (i32::MIN, 0);
        for col in [1, 2, 0, 3] {
            if let Some(c) = c3_drop(&self.b, col, 1) {
                let v = -negamax(&c, 2, 6);
                if v > best.0 {
                    best = (v, col);
                }
            }
        }
        answer_action(best.1)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(C, C, Cell::FLOOR);
        for (i, v) in self.b.iter().enumerate() {
            g.cells[i] = match v {
                1 => Cell::obj(Shape::Circle, Col::Red, b'X'),
                2 => Cell::obj(Shape::Circle, Col::Yellow, b'O'),
                _ => Cell::obj(Shape::Small, Col::Grey, b'.'),
            };
        }
    }
    fn state_text(&self, out: &mut String) {
        let heights: Vec<String> = (0..C)
            .map(|c| {
                (0..C)
                    .filter(|y| self.b[y * C + c] != 0)
                    .count()
                    .to_string()
            })
            .collect();
        out.push_str(&format!("column heights {}; your move", heights.join(",")));
    }
    fn subgoal(&mut self, out: &mut String) {
        // Which side can complete a line with one more disc, not in which column.
        let open = |p: u8| (0..C).any(|c| c3_drop(&self.b, c, p).is_some_and(|o| c3_line(&o, p)));
        out.push_str(match (open(1), open(2)) {
            (true, true) => "a line of yours and a line of the opponent's each need one more disc",
            (true, false) => "a line of yours needs one more disc",
            (false, true) => "a line of the opponent's needs one more disc",
            (false, false) => "no line is one disc from complete",
        });
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "You drop red discs, the opponent yellow ones, into a 4x4 board with gravity. \
             answer_k drops into column k (0..3, left to right). Three in a row in any direction \
             wins; a full board (draw) also counts as success. Text: X you, O opponent, . empty.",
        );
    }
    fn horizon(&self, _: u32) -> u32 {
        10
    }
}

// ---------------------------------------------------------------- memory-pairs

/// `memory-pairs`: cards lie face down; `answer_k` turns card k. Two turned cards of the same
/// colour stay up; otherwise both turn back on the next turn. Match every pair. Scale =
/// pairs, 2..=6. The solver remembers only what it has seen.
#[derive(Default)]
pub struct Memory {
    cards: Vec<usize>,
    up: Vec<bool>,
    seen: Vec<bool>,
    /// Cards turned this round (not yet matched).
    turned: Vec<usize>,
    w: usize,
}

impl Memory {
    fn pick(&self) -> usize {
        let hidden = |i: &usize| !self.up[*i] && !self.turned.contains(i);
        if let Some(&first) = self.turned.first() {
            // Second card: the remembered partner, else an unseen card.
            return (0..self.cards.len())
                .filter(hidden)
                .find(|i| self.seen[*i] && self.cards[*i] == self.cards[first])
                .or_else(|| {
                    (0..self.cards.len())
                        .filter(hidden)
                        .find(|i| !self.seen[*i])
                })
                .or_else(|| (0..self.cards.len()).find(hidden))
                .unwrap_or(0);
        }
        // First card: half of a known pair, else an unseen card.
        for i in (0..self.cards.len())
            .filter(hidden)
            .filter(|i| self.seen[*i])
        {
            if (0..self.cards.len())
                .any(|j| j != i && hidden(&j) && self.seen[j] && self.cards[j] == self.cards[i])
            {
                return i;
            }
        }
        (0..self.cards.len())
            .filter(hidden)
            .find(|i| !self.seen[*i])
            .or_else(|| (0..self.cards.len()).find(hidden))
            .unwrap_or(0)
    }
}

impl Game for Memory {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let pairs = scale as usize;
        self.cards = (0..2 * pairs).map(|i| i / 2).collect();
        rng.shuffle(&mut self.cards);
        self.up = vec![false; 2 * pairs];
        self.seen = vec![false; 2 * pairs];
        self.turned.clear();
        self.w = if pairs <= 2 {
            2
        } else if pairs <= 4 {
            3
        } else {
            4
        };
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        let Some(k) = a.answer_value().filter(|k| *k < self.cards.len()) else {
            return Status::Running;
        };
        if self.turned.len() == 2 {
            self.turned.clear();
        }
        if self.up[k] || self.turned.contains(&k) {
            return Status::Running;
        }
        if self.seen[k] {
            tags.push("memory-recall");
        }
        self.seen[k] = true;
        self.turned.push(k);
        if self.turned.len() == 2 {
            let (i, j) = (self.turned[0], self.turned[1]);
            if self.cards[i] == self.cards[j] {
                self.up[i] = true;
                self.up[j] = true;
                self.turned.clear();
                tags.push("card-match");
                if self.up.iter().all(|u| *u) {
                    return Status::Won;
                }
            }
        }
        Status::Running
    }
    fn legal(&self) -> ActionMask {
        let mut m = ActionMask::NONE;
        for i in 0..self.cards.len() {
            let open_now = self.turned.len() < 2 && self.turned.contains(&i);
            if !self.up[i]
                && !open_now
                && let Some(a) = ActionId::answer(i)
            {
                m = m.with(a);
            }
        }
        m
    }
    fn oracle(&mut self) -> ActionId {
        let saved = self.turned.clone();
        if self.turned.len() == 2 {
            self.turned.clear();
        }
        let k = self.pick();
        self.turned = saved;
        answer_action(k)
    }
    fn draw(&self, g: &mut Grid) {
        let h = self.cards.len().div_ceil(self.w);
        g.reset(self.w, h.max(self.w), Cell::FLOOR);
        for (i, c) in self.cards.iter().enumerate() {
            let face = self.up[i] || self.turned.contains(&i);
            g.cells[i] = if face {
                Cell::obj(Shape::Full, OBJECT_COLS[*c], b'a' + *c as u8)
            } else {
                Cell::obj(Shape::Full, Col::Grey, b'?')
            };
        }
    }
    fn state_text(&self, out: &mut String) {
        let m = self.up.iter().filter(|u| **u).count() / 2;
        out.push_str(&format!(
            "{m} of {} pairs matched; {} cards face up this turn",
            self.cards.len() / 2,
            self.turned.len()
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        // Whether memory already holds a match, never which card: that would be the action.
        // Two unmatched cards turned this round count as hidden (they turn back next).
        let open_one = (self.turned.len() == 1).then(|| self.turned[0]);
        let hidden = |i: usize| !self.up[i] && Some(i) != open_one;
        let seen_match = |i: usize| {
            (0..self.cards.len())
                .any(|j| j != i && hidden(j) && self.seen[j] && self.cards[j] == self.cards[i])
        };
        out.push_str(match open_one {
            Some(k) if seen_match(k) => "you have seen the partner of the turned card",
            Some(_) => "the partner of the turned card is still unseen",
            None if (0..self.cards.len()).any(|i| hidden(i) && self.seen[i] && seen_match(i)) => {
                "you have seen both cards of a hidden pair"
            }
            None => "no hidden pair is fully seen yet; try an unseen card",
        });
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "Cards 0..{} lie face down (grey), numbered in reading order. answer_k turns card k. \
             Two turned cards of one colour stay up; otherwise they turn back on your next turn. \
             Match every pair. Text: ? face down, letters are colours ({}).",
            self.cards.len() - 1,
            (0..self.cards.len() / 2)
                .map(|c| format!("{} {}", (b'a' + c as u8) as char, OBJECT_COL_NAMES[c]))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    fn horizon(&self, scale: u32) -> u32 {
        8 * scale + 4
    }
}

// ---------------------------------------------------------------- shape-arithmetic

/// `shape-arithmetic` (single-turn): how many more discs than squares are there? Scale =
/// objects, 3..=9 (discs always at least as many as squares).
#[derive(Default)]
pub struct Arith {
    objs: Vec<(Pos, bool, Col)>,
}

impl Arith {
    fn counts(&self) -> (usize, usize) {
        let discs = self.objs.iter().filter(|o| o.1).count();
        (discs, self.objs.len() - discs)
    }
}

impl Game for Arith {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        let squares = rng.index(n / 2 + 1);
        let cells = random_cells(4, 4, n, rng, |_| true);
        self.objs = cells
            .into_iter()
            .enumerate()
            .map(|(i, p)| (p, i >= squares, OBJECT_COLS[rng.index(4)]))
            .collect();
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["count", "subtract", "compare-shape"]);
        let (d, s) = self.counts();
        judge(a, d - s)
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.objs.len() + 1)
    }
    fn oracle(&mut self) -> ActionId {
        let (d, s) = self.counts();
        answer_action(d - s)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(4, 4, Cell::FLOOR);
        for (p, disc, c) in &self.objs {
            let cell = if *disc {
                Cell::obj(Shape::Circle, *c, b'o')
            } else {
                Cell::obj(Shape::Full, *c, b's')
            };
            g.set(p.0, p.1, cell);
        }
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!("{} objects on a 4x4 board", self.objs.len()));
    }
    fn hint(&mut self, out: &mut String) {
        let (d, s) = self.counts();
        out.push_str(&format!("{d} discs - {s} squares = {}", d - s));
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str("count the discs, count the squares, then take the difference");
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "answer_k means there are k more discs than squares (k from 0 to {}); colours do not \
             matter. Text: o disc, s square, . empty.",
            self.objs.len()
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        numbers(out);
    }
}
