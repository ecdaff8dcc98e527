//! Score tables `[seed][env]` of a record's runs, and the units the analysis reports in.

use envdist_core::EnvId;

use crate::model::{ArmRun, Claim};

/// Scores `[seed][env]`.
pub(super) type Table = Vec<Vec<f64>>;

/// Points per unit of success rate.
pub(super) const PTS: f64 = 100.0;

/// Set `c`'s detection limit (and the seeds or families its bootstrap variance says it would
/// take to reach the target) at `z` standard errors: the level its verdict uses.
pub(super) fn set_level(c: &mut Claim, z: f64) {
    c.mde_z = z;
    c.mde = z * c.difference.se;
    if let Some(v) = &mut c.variance {
        // From the bootstrap's own variance (its seed part and its family part), the one that
        // decides the verdicts.
        (v.seeds_needed, v.families_needed) = crate::stats::precision::needed_from_parts(
            (v.bootstrap_seed_part, v.bootstrap_unit_part),
            (v.seeds, v.families),
            v.target,
            z,
            100_000,
        );
    }
}

/// The score matrix `[seed][env]` of `runs` on `envs` (success averaged over scales).
pub(super) fn matrix(runs: &[&ArmRun], envs: &[EnvId]) -> Vec<Vec<f64>> {
    runs.iter()
        .map(|r| {
            envs.iter()
                .map(|e| r.success(e).unwrap_or(0.0) as f64)
                .collect()
        })
        .collect()
}

/// `runs` in the order of the training-seed indices `seeds`, or `None` when one is missing.
pub(super) fn by_seed<'a>(
    runs: &[&'a ArmRun],
    seeds: std::ops::Range<u32>,
) -> Option<Vec<&'a ArmRun>> {
    seeds
        .map(|s| runs.iter().find(|r| r.seed == s).copied())
        .collect()
}
