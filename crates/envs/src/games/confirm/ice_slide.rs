//! `ice-slide`: every move slides the agent over the ice until a rock or the wall stops it;
//! come to rest on the goal (sliding over it does not count). Scale 1..=3: sides 7, 8, 9
//! (border walls included) with 4, 6, 8 rocks, generated so that the shortest solution takes
//! at least 2, 3, 4 slides.

use envdist_core::{ActionId, ActionMask, Rng};

use super::super::maze::{GOAL, agent_goal_text};
use super::super::ood::AGENT_ON_ICE;
use super::super::util::{
    Pos, agent_xy, draw_room, inside_walls, move_mask, random_cells, step_pos, won_at_goal,
};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid};

/// Levels tried before settling for the hardest one found (a bound that keeps `reset` finite;
/// at these sizes a level with the wanted depth turns up within a few tries).
const TRIES: usize = 200;

#[derive(Default)]
pub struct IceSlide {
    n: usize,
    rocks: Vec<bool>,
    agent: Pos,
    goal: Pos,
}

impl IceSlide {
    fn open(&self, p: Pos) -> bool {
        inside_walls(p, self.n, self.n) && !self.rocks[p.1 * self.n + p.0]
    }
    /// Where a slide from `p` in direction `a` comes to rest (`p` itself when blocked at once).
    fn slide(&self, mut p: Pos, a: ActionId) -> Pos {
        while let Some(q) = step_pos(p, a, self.n, self.n).filter(|q| self.open(*q)) {
            p = q;
        }
        p
    }
    /// Breadth-first search over resting cells: slides from `from` to each resting cell, and
    /// the first slide of a shortest way there.
    fn distances(&self, from: Pos) -> Vec<Option<(u32, ActionId)>> {
        let mut dist = vec![None; self.n * self.n];
        dist[from.1 * self.n + from.0] = Some((0, ActionId::WAIT));
        let mut queue = std::collections::VecDeque::from([from]);
        while let Some(p) = queue.pop_front() {
            let (d, first) = dist[p.1 * self.n + p.0].unwrap_or((0, ActionId::WAIT));
            for a in ActionId::MOVES {
                let q = self.slide(p, a);
                let i = q.1 * self.n + q.0;
                if dist[i].is_none() {
                    dist[i] = Some((d + 1, if p == from { a } else { first }));
                    queue.push_back(q);
                }
            }
        }
        dist
    }
    /// Slides to the goal and the first one, if the goal can still be reached.
    fn plan(&self) -> Option<(u32, ActionId)> {
        self.distances(self.agent)[self.goal.1 * self.n + self.goal.0].filter(|(d, _)| *d > 0)
    }
}

impl Game for IceSlide {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let s = scale as usize;
        self.n = 6 + s;
        let n = self.n;
        let want = 1 + scale;
        let mut best: Option<(u32, Vec<bool>, Pos, Pos)> = None;
        for _ in 0..TRIES {
            let cells = random_cells(n, n, 3 + 2 * s, rng, |p| inside_walls(p, n, n));
            self.rocks = vec![false; n * n];
            for r in &cells[1..] {
                self.rocks[r.1 * n + r.0] = true;
            }
            self.agent = cells[0];
            // The goal is a resting cell at the wanted depth (or the deepest there is).
            let dist = self.distances(self.agent);
            let mut deepest: Vec<(u32, Pos)> = (0..n * n)
                .filter_map(|i| dist[i].map(|(d, _)| (d, (i % n, i / n))))
                .filter(|(d, _)| *d > 0)
                .collect();
            let top = deepest.iter().map(|(d, _)| *d).max().unwrap_or(0);
            deepest.retain(|(d, _)| *d >= want.min(top));
            let Some(&(d, goal)) = rng.choose(&deepest) else {
                continue;
            };
            if best.as_ref().is_none_or(|b| d > b.0) {
                best = Some((d, self.rocks.clone(), self.agent, goal));
            }
            if d >= want {
                break;
            }
        }
        // Every try boxing the agent in is all but impossible; the fallback keeps `reset` a
        // function of the task even then: open ice, one slide along the top row.
        (self.rocks, self.agent, self.goal) = best
            .map_or((vec![false; n * n], (1, 1), (n - 2, 1)), |(_, r, a, g)| {
                (r, a, g)
            });
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        self.agent = self.slide(self.agent, a);
        tags.extend(["navigate", "slide-stop"]);
        won_at_goal(self.agent, self.goal, tags)
    }
    fn legal(&self) -> ActionMask {
        move_mask(self.agent, self.n, self.n, |q| self.open(q))
    }
    fn oracle(&mut self) -> ActionId {
        // Cut off from the goal (after detours), any slide keeps the episode going.
        self.plan()
            .map(|(_, a)| a)
            .or_else(|| self.legal().iter().next())
            .unwrap_or(ActionId::WAIT)
    }
    fn draw(&self, g: &mut Grid) {
        // A rock inside the room is drawn as wall, the border's cell.
        draw_room(g, self.n, |p| {
            if self.open(p) {
                Cell::solid(Col::Cyan, b'.')
            } else {
                Cell::WALL
            }
        });
        g.set(self.goal.0, self.goal.1, GOAL);
        g.set(self.agent.0, self.agent.1, AGENT_ON_ICE);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        agent_goal_text(self.agent, self.goal, out);
    }
    fn hint(&mut self, out: &mut String) {
        self.subgoal(out);
    }
    fn subgoal(&mut self, out: &mut String) {
        // A count of slides, never their directions.
        match self.plan() {
            Some((1, _)) => out.push_str("the goal is a single slide away"),
            Some((d, _)) => out.push_str(&format!("the goal is {d} slides away")),
            None => out.push_str("no slide from here ever comes to rest on the goal"),
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "Move with up/down/left/right: you slide over the cyan ice until a grey rock or the \
             wall stops you. Come to rest on the green goal; sliding over it does not count. \
             Text: # rock or wall, . ice, A you, G goal; (x,y) with y growing downward.",
        );
    }
    fn horizon(&self, scale: u32) -> u32 {
        12 + 6 * scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slide_stops_before_a_rock_or_the_wall_and_the_goal_is_deep_enough() {
        let mut level = IceSlide {
            n: 7,
            rocks: vec![false; 49],
            agent: (1, 1),
            goal: (5, 5),
        };
        level.rocks[7 + 4] = true;
        assert_eq!(level.slide((1, 1), ActionId::RIGHT), (3, 1));
        assert_eq!(level.slide((1, 1), ActionId::DOWN), (1, 5));
        assert_eq!(level.slide((1, 1), ActionId::UP), (1, 1));
        for scale in 1..=3 {
            let deep = (0..40)
                .filter(|seed| {
                    level.reset(&mut Rng::seed_from_u64(*seed), scale);
                    level.plan().is_some_and(|(d, _)| d > scale)
                })
                .count();
            assert!(
                deep >= 38,
                "scale {scale}: {deep}/40 levels at the wanted depth"
            );
        }
    }
}
