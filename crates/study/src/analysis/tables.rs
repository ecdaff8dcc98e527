//! Score tables `[seed][env]` of a record's runs, and the units the analysis reports in.

use envdist_core::EnvId;

use crate::model::{ArmRun, Claim};

/// Scores `[seed][env]`.
pub(super) type Table = Vec<Vec<f64>>;

/// Points per unit of success rate.
pub(super) const PTS: f64 = 100.0;

/// Set `c`'s detection limit (and what its variance components say it would take to reach
/// the target) at `z` standard errors: the level its verdict uses.
pub(super) fn set_level(c: &mut Claim, z: f64) {
    c.mde_z = z;
    c.mde = z * c.difference.se;
    if let Some(v) = &mut c.variance {
        let parts = (v.seed, v.env, v.residual);
        let (target, seeds, envs) = (v.target, v.seeds, v.envs);
        let se = |s: usize, e: usize| crate::stats::se_of(parts, s, e);
        v.seeds_needed = crate::stats::needed(10_000, target, z, |n| se(n, envs));
        v.envs_needed = crate::stats::needed(1_000_000, target, z, |n| se(seeds, n));
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

/// `runs` by seed index, or `None` when a seed is missing.
pub(super) fn by_seed<'a>(runs: &[&'a ArmRun], seeds: u32) -> Option<Vec<&'a ArmRun>> {
    (0..seeds)
        .map(|s| runs.iter().find(|r| r.seed == s).copied())
        .collect()
}
