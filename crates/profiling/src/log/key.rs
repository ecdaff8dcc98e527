//! How a per-step log names an episode.

use serde::{Deserialize, Serialize};

/// An episode key in a per-step log: any string or non-negative integer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EpisodeKey {
    /// A numeric key.
    Number(u64),
    /// A text key.
    Text(String),
}

impl EpisodeKey {
    pub(super) fn as_string(&self) -> String {
        match self {
            Self::Number(n) => n.to_string(),
            Self::Text(s) => s.clone(),
        }
    }
}
