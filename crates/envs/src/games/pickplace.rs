//! `pick-place`: carry each coloured block onto the ring pad of its colour. Scale = blocks,
//! 1..=4. `interact` picks up (empty hands, on a block) or places (on the matching pad).

use envdist_core::{ActionId, ActionMask, Rng};

use super::maze::agent_holding;
use super::util::{Pos, agent_xy, first_move, inside_walls, move_mask, random_cells, step_pos};
use crate::env::{Game, Status};
use crate::render::{Cell, Grid, OBJECT_COL_NAMES, OBJECT_COLS, Shape};

const N: usize = 7;

#[derive(Default)]
pub struct PickPlace {
    agent: Pos,
    /// Block position (None while carried or placed), pad position, placed.
    items: Vec<(Option<Pos>, Pos, bool)>,
    held: Option<usize>,
}

impl PickPlace {
    fn inside(p: Pos) -> bool {
        inside_walls(p, N, N)
    }
    fn block_at(&self, p: Pos) -> Option<usize> {
        self.items.iter().position(|(b, _, _)| *b == Some(p))
    }
    fn can_interact(&self) -> bool {
        match self.held {
            Some(i) => self.items[i].1 == self.agent,
            None => self.block_at(self.agent).is_some(),
        }
    }
}

impl Game for PickPlace {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        let cells = random_cells(N, N, 2 * n + 1, rng, Self::inside);
        self.agent = cells[0];
        self.items = (0..n)
            .map(|i| (Some(cells[1 + i]), cells[1 + n + i], false))
            .collect();
        self.held = None;
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        if a == ActionId::INTERACT {
            match self.held {
                Some(i) => {
                    self.items[i].2 = true;
                    self.held = None;
                    tags.extend(["place", "match-colour"]);
                    if self.items.iter().all(|it| it.2) {
                        return Status::Won;
                    }
                }
                None => {
                    if let Some(i) = self.block_at(self.agent) {
                        self.items[i].0 = None;
                        self.held = Some(i);
                        tags.push("pick-up");
                    }
                }
            }
        } else {
            if let Some(q) = step_pos(self.agent, a, N, N) {
                self.agent = q;
            }
            tags.push("navigate");
            if self.items.iter().filter(|it| !it.2).count() > 1 {
                tags.push("route-plan");
            }
        }
        Status::Running
    }
    fn legal(&self) -> ActionMask {
        let m = move_mask(self.agent, N, N, Self::inside);
        if self.can_interact() {
            m.with(ActionId::INTERACT)
        } else {
            m
        }
    }
    fn oracle(&mut self) -> ActionId {
        if self.can_interact() {
            return ActionId::INTERACT;
        }
        let target = |q: Pos| match self.held {
            Some(i) => self.items[i].1 == q,
            None => self.block_at(q).is_some(),
        };
        first_move(N, N, self.agent, Self::inside, target)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(N, N, Cell::WALL);
        for y in 1..N - 1 {
            for x in 1..N - 1 {
                g.set(x, y, Cell::FLOOR);
            }
        }
        for (i, (b, pad, placed)) in self.items.iter().enumerate() {
            let c = OBJECT_COLS[i];
            if *placed {
                g.set(pad.0, pad.1, Cell::solid(c, b'='));
            } else {
                g.set(pad.0, pad.1, Cell::obj(Shape::Ring, c, b'o'));
            }
            if let Some(b) = b {
                g.set(b.0, b.1, Cell::obj(Shape::Full, c, b'b'));
            }
        }
        let agent = agent_holding(self.held.map(|i| OBJECT_COLS[i]));
        g.set(self.agent.0, self.agent.1, agent);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!("agent at ({},{})", self.agent.0, self.agent.1));
        if let Some(i) = self.held {
            out.push_str(&format!(" carrying the {} block", OBJECT_COL_NAMES[i]));
        }
        for (i, (b, pad, placed)) in self.items.iter().enumerate() {
            let name = OBJECT_COL_NAMES[i];
            if *placed {
                out.push_str(&format!("; {name} placed"));
            } else {
                if let Some(b) = b {
                    out.push_str(&format!("; {name} block at ({},{})", b.0, b.1));
                }
                out.push_str(&format!("; {name} pad at ({},{})", pad.0, pad.1));
            }
        }
    }
    fn subgoal(&mut self, out: &mut String) {
        let name = |i: usize| OBJECT_COL_NAMES[i];
        match self.held {
            Some(i) => {
                let pad = self.items[i].1;
                out.push_str(&format!(
                    "bring the {} block you carry to its pad at ({},{})",
                    name(i),
                    pad.0,
                    pad.1
                ));
            }
            None => {
                // The nearest block still lying about: the room is open, so the grid distance
                // is the path length the solver walks.
                let dist = |p: Pos| p.0.abs_diff(self.agent.0) + p.1.abs_diff(self.agent.1);
                let next = self
                    .items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, (b, pad, _))| b.map(|b| (dist(b), i, b, *pad)))
                    .min();
                if let Some((_, i, b, pad)) = next {
                    out.push_str(&format!(
                        "bring the {} block at ({},{}) to its pad at ({},{})",
                        name(i),
                        b.0,
                        b.1,
                        pad.0,
                        pad.1
                    ));
                } else {
                    out.push_str("every block is on its pad");
                }
            }
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move with up/down/left/right. `interact` on a block picks it up (hands empty); \
             `interact` on the ring pad of the carried block's colour places it. Place every \
             block. Text: # wall, . floor, b block, o pad, = filled pad, A you.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        10 + 18 * scale
    }
}
