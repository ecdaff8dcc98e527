//! Where an arm's training environments come from ([`EnvSource`]: the pool or a selection)
//! and the name of one selection at one seed ([`SelectionId`]).

use serde::{Deserialize, Serialize};

/// Which environments an arm trains on: the whole pool or one of the selections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EnvSource {
    /// Every pool environment.
    Pool,
    /// AES with every term.
    Aes,
    /// AES without the conflict term.
    AesNoConflict,
    /// AES with the conflict term from measured transfer.
    AesTransfer,
    /// Coverage only (a selection the report shows; no arm trains on it).
    CoverageOnly,
    /// A random draw of k pool environments, one per training seed.
    RandomK,
    /// AES on the control pool.
    ControlAes,
    /// A random draw of k control-pool environments, one per training seed.
    ControlRandomK,
}

impl EnvSource {
    /// Every selection the selections stage makes (all but the pool).
    pub const SELECTIONS: [EnvSource; 7] = [
        EnvSource::Aes,
        EnvSource::AesNoConflict,
        EnvSource::AesTransfer,
        EnvSource::CoverageOnly,
        EnvSource::RandomK,
        EnvSource::ControlAes,
        EnvSource::ControlRandomK,
    ];

    /// The name in files and tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pool => "pool",
            Self::Aes => "aes",
            Self::AesNoConflict => "aes-no-conflict",
            Self::AesTransfer => "aes-transfer",
            Self::CoverageOnly => "coverage-only",
            Self::RandomK => "random-k",
            Self::ControlAes => "control-aes",
            Self::ControlRandomK => "control-random-k",
        }
    }

    /// The selection of this source an arm at training seed `seed` trains on; `None` for the
    /// pool. Every selection is made once per training seed: the random draws draw anew, the
    /// others select from that seed's own gradients (so an arm's interval includes the
    /// selection's noise).
    pub fn at_seed(self, seed: u32) -> Option<SelectionId> {
        (self != Self::Pool).then_some(SelectionId { source: self, seed })
    }

    /// Whether making this selection costs training: the transfer probes `aes-transfer`
    /// selects with fine-tune the base, so their env steps are charged to the arm's budget
    /// (the gradients AES selects with are rollouts without updates, like an evaluation).
    pub fn charges_transfer_probes(self) -> bool {
        self == Self::AesTransfer
    }
}

/// One selection: its source and the training seed it was made for. Written
/// `<source>/<seed>`: `aes/0`, `random-k/2`, `control-aes/1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SelectionId {
    /// Where its environments come from (never [`EnvSource::Pool`]).
    pub source: EnvSource,
    /// The training seed it was made for.
    pub seed: u32,
}

impl std::fmt::Display for SelectionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.source.name(), self.seed)
    }
}

impl std::str::FromStr for SelectionId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parsed = s.split_once('/').and_then(|(name, seed)| {
            let source = EnvSource::SELECTIONS
                .into_iter()
                .find(|e| e.name() == name)?;
            Some(Self {
                source,
                seed: seed.parse().ok()?,
            })
        });
        parsed.ok_or_else(|| {
            format!(
                "expected <selection>/<training seed> with the selection one of {}, found {s:?}",
                EnvSource::SELECTIONS.map(EnvSource::name).join(", ")
            )
        })
    }
}

impl Serialize for SelectionId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SelectionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_ids_round_trip_and_bad_ones_are_named() {
        for source in EnvSource::SELECTIONS {
            let id = source.at_seed(3).unwrap();
            let text = id.to_string();
            assert_eq!(text.parse::<SelectionId>().unwrap(), id, "{text}");
            assert_eq!(text, format!("{}/3", source.name()));
        }
        assert!(EnvSource::Pool.at_seed(0).is_none());
        for bad in ["pool/0", "random-k", "aes", "random-k/x", "nope/1"] {
            let e = bad.parse::<SelectionId>().unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
    }
}
