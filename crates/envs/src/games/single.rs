//! The single-turn families besides counting and reachability: one image, one answer.
//! Each rules text says what every answer means; the legal mask is exactly the valid answers.

use envdist_core::{ActionId, ActionMask, Rng};

use super::util::random_cells;
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, OBJECT_COL_NAMES, OBJECT_COLS, Shape};

fn judge(a: ActionId, answer: usize) -> Status {
    if a.answer_value() == Some(answer) {
        Status::Won
    } else {
        Status::Lost
    }
}

fn answer_action(k: usize) -> ActionId {
    ActionId::answer(k).unwrap_or(ActionId::WAIT)
}

const SHAPES: [Shape; 6] = [
    Shape::Full,
    Shape::Circle,
    Shape::Diamond,
    Shape::Ring,
    Shape::Cross,
    Shape::Bar,
];
const SHAPE_NAMES: [&str; 6] = ["square", "disc", "diamond", "ring", "plus", "bar"];
const SHAPE_CH: [u8; 6] = [b'S', b'C', b'D', b'R', b'P', b'B'];

// ---------------------------------------------------------------- odd-one-out

/// `odd-one-out`: items in reading order on a 3x3 board; all alike but one, which differs in
/// colour or in shape. Answer its index. Scale = items, 4..=9.
#[derive(Default)]
pub struct OddOneOut {
    items: Vec<(Shape, Col, usize, usize)>,
    odd: usize,
    by_colour: bool,
}

impl OddOneOut {
    pub fn boxed(_rule: u8) -> Box<dyn Game> {
        Box::<Self>::default()
    }
}

impl Game for OddOneOut {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        let s = rng.index(6);
        let c = rng.index(8);
        self.by_colour = rng.chance(0.5);
        self.odd = rng.index(n);
        let (os, oc) = if self.by_colour {
            (s, (c + 1 + rng.index(7)) % 8)
        } else {
            ((s + 1 + rng.index(5)) % 6, c)
        };
        self.items = (0..n)
            .map(|i| {
                if i == self.odd {
                    (SHAPES[os], OBJECT_COLS[oc], os, oc)
                } else {
                    (SHAPES[s], OBJECT_COLS[c], s, c)
                }
            })
            .collect();
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.push(if self.by_colour {
            "compare-colour"
        } else {
            "compare-shape"
        });
        judge(a, self.odd)
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.items.len())
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.odd)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(3, 3, Cell::FLOOR);
        for (i, it) in self.items.iter().enumerate() {
            g.cells[i] = Cell::obj(it.0, it.1, SHAPE_CH[it.2]);
        }
    }
    fn state_text(&self, out: &mut String) {
        let list: Vec<String> = self
            .items
            .iter()
            .enumerate()
            .map(|(i, it)| format!("{i}: {} {}", OBJECT_COL_NAMES[it.3], SHAPE_NAMES[it.2]))
            .collect();
        out.push_str(&list.join("; "));
    }
    fn hint(&mut self, out: &mut String) {
        out.push_str(&format!(
            "item {} is the only one with a different {}",
            self.odd,
            if self.by_colour { "colour" } else { "shape" }
        ));
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "Items are numbered 0..{} in reading order (rows from the top, left to right). All \
             but one share colour and shape; answer_k names the odd one. Text letters are \
             shapes: S square, C disc, D diamond, R ring, P plus, B bar.",
            self.items.len() - 1
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
}

// ---------------------------------------------------------------- relative-position

/// `relative-position`: where is the red object relative to the blue one (same row or same
/// column)? answer_0 left, answer_1 right, answer_2 above, answer_3 below. Grey distractors.
/// Scale = objects, 2..=6. Rule 1 (the `mirrored` twin) asks where blue is relative to red.
#[derive(Default)]
pub struct RelPos {
    rule: u8,
    red: (usize, usize),
    blue: (usize, usize),
    grey: Vec<(usize, usize)>,
}

impl RelPos {
    pub fn boxed(rule: u8) -> Box<dyn Game> {
        Box::new(Self {
            rule,
            ..Self::default()
        })
    }
    fn answer(&self) -> usize {
        let (a, b) = if self.rule == 0 {
            (self.red, self.blue)
        } else {
            (self.blue, self.red)
        };
        if a.1 == b.1 {
            if a.0 < b.0 { 0 } else { 1 }
        } else if a.1 < b.1 {
            2
        } else {
            3
        }
    }
}

const N5: usize = 5;

impl Game for RelPos {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.red = (rng.index(N5), rng.index(N5));
        loop {
            self.blue = if rng.chance(0.5) {
                (rng.index(N5), self.red.1)
            } else {
                (self.red.0, rng.index(N5))
            };
            if self.blue != self.red {
                break;
            }
        }
        let (r, b) = (self.red, self.blue);
        self.grey = random_cells(N5, N5, scale as usize - 2, rng, |p| p != r && p != b);
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.push(if self.answer() < 2 {
            "left-right"
        } else {
            "above-below"
        });
        if self.rule == 1 {
            tags.push("negation");
        }
        judge(a, self.answer())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(4)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(N5, N5, Cell::FLOOR);
        for p in &self.grey {
            g.set(p.0, p.1, Cell::obj(Shape::Full, Col::Grey, b'g'));
        }
        g.set(
            self.red.0,
            self.red.1,
            Cell::obj(Shape::Full, Col::Red, b'r'),
        );
        g.set(
            self.blue.0,
            self.blue.1,
            Cell::obj(Shape::Full, Col::Blue, b'b'),
        );
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "red at ({},{}); blue at ({},{}); {} grey distractors",
            self.red.0,
            self.red.1,
            self.blue.0,
            self.blue.1,
            self.grey.len()
        ));
    }
    fn hint(&mut self, out: &mut String) {
        const W: [&str; 4] = ["left of", "right of", "above", "below"];
        let (a, b) = if self.rule == 0 {
            ("red", "blue")
        } else {
            ("blue", "red")
        };
        out.push_str(&format!(
            "the {a} object is {} the {b} one",
            W[self.answer()]
        ));
    }
    fn rules(&self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "Where is the red object relative to the blue one? They share a row or a column. \
             answer_0 left of it, answer_1 right of it, answer_2 above it, answer_3 below it. \
             Text: r red, b blue, g grey, . empty."
        } else {
            "Where is the blue object relative to the red one? They share a row or a column. \
             answer_0 left of it, answer_1 right of it, answer_2 above it, answer_3 below it. \
             Text: r red, b blue, g grey, . empty."
        });
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
}

// ---------------------------------------------------------------- pattern-next

/// `pattern-next`: the top row repeats a colour cycle; which of the four candidates in the
/// bottom row comes next? Scale 1..=3: period 2, 3, 4 (shown length period + 2).
#[derive(Default)]
pub struct PatternNext {
    seq: Vec<usize>,
    cands: Vec<usize>,
    answer: usize,
    period: usize,
}

impl PatternNext {
    pub fn boxed(_rule: u8) -> Box<dyn Game> {
        Box::<Self>::default()
    }
}

impl Game for PatternNext {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.period = scale as usize + 1;
        let mut cols: Vec<usize> = (0..8).collect();
        rng.shuffle(&mut cols);
        let cycle = cols[..self.period].to_vec();
        let len = self.period + 2;
        self.seq = (0..len).map(|i| cycle[i % self.period]).collect();
        let next = cycle[len % self.period];
        let mut others: Vec<usize> = (0..8).filter(|c| *c != next).collect();
        rng.shuffle(&mut others);
        self.cands = others[..3].to_vec();
        self.answer = rng.index(4);
        self.cands.insert(self.answer, next);
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["sequence-induce", "colour-cycle"]);
        judge(a, self.answer)
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(4)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer)
    }
    fn draw(&self, g: &mut Grid) {
        let w = self.seq.len().max(4);
        g.reset(w, 3, Cell::FLOOR);
        for (i, c) in self.seq.iter().enumerate() {
            g.set(
                i,
                0,
                Cell::obj(Shape::Circle, OBJECT_COLS[*c], b'a' + *c as u8),
            );
        }
        for (i, c) in self.cands.iter().enumerate() {
            g.set(
                i,
                2,
                Cell::obj(Shape::Full, OBJECT_COLS[*c], b'a' + *c as u8),
            );
        }
    }
    fn state_text(&self, out: &mut String) {
        let names = |v: &[usize]| {
            v.iter()
                .map(|c| OBJECT_COL_NAMES[*c])
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "sequence: {}; candidates 0..3: {}",
            names(&self.seq),
            names(&self.cands)
        ));
    }
    fn hint(&mut self, out: &mut String) {
        out.push_str(&format!(
            "the colours repeat every {} items, so the next is {} (candidate {})",
            self.period, OBJECT_COL_NAMES[self.cands[self.answer]], self.answer
        ));
    }
    fn rules(&self, out: &mut String) {
        out.push_str(
            "The discs in the top row follow a repeating cycle of colours. answer_k picks \
             candidate k (the squares of the bottom row, left to right) as the next colour. \
             Text letters are colours: a red, b blue, c green, d yellow, e purple, f orange, \
             g cyan, h pink.",
        );
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
}

// ---------------------------------------------------------------- symmetry

/// `symmetry`: is the two-colour pattern mirror-symmetric about its vertical axis? Scale
/// 1..=3: sides 4, 6, 8. answer_1 = yes. Rule 1 (the `asymmetric` twin) asks the inverse.
#[derive(Default)]
pub struct Symmetry {
    rule: u8,
    n: usize,
    cells: Vec<bool>,
    symmetric: bool,
    broken: Option<(usize, usize)>,
}

impl Symmetry {
    pub fn boxed(rule: u8) -> Box<dyn Game> {
        Box::new(Self {
            rule,
            ..Self::default()
        })
    }
    fn answer(&self) -> usize {
        (self.symmetric == (self.rule == 0)) as usize
    }
}

impl Game for Symmetry {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = 2 + 2 * scale as usize;
        self.n = n;
        self.cells = vec![false; n * n];
        for y in 0..n {
            for x in 0..n / 2 {
                let v = rng.chance(0.45);
                self.cells[y * n + x] = v;
                self.cells[y * n + n - 1 - x] = v;
            }
        }
        self.symmetric = rng.chance(0.5);
        self.broken = None;
        if !self.symmetric {
            let (x, y) = (n / 2 + rng.index(n / 2), rng.index(n));
            self.cells[y * n + x] = !self.cells[y * n + x];
            self.broken = Some((x, y));
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["symmetry-detect", "compare-colour"]);
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
        g.reset(self.n, self.n, Cell::FLOOR);
        for (i, on) in self.cells.iter().enumerate() {
            g.cells[i] = if *on {
                Cell::solid(Col::Purple, b'#')
            } else {
                Cell::FLOOR
            };
        }
    }
    fn state_text(&self, out: &mut String) {
        let on = self.cells.iter().filter(|c| **c).count();
        out.push_str(&format!(
            "{}x{} pattern with {on} purple cells",
            self.n, self.n
        ));
    }
    fn hint(&mut self, out: &mut String) {
        match self.broken {
            None => out.push_str("every row reads the same from both ends"),
            Some((x, y)) => out.push_str(&format!(
                "cell ({x},{y}) differs from its mirror cell ({},{y})",
                self.n - 1 - x
            )),
        }
    }
    fn rules(&self, out: &mut String) {
        out.push_str(if self.rule == 0 {
            "Is the pattern of purple cells mirror-symmetric left to right? answer_1 = yes, \
             symmetric; answer_0 = no. Text: # purple, . empty."
        } else {
            "Is the pattern of purple cells asymmetric (not mirror-symmetric left to right)? \
             answer_1 = yes, asymmetric; answer_0 = no. Text: # purple, . empty."
        });
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
}

// ---------------------------------------------------------------- dice-sum

/// `dice-sum`: add the pips of the dice on a 3x3 board. Scale = dice, 1..=3 (with three dice
/// faces go up to 5, so the sum stays within the 16 answers).
#[derive(Default)]
pub struct DiceSum {
    dice: Vec<((usize, usize), u8)>,
}

impl DiceSum {
    pub fn boxed(_rule: u8) -> Box<dyn Game> {
        Box::<Self>::default()
    }
    fn sum(&self) -> usize {
        self.dice.iter().map(|d| d.1 as usize).sum()
    }
    fn max_sum(&self) -> usize {
        self.dice.len() * if self.dice.len() >= 3 { 5 } else { 6 }
    }
}

impl Game for DiceSum {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let n = scale as usize;
        let top = if n >= 3 { 5 } else { 6 };
        let cells = random_cells(3, 3, n, rng, |_| true);
        self.dice = cells
            .into_iter()
            .map(|p| (p, rng.range_inclusive(1, top) as u8))
            .collect();
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.push("pip-count");
        if self.dice.len() > 1 {
            tags.push("add");
        }
        judge(a, self.sum())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.max_sum() + 1)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.sum())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(3, 3, Cell::FLOOR);
        for (p, v) in &self.dice {
            g.set(p.0, p.1, Cell::obj(Shape::Die(*v), Col::White, b'0' + *v));
        }
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!("{} dice on a 3x3 board", self.dice.len()));
    }
    fn hint(&mut self, out: &mut String) {
        let faces: Vec<String> = self.dice.iter().map(|d| d.1.to_string()).collect();
        out.push_str(&format!(
            "the faces show {} = {}",
            faces.join(" + "),
            self.sum()
        ));
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "Add the pips of all dice. answer_k means the sum is k (0..={}). Text: digits are die \
             faces, . empty.",
            self.max_sum()
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
}

// ---------------------------------------------------------------- largest-region

/// `largest-region`: the board is split into one connected region per colour (nearest-seed
/// regions); which colour's region is largest? answer_k = the k-th colour of the rules list.
/// Scale 1..=3: 3, 4, 5 colours on 5x5, 6x6, 7x7. Rule 1 (the `smallest` twin) asks for the
/// smallest region.
#[derive(Default)]
pub struct Regions {
    rule: u8,
    n: usize,
    k: usize,
    owner: Vec<usize>,
    sizes: Vec<usize>,
}

impl Regions {
    pub fn boxed(rule: u8) -> Box<dyn Game> {
        Box::new(Self {
            rule,
            ..Self::default()
        })
    }
    fn answer(&self) -> usize {
        let it = self.sizes.iter().enumerate();
        if self.rule == 0 {
            it.max_by_key(|(_, s)| **s).map_or(0, |(i, _)| i)
        } else {
            it.min_by_key(|(_, s)| **s).map_or(0, |(i, _)| i)
        }
    }
}

impl Game for Regions {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.k = 2 + scale as usize;
        self.n = 4 + scale as usize;
        let n = self.n;
        loop {
            let seeds = random_cells(n, n, self.k, rng, |_| true);
            self.owner = (0..n * n)
                .map(|i| {
                    let (x, y) = (i % n, i / n);
                    (0..self.k)
                        .min_by_key(|s| seeds[*s].0.abs_diff(x) + seeds[*s].1.abs_diff(y))
                        .unwrap_or(0)
                })
                .collect();
            self.sizes = (0..self.k)
                .map(|s| self.owner.iter().filter(|o| **o == s).count())
                .collect();
            let mut sorted = self.sizes.clone();
            sorted.sort();
            // Unique largest and unique smallest, so both twins have one right answer.
            if sorted[0] < sorted[1] && sorted[self.k - 2] < sorted[self.k - 1] {
                break;
            }
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["region-fill", "compare-size"]);
        judge(a, self.answer())
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.k)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer())
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(self.n, self.n, Cell::FLOOR);
        for (i, o) in self.owner.iter().enumerate() {
            g.cells[i] = Cell::obj(Shape::Full, OBJECT_COLS[*o], b'a' + *o as u8);
        }
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "{} coloured regions on a {}x{} board",
            self.k, self.n, self.n
        ));
    }
    fn hint(&mut self, out: &mut String) {
        let s: Vec<String> = (0..self.k)
            .map(|i| format!("{} {}", OBJECT_COL_NAMES[i], self.sizes[i]))
            .collect();
        out.push_str(&format!("region sizes: {}", s.join(", ")));
    }
    fn rules(&self, out: &mut String) {
        let list: Vec<String> = (0..self.k)
            .map(|i| format!("answer_{i} {}", OBJECT_COL_NAMES[i]))
            .collect();
        out.push_str(&format!(
            "Which colour covers the {} area? {}. Text: letters a.. are the colours in that order.",
            if self.rule == 0 {
                "LARGEST"
            } else {
                "SMALLEST"
            },
            list.join(", ")
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
}

// ---------------------------------------------------------------- clock-direction

/// `clock-direction`: which way does the arrow from the centre point? Scale 1 uses 4
/// directions (answer_0 up, 1 right, 2 down, 3 left); scale 2 uses 8, clockwise from up.
#[derive(Default)]
pub struct Clock {
    dirs: usize,
    dir: usize,
}

const DIR8: [(i32, i32); 8] = [
    (0, -1),
    (1, -1),
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
];
const DIR8_NAMES: [&str; 8] = [
    "up",
    "up-right",
    "right",
    "down-right",
    "down",
    "down-left",
    "left",
    "up-left",
];

impl Clock {
    pub fn boxed(_rule: u8) -> Box<dyn Game> {
        Box::<Self>::default()
    }
    fn vector(&self) -> (i32, i32) {
        DIR8[self.dir * (8 / self.dirs)]
    }
}

impl Game for Clock {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        self.dirs = if scale <= 1 { 4 } else { 8 };
        self.dir = rng.index(self.dirs);
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["angle-read", "orientation"]);
        judge(a, self.dir)
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.dirs)
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.dir)
    }
    fn draw(&self, g: &mut Grid) {
        g.reset(7, 7, Cell::FLOOR);
        let (dx, dy) = self.vector();
        g.set(3, 3, Cell::obj(Shape::Circle, Col::White, b'o'));
        for k in 1..=2 {
            g.set(
                (3 + dx * k) as usize,
                (3 + dy * k) as usize,
                Cell::solid(Col::Yellow, b'*'),
            );
        }
        g.set(
            (3 + dx * 3) as usize,
            (3 + dy * 3) as usize,
            Cell::obj(Shape::Diamond, Col::Red, b'>'),
        );
    }
    fn state_text(&self, out: &mut String) {
        out.push_str(&format!(
            "an arrow from the centre; {} possible directions",
            self.dirs
        ));
    }
    fn hint(&mut self, out: &mut String) {
        let (dx, dy) = self.vector();
        out.push_str(&format!(
            "the red tip is at offset ({dx},{dy}) from the centre times 3: {}",
            DIR8_NAMES[self.dir * (8 / self.dirs)]
        ));
    }
    fn rules(&self, out: &mut String) {
        let names: Vec<String> = (0..self.dirs)
            .map(|k| format!("answer_{k} {}", DIR8_NAMES[k * (8 / self.dirs)]))
            .collect();
        out.push_str(&format!(
            "The yellow arrow starts at the white centre disc and ends at the red tip. Which way \
             does it point? {}. Text: o centre, * shaft, > tip.",
            names.join(", ")
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
}

// ---------------------------------------------------------------- shape-match

/// `shape-match`: the reference shape is in the top row; which candidate in the bottom row
/// has the same shape (colours are random and do not matter)? Scale = candidates, 2..=6.
#[derive(Default)]
pub struct ShapeMatch {
    reference: (usize, Col),
    cands: Vec<(usize, Col)>,
    answer: usize,
}

impl ShapeMatch {
    pub fn boxed(_rule: u8) -> Box<dyn Game> {
        Box::<Self>::default()
    }
}

impl Game for ShapeMatch {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let k = scale as usize;
        let mut shapes: Vec<usize> = (0..6).collect();
        rng.shuffle(&mut shapes);
        let col = |rng: &mut Rng| OBJECT_COLS[rng.index(8)];
        self.reference = (shapes[0], col(rng));
        self.answer = rng.index(k);
        self.cands.clear();
        let mut next = 1;
        for i in 0..k {
            let s = if i == self.answer {
                shapes[0]
            } else {
                next += 1;
                shapes[next - 1]
            };
            let c = col(rng);
            self.cands.push((s, c));
        }
    }
    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend(["match-shape", "compare-shape"]);
        judge(a, self.answer)
    }
    fn legal(&self) -> ActionMask {
        ActionMask::answers(self.cands.len())
    }
    fn oracle(&mut self) -> ActionId {
        answer_action(self.answer)
    }
    fn draw(&self, g: &mut Grid) {
        let w = self.cands.len().max(3);
        g.reset(w, 3, Cell::FLOOR);
        g.set(
            w / 2,
            0,
            Cell::obj(
                SHAPES[self.reference.0],
                self.reference.1,
                SHAPE_CH[self.reference.0],
            ),
        );
        for (i, (s, c)) in self.cands.iter().enumerate() {
            g.set(i, 2, Cell::obj(SHAPES[*s], *c, SHAPE_CH[*s]));
        }
    }
    fn state_text(&self, out: &mut String) {
        let c: Vec<&str> = self.cands.iter().map(|c| SHAPE_NAMES[c.0]).collect();
        out.push_str(&format!(
            "reference: {}; candidates: {}",
            SHAPE_NAMES[self.reference.0],
            c.join(", ")
        ));
    }
    fn hint(&mut self, out: &mut String) {
        out.push_str(&format!(
            "candidate {} is also a {}",
            self.answer, SHAPE_NAMES[self.reference.0]
        ));
    }
    fn rules(&self, out: &mut String) {
        out.push_str(&format!(
            "The top row shows a reference shape; the bottom row shows candidates 0..{} left to \
             right. answer_k picks the candidate with the same shape; colour does not matter. \
             Text letters are shapes: S square, C disc, D diamond, R ring, P plus, B bar.",
            self.cands.len() - 1
        ));
    }
    fn horizon(&self, _: u32) -> u32 {
        1
    }
}
