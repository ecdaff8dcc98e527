//! `reachability` (single-turn): can the white agent walk to the green goal? Scale 1..=4
//! gives a side of `2*scale + 3`. Rule 0 asks "reachable?" (answer_1 = yes); rule 1 (the
//! `blocked` twin) asks "blocked?" (answer_1 = yes): the same image, the inverted answer.

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Rng};

use super::maze::draw_walled;
use super::single::{answer_action, judge, yes_no};
use super::util::{Pos, bfs_to, flood, random_cells};
use crate::env::{Game, Status};
use crate::render::Grid;

#[derive(Default)]
pub struct Reach {
    pub(super) rule: u8,
    n: usize,
    walls: Vec<bool>,
    agent: Pos,
    goal: Pos,
    reachable: bool,
}

impl Reach {
    fn answer(&self) -> usize {
        (self.reachable == (self.rule == 0)) as usize
    }
}

impl Game for Reach {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = 2 * scale as usize + 3;
        self.n = n;
        let want = rng.chance(0.5);
        for _ in 0..500 {
            self.walls = (0..n * n)
                .map(|i| {
                    let (x, y) = (i % n, i / n);
                    x == 0 || y == 0 || x == n - 1 || y == n - 1 || rng.chance(0.38)
                })
                .collect();
            let cells = random_cells(n, n, 2, rng, |p| !self.walls[p.1 * n + p.0]);
            if cells.len() < 2 {
                continue;
            }
            self.agent = cells[0];
            self.goal = cells[1];
            let seen = flood(n, n, self.agent, |p| !self.walls[p.1 * n + p.0]);
            self.reachable = seen[self.goal.1 * n + self.goal.0];
            if self.reachable == want {
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["path-trace", "connectivity"]);
        if self.rule == 1 {
            tags.push("negation");
        }
        judge(a, self.answer())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(2)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer())
    }
    fn draw(&self, g: &mut Grid) {
        draw_walled(g, self.n, &self.walls, self.goal, self.agent);
    }
    fn state_text(&self, out: &mut String) {
        super::maze::agent_goal_text(self.agent, self.goal, out);
    }
    fn hint(&mut self, out: &mut String) {
        let n = self.n;
        let open = |p: Pos| !self.walls[p.1 * n + p.0];
        match bfs_to(n, self.agent, open, self.goal) {
            Some((_, d)) => out.push_str(&format!("a path of {d} steps leads from A to G")),
            None => {
                let size = flood(n, n, self.agent, open).iter().filter(|s| **s).count();
                out.push_str(&format!(
                    "the open region around A has {size} cells and G is not among them"
                ));
            }
        }
    }
    fn subgoal(&mut self, out: &mut String) {
        out.push_str("follow the open cells out from A and see whether G is among them");
    }
    fn rules(&self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "Is the green goal reachable from the white agent by moving up/down/left/right \
             through open cells? answer_1 = yes, reachable; answer_0 = no. Text: # wall, . open, A agent, G goal."
        } else {
            "Is the green goal blocked off from the white agent (no path up/down/left/right \
             through open cells)? answer_1 = yes, blocked; answer_0 = no. Text: # wall, . open, A agent, G goal."
        });
    }
    fn horizon(&self, _scale: u32) -> u32 {
        1
    }
    fn answers(&self, out: &mut AnswerVocabulary) {
        // The same adjectives answer both twins: `blocked` is a no to "reachable?" and a yes
        // to "blocked off?".
        let (open, shut): (&[&str], &[&str]) = (
            &["reachable", "connected"],
            &["unreachable", "blocked", "disconnected"],
        );
        if self.rule == 0 {
            yes_no(out, open, shut);
        } else {
            yes_no(out, shut, open);
        }
    }
}
