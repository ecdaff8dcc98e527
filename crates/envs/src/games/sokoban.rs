//! `sokoban`: push every box onto a target. Scale = boxes, 1..=3 (room interior 5x5, 6x6,
//! 6x6). Levels are made by pulling boxes off their targets at random (so every level is
//! solvable); the solver is a breadth-first search over (agent, boxes), planned once and
//! replanned when the state leaves the plan. A level's plans are kept by the state they start
//! from: an agent that wanders (a policy's exploration, the sub-H4 hints' plan length on every
//! step) comes back to states it has left, and a search costs up to the whole state space.

use std::collections::{HashMap, HashSet, VecDeque};

use envdist_core::{ActionId, ActionMask, Rng};

use super::maze::AGENT;
use super::util::{PackedStateHash, Pos, agent_xy, count_of, step_pos};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

const BOX: Cell = Cell::obj(Shape::Full, Col::Orange, b'$');
const BOX_ON: Cell = Cell::obj(Shape::Full, Col::Green, b'*');
const TARGET: Cell = Cell::obj(Shape::Ring, Col::Green, b'o');

#[derive(Default, Clone)]
pub struct Sokoban {
    n: usize,
    walls: Vec<bool>,
    targets: Vec<Pos>,
    boxes: Vec<Pos>,
    agent: Pos,
    plan: Vec<ActionId>,
    plan_state: Option<(Pos, Vec<Pos>)>,
    /// The solver's plan (reversed, next action last) from every packed state it was asked
    /// about on this level: the search is a function of the level and the state alone, so a
    /// kept plan is the plan a new search would return.
    plans: HashMap<u32, Vec<ActionId>, PackedStateHash>,
    /// The states a search proved unsolvable on this level. A deadlocked room is where a
    /// search costs most (every reachable state), and the agent's next moves stay in it.
    deadlocked: HashSet<u32, PackedStateHash>,
}

type State = (Pos, Vec<Pos>);

impl Sokoban {
    fn wall(&self, p: Pos) -> bool {
        self.walls[p.1 * self.n + p.0]
    }
    /// Result of moving `a` from `s`, or None if blocked.
    fn apply(&self, s: &State, a: ActionId) -> Option<(State, bool)> {
        let q = step_pos(s.0, a, self.n, self.n)?;
        if self.wall(q) {
            return None;
        }
        if let Some(i) = s.1.iter().position(|b| *b == q) {
            let r = step_pos(q, a, self.n, self.n)?;
            if self.wall(r) || s.1.contains(&r) {
                return None;
            }
            let mut boxes = s.1.clone();
            boxes[i] = r;
            boxes.sort();
            return Some(((q, boxes), true));
        }
        Some(((q, s.1.clone()), false))
    }
    /// The solver's key of the current state: agent cell and sorted box cells, 6 bits each.
    fn packed_state(&self) -> u32 {
        let n = self.n;
        let mut boxes: Vec<usize> = self.boxes.iter().map(|b| b.1 * n + b.0).collect();
        pack(self.agent.1 * n + self.agent.0, &mut boxes)
    }
    fn solved(&self, boxes: &[Pos]) -> bool {
        boxes.iter().all(|b| self.targets.contains(b))
    }
    /// Breadth-first search over packed states (agent cell and sorted box cells, 6 bits
    /// each, so a state is one `u32`) for the plan, first action first.
    fn solve(&self) -> Search {
        let n = self.n;
        let k = self.boxes.len();
        let unpack = |s: u32| -> (usize, [usize; 3]) {
            let mut b = [usize::MAX; 3];
            for (i, slot) in b.iter_mut().enumerate().take(k) {
                *slot = (s >> (6 * (i + 1)) & 63) as usize;
            }
            ((s & 63) as usize, b)
        };
        let targets: Vec<usize> = self.targets.iter().map(|t| t.1 * n + t.0).collect();
        let start = self.packed_state();
        let mut prev: HashMap<u32, (u32, u8), PackedStateHash> =
            HashMap::with_capacity_and_hasher(4096, PackedStateHash::default());
        prev.insert(start, (start, 255));
        let mut queue = VecDeque::from([start]);
        let steps: [(ActionId, i32, i32); 4] = [
            (ActionId::UP, 0, -1),
            (ActionId::DOWN, 0, 1),
            (ActionId::LEFT, -1, 0),
            (ActionId::RIGHT, 1, 0),
        ];
        while let Some(s) = queue.pop_front() {
            let (agent, boxes) = unpack(s);
            let boxes = &boxes[..k];
            if boxes.iter().all(|b| targets.contains(b)) {
                let mut plan = Vec::new();
                let mut cur = s;
                while cur != start {
                    let (p, a) = prev[&cur];
                    plan.push(ActionId::MOVES[a as usize]);
                    cur = p;
                }
                plan.reverse();
                return Search::Plan(plan);
            }
            if prev.len() > 400_000 {
                return Search::GaveUp;
            }
            let (ax, ay) = ((agent % n) as i32, (agent / n) as i32);
            for (ai, (_, dx, dy)) in steps.iter().enumerate() {
                let q = ((ay + dy) as usize) * n + (ax + dx) as usize;
                if self.walls[q] {
                    continue;
                }
                let mut nb = [0usize; 3];
                nb[..k].copy_from_slice(boxes);
                if let Some(bi) = boxes.iter().position(|b| *b == q) {
                    let r = ((ay + 2 * dy) as usize) * n + (ax + 2 * dx) as usize;
                    if self.walls[r] || boxes.contains(&r) {
                        continue;
                    }
                    nb[bi] = r;
                }
                let t = pack(q, &mut nb[..k]);
                if let std::collections::hash_map::Entry::Vacant(e) = prev.entry(t) {
                    e.insert((s, ai as u8));
                    queue.push_back(t);
                }
            }
        }
        Search::Deadlocked(prev.into_keys().collect())
    }
}

/// What one search found.
enum Search {
    Plan(Vec<ActionId>),
    /// Every state reachable from the start, none solved: each of them is deadlocked too (what
    /// it reaches, the start reaches).
    Deadlocked(Vec<u32>),
    /// The search stopped at its state cap (never on today's rooms: at most 36 free cells and
    /// 3 boxes, 257,040 states).
    GaveUp,
}

/// A state as one `u32`: the agent's cell, then the box cells sorted, 6 bits each.
fn pack(agent: usize, boxes: &mut [usize]) -> u32 {
    boxes.sort_unstable();
    boxes.iter().enumerate().fold(agent as u32, |acc, (i, b)| {
        acc | (*b as u32) << (6 * (i + 1))
    })
}

impl Game for Sokoban {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let k = scale as usize;
        self.n = if k == 1 { 7 } else { 8 };
        let n = self.n;
        loop {
            self.walls = (0..n * n)
                .map(|i| {
                    let (x, y) = (i % n, i / n);
                    x == 0 || y == 0 || x == n - 1 || y == n - 1
                })
                .collect();
            // One or two interior wall blocks make routes matter.
            for _ in 0..rng.index(3) {
                let (x, y) = (2 + rng.index(n - 4), 2 + rng.index(n - 4));
                self.walls[y * n + x] = true;
            }
            let free: Vec<Pos> = (0..n * n)
                .map(|i| (i % n, i / n))
                .filter(|p| !self.wall(*p))
                .collect();
            let mut cells = free.clone();
            rng.shuffle(&mut cells);
            self.targets = cells[..k].to_vec();
            self.boxes = self.targets.clone();
            self.agent = cells[k];
            // Reverse play: the agent walks and pulls boxes off the targets.
            for _ in 0..(30 + 20 * k) {
                let a = ActionId::MOVES[rng.index(4)];
                let Some(q) = step_pos(self.agent, a, n, n) else {
                    continue;
                };
                if self.wall(q) || self.boxes.contains(&q) {
                    continue;
                }
                let back = match a {
                    ActionId::UP => ActionId::DOWN,
                    ActionId::DOWN => ActionId::UP,
                    ActionId::LEFT => ActionId::RIGHT,
                    _ => ActionId::LEFT,
                };
                let behind = step_pos(self.agent, back, n, n);
                let pull = rng.chance(0.6);
                if let Some(b) = behind
                    && pull
                    && let Some(i) = self.boxes.iter().position(|x| *x == b)
                {
                    self.boxes[i] = self.agent;
                }
                self.agent = q;
            }
            let off = self
                .boxes
                .iter()
                .filter(|b| !self.targets.contains(b))
                .count();
            if off >= k.min(2) {
                self.plan.clear();
                self.plan_state = None;
                self.plans.clear();
                self.deadlocked.clear();
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        let s = (self.agent, self.boxes.clone());
        let mut sorted = self.boxes.clone();
        sorted.sort();
        let here = (self.agent, sorted);
        if self.plan.last() == Some(&a) && self.plan_state.as_ref() == Some(&here) {
            self.plan.pop();
            self.plan_state = self.apply(&here, a).map(|(t, _)| t);
        } else {
            self.plan_state = None;
        }
        if let Some(((q, _), pushed)) = self.apply(&s, a) {
            if pushed {
                let r = step_pos(q, a, self.n, self.n).unwrap_or(q);
                let i = self.boxes.iter().position(|b| *b == q).unwrap_or(0);
                self.boxes[i] = r;
                tags.push("push");
                if self.targets.contains(&r) {
                    tags.push("box-on-target");
                }
            } else {
                tags.push("push-plan");
            }
            self.agent = q;
        }
        if self.solved(&self.boxes) {
            Status::Won
        } else {
            Status::Running
        }
    }
    fn legal(&self) -> ActionMask {
        let s = (self.agent, self.boxes.clone());
        let mut m = ActionMask::NONE;
        for a in ActionId::MOVES {
            if self.apply(&s, a).is_some() {
                m = m.with(a);
            }
        }
        m
    }
    fn oracle(&mut self) -> ActionId {
        let mut boxes = self.boxes.clone();
        boxes.sort();
        let here = (self.agent, boxes);
        // The plan is stored reversed (next action last) with the state it starts from; any
        // other state (a non-solver action was taken) triggers a replan.
        if self.plan_state.as_ref() != Some(&here) || self.plan.is_empty() {
            let key = self.packed_state();
            self.plan = if let Some(plan) = self.plans.get(&key) {
                plan.clone()
            } else if self.deadlocked.contains(&key) {
                Vec::new()
            } else {
                match self.solve() {
                    Search::Plan(mut plan) => {
                        plan.reverse();
                        self.plans.insert(key, plan.clone());
                        plan
                    }
                    Search::Deadlocked(states) => {
                        self.deadlocked.extend(states);
                        Vec::new()
                    }
                    Search::GaveUp => Vec::new(),
                }
            };
            self.plan_state = Some(here);
        }
        self.plan.last().copied().unwrap_or(ActionId::WAIT)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.n, self.n, Cell::FLOOR);
        for (i, w) in self.walls.iter().enumerate() {
            if *w {
                g.cells[i] = Cell::WALL;
            }
        }
        for t in &self.targets {
            g.set(t.0, t.1, TARGET);
        }
        for b in &self.boxes {
            g.set(
                b.0,
                b.1,
                if self.targets.contains(b) {
                    BOX_ON
                } else {
                    BOX
                },
            );
        }
        g.set(self.agent.0, self.agent.1, AGENT);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        let list = |v: &[Pos]| {
            v.iter()
                .map(|p| format!("({},{})", p.0, p.1))
                .collect::<Vec<_>>()
                .join(" ")
        };
        out.push_str(&format!(
            "agent at ({},{}); boxes at {}; targets at {}",
            self.agent.0,
            self.agent.1,
            list(&self.boxes),
            list(&self.targets)
        ));
    }
    fn hint(&mut self, out: &mut String) {
        let left = self
            .boxes
            .iter()
            .filter(|b| !self.targets.contains(b))
            .count();
        out.push_str(&format!(
            "{left} boxes still off target; {} moves to solve",
            self.plan.len()
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        // The plan length needs a plan for this state; the solver replans only if stale.
        self.oracle();
        let left = self
            .boxes
            .iter()
            .filter(|b| !self.targets.contains(b))
            .count();
        out.push_str(&count_of(left, "box", "boxes"));
        out.push_str(&format!(
            " still off target; {} moves to solve",
            self.plan.len()
        ));
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move with up/down/left/right; walking into an orange box pushes it one cell if the \
             cell behind it is free. Boxes cannot be pulled. Put every box on a green ring \
             target (it turns green). Text: # wall, . floor, $ box, * box on target, o target, A you.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        10 + 20 * scale
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::ask_twins_then_move;
    use super::*;

    /// The kept plans and deadlocked states change no answer: along random walks (which
    /// deadlock rooms and come back to states they left), every oracle action and hint equals
    /// the one of a twin that forgets both before each question, as the solver did before it
    /// kept them. Both twins are asked at every step, so both follow the same plan states.
    #[test]
    fn kept_plans_and_deadlocks_answer_as_a_new_search_would() {
        let (mut reused, mut deadlock_hits) = (0, 0);
        for seed in 0..24u64 {
            let mut rng = Rng::seed_from_u64(seed);
            let mut kept = Sokoban::default();
            kept.reset(&mut rng, 1 + (seed % 3) as u32);
            let mut fresh = kept.clone();
            let mut walk = Rng::seed_from_u64(1_000 + seed);
            for _ in 0..120 {
                let key = kept.packed_state();
                reused += usize::from(kept.plans.contains_key(&key));
                deadlock_hits += usize::from(kept.deadlocked.contains(&key));
                fresh.plans.clear();
                fresh.deadlocked.clear();
                if ask_twins_then_move(&mut kept, &mut fresh, &mut walk, &rng, |_, _| {}) {
                    break;
                }
            }
        }
        // The walks exercised both shortcuts.
        assert!(reused > 100, "kept plans reused {reused} times");
        assert!(
            deadlock_hits > 100,
            "deadlocked states met {deadlock_hits} times"
        );
    }
}
