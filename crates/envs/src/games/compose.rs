//! The compositional sub-pool (single-turn): every environment is one *operation* (the
//! ability: count, compare, locate, name a colour, match colours) applied to one *look* (the
//! object set: squares, diamonds, rings, bars), so that two environments share an ability
//! exactly when they share the computation, not because a tag says so.
//!
//! Built so that transfer can follow skills (the pixel testbed's bet 1,
//! docs/experiments/BETS.md):
//! - **One glyph vocabulary.** Every environment draws on the same 6 x 6 board at every
//!   scale, so a board cell is the same patch of pixels everywhere; a look is one shape in the
//!   shared colours, and the clutter (grey plus signs) is common to all of them. Scale adds
//!   clutter and objects, never changes the board.
//! - **Answers in fixed ranges by meaning.** A slot means one thing in every environment of
//!   the sub-pool ([`SLOTS`]): numbers 0-5, then no/yes, then the four quarters of the board,
//!   then four colours. The legal mask is exactly the operation's range.
//! - **Tags that name the operation and the look**, emitted at every step, so the profiles
//!   see both.

use envdist_core::{ActionId, ActionMask, AnswerVocabulary, Meaning, Rng};

use super::util::{Pos, random_cells};
use crate::env::{Game, Status};
use crate::render::{Cell, Col, Grid, Shape};

/// Side of the board at every scale.
const SIDE: usize = 6;
/// Largest count any operation asks for (its answer slots are `0..=MAX_COUNT`).
const MAX_COUNT: usize = 5;

/// Where each kind of answer lives in the shared slots, the same in every environment.
pub(crate) struct Slots {
    /// `answer_k` is the number k for `k <= MAX_COUNT`.
    pub number: usize,
    /// `no`, then `yes`.
    pub truth: usize,
    /// The quarters of the board: top left, top right, bottom left, bottom right.
    pub quarter: usize,
    /// [`COLOURS`], in order.
    pub colour: usize,
}

/// The slot layout of the sub-pool.
pub(crate) const SLOTS: Slots = Slots {
    number: 0,
    truth: MAX_COUNT + 1,
    quarter: MAX_COUNT + 3,
    colour: MAX_COUNT + 7,
};

/// The index of red in [`COLOURS`]: the object `locate` asks for.
const RED: usize = 0;

/// The colours objects are drawn in, and their names.
const COLOURS: [(Col, &str); 4] = [
    (Col::Red, "red"),
    (Col::Green, "green"),
    (Col::Blue, "blue"),
    (Col::Yellow, "yellow"),
];

/// What is asked of the objects: the ability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// How many are there? A number.
    Count,
    /// Are there more on the left half than on the right (always by one)? Yes or no.
    Compare,
    /// In which quarter of the board is the red one (among others of other colours)? A
    /// position.
    Locate,
    /// What colour is the one object? A colour.
    NameColour,
    /// Do the two objects have the same colour? Yes or no.
    MatchColour,
}

impl Operation {
    /// Every operation, in the order the family table registers them.
    pub const ALL: [Operation; 5] = [
        Operation::Count,
        Operation::Compare,
        Operation::Locate,
        Operation::NameColour,
        Operation::MatchColour,
    ];

    /// The family-name stem and the ability tag.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Count => "count",
            Operation::Compare => "compare-sides",
            Operation::Locate => "locate",
            Operation::NameColour => "name-colour",
            Operation::MatchColour => "same-colour",
        }
    }

    /// The question about `look`, in the words its answers parse from.
    pub fn instruction(self, look: &Look) -> String {
        let (one, many) = (look.singular, look.plural);
        match self {
            Operation::Count => format!("How many {many} are there?"),
            Operation::Compare => {
                format!("Are there more {many} on the left half than on the right half?")
            }
            Operation::Locate => format!("In which quarter of the board is the red {one}?"),
            Operation::NameColour => format!("What colour is the {one}?"),
            Operation::MatchColour => format!("Do the two {many} have the same colour?"),
        }
    }
}

/// An object set: one shape, named.
pub(crate) struct Look {
    pub shape: Shape,
    pub singular: &'static str,
    pub plural: &'static str,
    /// The ability tag of the look.
    pub tag: &'static str,
    /// Its letter in the text observation.
    pub ch: u8,
}

/// The looks, in the order the family table registers them: shapes whose pixels differ at
/// the study's 32-pixel canvas, where a cell of the 6 x 6 board is 5 pixels (a disc would
/// draw there exactly as the square does; `tests/compositional.rs` keeps them apart).
pub(crate) const LOOKS: [Look; 4] = [
    Look {
        shape: Shape::Full,
        singular: "square",
        plural: "squares",
        tag: "look-squares",
        ch: b's',
    },
    Look {
        shape: Shape::Diamond,
        singular: "diamond",
        plural: "diamonds",
        tag: "look-diamonds",
        ch: b'd',
    },
    Look {
        shape: Shape::Ring,
        singular: "ring",
        plural: "rings",
        tag: "look-rings",
        ch: b'r',
    },
    Look {
        shape: Shape::Bar,
        singular: "bar",
        plural: "bars",
        tag: "look-bars",
        ch: b'b',
    },
];

/// The clutter every environment of the sub-pool shares: grey plus signs.
const CLUTTER: Cell = Cell::obj(Shape::Cross, Col::Grey, b'+');

/// One operation on one look; `OP` and `LOOK` index [`Operation::ALL`] and [`LOOKS`] (the
/// family table takes a function pointer per family).
#[derive(Default)]
pub struct Composed<const OP: usize, const LOOK: usize> {
    objects: Vec<(Pos, usize)>,
    clutter: Vec<Pos>,
    answer: usize,
}

/// A family's game, as a `Family::make`.
pub(crate) fn composed<const OP: usize, const LOOK: usize>(_rule: u8) -> Box<dyn Game> {
    Box::<Composed<OP, LOOK>>::default()
}

impl<const OP: usize, const LOOK: usize> Composed<OP, LOOK> {
    const OPERATION: Operation = Operation::ALL[OP];
    const OBJECTS: &'static Look = &LOOKS[LOOK];

    /// Objects on the left half minus those on the right.
    fn left_minus_right(&self) -> i32 {
        self.objects
            .iter()
            .map(|((x, _), _)| if *x < SIDE / 2 { 1 } else { -1 })
            .sum()
    }
}

impl<const OP: usize, const LOOK: usize> Game for Composed<OP, LOOK> {
    fn reset(&mut self, rng: &mut Rng, scale: u32) {
        let s = scale as usize;
        let left = |(x, _): Pos| x < SIDE / 2;
        let cells = match Self::OPERATION {
            // One more object on one half than on the other: the halves never tie, and the
            // answer is never read off at a glance.
            Operation::Compare => {
                let k = rng.range_inclusive(1, s as u32 + 1) as usize;
                let (more, fewer) = if rng.chance(0.5) {
                    (k + 1, k)
                } else {
                    (k, k + 1)
                };
                let mut cells = random_cells(SIDE, SIDE, more, rng, left);
                cells.extend(random_cells(SIDE, SIDE, fewer, rng, |p| !left(p)));
                cells
            }
            op => {
                let n = match op {
                    Operation::Count => {
                        rng.range_inclusive(1, (2 + s).min(MAX_COUNT) as u32) as usize
                    }
                    // The red one among `s` others of other colours.
                    Operation::Locate => 1 + s,
                    Operation::NameColour => 1,
                    _ => 2,
                };
                random_cells(SIDE, SIDE, n, rng, |_| true)
            }
        };
        self.objects = cells
            .iter()
            .map(|&p| (p, rng.index(COLOURS.len())))
            .collect();
        match Self::OPERATION {
            Operation::Locate => {
                // The first object is the red one; the others are never red.
                self.objects[0].1 = RED;
                for o in &mut self.objects[1..] {
                    o.1 = 1 + rng.index(COLOURS.len() - 1);
                }
            }
            // Half the pairs match (independent colours would match a quarter of the time).
            Operation::MatchColour if rng.chance(0.5) => self.objects[1].1 = self.objects[0].1,
            _ => {}
        }
        self.clutter = random_cells(SIDE, SIDE, 2 * s, rng, |p| !cells.contains(&p));
        let first = self.objects[0];
        self.answer = match Self::OPERATION {
            Operation::Count => SLOTS.number + self.objects.len(),
            Operation::Compare => SLOTS.truth + usize::from(self.left_minus_right() > 0),
            Operation::Locate => {
                let ((x, y), _) = first;
                SLOTS.quarter + 2 * usize::from(y >= SIDE / 2) + usize::from(x >= SIDE / 2)
            }
            Operation::NameColour => SLOTS.colour + first.1,
            Operation::MatchColour => {
                SLOTS.truth + usize::from(self.objects[1].1 == self.objects[0].1)
            }
        };
    }

    fn step(&mut self, a: ActionId, _rng: &mut Rng, tags: &mut Vec<&'static str>) -> Status {
        tags.extend([Self::OPERATION.name(), Self::OBJECTS.tag]);
        if a.answer_value() == Some(self.answer) {
            Status::Won
        } else {
            Status::Lost
        }
    }

    fn legal(&self) -> ActionMask {
        let (first, len) = match Self::OPERATION {
            Operation::Count => (SLOTS.number, MAX_COUNT + 1),
            Operation::Compare | Operation::MatchColour => (SLOTS.truth, 2),
            Operation::Locate => (SLOTS.quarter, 4),
            Operation::NameColour => (SLOTS.colour, COLOURS.len()),
        };
        (first..first + len)
            .filter_map(ActionId::answer)
            .fold(ActionMask::NONE, |m, a| m.with(a))
    }

    fn oracle(&mut self) -> ActionId {
        ActionId::answer(self.answer).unwrap_or(ActionId::WAIT)
    }

    fn draw(&self, g: &mut Grid) {
        g.reset(SIDE, SIDE, Cell::FLOOR);
        for &(x, y) in &self.clutter {
            g.set(x, y, CLUTTER);
        }
        for &((x, y), c) in &self.objects {
            g.set(
                x,
                y,
                Cell::obj(Self::OBJECTS.shape, COLOURS[c].0, Self::OBJECTS.ch),
            );
        }
    }

    fn state_text(&self, out: &mut String) {
        let objects: Vec<String> = self
            .objects
            .iter()
            .map(|((x, y), c)| format!("{} {} at ({x},{y})", COLOURS[*c].1, Self::OBJECTS.singular))
            .collect();
        out.push_str(&format!(
            "{SIDE}x{SIDE} board: {}; {} grey plus signs",
            objects.join(", "),
            self.clutter.len()
        ));
    }

    /// The action-style hint: the answer's evidence, stated.
    fn hint(&mut self, out: &mut String) {
        let look = Self::OBJECTS;
        let at: Vec<String> = self
            .objects
            .iter()
            .map(|((x, y), _)| format!("({x},{y})"))
            .collect();
        out.push_str(&match Self::OPERATION {
            Operation::Count => format!(
                "the {} are at {}: {} in all",
                look.plural,
                at.join(" "),
                self.objects.len()
            ),
            Operation::Compare => {
                let left = (self.objects.len() as i32 + self.left_minus_right()) / 2;
                let right = self.objects.len() as i32 - left;
                format!("{left} on the left half, {right} on the right half")
            }
            Operation::Locate => {
                let quarter = ["top left", "top right", "bottom left", "bottom right"]
                    [self.answer - SLOTS.quarter];
                format!(
                    "the red {} is at {}: the {quarter} quarter",
                    look.singular, at[0]
                )
            }
            Operation::NameColour => {
                format!(
                    "the {} at {} is {}",
                    look.singular, at[0], COLOURS[self.objects[0].1].1
                )
            }
            Operation::MatchColour => {
                let colours: Vec<&str> = self.objects.iter().map(|o| COLOURS[o.1].1).collect();
                format!(
                    "the {} at {} are {}",
                    look.plural,
                    at.join(" "),
                    colours.join(" and ")
                )
            }
        });
    }

    fn subgoal(&mut self, out: &mut String) {
        let look = Self::OBJECTS;
        out.push_str(&match Self::OPERATION {
            Operation::Count => format!(
                "count the {}; the grey plus signs do not count",
                look.plural
            ),
            Operation::Compare => format!("count the {} in each half of the board", look.plural),
            Operation::Locate => format!(
                "find the red {} and see which quarter of the board holds it",
                look.singular
            ),
            Operation::NameColour => format!("look at the colour of the {}", look.singular),
            Operation::MatchColour => format!("compare the colours of the two {}", look.plural),
        });
    }

    fn rules(&self, out: &mut String) {
        let look = Self::OBJECTS;
        let range = match Self::OPERATION {
            Operation::Count => format!(
                "answer_k is the number k of {} (k from 0 to {MAX_COUNT})",
                look.plural
            ),
            Operation::Compare | Operation::MatchColour => {
                format!("answer_{} no, answer_{} yes", SLOTS.truth, SLOTS.truth + 1)
            }
            Operation::Locate => ["top left", "top right", "bottom left", "bottom right"]
                .iter()
                .enumerate()
                .map(|(k, q)| format!("answer_{} {q}", SLOTS.quarter + k))
                .collect::<Vec<_>>()
                .join(", "),
            Operation::NameColour => COLOURS
                .iter()
                .enumerate()
                .map(|(k, (_, name))| format!("answer_{} {name}", SLOTS.colour + k))
                .collect::<Vec<_>>()
                .join(", "),
        };
        out.push_str(&format!(
            "{range}. Grey plus signs are clutter. Text: {} {}, + clutter, . empty.",
            char::from(look.ch),
            look.singular
        ));
    }

    fn horizon(&self, _scale: u32) -> u32 {
        1
    }

    fn answers(&self, out: &mut AnswerVocabulary) {
        let slot = |k: usize| ActionId::answer(k).unwrap_or(ActionId::WAIT);
        match Self::OPERATION {
            Operation::Count => {
                for k in 0..=MAX_COUNT {
                    out.push(slot(SLOTS.number + k), [Meaning::Number(k as u32)]);
                }
            }
            Operation::Compare | Operation::MatchColour => {
                for truth in [false, true] {
                    out.push(
                        slot(SLOTS.truth + usize::from(truth)),
                        [Meaning::Truth(truth)],
                    );
                }
            }
            Operation::Locate => {
                for (k, (row, col)) in [(0, 0), (0, 1), (1, 0), (1, 1)].into_iter().enumerate() {
                    out.push(
                        slot(SLOTS.quarter + k),
                        [Meaning::Cell {
                            row,
                            col,
                            rows: 2,
                            cols: 2,
                        }],
                    );
                }
            }
            Operation::NameColour => {
                for (k, (_, name)) in COLOURS.iter().enumerate() {
                    out.push(slot(SLOTS.colour + k), [Meaning::Colour(name)]);
                }
            }
        }
    }
}

/// One family's game maker per operation (rows) and look (columns).
type Make = fn(u8) -> Box<dyn Game>;
macro_rules! makers_of {
    ($op:literal) => {
        [
            composed::<$op, 0>,
            composed::<$op, 1>,
            composed::<$op, 2>,
            composed::<$op, 3>,
        ]
    };
}
const MAKERS: [[Make; LOOKS.len()]; Operation::ALL.len()] = [
    makers_of!(0),
    makers_of!(1),
    makers_of!(2),
    makers_of!(3),
    makers_of!(4),
];

/// What a family of the sub-pool says in words: its name, question and ability tags (made
/// once per process: the family table holds `'static` text).
struct Words {
    name: String,
    instruction: String,
    abilities: [&'static str; 2],
}

fn words() -> &'static [Words] {
    static WORDS: std::sync::OnceLock<Vec<Words>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        Operation::ALL
            .iter()
            .flat_map(|op| {
                LOOKS.iter().map(move |look| Words {
                    name: format!("{}-{}", op.name(), look.plural),
                    instruction: op.instruction(look),
                    abilities: [op.name(), look.tag],
                })
            })
            .collect()
    })
}

/// The sub-pool's families, operation-major: each a classic and a noisy variant, no twin and
/// no palette themes (a theme would rename the colours the colour questions ask about).
pub(crate) fn families() -> Vec<super::Family> {
    words()
        .iter()
        .enumerate()
        .map(|(i, w)| super::Family {
            name: &w.name,
            turn: envdist_core::Turn::Single,
            split: envdist_core::Split::Pool,
            scale: (1, 3),
            abilities: &w.abilities,
            make: MAKERS[i / LOOKS.len()][i % LOOKS.len()],
            instruction: &w.instruction,
            twin: None,
            themes: 0,
            obs: &[crate::env::ObsMod::Noise],
        })
        .collect()
}
