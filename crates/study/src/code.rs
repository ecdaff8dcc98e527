//! The code the study runs: per-crate source hashes (from `build.rs`) that a stage's cache key
//! holds for the crates it uses, so a stage computed by older code is recomputed rather than
//! reused, and the git commit the results record.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::results::{CodeInfo, MachineInfo};

/// A body of code whose changes can move a stage's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Crate {
    /// `envdist-core`.
    Core,
    /// `envdist-envs`.
    Envs,
    /// `envdist-profiling`.
    Profiling,
    /// `envdist-selection`.
    Selection,
    /// `envdist-curriculum`.
    Curriculum,
    /// `envdist-trainer`.
    Trainer,
    /// The study's own stage code (`crates/study/src/stages`): every stage uses it.
    Stages,
    /// `Cargo.lock`: the versions of every dependency (burn's kernels decide numbers too);
    /// every stage uses it.
    Lock,
}

impl Crate {
    /// Every body of code, in a fixed order.
    pub const ALL: [Crate; 8] = [
        Crate::Core,
        Crate::Envs,
        Crate::Profiling,
        Crate::Selection,
        Crate::Curriculum,
        Crate::Trainer,
        Crate::Stages,
        Crate::Lock,
    ];

    /// The library crates a caller names; [`Crate::Stages`] and [`Crate::Lock`] are always
    /// added by [`CodeVersion::of`].
    const ALWAYS: [Crate; 2] = [Crate::Stages, Crate::Lock];

    fn built_hash(self) -> &'static str {
        match self {
            Crate::Core => env!("ENVDIST_SOURCE_CORE"),
            Crate::Envs => env!("ENVDIST_SOURCE_ENVS"),
            Crate::Profiling => env!("ENVDIST_SOURCE_PROFILING"),
            Crate::Selection => env!("ENVDIST_SOURCE_SELECTION"),
            Crate::Curriculum => env!("ENVDIST_SOURCE_CURRICULUM"),
            Crate::Trainer => env!("ENVDIST_SOURCE_TRAINER"),
            Crate::Stages => env!("ENVDIST_SOURCE_STAGES"),
            Crate::Lock => env!("ENVDIST_SOURCE_LOCK"),
        }
    }
}

/// The source hashes of every body of code, and the commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeVersion {
    hashes: BTreeMap<Crate, String>,
    commit: String,
}

impl CodeVersion {
    /// The code this library was built from.
    pub fn current() -> Self {
        Self {
            hashes: Crate::ALL
                .into_iter()
                .map(|c| (c, c.built_hash().to_string()))
                .collect(),
            commit: env!("ENVDIST_GIT_COMMIT").to_string(),
        }
    }

    /// The current code with `changed` edited (tests of cache invalidation).
    pub fn with_changed(changed: &[Crate], tag: &str) -> Self {
        let mut v = Self::current();
        for c in changed {
            if let Some(h) = v.hashes.get_mut(c) {
                *h = format!("{h}-{tag}");
            }
        }
        v
    }

    /// Every body of code edited (tests of cache invalidation).
    pub fn fake(tag: &str) -> Self {
        Self::with_changed(&Crate::ALL, tag)
    }

    /// The hashes of `crates`, plus the stage code's and the lock file's: the part of a
    /// stage's cache key that names its code.
    pub fn of(&self, crates: &[Crate]) -> BTreeMap<Crate, String> {
        self.hashes
            .iter()
            .filter(|(k, _)| crates.contains(k) || Crate::ALWAYS.contains(k))
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

/// This machine, as far as it decides the numbers (fields it cannot read stay empty).
pub fn this_machine() -> MachineInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let flags = field("flags");
    let flags: Vec<&str> = flags.split_whitespace().collect();
    let simd = ["fma", "avx2", "avx512f"]
        .iter()
        .filter(|f| flags.contains(f))
        .map(|f| f.to_string())
        .collect();
    let cache = |what: &str| {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cache/index0/{what}"))
            .map(|s| s.trim().to_string())
            .ok()
    };
    let l1d = match (
        cache("type").as_deref(),
        cache("size"),
        cache("ways_of_associativity"),
    ) {
        (Some("Data"), Some(size), Some(ways)) => ways.parse().ok().map(|w| (size, w)),
        _ => None,
    };
    MachineInfo {
        cpu: field("model name"),
        simd,
        l1d,
        threads: rayon::current_num_threads(),
    }
}
