//! Cross-family transfer by what a pair's profiles share: a task ability, only an observation
//! variant's ability (noise, occlusion, an egocentric crop), or nothing; and by whether source
//! and target draw with the same palette. The pool's most favourable pairs for ability transfer
//! are those sharing a task ability and a look; a probe's own family is shown for scale.

use std::collections::{BTreeMap, BTreeSet};

use envdist_core::{EnvId, ProfileSet};

use super::crossed::{Pair, crossed_mean};
use super::targets::PTS;
use crate::model::{PreconditionRuns, Results, SharedTransfer};

/// What a pair shares, in the order the report lists them.
const SHARED: [&str; 4] = [
    "a task ability",
    "only an observation ability",
    "nothing",
    "family",
];

/// The palette a variant draws with: its theme, else the classic one (plain, noise and
/// occlusion variants and the rule twins draw with the classic palette).
fn look(env: &EnvId) -> &str {
    let variant = env
        .as_str()
        .split_once('/')
        .map_or(env.as_str(), |(_, v)| v);
    if variant.starts_with("theme-") {
        variant
    } else {
        "classic"
    }
}

/// Transfer from every matrix probe to every other pool target, by what the two share.
pub(super) fn by_sharing(
    results: &Results,
    runs: &PreconditionRuns,
    profiles: &ProfileSet,
    family_of: &dyn Fn(&EnvId) -> usize,
    b: u32,
    seed: u64,
) -> Vec<SharedTransfer> {
    let observational: BTreeSet<&str> = profiles
        .meta_abilities
        .iter()
        .filter(|m| {
            m.members
                .iter()
                .all(|a| envdist_envs::OBSERVATION_ABILITIES.contains(&a.as_str()))
        })
        .map(|m| m.name.as_str())
        .collect();
    let covered: BTreeMap<&EnvId, BTreeSet<&str>> = profiles
        .profiles
        .iter()
        .map(|p| (&p.env, p.coverage.keys().map(String::as_str).collect()))
        .collect();
    let family = |e: &EnvId| results.envs.family.get(e);
    let mut groups: BTreeMap<(&str, bool), Vec<Pair>> = BTreeMap::new();
    for (p, m) in runs.matrix.iter().enumerate() {
        for (i, t) in runs.targets.iter().enumerate() {
            if *t == m.source || !results.envs.pool.contains(t) {
                continue;
            }
            let none = BTreeSet::new();
            let (a, b_) = (
                covered.get(&m.source).unwrap_or(&none),
                covered.get(t).unwrap_or(&none),
            );
            let shared: BTreeSet<&str> = a.intersection(b_).copied().collect();
            let what = if family(t) == family(&m.source) {
                SHARED[3]
            } else if shared.iter().any(|s| !observational.contains(s)) {
                SHARED[0]
            } else if !shared.is_empty() {
                SHARED[1]
            } else {
                SHARED[2]
            };
            let transfer = PTS * (m.after[i] as f64 - runs.base[i] as f64);
            groups
                .entry((what, look(&m.source) == look(t)))
                .or_default()
                .push(Pair {
                    probe: p,
                    family: family_of(t),
                    transfer,
                    x: None,
                });
        }
    }
    let mut out = Vec::new();
    for what in SHARED {
        for same_look in [true, false] {
            let pairs = groups.get(&(what, same_look)).cloned().unwrap_or_default();
            out.push(SharedTransfer {
                shared: what.to_string(),
                same_look,
                transfer: crossed_mean(&pairs, b, seed),
            });
        }
    }
    out
}
