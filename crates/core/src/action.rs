//! One shared, named, discrete action space for every environment.
//!
//! Multi-turn environments use the moves, `interact` and `wait`; single-turn environments
//! answer with `answer_0` .. `answer_15` (their rules text says what each answer means, and
//! their [`crate::AnswerVocabulary`] says it to the text parser: `3`, `yes`, `left`, `red`).
//! Sharing one space lets one policy head serve the whole pool, and the text names let an
//! LLM agent play: every action parses back from its name.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Number of answer actions (`answer_0` ..= `answer_15`).
pub const NUM_ANSWERS: usize = 16;
/// Size of the shared action space.
pub const NUM_ACTIONS: usize = 6 + NUM_ANSWERS;

/// An action of the shared space, `0..NUM_ACTIONS`. Serialises as its text name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ActionId(u8);

impl ActionId {
    /// Move up (north).
    pub const UP: ActionId = ActionId(0);
    /// Move down (south).
    pub const DOWN: ActionId = ActionId(1);
    /// Move left (west).
    pub const LEFT: ActionId = ActionId(2);
    /// Move right (east).
    pub const RIGHT: ActionId = ActionId(3);
    /// Interact with what is under or in front of the agent (pick up, toggle, use, place).
    pub const INTERACT: ActionId = ActionId(4);
    /// Do nothing this turn.
    pub const WAIT: ActionId = ActionId(5);
    /// The four moves, in the order up, down, left, right.
    pub const MOVES: [ActionId; 4] = [Self::UP, Self::DOWN, Self::LEFT, Self::RIGHT];

    /// The action with this index, if it is in range.
    pub fn new(index: usize) -> Option<Self> {
        (index < NUM_ACTIONS).then_some(Self(index as u8))
    }

    /// The answer action `answer_k`, if `k < NUM_ANSWERS`.
    pub fn answer(k: usize) -> Option<Self> {
        // Lazily: `6 + k as u8` overflows for k >= 250 (`answer 255` in a reply).
        (k < NUM_ANSWERS).then(|| Self(6 + k as u8))
    }

    /// This action's index in `0..NUM_ACTIONS`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// `Some(k)` if this is `answer_k`.
    pub fn answer_value(self) -> Option<usize> {
        (self.0 >= 6).then(|| self.0 as usize - 6)
    }

    /// Grid displacement `(dx, dy)` of a move action (y grows downward), `None` otherwise.
    pub fn delta(self) -> Option<(i32, i32)> {
        match self {
            Self::UP => Some((0, -1)),
            Self::DOWN => Some((0, 1)),
            Self::LEFT => Some((-1, 0)),
            Self::RIGHT => Some((1, 0)),
            _ => None,
        }
    }

    /// The canonical text name (`up`, `interact`, `answer_3`, ...).
    pub fn name(self) -> String {
        match self.0 {
            0 => "up".into(),
            1 => "down".into(),
            2 => "left".into(),
            3 => "right".into(),
            4 => "interact".into(),
            5 => "wait".into(),
            k => format!("answer_{}", k - 6),
        }
    }

    /// All actions in index order.
    pub fn all() -> impl Iterator<Item = ActionId> {
        (0..NUM_ACTIONS as u8).map(ActionId)
    }
}

impl fmt::Display for ActionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Error parsing an action from text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown action {0:?}: expected up, down, left, right, interact, wait, or answer_0..answer_15"
)]
pub struct ParseActionError(pub String);

impl FromStr for ActionId {
    type Err = ParseActionError;
    /// Accepts the canonical names case-insensitively, plus the aliases an LLM tends to write:
    /// `north/south/west/east`, `answer 3`, `answer: 3`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let err = || ParseActionError(s.to_string());
        Ok(match t.as_str() {
            "up" | "north" => Self::UP,
            "down" | "south" => Self::DOWN,
            "left" | "west" => Self::LEFT,
            "right" | "east" => Self::RIGHT,
            "interact" => Self::INTERACT,
            "wait" | "noop" => Self::WAIT,
            _ => {
                let rest = t.strip_prefix("answer").ok_or_else(err)?;
                let digits = rest.trim_start_matches(['_', ' ', ':']);
                let k: usize = digits.parse().map_err(|_| err())?;
                Self::answer(k).ok_or_else(err)?
            }
        })
    }
}

/// What [`ActionId::parse_text`] accepts, as its errors say it.
pub const ACTION_NAMES_EXPECTED: &str = "one of up, down, left, right, interact, wait, \
     answer_0..answer_15 (e.g. `left`, `answer_3`, `<answer>left</answer>`)";

/// Error reading an action out of free text ([`ActionId::parse_text`], or an environment's
/// [`crate::AnswerVocabulary::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read an action from {text:?}: {reason}; expected {expected}")]
pub struct ParseActionTextError {
    /// The text (cut to 120 characters).
    pub text: String,
    /// What was wrong: no action named, several different ones, an answer the environment
    /// does not have.
    pub reason: String,
    /// What the reader accepts: [`ACTION_NAMES_EXPECTED`], or the environment's answers.
    pub expected: String,
}

impl ParseActionTextError {
    /// The error for `text` (kept to its first 120 characters).
    pub fn new(text: &str, reason: impl Into<String>, expected: impl Into<String>) -> Self {
        Self {
            text: text.chars().take(120).collect(),
            reason: reason.into(),
            expected: expected.into(),
        }
    }
}

/// The action a single word names, if any (`north` = `up`, ...).
fn word_action(word: &str) -> Option<ActionId> {
    Some(match word {
        "up" | "north" => ActionId::UP,
        "down" | "south" => ActionId::DOWN,
        "left" | "west" => ActionId::LEFT,
        "right" | "east" => ActionId::RIGHT,
        "interact" => ActionId::INTERACT,
        "wait" | "noop" => ActionId::WAIT,
        _ => {
            let k = word.strip_prefix("answer_")?.parse().ok()?;
            return ActionId::answer(k);
        }
    })
}

/// The text inside the last `<tag>...</tag>` for the tags VLM prompts use, or after the last
/// `action:` / `answer:` marker.
pub(crate) fn focus(lower: &str) -> Option<&str> {
    for tag in ["answer", "action"] {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        if let Some(end) = lower.rfind(&close)
            && let Some(start) = lower[..end].rfind(&open)
        {
            return Some(&lower[start + open.len()..end]);
        }
    }
    if let Some(start) = lower.rfind("\\boxed{")
        && let Some(len) = lower[start..].find('}')
    {
        return Some(&lower[start + 7..start + len]);
    }
    ["action:", "answer:"]
        .iter()
        .filter_map(|m| lower.rfind(m).map(|i| i + m.len()))
        .max()
        .map(|i| &lower[i..])
}

/// The words of lower-cased text: runs of ASCII letters, digits and `_` (`answer_3` is one
/// word, `up-right` two).
pub(crate) fn words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

impl ActionId {
    /// Read an action out of text the way a VLM writes it. In order: the canonical names and
    /// aliases ([`FromStr`]); else the inside of the last `<answer>..</answer>` or
    /// `<action>..</action>` tag, of `\boxed{..}`, or what follows the last `Action:` /
    /// `Answer:`; else the whole text. In that part, words naming actions are collected
    /// (`move left`, `answer 3`, `option 3`, and a bare number when the part is that number):
    /// exactly one distinct action is accepted; none or several different ones are an error
    /// that says which.
    pub fn parse_text(text: &str) -> Result<Self, ParseActionTextError> {
        if let Ok(a) = text.parse() {
            return Ok(a);
        }
        let lower = text.to_lowercase();
        let part = focus(&lower).unwrap_or(&lower);
        let words = words(part);
        let mut found: Vec<ActionId> = Vec::new();
        let mut bad_answer = None;
        for (i, w) in words.iter().enumerate() {
            let numbered = matches!(*w, "answer" | "option" | "choice")
                .then(|| words.get(i + 1))
                .flatten()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()));
            let a = match numbered {
                Some(n) => {
                    let a = n.parse().ok().and_then(ActionId::answer);
                    if a.is_none() {
                        bad_answer = Some(format!("answer {n} is out of range"));
                    }
                    a
                }
                None if words.len() == 1 && w.bytes().all(|b| b.is_ascii_digit()) => {
                    w.parse().ok().and_then(ActionId::answer)
                }
                None => word_action(w),
            };
            if let Some(a) = a
                && !found.contains(&a)
            {
                found.push(a);
            }
        }
        let err = |reason: String| ParseActionTextError::new(text, reason, ACTION_NAMES_EXPECTED);
        match found.as_slice() {
            [a] => Ok(*a),
            [] => Err(err(
                bad_answer.unwrap_or_else(|| "it names no action".to_string())
            )),
            many => Err(err(format!(
                "it names several different actions ({})",
                many.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }
}

impl Serialize for ActionId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for ActionId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A set of legal actions (bit `i` set means action `i` is legal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ActionMask(pub u32);

impl ActionMask {
    /// No legal action.
    pub const NONE: ActionMask = ActionMask(0);
    /// Every action legal.
    pub const ALL: ActionMask = ActionMask((1u32 << NUM_ACTIONS) - 1);

    /// Legal moves plus `interact` and `wait`.
    pub fn moves_interact_wait() -> Self {
        Self(0b11_1111)
    }

    /// The first `n` answers (`answer_0 .. answer_{n-1}`).
    pub fn answers(n: usize) -> Self {
        let n = n.min(NUM_ANSWERS);
        Self((((1u32 << n) - 1) << 6) & Self::ALL.0)
    }

    /// Add `action`.
    #[inline]
    pub fn with(self, action: ActionId) -> Self {
        Self(self.0 | (1 << action.index()))
    }

    /// Remove `action`.
    #[inline]
    pub fn without(self, action: ActionId) -> Self {
        Self(self.0 & !(1 << action.index()))
    }

    /// Whether `action` is legal.
    #[inline]
    pub fn contains(self, action: ActionId) -> bool {
        self.0 & (1 << action.index()) != 0
    }

    /// Number of legal actions.
    pub fn count(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The legal actions in index order.
    pub fn iter(self) -> impl Iterator<Item = ActionId> {
        ActionId::all().filter(move |a| self.contains(*a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for a in ActionId::all() {
            assert_eq!(a.name().parse::<ActionId>().unwrap(), a);
            assert_eq!(a.name().to_uppercase().parse::<ActionId>().unwrap(), a);
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(serde_json::from_str::<ActionId>(&json).unwrap(), a);
        }
        assert_eq!(
            "answer 3".parse::<ActionId>().unwrap(),
            ActionId::answer(3).unwrap()
        );
        assert!("answer_16".parse::<ActionId>().is_err());
        assert!("jump".parse::<ActionId>().is_err());
    }

    #[test]
    fn text_is_read_the_way_a_vlm_writes_it() {
        let ok = [
            ("left", ActionId::LEFT),
            ("  LEFT ", ActionId::LEFT),
            ("Left.", ActionId::LEFT),
            ("I will move left.", ActionId::LEFT),
            (
                "<think>right or left?</think><answer>left</answer>",
                ActionId::LEFT,
            ),
            ("Action: go north", ActionId::UP),
            ("answer_3", ActionId::answer(3).unwrap()),
            ("Answer: 3", ActionId::answer(3).unwrap()),
            ("<answer> option 7 </answer>", ActionId::answer(7).unwrap()),
            ("12", ActionId::answer(12).unwrap()),
            ("\\boxed{answer_2}", ActionId::answer(2).unwrap()),
            ("`interact`", ActionId::INTERACT),
        ];
        for (text, want) in ok {
            assert_eq!(ActionId::parse_text(text).unwrap(), want, "{text:?}");
        }
        let e = ActionId::parse_text("jump over it")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("names no action") && e.contains("answer_0"),
            "{e}"
        );
        let e = ActionId::parse_text("left then right")
            .unwrap_err()
            .to_string();
        assert!(e.contains("several") && e.contains("left, right"), "{e}");
        let e = ActionId::parse_text("answer 16").unwrap_err().to_string();
        assert!(e.contains("out of range"), "{e}");
        let e = ActionId::parse_text("answer 255").unwrap_err().to_string();
        assert!(e.contains("out of range"), "{e}");
        let long = "x".repeat(500);
        let e = ActionId::parse_text(&long).unwrap_err();
        assert_eq!(e.text.len(), 120);
    }

    #[test]
    fn masks() {
        let m = ActionMask::answers(4);
        assert_eq!(m.count(), 4);
        assert!(m.contains(ActionId::answer(3).unwrap()));
        assert!(!m.contains(ActionId::UP));
        assert_eq!(ActionMask::ALL.count(), NUM_ACTIONS);
        assert_eq!(ActionMask::answers(16).count(), 16);
        assert!(
            !ActionMask::NONE
                .with(ActionId::UP)
                .without(ActionId::UP)
                .contains(ActionId::UP)
        );
    }
}
