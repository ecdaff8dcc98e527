//! `path-paint`: walk along the dotted path, painting each cell; leaving the path fails.
//! Scale = room side 4..=8; the path is a random self-avoiding walk of about `2*side` cells.

use envdist_core::{ActionId, ActionMask, Rng};

use super::maze::AGENT;
use super::util::{
    Pos, agent_xy, count_of, draw_room, first_move_to, inside_walls, move_mask, step_pos,
};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

#[derive(Default)]
pub struct Paint {
    n: usize,
    path: Vec<Pos>,
    painted: usize,
    agent: Pos,
}

impl Paint {
    fn inside(&self, p: Pos) -> bool {
        inside_walls(p, self.n, self.n)
    }
    fn on_path(&self, p: Pos) -> Option<usize> {
        self.path.iter().position(|q| *q == p)
    }
}

impl Game for Paint {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let side = scale as usize;
        self.n = side + 2;
        let want = 2 * side;
        let mut best: Vec<Pos> = Vec::new();
        for _ in 0..50 {
            let mut path = vec![(1 + rng.index(side), 1 + rng.index(side))];
            while path.len() < want {
                let p = *path.last().unwrap_or(&(1, 1));
                let opts: Vec<Pos> = ActionId::MOVES
                    .iter()
                    .filter_map(|a| step_pos(p, *a, self.n, self.n))
                    .filter(|q| {
                        self.inside(*q)
                            && !path.contains(q)
                            // Touching only its predecessor keeps the path unambiguous.
                            && ActionId::MOVES
                                .iter()
                                .filter_map(|a| step_pos(*q, *a, self.n, self.n))
                                .filter(|r| path.contains(r))
                                .count()
                                == 1
                    })
                    .collect();
                match rng.choose(&opts) {
                    Some(q) => path.push(*q),
                    None => break,
                }
            }
            if path.len() > best.len() {
                best = path;
            }
            if best.len() >= want {
                break;
            }
        }
        self.path = best;
        self.agent = self.path[0];
        self.painted = 1;
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        if let Some(q) = step_pos(self.agent, a, self.n, self.n) {
            self.agent = q;
        }
        tags.push("trace-path");
        match self.on_path(self.agent) {
            None => Status::Lost,
            Some(i) => {
                if i == self.painted {
                    self.painted += 1;
                    tags.push("colour-match");
                }
                if self.painted == self.path.len() {
                    Status::Won
                } else {
                    Status::Running
                }
            }
        }
    }
    fn legal(&self) -> ActionMask {
        move_mask(self.agent, self.n, self.n, |q| self.inside(q))
    }
    fn oracle(&mut self) -> ActionId {
        let target = self.path.get(self.painted).copied().unwrap_or(self.agent);
        first_move_to(self.n, self.agent, |q| self.on_path(q).is_some(), target)
    }
    fn draw(&self, g: &mut Grid) {
        draw_room(g, self.n, |_| Cell::FLOOR);
        for (i, p) in self.path.iter().enumerate() {
            let c = if i < self.painted {
                Cell::solid(Col::Yellow, b'o')
            } else {
                Cell::obj(Shape::Small, Col::Yellow, b'+')
            };
            g.set(p.0, p.1, c);
        }
        g.set(self.agent.0, self.agent.1, AGENT);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "agent at ({},{}); {} of {} path cells painted",
            self.agent.0,
            self.agent.1,
            self.painted,
            self.path.len()
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        let todo = self.path.len().saturating_sub(self.painted);
        out.push_str(&count_of(todo, "path cell", "path cells"));
        out.push_str(" still to paint");
        if let Some(end) = self.path.last() {
            out.push_str(&format!("; the path ends at ({},{})", end.0, end.1));
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move with up/down/left/right along the yellow dotted path; each path cell you enter \
             is painted solid. Stepping off the path fails the episode; paint the whole path. \
             Text: # wall, . floor, + unpainted path, o painted, A you.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        10 + 3 * scale
    }
}
