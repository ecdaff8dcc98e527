//! The code the study runs: per-crate source hashes (from `build.rs`) that every stage's cache
//! key includes, so a stage computed by older code is recomputed rather than reused, and the
//! git commit the results record.

use std::collections::BTreeMap;

use serde::Serialize;

use super::results::CodeInfo;

/// The source hashes of the crates a stage depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeVersion {
    hashes: BTreeMap<&'static str, String>,
    commit: String,
}

impl CodeVersion {
    /// The code this binary was built from.
    pub fn current() -> Self {
        let hashes = [
            ("core", env!("ENVDIST_SOURCE_CORE")),
            ("envs", env!("ENVDIST_SOURCE_ENVS")),
            ("profiling", env!("ENVDIST_SOURCE_PROFILING")),
            ("selection", env!("ENVDIST_SOURCE_SELECTION")),
            ("curriculum", env!("ENVDIST_SOURCE_CURRICULUM")),
            ("trainer", env!("ENVDIST_SOURCE_TRAINER")),
            ("experiment", env!("ENVDIST_SOURCE_EXPERIMENT")),
            ("lock", env!("ENVDIST_SOURCE_LOCK")),
        ]
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
        Self {
            hashes,
            commit: env!("ENVDIST_GIT_COMMIT").to_string(),
        }
    }

    /// A made-up version (tests of cache invalidation).
    pub fn fake(tag: &str) -> Self {
        let mut v = Self::current();
        for h in v.hashes.values_mut() {
            *h = format!("{h}-{tag}");
        }
        v
    }

    /// The hashes of `crates` (plus the lock file and the experiment's own code), the part of
    /// a stage's cache key that names its code.
    pub fn of(&self, crates: &[&str]) -> BTreeMap<&'static str, String> {
        self.hashes
            .iter()
            .filter(|(k, _)| crates.contains(k) || **k == "lock" || **k == "experiment")
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    }

    /// What results record.
    pub fn info(&self) -> CodeInfo {
        let all: String = self.hashes.values().cloned().collect::<Vec<_>>().join("");
        CodeInfo {
            commit: self.commit.clone(),
            source_hash: envdist_core::hash::fnv1a_hex(all.as_bytes()),
        }
    }
}
