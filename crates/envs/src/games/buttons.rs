//! `push-button`: press the coloured buttons in the order the code strip on the top wall
//! shows. Scale = buttons, 2..=4. Rule 1 (the `reversed` twin) presses them in the reverse
//! order: the same pixels ask for another route.

use envdist_core::{ActionId, ActionMask, Rng};

use super::maze::AGENT;
use super::util::{Pos, agent_xy, first_move, move_mask, random_cells, step_pos};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, OBJECT_COL_NAMES, OBJECT_COLS, Shape};

const N: usize = 7;

#[derive(Default)]
pub struct Buttons {
    pub(super) rule: u8,
    agent: Pos,
    /// Button cells; button i has colour OBJECT_COLS[i].
    buttons: Vec<Pos>,
    /// Colour indices in code order (as shown left to right).
    code: Vec<usize>,
    pressed: usize,
}

impl Buttons {
    fn inside(p: Pos) -> bool {
        p.0 > 0 && p.1 > 1 && p.0 < N - 1 && p.1 < N - 1
    }
    fn order(&self) -> Vec<usize> {
        let mut o = self.code.clone();
        if self.rule == 1 {
            o.reverse();
        }
        o
    }
    fn next(&self) -> Option<usize> {
        self.order().get(self.pressed).copied()
    }
    fn button_at(&self, p: Pos) -> Option<usize> {
        self.buttons.iter().position(|b| *b == p)
    }
    fn is_pressed(&self, i: usize) -> bool {
        self.order()[..self.pressed].contains(&i)
    }
}

impl Game for Buttons {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        let cells = random_cells(N, N, n + 1, rng, Self::inside);
        self.agent = cells[0];
        self.buttons = cells[1..].to_vec();
        self.code = (0..n).collect();
        rng.shuffle(&mut self.code);
        self.pressed = 0;
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        if a == ActionId::INTERACT {
            tags.extend(["press-button", "sequence", "remember-code"]);
            if self.button_at(self.agent) == self.next() {
                self.pressed += 1;
                if self.pressed == self.code.len() {
                    return Status::Won;
                }
            } else {
                return Status::Lost;
            }
        } else {
            if let Some(q) = step_pos(self.agent, a, N, N) {
                self.agent = q;
            }
            tags.push("navigate");
        }
        Status::Running
    }
    fn legal(&self) -> ActionMask {
        let m = move_mask(self.agent, N, N, Self::inside);
        match self.button_at(self.agent) {
            Some(i) if !self.is_pressed(i) => m.with(ActionId::INTERACT),
            _ => m,
        }
    }
    fn oracle(&mut self) -> ActionId {
        let Some(next) = self.next() else {
            return ActionId::WAIT;
        };
        if self.button_at(self.agent) == Some(next) {
            return ActionId::INTERACT;
        }
        let goal = self.buttons[next];
        first_move(N, N, self.agent, Self::inside, |q| q == goal)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(N, N, Cell::WALL);
        for y in 2..N - 1 {
            for x in 1..N - 1 {
                g.set(x, y, Cell::FLOOR);
            }
        }
        // The code strip on the top wall, left to right.
        for (k, &c) in self.code.iter().enumerate() {
            g.set(
                1 + k,
                0,
                Cell {
                    base: Col::Wall,
                    shape: Shape::Full,
                    fg: OBJECT_COLS[c],
                    ch: b'1' + c as u8,
                },
            );
        }
        for (i, b) in self.buttons.iter().enumerate() {
            let shape = if self.is_pressed(i) {
                Shape::Ring
            } else {
                Shape::Circle
            };
            g.set(b.0, b.1, Cell::obj(shape, OBJECT_COLS[i], b'a' + i as u8));
        }
        g.set(self.agent.0, self.agent.1, AGENT);
    }
    fn agent(&self) -> Option<(i32, i32)> {
        agent_xy(self.agent)
    }
    fn state_text(&self, out: &mut String) {
        let code: Vec<&str> = self.code.iter().map(|c| OBJECT_COL_NAMES[*c]).collect();
        out.push_str(&format!(
            "agent at ({},{}); code strip: {}; {} pressed so far",
            self.agent.0,
            self.agent.1,
            code.join(", "),
            self.pressed
        ));
        for (i, b) in self.buttons.iter().enumerate() {
            out.push_str(&format!(
                "; {} button at ({},{})",
                OBJECT_COL_NAMES[i], b.0, b.1
            ));
        }
    }
    fn hint(&mut self, out: &mut String) {
        if let Some(n) = self.next() {
            out.push_str(&format!("press the {} button next", OBJECT_COL_NAMES[n]));
        }
    }
    fn subgoal(&mut self, out: &mut String) {
        // The action-style extra is already a subgoal (which button), no move.
        self.hint(out);
        if out.is_empty() {
            out.push_str("every button of the code is pressed");
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "Move with up/down/left/right; `interact` presses the button you stand on. Press the \
             buttons in the order of the code strip on the top wall, left to right; a wrong \
             button fails the episode. Text: digits on row 0 are the code (1 red, 2 blue, 3 green, \
             4 yellow), letters are buttons (a red, b blue, c green, d yellow), A you."
        } else {
            "Move with up/down/left/right; `interact` presses the button you stand on. Press the \
             buttons in the REVERSE order of the code strip on the top wall (right to left); a \
             wrong button fails the episode. Text: digits on row 0 are the code (1 red, 2 blue, \
             3 green, 4 yellow), letters are buttons (a red, b blue, c green, d yellow), A you."
        });
    }
    fn horizon(&self, scale: u32) -> u32 {
        8 + 10 * scale
    }
}
