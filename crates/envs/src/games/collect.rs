//! `collect`: walk over every target-coloured square without touching the others.
//! Scale = number of items, 2..=8. Rule 0 collects red and avoids blue; rule 1 (the
//! `avoid-red` twin) collects blue and avoids red: the same pixels ask for other moves.

use envdist_core::{ActionId, ActionMask, Rng};

use super::maze::AGENT;
use super::util::{
    Pos, agent_xy, bfs_to, count_of, draw_room, first_move, flood, inside_walls, move_mask,
    random_cells, step_pos,
};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

const RED: Cell = Cell::obj(Shape::Full, Col::Red, b'r');
const BLUE: Cell = Cell::obj(Shape::Full, Col::Blue, b'b');

#[derive(Default)]
pub struct Collect {
    pub(super) rule: u8,
    n: usize,
    agent: Pos,
    /// Item cells and whether each is red.
    items: Vec<(Pos, bool)>,
}

impl Collect {
    fn is_target(&self, red: bool) -> bool {
        red == (self.rule == 0)
    }
    fn item_at(&self, p: Pos) -> Option<usize> {
        self.items.iter().position(|(q, _)| *q == p)
    }
    fn inside(&self, p: Pos) -> bool {
        inside_walls(p, self.n, self.n)
    }
    fn safe(&self, p: Pos) -> bool {
        self.inside(p)
            && self
                .item_at(p)
                .is_none_or(|i| self.is_target(self.items[i].1))
    }
}

impl Game for Collect {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let items = scale as usize;
        self.n = 6 + (items - 2) / 2;
        let reds = items.div_ceil(2);
        loop {
            let n = self.n;
            let cells = random_cells(n, n, items + 1, rng, |p| inside_walls(p, n, n));
            self.agent = cells[0];
            self.items = cells[1..]
                .iter()
                .enumerate()
                .map(|(i, p)| (*p, i < reds))
                .collect();
            // Every target must be reachable without touching a non-target, under both rules,
            // so that the `avoid-red` twin shows exactly the same levels.
            let ok = |target_red: bool| {
                let safe = |p: Pos| {
                    self.inside(p)
                        && self
                            .item_at(p)
                            .is_none_or(|i| self.items[i].1 == target_red)
                };
                let seen = flood(n, n, self.agent, safe);
                self.items
                    .iter()
                    .all(|(p, red)| *red != target_red || seen[p.1 * n + p.0])
            };
            if ok(true) && ok(false) {
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        if let Some(q) = step_pos(self.agent, a, self.n, self.n) {
            self.agent = q;
        }
        tags.push("navigate");
        let remaining = self
            .items
            .iter()
            .filter(|(_, r)| self.is_target(*r))
            .count();
        if remaining > 1 {
            tags.push("route-plan");
        }
        if let Some(i) = self.item_at(self.agent) {
            tags.push("color-recognise");
            if self.is_target(self.items[i].1) {
                tags.push("collect");
                self.items.swap_remove(i);
                if remaining == 1 {
                    return Status::Won;
                }
            } else {
                return Status::Lost;
            }
        } else if self.items.iter().any(|(p, r)| {
            !self.is_target(*r) && p.0.abs_diff(self.agent.0) + p.1.abs_diff(self.agent.1) == 1
        }) {
            tags.push("distractor-avoid");
        }
        Status::Running
    }
    fn legal(&self) -> ActionMask {
        move_mask(self.agent, self.n, self.n, |q| self.inside(q))
    }
    fn oracle(&mut self) -> ActionId {
        first_move(
            self.n,
            self.n,
            self.agent,
            |q| self.safe(q),
            |q| {
                self.item_at(q)
                    .is_some_and(|i| self.is_target(self.items[i].1))
            },
        )
    }
    fn draw(&self, g: &mut Grid) {
        draw_room(g, self.n, |_| Cell::FLOOR);
        for (p, red) in &self.items {
            g.set(p.0, p.1, if *red { RED } else { BLUE });
        }
        g.set(self.agent.0, self.agent.1, AGENT);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        let list = |want: bool| {
            self.items
                .iter()
                .filter(|(_, r)| *r == want)
                .map(|(p, _)| format!("({},{})", p.0, p.1))
                .collect::<Vec<_>>()
                .join(" ")
        };
        out.push_str(&format!(
            "agent at ({},{}); red at {}; blue at {}",
            self.agent.0,
            self.agent.1,
            list(true),
            list(false)
        ));
    }
    fn hint(&mut self, out: &mut String) {
        let left = self
            .items
            .iter()
            .filter(|(_, r)| self.is_target(*r))
            .count();
        out.push_str(&format!("{left} target squares left"));
    }
    fn subgoal(&mut self, out: &mut String) {
        let targets: Vec<Pos> = self
            .items
            .iter()
            .filter(|(_, r)| self.is_target(*r))
            .map(|(p, _)| *p)
            .collect();
        let colour = if self.rule == 0 { "red" } else { "blue" };
        // The nearest target by a safe path: the one the solver heads for (up to ties).
        let nearest = targets
            .iter()
            .filter_map(|t| bfs_to(self.n, self.agent, |q| self.safe(q), *t).map(|r| (r.1, *t)))
            .min();
        out.push_str(&count_of(
            targets.len(),
            &format!("{colour} square"),
            &format!("{colour} squares"),
        ));
        out.push_str(" to collect");
        if let Some((_, t)) = nearest {
            out.push_str(&format!("; the nearest is at ({},{})", t.0, t.1));
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "Move with up/down/left/right. Step on every red square to collect it; stepping on a \
             blue square ends the episode as a failure. Text: # wall, . floor, A you, r red, b blue."
        } else {
            "Move with up/down/left/right. Step on every blue square to collect it; stepping on a \
             red square ends the episode as a failure. Text: # wall, . floor, A you, r red, b blue."
        });
    }
    fn horizon(&self, scale: u32) -> u32 {
        10 + 6 * scale
    }
}
