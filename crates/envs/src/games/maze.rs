//! `maze`: reach the green goal through a perfect maze. Scale 1..=5 gives a side of
//! `2*scale + 3` cells (5x5 to 13x13, border walls included).

use envdist_core::{ActionId, ActionMask, Rng};

use super::util::{
    Pos, agent_xy, bfs_to, carve_maze, first_move_to, move_mask, step_pos, won_at_goal,
};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

/// Agent cell: a white diamond.
pub const AGENT: Cell = Cell::obj(Shape::Diamond, Col::Agent, b'A');
/// Goal cell: solid green.
pub const GOAL: Cell = Cell::solid(Col::Goal, b'G');

/// The agent carrying an object (key-door, pick-and-place) takes the colour `held` of what it
/// carries.
pub fn agent_holding(held: Option<Col>) -> Cell {
    match held {
        Some(fg) => Cell { fg, ..AGENT },
        None => AGENT,
    }
}

/// Draws an `n x n` board of floor with `walls`, then the goal and the agent on it (maze,
/// reachability).
pub fn draw_walled(g: &mut Grid, n: usize, walls: &[bool], goal: Pos, agent: Pos) {
    g.reset(n, n, Cell::FLOOR);
    for (i, w) in walls.iter().enumerate() {
        if *w {
            g.cells[i] = Cell::WALL;
        }
    }
    g.set(goal.0, goal.1, GOAL);
    g.set(agent.0, agent.1, AGENT);
}

/// The state text of the families with an agent and a goal: `agent at (x,y); goal at (x,y)`.
pub fn agent_goal_text(agent: Pos, goal: Pos, out: &mut String) {
    out.push_str(&format!(
        "agent at ({},{}); goal at ({},{})",
        agent.0, agent.1, goal.0, goal.1
    ));
}

#[derive(Default)]
pub struct Maze {
    n: usize,
    walls: Vec<bool>,
    agent: Pos,
    goal: Pos,
}

impl Maze {
    fn open(&self, p: Pos) -> bool {
        !self.walls[p.1 * self.n + p.0]
    }
    fn exits(&self, p: Pos) -> usize {
        move_mask(p, self.n, self.n, |q| self.open(q)).count()
    }
}

impl Game for Maze {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.n = 2 * scale as usize + 3;
        self.walls = carve_maze(self.n, rng);
        let rooms = (self.n - 1) / 2;
        let pick = |rng: &mut Rng| (2 * rng.index(rooms) + 1, 2 * rng.index(rooms) + 1);
        self.agent = pick(rng);
        loop {
            self.goal = pick(rng);
            if self.goal != self.agent {
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        let from_exits = self.exits(self.agent);
        if let Some(q) = step_pos(self.agent, a, self.n, self.n) {
            self.agent = q;
        }
        tags.push("navigate");
        if from_exits == 1 {
            tags.push("dead-end-recovery");
        } else if self.exits(self.agent) == 2 {
            tags.push("wall-follow");
        } else {
            tags.push("junction-choice");
        }
        won_at_goal(self.agent, self.goal, tags)
    }
    fn legal(&self) -> ActionMask {
        move_mask(self.agent, self.n, self.n, |q| self.open(q))
    }
    fn oracle(&mut self) -> ActionId {
        first_move_to(self.n, self.agent, |q| self.open(q), self.goal)
    }
    fn draw(&self, g: &mut Grid) {
        draw_walled(g, self.n, &self.walls, self.goal, self.agent);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        agent_goal_text(self.agent, self.goal, out);
    }
    fn hint(&mut self, out: &mut String) {
        if let Some((_, d)) = bfs_to(self.n, self.agent, |q| self.open(q), self.goal) {
            out.push_str(&format!("the goal is {d} steps away along the corridors"));
        }
    }
    fn subgoal(&mut self, out: &mut String) {
        // The action-style extra is already a subgoal (a distance, no direction).
        self.hint(out);
        if out.is_empty() {
            out.push_str("find the corridor that leads to the goal");
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move with up/down/left/right; grey walls block; reach the green goal. \
             Text: # wall, . floor, A you, G goal; (x,y) with y growing downward.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        let n = 2 * scale + 3;
        n * n / 2 + 10
    }
}
