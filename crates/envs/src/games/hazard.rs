//! `hazard-cross`: cross rows of lava through their single gaps to the green goal. Scale =
//! lava rows, 1..=4 (grid height `2*rows + 3`). Lava ends the episode as a failure.

use envdist_core::{ActionId, ActionMask, Rng};

use super::maze::{AGENT, GOAL};
use super::util::{Pos, agent_xy, first_move, inside_walls, move_mask, step_pos, won_at_goal};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid};

const LAVA: Cell = Cell::solid(Col::Orange, b'~');
const W: usize = 7;

#[derive(Default)]
pub struct Hazard {
    h: usize,
    lava: Vec<bool>,
    agent: Pos,
    goal: Pos,
}

impl Hazard {
    fn inside(&self, p: Pos) -> bool {
        inside_walls(p, W, self.h)
    }
    fn is_lava(&self, p: Pos) -> bool {
        self.lava[p.1 * W + p.0]
    }
}

impl Game for Hazard {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let rows = scale as usize;
        self.h = 2 * rows + 3;
        self.lava = vec![false; W * self.h];
        for r in 0..rows {
            let y = 2 + 2 * r;
            let gap = 1 + rng.index(W - 2);
            for x in 1..W - 1 {
                self.lava[y * W + x] = x != gap;
            }
        }
        self.agent = (1 + rng.index(W - 2), 1);
        self.goal = (1 + rng.index(W - 2), self.h - 2);
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        let before = self.agent;
        if let Some(q) = step_pos(self.agent, a, W, self.h) {
            self.agent = q;
        }
        tags.push("navigate");
        if self.is_lava(self.agent) {
            tags.push("hazard-recognise");
            return Status::Lost;
        }
        let y = self.agent.1;
        if y != before.1 && y.is_multiple_of(2) && y >= 2 {
            tags.push("gap-find");
        } else if move_mask(self.agent, W, self.h, |q| self.lava[q.1 * W + q.0]).count() > 0 {
            tags.push("hazard-recognise");
        }
        won_at_goal(self.agent, self.goal, tags)
    }
    fn legal(&self) -> ActionMask {
        move_mask(self.agent, W, self.h, |q| self.inside(q))
    }
    fn oracle(&mut self) -> ActionId {
        first_move(
            W,
            self.h,
            self.agent,
            |q| self.inside(q) && !self.is_lava(q),
            |q| q == self.goal,
        )
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(W, self.h, Cell::WALL);
        for y in 1..self.h - 1 {
            for x in 1..W - 1 {
                g.set(
                    x,
                    y,
                    if self.lava[y * W + x] {
                        LAVA
                    } else {
                        Cell::FLOOR
                    },
                );
            }
        }
        g.set(self.goal.0, self.goal.1, GOAL);
        g.set(self.agent.0, self.agent.1, AGENT);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        let gaps: Vec<String> = (2..self.h - 1)
            .step_by(2)
            .filter_map(|y| {
                (1..W - 1)
                    .find(|x| !self.lava[y * W + x])
                    .map(|x| format!("({x},{y})"))
            })
            .collect();
        out.push_str(&format!(
            "agent at ({},{}); goal at ({},{}); gaps at {}",
            self.agent.0,
            self.agent.1,
            self.goal.0,
            self.goal.1,
            gaps.join(" ")
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        // The gap of the first lava row below the agent (the agent starts above them all).
        let gap = (self.agent.1 + 1..self.h - 1)
            .filter(|y| (1..W - 1).any(|x| self.lava[y * W + x]))
            .find_map(|y| (1..W - 1).find(|x| !self.lava[y * W + x]).map(|x| (x, y)));
        match gap {
            Some((x, y)) => out.push_str(&format!("the next lava gap is at ({x},{y})")),
            None => out.push_str("every lava row is crossed"),
        }
        out.push_str(&format!(
            "; the goal is at ({},{})",
            self.goal.0, self.goal.1
        ));
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move with up/down/left/right to the green goal. Orange lava rows have one gap each; \
             stepping on lava fails the episode. Text: # wall, . floor, ~ lava, A you, G goal.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        14 + 8 * scale
    }
}
