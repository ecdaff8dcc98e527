//! `tic-tac-toe` against a scripted opponent who opens: `answer_k` places your X in cell k
//! (row-major 0..8). Scale 1..=3 is the opponent's strength (random, win/block, minimax with
//! 20% random moves). Success = not losing. Rule 1 (the `misere` twin): whoever completes a
//! line loses. Solver: full minimax.

use std::collections::HashMap;

use envdist_core::{ActionId, ActionMask, Rng};

use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

const LINES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

#[derive(Default)]
pub struct TicTacToe {
    pub(super) rule: u8,
    level: u32,
    /// 0 empty, 1 X (agent), 2 O (opponent).
    b: [u8; 9],
    memo: HashMap<([u8; 9], u8), i8>,
}

fn line_of(b: &[u8; 9], p: u8) -> bool {
    LINES.iter().any(|l| l.iter().all(|i| b[*i] == p))
}

impl TicTacToe {
    /// Value for X with `to_move` to play: 1 X wins, 0 draw, -1 O wins.
    fn value(&mut self, b: [u8; 9], to_move: u8) -> i8 {
        if let Some(v) = self.memo.get(&(b, to_move)) {
            return *v;
        }
        let v = if let Some(r) = self.result(&b) {
            r
        } else {
            let vals: Vec<i8> = (0..9)
                .filter(|i| b[*i] == 0)
                .map(|i| {
                    let mut c = b;
                    c[i] = to_move;
                    self.value(c, 3 - to_move)
                })
                .collect();
            if to_move == 1 {
                vals.into_iter().max().unwrap_or(0)
            } else {
                vals.into_iter().min().unwrap_or(0)
            }
        };
        self.memo.insert((b, to_move), v);
        v
    }
    /// Final result for X, if the game is over.
    fn result(&self, b: &[u8; 9]) -> Option<i8> {
        let sign = if self.rule == 0 { 1 } else { -1 };
        if line_of(b, 1) {
            Some(sign)
        } else if line_of(b, 2) {
            Some(-sign)
        } else if b.iter().all(|c| *c != 0) {
            Some(0)
        } else {
            None
        }
    }
    fn best(&mut self, p: u8) -> Option<usize> {
        let b = self.b;
        let mut best: Option<(i8, usize)> = None;
        // Prefer the centre, then corners, on equal value.
        for i in [4, 0, 2, 6, 8, 1, 3, 5, 7] {
            if b[i] != 0 {
                continue;
            }
            let mut c = b;
            c[i] = p;
            let v = self.value(c, 3 - p) * if p == 1 { 1 } else { -1 };
            if best.is_none_or(|(bv, _)| v > bv) {
                best = Some((v, i));
            }
        }
        best.map(|(_, i)| i)
    }
    fn opponent(&mut self, rng: &mut Rng) {
        let empty: Vec<usize> = (0..9).filter(|i| self.b[*i] == 0).collect();
        if empty.is_empty() {
            return;
        }
        let random = empty[rng.index(empty.len())];
        let pick = match self.level {
            1 => random,
            2 => {
                // Complete a line (or, in misere, avoid it), else block, else random.
                let wins = |p: u8, b: &[u8; 9]| {
                    empty.iter().copied().find(|i| {
                        let mut c = *b;
                        c[*i] = p;
                        line_of(&c, p)
                    })
                };
                if self.rule == 0 {
                    wins(2, &self.b)
                        .or_else(|| wins(1, &self.b))
                        .unwrap_or(random)
                } else {
                    let safe: Vec<usize> = empty
                        .iter()
                        .copied()
                        .filter(|i| {
                            let mut c = self.b;
                            c[*i] = 2;
                            !line_of(&c, 2)
                        })
                        .collect();
                    safe.get(rng.index(safe.len().max(1)))
                        .copied()
                        .unwrap_or(random)
                }
            }
            _ => {
                if rng.chance(0.2) {
                    random
                } else {
                    self.best(2).unwrap_or(random)
                }
            }
        };
        self.b[pick] = 2;
    }
    fn status(&self) -> Status {
        match self.result(&self.b) {
            None => Status::Running,
            Some(v) if v >= 0 => Status::Won,
            Some(_) => Status::Lost,
        }
    }
}

impl Game for TicTacToe {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.level = scale;
        self.b = [0; 9];
        self.b[rng.index(9)] = 2;
    }
    fn step(&mut self, a: ActionId, rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        let Some(k) = a.answer_value().filter(|k| *k < 9 && self.b[*k] == 0) else {
            return Status::Running;
        };
        tags.push("turn-take");
        // Did this move block an opponent line (two O and this cell)?
        if LINES
            .iter()
            .any(|l| l.contains(&k) && l.iter().filter(|i| self.b[**i] == 2).count() == 2)
        {
            tags.push(if self.rule == 0 {
                "block-threat"
            } else {
                "misere-reason"
            });
        }
        self.b[k] = 1;
        if line_of(&self.b, 1) {
            tags.push("win-detect");
        }
        if self.rule == 1 {
            tags.push("misere-reason");
        }
        let s = self.status();
        if s != Status::Running {
            return s;
        }
        self.opponent(rng);
        self.status()
    }
    fn legal(&self) -> ActionMask {
        let mut m = ActionMask::NONE;
        for i in 0..9 {
            if self.b[i] == 0
                && let Some(a) = ActionId::answer(i)
            {
                m = m.with(a);
            }
        }
        m
    }
    fn oracle(&mut self) -> ActionId {
        self.best(1)
            .and_then(ActionId::answer)
            .unwrap_or(ActionId::WAIT)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(3, 3, Cell::FLOOR);
        for i in 0..9 {
            g.cells[i] = match self.b[i] {
                1 => Cell::obj(Shape::Cross, Col::Red, b'X'),
                2 => Cell::obj(Shape::Ring, Col::Blue, b'O'),
                _ => Cell::obj(Shape::Small, Col::Grey, b'.'),
            };
        }
    }
    fn state_text(&self, out: &mut String) {
        let cells = |p: u8| {
            (0..9)
                .filter(|i| self.b[*i] == p)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        out.push_str(&format!(
            "your X on cells [{}]; opponent O on cells [{}]; your move",
            cells(1),
            cells(2)
        ));
    }
    fn subgoal(&mut self, out: &mut String) {
        // Which side has a line one mark short, not which cell completes it; the rules text
        // says whether completing a line wins or loses.
        let open = |p: u8| {
            LINES.iter().any(|l| {
                l.iter().filter(|i| self.b[**i] == p).count() == 2
                    && l.iter().any(|i| self.b[*i] == 0)
            })
        };
        out.push_str(match (open(1), open(2)) {
            (true, true) => "a line of yours and a line of the opponent's each need one more mark",
            (true, false) => "a line of yours needs one more mark",
            (false, true) => "a line of the opponent's needs one more mark",
            (false, false) => "no line is one mark from complete",
        });
    }
    fn rules(&self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "You play red X against blue O. answer_k puts your X on empty cell k, numbered 0..8 \
             row by row from the top left. Three in a row wins; a draw also counts as success; \
             losing fails. Text: X you, O opponent, . empty."
        } else {
            "Misere rules: you play red X against blue O. answer_k puts your X on empty cell k, \
             numbered 0..8 row by row from the top left. Whoever completes three in a row LOSES; \
             a draw counts as success. Text: X you, O opponent, . empty."
        });
    }
    fn horizon(&self, _scale: u32) -> u32 {
        6
    }
}
