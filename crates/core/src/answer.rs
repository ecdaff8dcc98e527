//! What a single-turn environment's answers mean, and reading them from the words a
//! vision-language model writes.
//!
//! Single-turn environments answer with the slots `answer_0 .. answer_15` of the shared action
//! space, and each family gives the slots its own meaning (`answer_3` is the count 3 in
//! `count-objects`, "below" in `relative-position`, the fourth candidate in `pattern-next`).
//! An agent asked "How many red objects are there?" writes `3`; asked "Is the goal
//! reachable?" it writes `yes`. An environment states what its slots mean as an
//! [`AnswerVocabulary`]: per answer action, typed [`Meaning`]s (a number, yes/no, a claim, a
//! direction, a colour, a shape, a board cell, a numbered item). This module owns the words of
//! each meaning, so every family reads `three`, `north-east` or `circle` alike, and
//! [`AnswerVocabulary::parse`] reads a reply against them: the CLI, the Python envs and the
//! verl reward all call it. The slot form (`answer_3`) and the other action names (`wait`, and
//! the moves where no answer means a direction) still read as [`ActionId::parse_text`] reads
//! them.
//!
//! ```
//! use envdist_core::{ActionId, AnswerVocabulary, Meaning};
//!
//! // "Can the white agent reach the green goal?": answer_1 = yes, answer_0 = no.
//! let mut v = AnswerVocabulary::default();
//! v.push(ActionId::answer(1).unwrap(), [Meaning::Truth(true), Meaning::claim("reachable", true)]);
//! v.push(ActionId::answer(0).unwrap(), [Meaning::Truth(false), Meaning::claim("reachable", false)]);
//! assert_eq!(v.parse("Yes.").unwrap(), ActionId::answer(1).unwrap());
//! assert_eq!(v.parse("<answer>not reachable</answer>").unwrap(), ActionId::answer(0).unwrap());
//! assert_eq!(v.parse("answer_1").unwrap(), ActionId::answer(1).unwrap());
//! assert_eq!(v.parse("wait").unwrap(), ActionId::WAIT);
//! let e = v.parse("maybe").unwrap_err().to_string();
//! assert!(e.contains("yes / reachable (answer_1)"), "{e}");
//! ```

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use crate::action::{ActionId, NUM_ANSWERS, ParseActionTextError, focus, words};

/// A heading on the screen (y grows downward), clockwise from up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Up (north, above).
    Up,
    /// Up and to the right (north-east).
    UpRight,
    /// Right (east).
    Right,
    /// Down and to the right (south-east).
    DownRight,
    /// Down (south, below).
    Down,
    /// Down and to the left (south-west).
    DownLeft,
    /// Left (west).
    Left,
    /// Up and to the left (north-west).
    UpLeft,
}

/// Words of the vertical half of a heading (the first of each list is the canonical one).
const UP_WORDS: &[&str] = &["up", "above", "upward", "upwards", "north", "top"];
const DOWN_WORDS: &[&str] = &[
    "down",
    "below",
    "downward",
    "downwards",
    "south",
    "bottom",
    "beneath",
    "under",
    "underneath",
];
const LEFT_WORDS: &[&str] = &["left", "west", "leftward", "leftwards"];
const RIGHT_WORDS: &[&str] = &["right", "east", "rightward", "rightwards"];
/// Words that begin a diagonal (`upper left`, `north-east`, `down and to the right`).
const UP_DIAGONAL: &[&str] = &["up", "upper", "top", "north"];
const DOWN_DIAGONAL: &[&str] = &["down", "lower", "bottom", "south"];
const LEFT_DIAGONAL: &[&str] = &["left", "west"];
const RIGHT_DIAGONAL: &[&str] = &["right", "east"];

impl Direction {
    /// The eight headings, clockwise from up.
    pub const CLOCKWISE: [Direction; 8] = [
        Direction::Up,
        Direction::UpRight,
        Direction::Right,
        Direction::DownRight,
        Direction::Down,
        Direction::DownLeft,
        Direction::Left,
        Direction::UpLeft,
    ];

    /// The canonical name: `up`, `up-right`, ...
    pub fn name(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::UpRight => "up-right",
            Direction::Right => "right",
            Direction::DownRight => "down-right",
            Direction::Down => "down",
            Direction::DownLeft => "down-left",
            Direction::Left => "left",
            Direction::UpLeft => "up-left",
        }
    }

    fn phrases(self) -> Vec<String> {
        let diagonal = |v: &[&str], h: &[&str], compass: &str| {
            let mut out = vec![compass.to_string()];
            for a in v {
                for b in h {
                    out.push(format!("{a} {b}"));
                    out.push(format!("{b} {a}"));
                    out.push(format!("{a} and {b}"));
                    out.push(format!("{a} and to the {b}"));
                }
            }
            // The canonical `up-right` (read as the two words `up right`) first.
            out.rotate_left(1);
            out
        };
        let list = |w: &[&str]| w.iter().map(|s| s.to_string()).collect();
        match self {
            Direction::Up => list(UP_WORDS),
            Direction::Down => list(DOWN_WORDS),
            Direction::Left => list(LEFT_WORDS),
            Direction::Right => list(RIGHT_WORDS),
            Direction::UpRight => diagonal(UP_DIAGONAL, RIGHT_DIAGONAL, "northeast"),
            Direction::DownRight => diagonal(DOWN_DIAGONAL, RIGHT_DIAGONAL, "southeast"),
            Direction::DownLeft => diagonal(DOWN_DIAGONAL, LEFT_DIAGONAL, "southwest"),
            Direction::UpLeft => diagonal(UP_DIAGONAL, LEFT_DIAGONAL, "northwest"),
        }
    }
}

/// Colour names every vocabulary with a colour reads (so that a colour the environment does
/// not offer is reported as such, not skipped); the first of a group is the canonical name.
const COLOURS: &[&[&str]] = &[
    &["red"],
    &["blue"],
    &["green"],
    &["yellow"],
    &["purple", "violet"],
    &["orange"],
    &["cyan", "turquoise"],
    &["pink", "magenta"],
    &["white"],
    &["black"],
    &["grey", "gray"],
    &["brown"],
];

/// Shape names, as [`COLOURS`]: the canonical name, then the words read as it.
const SHAPES: &[&[&str]] = &[
    &["square"],
    &["disc", "disk", "circle", "dot"],
    &["diamond", "rhombus"],
    &["ring", "annulus"],
    &["plus", "cross"],
    &["bar", "line", "stripe"],
    &["triangle"],
    &["star"],
];

/// Negations read before a [`Meaning::Claim`]'s word (`isn't` is read as `isn t`).
const NEGATIONS: &[&str] = &["not", "t", "never"];

const NUMBER_WORDS: [&str; 21] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
];

const ORDINALS: [(&str, &str); 10] = [
    ("first", "1st"),
    ("second", "2nd"),
    ("third", "3rd"),
    ("fourth", "4th"),
    ("fifth", "5th"),
    ("sixth", "6th"),
    ("seventh", "7th"),
    ("eighth", "8th"),
    ("ninth", "9th"),
    ("tenth", "10th"),
];

/// Nouns followed by a number that name an answer slot (`answer 3`, `option 3`: the slot form).
const SLOT_NOUNS: &[&str] = &["answer", "option", "choice"];
/// Nouns followed by a number that name a [`Meaning::Item`] (`item 3`, `candidate 3`).
const ITEM_NOUNS: &[&str] = &["item", "candidate"];

/// What one answer action means. An answer may mean several things at once (the odd item is
/// the third, the top-right one and the only blue one); the words of every meaning read as it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Meaning {
    /// A count, sum or difference: `3`, `three` (`zero` and `none` for 0).
    Number(u32),
    /// Yes or no: `yes`, `true`, `yeah` / `no`, `false`, `nope`.
    Truth(bool),
    /// That a property holds (`reachable`) or not (`not reachable`, `isn't reachable`): the
    /// adjective the question asks about, so `blocked` can answer "Is the goal reachable?".
    Claim {
        /// The adjective, one lower-case word (`reachable`, `symmetric`).
        word: &'static str,
        /// Whether this answer says it holds.
        holds: bool,
    },
    /// A heading or a relative position: `up`/`above`/`north`, `up-right`/`north-east`/`top
    /// right`, ...
    Direction(Direction),
    /// A colour, by its lower-case name (`red`; `gray` reads as `grey`).
    Colour(&'static str),
    /// A shape, by its lower-case name (`disc`; `circle` reads as `disc`).
    Shape(&'static str),
    /// A cell of a small board, row 0 at the top: `top left`, `centre`, `bottom right` (rows
    /// and columns of up to three: top, middle, bottom; left, middle, right).
    Cell {
        /// Row from the top.
        row: u8,
        /// Column from the left.
        col: u8,
        /// Rows of the board.
        rows: u8,
        /// Columns of the board.
        cols: u8,
    },
    /// The item numbered `k` as the rules number them from 0 (`item 2`, `candidate 2`), or by
    /// its English ordinal, which counts from 1 (`the third`, `3rd`).
    Item(u32),
}

impl Meaning {
    /// A claim that the property `word` holds, or does not.
    pub fn claim(word: &'static str, holds: bool) -> Self {
        Meaning::Claim { word, holds }
    }

    /// Every way the parser reads this meaning, the canonical one first (`3`, `three`).
    pub fn phrases(&self) -> Vec<String> {
        match *self {
            Meaning::Number(k) => {
                let mut out = vec![k.to_string()];
                if let Some(w) = NUMBER_WORDS.get(k as usize) {
                    out.push(w.to_string());
                }
                if k == 0 {
                    out.push("none".into());
                }
                out
            }
            Meaning::Truth(true) => ["yes", "true", "yeah", "yep"].map(String::from).to_vec(),
            Meaning::Truth(false) => ["no", "false", "nope"].map(String::from).to_vec(),
            Meaning::Claim { word, holds: true } => vec![word.to_string()],
            Meaning::Claim { word, holds: false } => {
                NEGATIONS.iter().map(|n| format!("{n} {word}")).collect()
            }
            Meaning::Direction(d) => d.phrases(),
            Meaning::Colour(c) => names_of(COLOURS, c),
            Meaning::Shape(s) => names_of(SHAPES, s),
            Meaning::Cell {
                row,
                col,
                rows,
                cols,
            } => cell_phrases(row, col, rows, cols),
            Meaning::Item(k) => {
                let mut out: Vec<String> = ITEM_NOUNS.iter().map(|n| format!("{n} {k}")).collect();
                if let Some((word, short)) = ORDINALS.get(k as usize) {
                    out.push(word.to_string());
                    out.push(short.to_string());
                }
                out
            }
        }
    }

    /// The canonical phrase (`3`, `yes`, `not reachable`, `up-right`, `top left`, `item 2`).
    pub fn phrase(&self) -> String {
        match *self {
            Meaning::Direction(d) => d.name().to_string(),
            Meaning::Cell {
                row,
                col,
                rows,
                cols,
            } if cell_phrases(row, col, rows, cols).is_empty() => {
                format!("row {row} column {col}")
            }
            _ => self.phrases().swap_remove(0),
        }
    }

    /// Which kind of meaning this is: the kinds a vocabulary holds decide which words its
    /// parser reads at all.
    fn kind(&self) -> Kind {
        match self {
            Meaning::Number(_) => Kind::Number,
            Meaning::Truth(_) => Kind::Truth,
            Meaning::Claim { .. } => Kind::Claim,
            Meaning::Direction(_) => Kind::Direction,
            Meaning::Colour(_) => Kind::Colour,
            Meaning::Shape(_) => Kind::Shape,
            Meaning::Cell { .. } => Kind::Cell,
            Meaning::Item(_) => Kind::Item,
        }
    }
}

impl fmt::Display for Meaning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.phrase())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Number,
    Truth,
    Claim,
    Direction,
    Colour,
    Shape,
    Cell,
    Item,
}

/// The words of `name` in a table of synonyms: its group (canonical first), or the name alone.
fn names_of(table: &[&[&str]], name: &str) -> Vec<String> {
    table
        .iter()
        .find(|g| g.contains(&name))
        .map(|g| g.iter().map(|s| s.to_string()).collect())
        .unwrap_or_else(|| vec![name.to_string()])
}

/// The canonical name a word of a synonym table stands for (`gray` -> `grey`).
fn canonical_of(table: &[&[&'static str]], name: &'static str) -> &'static str {
    table
        .iter()
        .find(|g| g.contains(&name))
        .map_or(name, |g| g[0])
}

/// Words of position `i` on an axis of `n` cells: the two ends and the middle of an odd axis.
fn axis_words(
    i: u8,
    n: u8,
    first: &'static [&'static str],
    last: &'static [&'static str],
) -> &'static [&'static str] {
    const MIDDLE: &[&str] = &["middle", "centre", "center"];
    if n > 3 || i >= n {
        &[]
    } else if i == 0 && n > 1 {
        first
    } else if i + 1 == n && n > 1 {
        last
    } else if n % 2 == 1 && i == n / 2 {
        MIDDLE
    } else {
        &[]
    }
}

fn cell_phrases(row: u8, col: u8, rows: u8, cols: u8) -> Vec<String> {
    let r = axis_words(row, rows, &["top", "upper"], &["bottom", "lower"]);
    let c = axis_words(col, cols, &["left"], &["right"]);
    let mut out = Vec::new();
    for a in r {
        for b in c {
            out.push(format!("{a} {b}"));
            out.push(format!("{b} {a}"));
        }
    }
    // The centre of a board is named alone (`the centre`, `the middle one`).
    if r.first() == Some(&"middle") && c.first() == Some(&"middle") {
        out.insert(0, "centre".into());
        out.insert(1, "center".into());
        out.insert(2, "middle".into());
    }
    out
}

/// What a single-turn environment's answer actions mean, in its current state (which colour
/// each candidate has is drawn per episode). Declared by the environment
/// ([`crate::Env::answer_vocabulary`]); empty where actions have no meaning beyond their names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnswerVocabulary {
    answers: Vec<(ActionId, Vec<Meaning>)>,
}

/// What one span of the reply names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Meaning(Meaning),
    /// `answer_k`, `answer k`, `option k`, or a reply that is a bare number (what
    /// [`ActionId::parse_text`] reads as `answer_k`).
    Slot(usize),
}

/// One span of the reply that names something, and the answer actions it fits.
#[derive(Debug, Clone)]
struct Mention {
    words: String,
    actions: BTreeSet<ActionId>,
    /// Named as a slot (`answer 16`), not by a meaning.
    slot_form: bool,
}

impl AnswerVocabulary {
    /// Add `meanings` to `action` (its meanings accumulate).
    pub fn push(&mut self, action: ActionId, meanings: impl IntoIterator<Item = Meaning>) {
        let canon = |m: Meaning| match m {
            Meaning::Colour(c) => Meaning::Colour(canonical_of(COLOURS, c)),
            Meaning::Shape(s) => Meaning::Shape(canonical_of(SHAPES, s)),
            m => m,
        };
        let meanings = meanings.into_iter().map(canon);
        match self.answers.iter_mut().find(|(a, _)| *a == action) {
            Some((_, ms)) => ms.extend(meanings),
            None => self.answers.push((action, meanings.collect())),
        }
    }

    /// The answer actions and their meanings, in the order they were declared.
    pub fn answers(&self) -> &[(ActionId, Vec<Meaning>)] {
        &self.answers
    }

    /// The meanings of `action` (empty if it has none).
    pub fn meanings(&self, action: ActionId) -> &[Meaning] {
        self.answers
            .iter()
            .find(|(a, _)| *a == action)
            .map_or(&[], |(_, m)| m.as_slice())
    }

    /// Whether no action has a meaning (multi-turn environments).
    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// The answers as an error says what was expected: `a number from 0 to 15 ...` where
    /// `answer_k` means the number k, else each answer's words and its slot (`yes / reachable
    /// (answer_1), no / unreachable / blocked (answer_0)`); the action names without a
    /// vocabulary.
    pub fn describe(&self) -> String {
        if self.answers.is_empty() {
            return crate::action::ACTION_NAMES_EXPECTED.to_string();
        }
        let numbered = self.answers.iter().all(|(a, ms)| {
            ms.first().is_some_and(|m| {
                a.answer_value()
                    .is_some_and(|k| *m == Meaning::Number(k as u32))
            })
        });
        if numbered {
            let ks: Vec<usize> = self
                .answers
                .iter()
                .filter_map(|(a, _)| a.answer_value())
                .collect();
            let (lo, hi) = (
                ks.iter().min().copied().unwrap_or(0),
                ks.iter().max().copied().unwrap_or(0),
            );
            return format!(
                "a number from {lo} to {hi} in digits or words (`3`, `three`; answer_k means k), or \
                 an action name"
            );
        }
        let list: Vec<String> = self
            .answers
            .iter()
            .map(|(a, ms)| {
                // A claim is shown where it holds: `blocked` rather than `not reachable`.
                let shown: Vec<String> = ms
                    .iter()
                    .filter(|m| !matches!(m, Meaning::Claim { holds: false, .. }))
                    .map(Meaning::phrase)
                    .collect();
                format!("{} ({a})", shown.join(" / "))
            })
            .collect();
        format!(
            "one of {}; or an action name (`answer_k`, `wait`, ...)",
            list.join(", ")
        )
    }

    /// Read the action a reply names, against this vocabulary. The reply is read where
    /// [`ActionId::parse_text`] reads it (the last `<answer>..</answer>`, `\boxed{..}`, the text
    /// after `Answer:`; else all of it), leaving out sentences that end in a question mark (a
    /// reply that repeats the question); there every phrase of the vocabulary's kinds of
    /// meaning is found (the longest at each word: `not reachable` is one phrase, `up right`
    /// another), with the slot forms (`answer_3`, `option 3`, a bare number). Each phrase fits
    /// the answers that carry its meaning; the reply names the one answer that every phrase
    /// fitting some but not all answers fits (`the blue disc` where every item is a disc: the
    /// blue one). Several answers left, none left, or only phrases that fit no answer (`purple`
    /// where no candidate is purple) are errors naming the phrases and this vocabulary's
    /// answers. A reply naming no phrase of the vocabulary is read by [`ActionId::parse_text`]
    /// (`wait`, `left` in an environment whose answers are not directions), and its errors
    /// then list this vocabulary's answers.
    pub fn parse(&self, text: &str) -> Result<ActionId, ParseActionTextError> {
        if !self.answers.is_empty() {
            let lower = text.to_lowercase();
            let part = focus(&lower).unwrap_or(&lower);
            let lexicon = Lexicon::new(self);
            let mut mentions = lexicon.mentions(&without_questions(part), part);
            if mentions.is_empty() {
                mentions = lexicon.mentions(part, part);
            }
            if !mentions.is_empty() {
                return self.resolve(text, &mentions);
            }
        }
        ActionId::parse_text(text)
            .map_err(|e| ParseActionTextError::new(text, e.reason, self.describe()))
    }

    fn resolve(&self, text: &str, mentions: &[Mention]) -> Result<ActionId, ParseActionTextError> {
        let all: BTreeSet<ActionId> = self.answers.iter().map(|(a, _)| *a).collect();
        let err = |reason: String| ParseActionTextError::new(text, reason, self.describe());
        let names =
            |s: &BTreeSet<ActionId>| s.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ");
        let informative: Vec<&Mention> = mentions
            .iter()
            .filter(|m| !m.actions.is_empty() && m.actions != all)
            .collect();
        if let Some(first) = informative.first() {
            let left = informative
                .iter()
                .fold(first.actions.clone(), |acc, m| &acc & &m.actions);
            let mut it = left.iter();
            return match (it.next(), it.next()) {
                (Some(a), None) => Ok(*a),
                (None, _) => Err(err(format!(
                    "it names several different answers ({}); give one, alone or inside \
                     <answer></answer>",
                    distinct(informative.iter().map(|m| format!(
                        "`{}` ({})",
                        m.words,
                        names(&m.actions)
                    )))
                ))),
                _ => Err(err(format!(
                    "it is ambiguous: {} fits {}",
                    distinct(informative.iter().map(|m| format!("`{}`", m.words))),
                    names(&left)
                ))),
            };
        }
        // Only phrases that fit every answer (`disc` where every item is a disc), or none.
        if let Some(m) = mentions.iter().find(|m| !m.actions.is_empty()) {
            let mut it = m.actions.iter();
            return match (it.next(), it.next()) {
                (Some(a), None) => Ok(*a),
                _ => Err(err(format!(
                    "it is ambiguous: `{}` fits every answer ({})",
                    m.words,
                    names(&all)
                ))),
            };
        }
        Err(err(match mentions.first() {
            Some(m) if m.slot_form => format!("{} is out of range", m.words),
            Some(m) => format!("`{}` is not one of this question's answers", m.words),
            None => "it names no answer".to_string(),
        }))
    }
}

/// The phrases a vocabulary reads, by their first word.
struct Lexicon<'a> {
    vocabulary: &'a AnswerVocabulary,
    kinds: BTreeSet<Kind>,
    phrases: HashMap<String, Vec<(Vec<String>, Meaning)>>,
}

impl<'a> Lexicon<'a> {
    fn new(vocabulary: &'a AnswerVocabulary) -> Self {
        let declared: Vec<Meaning> = vocabulary
            .answers
            .iter()
            .flat_map(|(_, ms)| ms.iter().copied())
            .collect();
        let kinds: BTreeSet<Kind> = declared.iter().map(Meaning::kind).collect();
        // Every meaning of each kind present, so that a phrase of the kind that fits no answer
        // (`purple`, `up-right` where only four headings are answers) is reported, not skipped.
        let mut universe: BTreeSet<Meaning> = declared.iter().copied().collect();
        for kind in &kinds {
            match kind {
                Kind::Number => {
                    universe.extend((0..NUMBER_WORDS.len() as u32).map(Meaning::Number))
                }
                Kind::Truth => universe.extend([Meaning::Truth(true), Meaning::Truth(false)]),
                Kind::Claim => {
                    for m in &declared {
                        if let Meaning::Claim { word, holds } = *m {
                            universe.insert(Meaning::claim(word, !holds));
                        }
                    }
                }
                Kind::Direction => universe.extend(Direction::CLOCKWISE.map(Meaning::Direction)),
                Kind::Colour => universe.extend(COLOURS.iter().map(|g| Meaning::Colour(g[0]))),
                Kind::Shape => universe.extend(SHAPES.iter().map(|g| Meaning::Shape(g[0]))),
                Kind::Cell => {
                    for m in &declared {
                        if let Meaning::Cell { rows, cols, .. } = *m {
                            for row in 0..rows.min(3) {
                                for col in 0..cols.min(3) {
                                    universe.insert(Meaning::Cell {
                                        row,
                                        col,
                                        rows,
                                        cols,
                                    });
                                }
                            }
                        }
                    }
                }
                Kind::Item => universe.extend((0..NUM_ANSWERS as u32).map(Meaning::Item)),
            }
        }
        let mut phrases: HashMap<String, Vec<(Vec<String>, Meaning)>> = HashMap::new();
        for m in universe {
            for p in m.phrases() {
                let ws: Vec<String> = words(&p).into_iter().map(String::from).collect();
                if let Some(first) = ws.first() {
                    phrases.entry(first.clone()).or_default().push((ws, m));
                }
            }
        }
        for list in phrases.values_mut() {
            // Longest first: `not reachable` before `reachable`, `up right` before `up`.
            list.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        }
        Self {
            vocabulary,
            kinds,
            phrases,
        }
    }

    /// The answer actions a target fits.
    fn fits(&self, target: Target) -> BTreeSet<ActionId> {
        match target {
            Target::Slot(k) => ActionId::answer(k).into_iter().collect(),
            Target::Meaning(m) => self
                .vocabulary
                .answers
                .iter()
                .filter(|(_, ms)| ms.contains(&m))
                .map(|(a, _)| *a)
                .collect(),
        }
    }

    /// The phrases of `part` (already lower-cased); `whole` is the reply's focused part, whose
    /// being a bare number makes that number the slot form.
    fn mentions(&self, part: &str, whole: &str) -> Vec<Mention> {
        let ws = words(part);
        let bare_number = matches!(words(whole).as_slice(), [w] if is_number(w));
        let mut out = Vec::new();
        let mut i = 0;
        while i < ws.len() {
            let (target, len) = match self.at(&ws[i..], bare_number) {
                Some(found) => found,
                None => {
                    i += 1;
                    continue;
                }
            };
            let actions = match target {
                Some(t) => self.fits(t),
                None => BTreeSet::new(),
            };
            let mut words = ws[i..i + len].join(" ");
            if words.len() > 40 {
                // A run of ten thousand digits is named by its start.
                words.truncate(40);
                words.push_str("...");
            }
            out.push(Mention {
                words,
                actions,
                slot_form: matches!(target, Some(Target::Slot(_))) || ws[i].starts_with("answer"),
            });
            i += len;
        }
        out
    }

    /// What the words starting at `ws[0]` name, and how many words that takes; `Some((None,
    /// n))` for a number no answer can be (`answer 99`, a 30-digit count). A phrase of two
    /// kinds (`top right`: a board cell and a heading) reads as the first found; no family
    /// declares both kinds.
    fn at(&self, ws: &[&str], bare_number: bool) -> Option<(Option<Target>, usize)> {
        let w = ws[0];
        let next_number = ws.get(1).filter(|n| is_number(n)).map(|n| number(n));
        if let Some(k) = w.strip_prefix("answer_").filter(|k| is_number(k)) {
            return Some((slot(number(k)), 1));
        }
        if SLOT_NOUNS.contains(&w)
            && let Some(k) = next_number
        {
            return Some((slot(k), 2));
        }
        if self.kinds.contains(&Kind::Item)
            && ITEM_NOUNS.contains(&w)
            && let Some(k) = next_number
        {
            return Some((k.map(|k| Target::Meaning(Meaning::Item(k))), 2));
        }
        if let Some(list) = self.phrases.get(w)
            && let Some((p, m)) = list
                .iter()
                .find(|(p, _)| ws.len() >= p.len() && ws[..p.len()] == p[..])
        {
            return Some((Some(Target::Meaning(*m)), p.len()));
        }
        if is_number(w) {
            if self.kinds.contains(&Kind::Number) {
                return Some((number(w).map(|k| Target::Meaning(Meaning::Number(k))), 1));
            }
            if bare_number {
                return Some((slot(number(w)), 1));
            }
        }
        None
    }
}

fn is_number(w: &str) -> bool {
    !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())
}

/// The value of a run of digits, `None` when it does not fit a `u32`.
fn number(w: &str) -> Option<u32> {
    w.parse().ok()
}

fn slot(k: Option<u32>) -> Option<Target> {
    k.map(|k| Target::Slot(k as usize))
}

/// The distinct items in their first order, joined by `, `; at most six, then `...` (a reply
/// of a thousand numbers gets a short error).
fn distinct(items: impl Iterator<Item = String>) -> String {
    const SHOWN: usize = 6;
    let mut seen = BTreeSet::new();
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if seen.insert(item.clone()) {
            if out.len() == SHOWN {
                out.push("...".into());
                break;
            }
            out.push(item);
        }
    }
    out.join(", ")
}

/// `text` without its sentences that end in a question mark.
fn without_questions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut sentence = String::new();
    for c in text.chars() {
        sentence.push(c);
        if matches!(c, '.' | '!' | '?' | '\n') {
            if c != '?' {
                out.push_str(&sentence);
            }
            sentence.clear();
        }
    }
    out.push_str(&sentence);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(k: usize) -> ActionId {
        ActionId::answer(k).unwrap()
    }

    fn numbers() -> AnswerVocabulary {
        let mut v = AnswerVocabulary::default();
        for k in 0..NUM_ANSWERS {
            v.push(answer(k), [Meaning::Number(k as u32)]);
        }
        v
    }

    fn reach() -> AnswerVocabulary {
        let mut v = AnswerVocabulary::default();
        v.push(
            answer(1),
            [
                Meaning::Truth(true),
                Meaning::claim("reachable", true),
                Meaning::claim("blocked", false),
            ],
        );
        v.push(
            answer(0),
            [
                Meaning::Truth(false),
                Meaning::claim("reachable", false),
                Meaning::claim("blocked", true),
            ],
        );
        v
    }

    /// Three items on a 3x3 board: the odd one (index 2, top right) is blue, all are discs.
    fn items() -> AnswerVocabulary {
        let mut v = AnswerVocabulary::default();
        for (k, colour) in ["red", "red", "blue"].into_iter().enumerate() {
            v.push(
                answer(k),
                [
                    Meaning::Cell {
                        row: 0,
                        col: k as u8,
                        rows: 3,
                        cols: 3,
                    },
                    Meaning::Item(k as u32),
                    Meaning::Colour(colour),
                    Meaning::Shape("circle"),
                ],
            );
        }
        v
    }

    /// `answer_k` is the k-th of `headings`.
    fn headings(headings: &[Direction]) -> AnswerVocabulary {
        let mut v = AnswerVocabulary::default();
        for (k, d) in headings.iter().enumerate() {
            v.push(answer(k), [Meaning::Direction(*d)]);
        }
        v
    }

    fn check(v: &AnswerVocabulary, cases: &[(&str, ActionId)]) {
        for (text, want) in cases {
            assert_eq!(v.parse(text), Ok(*want), "{text:?}");
        }
    }

    fn refused(v: &AnswerVocabulary, text: &str, says: &[&str]) {
        let e = v.parse(text).unwrap_err().to_string();
        for s in says {
            assert!(e.contains(s), "{text:?}: {e}");
        }
    }

    #[test]
    fn numbers_read_in_digits_and_words() {
        let v = numbers();
        check(
            &v,
            &[
                ("3", answer(3)),
                ("three", answer(3)),
                ("There are 3 red objects.", answer(3)),
                ("<answer>Twelve</answer>", answer(12)),
                ("Answer: 0", answer(0)),
                ("none", answer(0)),
                ("answer_5", answer(5)),
                ("three (3)", answer(3)),
                ("How many are there? 4", answer(4)),
                ("wait", ActionId::WAIT),
                ("left", ActionId::LEFT),
            ],
        );
        refused(
            &v,
            "4 + 2 = 6",
            &[
                "several different answers",
                "`4` (answer_4)",
                "a number from 0 to 15",
            ],
        );
        refused(
            &v,
            "twenty",
            &["`twenty` is not one of this question's answers"],
        );
        refused(&v, "99999999999999999999999", &["not one of"]);
        refused(&v, "answer 16", &["out of range"]);
        refused(
            &v,
            "I cannot tell",
            &["names no action", "a number from 0 to 15"],
        );
    }

    #[test]
    fn yes_no_and_claims() {
        let v = reach();
        check(
            &v,
            &[
                ("yes", answer(1)),
                ("Yes.", answer(1)),
                ("No", answer(0)),
                ("reachable", answer(1)),
                ("It is not reachable.", answer(0)),
                ("the goal isn't reachable", answer(0)),
                ("blocked", answer(0)),
                ("not blocked", answer(1)),
                ("Yes, the goal is reachable.", answer(1)),
                ("Can the agent reach the goal? No.", answer(0)),
                ("Is it reachable? No, it is blocked.", answer(0)),
                ("<answer>yes</answer>", answer(1)),
                ("answer_0", answer(0)),
                ("1", answer(1)),
            ],
        );
        refused(
            &v,
            "yes, it is blocked",
            &[
                "several different answers",
                "`yes` (answer_1)",
                "`blocked` (answer_0)",
            ],
        );
        refused(
            &v,
            "perhaps",
            &[
                "names no action",
                "yes / reachable (answer_1), no / blocked (answer_0)",
            ],
        );
    }

    #[test]
    fn directions_shadow_the_moves_only_where_they_are_answers() {
        use Direction::{Down, Left, Right, Up};
        let v = headings(&[Left, Right, Up, Down]);
        check(
            &v,
            &[
                ("left", answer(0)),
                ("It is to the right of it.", answer(1)),
                ("above", answer(2)),
                ("below", answer(3)),
                ("up", answer(2)),
                ("SOUTH", answer(3)),
                ("wait", ActionId::WAIT),
            ],
        );
        refused(
            &v,
            "up-right",
            &["`up right` is not one of this question's answers"],
        );
        let eight = headings(&Direction::CLOCKWISE);
        check(
            &eight,
            &[
                ("up-right", answer(1)),
                ("north-east", answer(1)),
                ("northeast", answer(1)),
                ("It points to the lower left.", answer(5)),
                ("up and to the left", answer(7)),
                ("right", answer(2)),
            ],
        );
        // Without directions among the answers, `up` is the move it always was.
        assert_eq!(numbers().parse("up"), Ok(ActionId::UP));
    }

    #[test]
    fn descriptions_pick_the_one_item_they_fit() {
        let v = items();
        check(
            &v,
            &[
                ("top right", answer(2)),
                ("the blue one", answer(2)),
                ("the blue disc", answer(2)),
                ("circle, blue", answer(2)),
                ("item 2", answer(2)),
                ("the third", answer(2)),
                ("3rd", answer(2)),
                ("2", answer(2)),
                ("the first item", answer(0)),
                ("upper-left", answer(0)),
            ],
        );
        refused(
            &v,
            "the red one",
            &["ambiguous", "`red` fits answer_0, answer_1"],
        );
        refused(&v, "the disc", &["ambiguous", "fits every answer"]);
        refused(
            &v,
            "bottom right",
            &["`bottom right` is not one of this question's answers"],
        );
        refused(&v, "the green one", &["`green` is not one of"]);
        refused(&v, "the red top right one", &["several different answers"]);
        let e = v.parse("?").unwrap_err().to_string();
        assert!(
            e.contains("top left / item 0 / red / disc (answer_0)"),
            "{e}"
        );
    }

    #[test]
    fn an_empty_vocabulary_reads_as_parse_text() {
        let v = AnswerVocabulary::default();
        for text in [
            "left",
            "answer 3",
            "<answer>wait</answer>",
            "yes",
            "3",
            "left then right",
        ] {
            assert_eq!(v.parse(text), ActionId::parse_text(text), "{text:?}");
        }
    }

    #[test]
    fn every_phrase_reads_back() {
        let eight = headings(&Direction::CLOCKWISE);
        for v in [numbers(), reach(), eight] {
            for (a, ms) in v.answers() {
                for m in ms {
                    for p in m.phrases() {
                        for text in [
                            p.clone(),
                            format!("<answer>{p}</answer>"),
                            format!("Answer: {p}."),
                        ] {
                            assert_eq!(v.parse(&text), Ok(*a), "{text:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn synonyms_are_one_meaning() {
        let mut v = AnswerVocabulary::default();
        v.push(answer(0), [Meaning::Colour("gray")]);
        v.push(answer(1), [Meaning::Shape("circle")]);
        assert_eq!(v.meanings(answer(0)), [Meaning::Colour("grey")]);
        assert_eq!(v.meanings(answer(1)), [Meaning::Shape("disc")]);
        assert_eq!(v.parse("gray"), Ok(answer(0)));
        assert_eq!(v.parse("a disk"), Ok(answer(1)));
        assert!(v.meanings(answer(2)).is_empty());
    }
}
