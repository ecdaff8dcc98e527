//! `key-door`: rooms in a row, each locked door opened by the key of its colour lying in the
//! room before it; the goal is in the last room. Scale = locked doors, 1..=3.

use envdist_core::{ActionId, ActionMask, Rng};

use super::maze::{GOAL, agent_holding};
use super::util::{Pos, agent_xy, bfs, move_mask, random_cells, step_pos, won_at_goal};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

const KEY_COLS: [Col; 3] = [Col::Yellow, Col::Purple, Col::Cyan];
const H: usize = 5;

#[derive(Default)]
pub struct KeyDoor {
    w: usize,
    doors: Vec<(Pos, bool)>,
    keys: Vec<Option<Pos>>,
    held: Option<usize>,
    agent: Pos,
    goal: Pos,
}

impl KeyDoor {
    fn wall(&self, p: Pos) -> bool {
        p.0 == 0
            || p.1 == 0
            || p.0 == self.w - 1
            || p.1 == H - 1
            || (p.0.is_multiple_of(3) && !self.is_door(p))
    }
    fn is_door(&self, p: Pos) -> bool {
        self.doors.iter().any(|(d, _)| *d == p)
    }
    fn door_at(&self, p: Pos) -> Option<usize> {
        self.doors.iter().position(|(d, _)| *d == p)
    }
    fn passable(&self, p: Pos) -> bool {
        !self.wall(p)
            && match self.door_at(p) {
                Some(i) => self.doors[i].1 || self.held == Some(i),
                None => true,
            }
    }
    fn next_locked(&self) -> Option<usize> {
        self.doors.iter().position(|(_, open)| !open)
    }
}

impl Game for KeyDoor {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        self.w = 3 * (n + 1) + 1;
        self.doors = (0..n)
            .map(|i| ((3 * (i + 1), 1 + rng.index(H - 2)), false))
            .collect();
        self.held = None;
        self.keys = (0..n)
            .map(|i| {
                let x = 3 * i + 1 + rng.index(2);
                Some((x, 1 + rng.index(H - 2)))
            })
            .collect();
        let room0: Vec<Pos> = random_cells(self.w, H, 8, rng, |p| {
            p.0 >= 1 && p.0 <= 2 && p.1 >= 1 && p.1 <= H - 2
        });
        self.agent = room0
            .into_iter()
            .find(|p| Some(*p) != self.keys[0])
            .unwrap_or((1, 1));
        self.goal = (3 * n + 1 + rng.index(2), 1 + rng.index(H - 2));
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        if let Some(q) = step_pos(self.agent, a, self.w, H) {
            if let Some(i) = self.door_at(q)
                && !self.doors[i].1
            {
                self.doors[i].1 = true;
                self.held = None;
                tags.push("use-key");
            }
            self.agent = q;
        }
        tags.push("navigate");
        if let Some(i) = self.keys.iter().position(|k| *k == Some(self.agent))
            && self.held.is_none()
        {
            self.keys[i] = None;
            self.held = Some(i);
            tags.push("pick-up");
            tags.push("subgoal-order");
        }
        won_at_goal(self.agent, self.goal, tags)
    }
    fn legal(&self) -> ActionMask {
        move_mask(self.agent, self.w, H, |q| self.passable(q))
    }
    fn oracle(&mut self) -> ActionId {
        let pass = |q: Pos| self.passable(q);
        let target: Pos = match (self.next_locked(), self.held) {
            (None, _) => self.goal,
            (Some(i), Some(_)) => self.doors[i].0,
            (Some(i), None) => self.keys[i].unwrap_or(self.goal),
        };
        // Walk around keys that are not the next one, so the inventory stays free for it.
        let avoid = |q: Pos| {
            self.keys
                .iter()
                .enumerate()
                .any(|(k, p)| *p == Some(q) && Some(k) != self.next_locked())
        };
        bfs(
            self.w,
            H,
            self.agent,
            |q| pass(q) && !avoid(q),
            |q| q == target,
        )
        .or_else(|| bfs(self.w, H, self.agent, pass, |q| q == target))
        .map(|r| r.0)
        .unwrap_or(ActionId::WAIT)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.w, H, Cell::FLOOR);
        for y in 0..H {
            for x in 0..self.w {
                if self.wall((x, y)) {
                    g.set(x, y, Cell::WALL);
                }
            }
        }
        for (i, (d, open)) in self.doors.iter().enumerate() {
            if !open {
                g.set(d.0, d.1, Cell::solid(KEY_COLS[i], b'D'));
            }
        }
        for (i, k) in self.keys.iter().enumerate() {
            if let Some(k) = k {
                g.set(k.0, k.1, Cell::obj(Shape::Small, KEY_COLS[i], b'k'));
            }
        }
        g.set(self.goal.0, self.goal.1, GOAL);
        let agent = agent_holding(self.held.map(|i| KEY_COLS[i]));
        g.set(self.agent.0, self.agent.1, agent);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        const NAMES: [&str; 3] = ["yellow", "purple", "cyan"];
        out.push_str(&format!("agent at ({},{})", self.agent.0, self.agent.1));
        match self.held {
            Some(i) => out.push_str(&format!(" holding the {} key", NAMES[i])),
            None => out.push_str(" holding nothing"),
        }
        for (i, (d, open)) in self.doors.iter().enumerate() {
            out.push_str(&format!(
                "; {} door at ({},{}) {}",
                NAMES[i],
                d.0,
                d.1,
                if *open { "open" } else { "locked" }
            ));
            if let Some(k) = self.keys[i] {
                out.push_str(&format!(", its key at ({},{})", k.0, k.1));
            }
        }
        out.push_str(&format!("; goal at ({},{})", self.goal.0, self.goal.1));
    }
    fn hint(&mut self, out: &mut String) {
        out.push_str(match (self.next_locked(), self.held) {
            (None, _) => "all doors are open: go to the goal",
            (Some(_), Some(_)) => "carry the key to the door of its colour",
            (Some(_), None) => "fetch the key of the next locked door",
        });
    }
    fn subgoal(&mut self, out: &mut String) {
        // The action-style extra is already a subgoal (which key, which door), no move.
        self.hint(out);
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move with up/down/left/right. Walk over a key to pick it up (one at a time); walk \
             into the locked door of the same colour to open it; reach the green goal in the \
             last room. Text: # wall, . floor, k key, D locked door, A you, G goal.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        12 + 14 * scale
    }
}
