//! Harness levels: how much auxiliary text the agent gets besides the pixels.
//!
//! The paper's harness is the text given to the agent during training (text observation,
//! text state, hints, rule explanations), removed step by step from H0 (all of it) to H4
//! (none: image plus instruction). Which channel each level drops is not published; the
//! default follows two surveys of the paper (text observation, text state, hints, rules:
//! [`HarnessSchedule::default`]) and is configurable.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One of the five harness levels. `H0` gives every text channel, `H4` none.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
pub enum HarnessLevel {
    /// All four text channels.
    #[default]
    H0,
    /// One channel dropped.
    H1,
    /// Two channels dropped.
    H2,
    /// Three channels dropped.
    H3,
    /// No text channel: bare image plus the instruction.
    H4,
}

impl HarnessLevel {
    /// All levels from strongest (`H0`) to weakest (`H4`).
    pub const ALL: [HarnessLevel; 5] = [Self::H0, Self::H1, Self::H2, Self::H3, Self::H4];

    /// The level's number, 0..=4.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The level with number `i`, if `i <= 4`.
    pub fn from_index(i: usize) -> Option<Self> {
        Self::ALL.get(i).copied()
    }

    /// The next weaker level, or `None` at `H4`.
    pub fn weaker(self) -> Option<Self> {
        Self::from_index(self.index() + 1)
    }
}

impl fmt::Display for HarnessLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "H{}", self.index())
    }
}

/// Error parsing a harness level from text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown harness level {0:?}: expected one of H0, H1, H2, H3, H4")]
pub struct ParseHarnessError(pub String);

impl FromStr for HarnessLevel {
    type Err = ParseHarnessError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let digits = t.strip_prefix(['H', 'h']).unwrap_or(t);
        digits
            .parse::<usize>()
            .ok()
            .and_then(Self::from_index)
            .ok_or_else(|| ParseHarnessError(s.to_string()))
    }
}

/// The four auxiliary text channels of the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HarnessChannel {
    /// The observation as text (e.g. the grid as characters).
    Observation,
    /// The state as text (e.g. "agent at (2,3)").
    State,
    /// Hints toward the solution.
    Hints,
    /// The rules of the environment.
    Rules,
}

impl HarnessChannel {
    /// All four channels.
    pub const ALL: [HarnessChannel; 4] = [Self::Observation, Self::State, Self::Hints, Self::Rules];
}

/// The order in which harness levels drop channels: level `Hi` drops the first `i` channels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarnessSchedule {
    /// The four channels, in the order they are removed.
    pub drop_order: [HarnessChannel; 4],
}

impl Default for HarnessSchedule {
    /// The paper's order as two surveys of it give it: H1 drops the text observation, H2 the
    /// text state, H3 the hints, H4 the rules (pixels and the task statement). The paper
    /// itself does not publish what H1-H3 remove, so this is likely, not certain; the order is
    /// configurable ([`HarnessSchedule::hints_first`] is the one envdist used before).
    fn default() -> Self {
        Self {
            drop_order: [
                HarnessChannel::Observation,
                HarnessChannel::State,
                HarnessChannel::Hints,
                HarnessChannel::Rules,
            ],
        }
    }
}

impl HarnessSchedule {
    /// Hints first, then the text observation, the text state, the rules: hints give the
    /// answer away most directly, rules are what a human would still read on a game box
    /// (envdist's default before it followed the paper's order).
    pub fn hints_first() -> Self {
        Self {
            drop_order: [
                HarnessChannel::Hints,
                HarnessChannel::Observation,
                HarnessChannel::State,
                HarnessChannel::Rules,
            ],
        }
    }

    /// Whether `channel` is still present at `level`.
    pub fn keeps(&self, level: HarnessLevel, channel: HarnessChannel) -> bool {
        !self.drop_order[..level.index()].contains(&channel)
    }

    /// Check that every channel appears exactly once.
    pub fn validate(&self) -> Result<(), crate::InvalidValue> {
        for c in HarnessChannel::ALL {
            let n = self.drop_order.iter().filter(|d| **d == c).count();
            if n != 1 {
                return Err(crate::InvalidValue::new(
                    "drop_order",
                    "each of observation, state, hints, rules exactly once",
                    format!("{c:?} {n} times"),
                ));
            }
        }
        Ok(())
    }
}

/// The four harness text channels; `None` means the channel is absent at this level
/// (absent, not an empty string: a model must not be able to read an absence as text).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HarnessText {
    /// Text observation (e.g. the grid as characters).
    pub observation: Option<String>,
    /// Text state.
    pub state: Option<String>,
    /// Hints.
    pub hints: Option<String>,
    /// Rule explanation.
    pub rules: Option<String>,
}

impl HarnessText {
    /// The channel's text, if present.
    pub fn get(&self, channel: HarnessChannel) -> Option<&str> {
        match channel {
            HarnessChannel::Observation => self.observation.as_deref(),
            HarnessChannel::State => self.state.as_deref(),
            HarnessChannel::Hints => self.hints.as_deref(),
            HarnessChannel::Rules => self.rules.as_deref(),
        }
    }

    fn slot(&mut self, channel: HarnessChannel) -> &mut Option<String> {
        match channel {
            HarnessChannel::Observation => &mut self.observation,
            HarnessChannel::State => &mut self.state,
            HarnessChannel::Hints => &mut self.hints,
            HarnessChannel::Rules => &mut self.rules,
        }
    }

    /// Remove the channels `level` drops under `schedule`.
    pub fn apply_level(&mut self, level: HarnessLevel, schedule: &HarnessSchedule) {
        for &c in &schedule.drop_order[..level.index()] {
            *self.slot(c) = None;
        }
    }

    /// Whether no channel is present.
    pub fn is_empty(&self) -> bool {
        HarnessChannel::ALL.iter().all(|c| self.get(*c).is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_drops_exactly_its_channels() {
        let s = HarnessSchedule::default();
        let full = HarnessText {
            observation: Some("o".into()),
            state: Some("s".into()),
            hints: Some("h".into()),
            rules: Some("r".into()),
        };
        for level in HarnessLevel::ALL {
            let mut t = full.clone();
            t.apply_level(level, &s);
            let present = HarnessChannel::ALL
                .iter()
                .filter(|c| t.get(**c).is_some())
                .count();
            assert_eq!(present, 4 - level.index());
            for c in HarnessChannel::ALL {
                assert_eq!(t.get(c).is_some(), s.keeps(level, c));
            }
        }
        // The paper's order: H1 drops the text observation, H3 the hints, H4 the rules.
        let at = |level| {
            let mut t = full.clone();
            t.apply_level(level, &s);
            t
        };
        let h1 = at(HarnessLevel::H1);
        assert!(h1.observation.is_none() && h1.state.is_some() && h1.hints.is_some());
        let h3 = at(HarnessLevel::H3);
        assert!(h3.hints.is_none() && h3.rules.is_some());
        let mut old = full.clone();
        old.apply_level(HarnessLevel::H1, &HarnessSchedule::hints_first());
        assert!(old.hints.is_none() && old.observation.is_some());
    }

    #[test]
    fn parse_levels() {
        assert_eq!("H3".parse::<HarnessLevel>().unwrap(), HarnessLevel::H3);
        assert_eq!("2".parse::<HarnessLevel>().unwrap(), HarnessLevel::H2);
        assert!("H5".parse::<HarnessLevel>().is_err());
        assert_eq!(HarnessLevel::H4.weaker(), None);
        assert_eq!(HarnessLevel::H0.to_string(), "H0");
    }
}
