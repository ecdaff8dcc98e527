//! `snake`: eat the red food without hitting a wall or your own body; each food makes the
//! snake one cell longer. Scale 1..=4: room side `4 + 2*scale` (walls included) and
//! `1 + scale` foods to eat.

use std::collections::VecDeque;

use envdist_core::{ActionId, ActionMask, Rng};

use super::util::{Pos, agent_xy, bfs_to, draw_room, flood, inside_walls, random_cells, step_pos};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

#[derive(Default)]
pub struct Snake {
    n: usize,
    /// Head first.
    body: VecDeque<Pos>,
    food: Pos,
    eaten: usize,
    goal: usize,
    heading: Option<ActionId>,
}

fn opposite(a: ActionId) -> ActionId {
    match a {
        ActionId::UP => ActionId::DOWN,
        ActionId::DOWN => ActionId::UP,
        ActionId::LEFT => ActionId::RIGHT,
        _ => ActionId::LEFT,
    }
}

impl Snake {
    fn inside(&self, p: Pos) -> bool {
        inside_walls(p, self.n, self.n)
    }
    /// Free after the next move (the tail moves away unless the snake eats).
    fn free_next(&self, p: Pos) -> bool {
        let tail = self.body.back().copied();
        self.inside(p) && (!self.body.contains(&p) || (Some(p) == tail && self.body.len() > 1))
    }
    fn head(&self) -> Pos {
        self.body[0]
    }
    fn spawn_food(&mut self, rng: &mut Rng) {
        let n = self.n;
        let body = self.body.clone();
        if let Some(p) = random_cells(n, n, 1, rng, |p| {
            inside_walls(p, n, n) && !body.contains(&p)
        })
        .first()
        {
            self.food = *p;
        }
    }
    /// Cells reachable from `p` if the snake's head were there.
    fn room_after(&self, a: ActionId) -> usize {
        let Some(p) = step_pos(self.head(), a, self.n, self.n) else {
            return 0;
        };
        if !self.free_next(p) {
            return 0;
        }
        let mut body: Vec<Pos> = self.body.iter().copied().collect();
        body.pop();
        flood(self.n, self.n, p, |q| self.inside(q) && !body.contains(&q))
            .iter()
            .filter(|s| **s)
            .count()
    }
}

impl Game for Snake {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.n = 4 + 2 * scale as usize;
        self.goal = 1 + scale as usize;
        self.eaten = 0;
        self.heading = None;
        let n = self.n;
        let start = random_cells(n, n, 1, rng, |p| inside_walls(p, n, n))[0];
        self.body = VecDeque::from([start]);
        self.spawn_food(rng);
    }
    fn step(&mut self, a: ActionId, rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        let Some(next) = step_pos(self.head(), a, self.n, self.n) else {
            return Status::Lost;
        };
        self.heading = Some(a);
        tags.push("chase");
        if !self.free_next(next) {
            tags.push("self-avoid");
            return Status::Lost;
        }
        self.body.push_front(next);
        if next == self.food {
            self.eaten += 1;
            tags.push("growth-plan");
            if self.eaten == self.goal {
                return Status::Won;
            }
            self.spawn_food(rng);
        } else {
            self.body.pop_back();
            if self.body.len() > 2 {
                tags.push("self-avoid");
            }
        }
        Status::Running
    }
    fn legal(&self) -> ActionMask {
        let mut m = ActionMask::NONE;
        for a in ActionId::MOVES {
            if self.heading.is_some_and(|h| opposite(h) == a) && self.body.len() > 1 {
                continue;
            }
            m = m.with(a);
        }
        m
    }
    fn oracle(&mut self) -> ActionId {
        let legal = self.legal();
        // Shortest path to the food, taken only if it leaves enough room to keep moving.
        if let Some((a, _)) = bfs_to(self.n, self.head(), |q| self.free_next(q), self.food)
            && legal.contains(a)
            && self.room_after(a) > self.body.len()
        {
            return a;
        }
        legal
            .iter()
            .max_by_key(|a| self.room_after(*a))
            .unwrap_or(ActionId::UP)
    }
    fn draw(&self, g: &mut Grid) {
        draw_room(g, self.n, |_| Cell::FLOOR);
        g.set(
            self.food.0,
            self.food.1,
            Cell::obj(Shape::Circle, Col::Red, b'*'),
        );
        for (i, p) in self.body.iter().enumerate() {
            let c = if i == 0 {
                Cell::obj(Shape::Diamond, Col::Agent, b'H')
            } else {
                Cell::solid(Col::Green, b's')
            };
            g.set(p.0, p.1, c);
        }
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.head())
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "head at ({},{}); length {}; food at ({},{}); eaten {} of {}",
            self.head().0,
            self.head().1,
            self.body.len(),
            self.food.0,
            self.food.1,
            self.eaten,
            self.goal
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        // The food's cell, not its offset from the head: an offset reads as a move.
        out.push_str(&format!(
            "the food is at ({},{}); {} still to eat",
            self.food.0,
            self.food.1,
            self.goal.saturating_sub(self.eaten)
        ));
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Steer the snake's white head with up/down/left/right (it cannot reverse). Eating the \
             red food grows the green body by one; hitting a wall or the body fails. Eat the \
             number of foods in the state. Text: # wall, . floor, H head, s body, * food.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        let n = 4 + 2 * scale;
        (1 + scale) * (2 * n) + 4
    }
}
