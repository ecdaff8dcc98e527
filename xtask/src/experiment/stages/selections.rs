//! Stage `selections`: AES (full ability coverage enforced, seeded tie-breaks, zero-gradient
//! environments treated as unknown), AES without conflict, coverage-only, a random-k draw per
//! seed, and AES and random-k on the control pool.

use envdist_core::{EnvId, GradientSet, ProfileSet, Rng};
use envdist_selection::{Baseline, Problem, SelectConfig, Selection, baseline, select};
use serde::Serialize;

use super::pool::PoolStage;
use crate::experiment::config::ZeroGradient;
use crate::experiment::results::{SelectionId, SelectionSummary};

/// What the selections depend on (besides profiles and gradients).
#[derive(Debug, Clone, Serialize)]
pub struct SelectionsKey {
    /// Budget.
    pub k: usize,
    /// Training seeds (one random-k draw each).
    pub seeds: u32,
    /// Master seed (tie-breaks and random draws).
    pub seed: u64,
    /// What to do with zero-gradient environments.
    pub zero_gradient: ZeroGradient,
}

fn summarise(id: SelectionId, s: &Selection, grads: &GradientSet) -> SelectionSummary {
    let (mean_pairwise_cosine, conflicting_pairs) = grads.within(&s.env_ids);
    SelectionSummary {
        name: id,
        envs: s.env_ids.clone(),
        covered: s.covered,
        coverable: s.coverable,
        mean_pairwise_cosine,
        conflicting_pairs,
        certificate_gap: s.certificate.as_ref().and_then(|c| c.gap_fraction),
        note: None,
    }
}

/// The problem over `envs` (profiles in a seeded order, so that ties between equal-scoring
/// environments go to a random one rather than to the first in alphabetical order).
fn problem(
    profiles: &ProfileSet,
    grads: &GradientSet,
    envs: &[EnvId],
    seed: u64,
) -> anyhow::Result<Problem> {
    let mut p = profiles.clone();
    p.profiles.retain(|x| envs.contains(&x.env));
    Rng::derive(seed, 0x5449_4542).shuffle(&mut p.profiles);
    let rows: Vec<usize> = p
        .profiles
        .iter()
        .filter_map(|x| grads.index_of(&x.env))
        .collect();
    let sub = GradientSet {
        env_ids: rows.iter().map(|&i| grads.env_ids[i].clone()).collect(),
        dim: grads.dim,
        values: rows
            .iter()
            .flat_map(|&i| grads.row(i).iter().copied())
            .collect(),
        projection_seed: grads.projection_seed,
    };
    Ok(Problem::from_profiles(&p, Some(&sub))?)
}

/// Every selection the arms train on.
pub fn run(
    key: &SelectionsKey,
    pool: &PoolStage,
    profiles: &ProfileSet,
    grads: &GradientSet,
) -> anyhow::Result<Vec<SelectionSummary>> {
    let mut out = Vec::new();
    for (envs, control) in [(&pool.pool, false), (&pool.control, true)] {
        let problem = problem(profiles, grads, envs, key.seed)?;
        let mut sc = SelectConfig::aes(key.k.min(envs.len()));
        sc.require_full_coverage = true;
        if key.zero_gradient == ZeroGradient::Exclude {
            sc.must_exclude = grads
                .zero_rows()
                .into_iter()
                .filter(|e| envs.contains(e))
                .collect();
        }
        let (aes, note) = select_aes(&problem, sc.clone())?;
        sc.must_exclude = aes_exclusions(&sc, &note);
        out.push(with_note(
            summarise(
                if control {
                    SelectionId::ControlAes
                } else {
                    SelectionId::Aes
                },
                &aes,
                grads,
            ),
            note,
        ));
        if !control {
            for (id, which) in [
                (SelectionId::AesNoConflict, Baseline::NoConflict),
                (SelectionId::CoverageOnly, Baseline::CoverageOnly),
            ] {
                out.push(summarise(id, &baseline(&problem, &sc, which)?, grads));
            }
        }
        // Random draws ignore coverage and gradients: the paper's random-k baseline.
        let mut plain = SelectConfig::aes(key.k.min(envs.len()));
        plain.certify = false;
        for seed in 0..key.seeds {
            let s = baseline(
                &problem,
                &plain,
                Baseline::Random {
                    seed: key.seed ^ (0x52_4e44 + seed as u64) ^ (control as u64) << 40,
                },
            )?;
            let id = if control {
                SelectionId::ControlRandomK(seed)
            } else {
                SelectionId::RandomK(seed)
            };
            out.push(summarise(id, &s, grads));
        }
    }
    Ok(out)
}

/// The study's AES selection over `envs` with these gradients, as the selections stage makes
/// it (full coverage, zero-gradient environments excluded when `key.zero_gradient` says so,
/// each given up only where infeasible: the note says which); used to compare gradient
/// estimates (`cargo xtask conflict-estimates`).
pub fn study_aes(
    key: &SelectionsKey,
    profiles: &ProfileSet,
    grads: &GradientSet,
    envs: &[EnvId],
) -> anyhow::Result<(Selection, Option<String>)> {
    let problem = problem(profiles, grads, envs, key.seed)?;
    let mut sc = SelectConfig::aes(key.k.min(envs.len()));
    sc.require_full_coverage = true;
    sc.certify = false;
    if key.zero_gradient == ZeroGradient::Exclude {
        sc.must_exclude = grads
            .zero_rows()
            .into_iter()
            .filter(|e| envs.contains(e))
            .collect();
    }
    select_aes(&problem, sc)
}

/// Recompute AES over the pool with fresh gradients (the online re-selection arm).
pub fn reselect(
    key: &SelectionsKey,
    pool: &PoolStage,
    profiles: &ProfileSet,
    grads: &GradientSet,
) -> anyhow::Result<Vec<EnvId>> {
    let problem = problem(profiles, grads, &pool.pool, key.seed)?;
    let mut sc = SelectConfig::aes(key.k);
    sc.require_full_coverage = true;
    sc.certify = false;
    if key.zero_gradient == ZeroGradient::Exclude {
        sc.must_exclude = grads.zero_rows();
    }
    Ok(select_aes(&problem, sc)?.0.env_ids)
}

/// AES with the zero-gradient exclusion and full coverage when the selection stays feasible
/// (enough candidates left for k, full coverage reachable within k); otherwise it gives up the
/// exclusion, then full coverage, saying which.
fn select_aes(problem: &Problem, sc: SelectConfig) -> anyhow::Result<(Selection, Option<String>)> {
    let first = match select(problem, &sc) {
        Ok(s) => return Ok((s, None)),
        Err(e) => e,
    };
    let excluded = sc.must_exclude.len();
    if excluded > 0 {
        let kept = SelectConfig {
            must_exclude: vec![],
            ..sc.clone()
        };
        if let Ok(s) = select(problem, &kept) {
            return Ok((
                s,
                Some(format!(
                    "the {excluded} zero-gradient environments were kept: excluding them made \
                     the selection infeasible ({first})"
                )),
            ));
        }
    }
    let partial = SelectConfig {
        require_full_coverage: false,
        ..sc
    };
    let note =
        format!("full ability coverage was not enforced: it is out of reach within k ({first})");
    if let Ok(s) = select(problem, &partial) {
        return Ok((s, Some(note)));
    }
    let s = select(
        problem,
        &SelectConfig {
            must_exclude: vec![],
            ..partial
        },
    )?;
    Ok((
        s,
        Some(format!("{note}; the zero-gradient environments were kept")),
    ))
}

/// The exclusions the baselines should share with AES (none if AES had to drop them).
fn aes_exclusions(sc: &SelectConfig, note: &Option<String>) -> Vec<EnvId> {
    if note.is_some() {
        vec![]
    } else {
        sc.must_exclude.clone()
    }
}

fn with_note(mut s: SelectionSummary, note: Option<String>) -> SelectionSummary {
    s.note = note;
    s
}
