//! Stage `selections`: AES, AES without conflict, coverage-only and a random-k draw per seed.

use envdist_core::{EnvId, GradientSet, ProfileSet};
use envdist_selection::{Baseline, Problem, SelectConfig, baseline, select};
use serde::Serialize;

use crate::experiment::results::{SelectionId, SelectionSummary};

/// What the selections depend on (besides profiles and gradients).
#[derive(Debug, Clone, Serialize)]
pub struct SelectionsKey {
    /// Budget.
    pub k: usize,
    /// Training seeds (one random-k draw each).
    pub seeds: u32,
    /// Master seed.
    pub seed: u64,
    /// Our extension: drop zero-gradient envs from the AES-family selections.
    pub exclude_no_signal: bool,
}

fn summarise(
    name: SelectionId,
    envs: &[EnvId],
    covered: usize,
    coverable: usize,
    grads: &GradientSet,
) -> SelectionSummary {
    let (mean_pairwise_cosine, conflicting_pairs) = grads.within(envs);
    SelectionSummary {
        name,
        envs: envs.to_vec(),
        covered,
        coverable,
        mean_pairwise_cosine,
        conflicting_pairs,
    }
}

/// Every selection the arms train on.
pub fn run(
    key: &SelectionsKey,
    profiles: &ProfileSet,
    grads: &GradientSet,
) -> anyhow::Result<Vec<SelectionSummary>> {
    let problem = Problem::from_profiles(profiles, Some(grads))?;
    let mut sc = SelectConfig::aes(key.k);
    if key.exclude_no_signal {
        sc.must_exclude = grads.zero_rows();
    }
    let mut out = Vec::new();
    let aes = select(&problem, &sc)?;
    out.push(summarise(
        SelectionId::Aes,
        &aes.env_ids,
        aes.covered,
        aes.coverable,
        grads,
    ));
    for (name, which) in [
        (SelectionId::AesNoConflict, Baseline::NoConflict),
        (SelectionId::CoverageOnly, Baseline::CoverageOnly),
    ] {
        let s = baseline(&problem, &sc, which)?;
        out.push(summarise(name, &s.env_ids, s.covered, s.coverable, grads));
    }
    for seed in 0..key.seeds {
        let s = baseline(
            &problem,
            &sc,
            Baseline::Random {
                seed: key.seed ^ (0x52_4e44 + seed as u64),
            },
        )?;
        out.push(summarise(
            SelectionId::RandomK(seed),
            &s.env_ids,
            s.covered,
            s.coverable,
            grads,
        ));
    }
    Ok(out)
}
