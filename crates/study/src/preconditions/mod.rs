//! The testbed's preconditions, from what the precondition stages measured
//! ([`crate::stages::preconditions`]) and the arms' transfer split: can each of the paper's
//! mechanisms act here? A comparison whose mechanism cannot act tests the testbed, not the
//! method; [`Preconditions::testable`] says which primary claims that leaves.
//!
//! Units: success points (100 × rate). Intervals resample probes (a probe's targets share its
//! fine-tune) crossed with the targets' families (a family's targets share their rules), by
//! [`crate::stats::bootstrap`] with the analysis's replicates; a rank correlation reports the
//! largest value its predictor's ties allow beside it.

pub(crate) mod crossed;
mod hdc;
mod sharing;
pub mod targets;
mod testability;

use envdist_core::{EnvId, GradientSet, ProfileSet};

use crate::model::{
    Analysis, Arm, Preconditions, RETENTION_ARMS, Results, TransferSplit, TurnScores,
};
use crossed::{Pair, crossed_mean, crossed_rank, probe_mean};
use hdc::{hdc_reach, hdc_regime};
use targets::PTS;
use testability::testability;

/// The preconditions of `results` (needs its precondition runs; the arms' part needs its
/// analysis). `response`: the transfer responses `aes-transfer` selects with (one row per
/// pool environment), for its own precondition; `profiles`: the pool's ability profiles, for
/// transfer by what pairs share.
pub fn analyse(
    results: &Results,
    analysis: Option<&Analysis>,
    response: Option<&GradientSet>,
    profiles: Option<&ProfileSet>,
) -> Option<Preconditions> {
    let runs = results.precondition_runs.as_ref()?;
    let b = results.config.analysis.bootstrap;
    let seed = results.config.seed ^ 0x5052_4543;
    let sets = &results.envs;
    let single: Vec<&EnvId> = sets.single_turn.iter().collect();
    let base_by_harness = runs
        .base_by_harness
        .iter()
        .map(|(h, scores)| {
            let mean = |st: bool| {
                let v: Vec<f64> = scores
                    .iter()
                    .filter(|(e, _)| single.contains(e) == st)
                    .map(|(_, x)| PTS * *x as f64)
                    .collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            (
                *h,
                TurnScores {
                    st: mean(true),
                    mt: mean(false),
                },
            )
        })
        .collect();
    let at = |e: &EnvId| runs.targets.iter().position(|t| t == e);
    let base = |i: usize| runs.base[i] as f64;
    // The harness probes and the same sources' H4 probes, paired.
    let (mut scaffolded, mut bare) = (Vec::new(), Vec::new());
    for h in &runs.harness {
        let Some(i) = at(&h.source) else { continue };
        scaffolded.push(Some(PTS * (h.after as f64 - base(i))));
        let m = runs.matrix.iter().find(|m| m.source == h.source);
        bare.push(m.map(|m| PTS * (m.after[i] as f64 - base(i))));
    }
    // Every (probe, other target) pair, by relation, with the targets' families indexed.
    let family = |e: &EnvId| sets.family.get(e).cloned().unwrap_or_default();
    let mut family_names: Vec<String> = runs.targets.iter().map(family).collect();
    family_names.sort();
    family_names.dedup();
    let family_of = |e: &EnvId| family_names.binary_search(&family(e)).unwrap_or_default();
    let (mut same, mut other, mut ood) = (Vec::new(), Vec::new(), Vec::new());
    let (mut profile, mut gradient, mut by_family) = (Vec::new(), Vec::new(), Vec::new());
    for (p, m) in runs.matrix.iter().enumerate() {
        for (i, t) in runs.targets.iter().enumerate() {
            if *t == m.source {
                continue;
            }
            let transfer = PTS * (m.after[i] as f64 - base(i));
            let pair = |x: Option<f32>| Pair {
                probe: p,
                family: family_of(t),
                transfer: (transfer * 1e6).round() / 1e6,
                x,
            };
            if sets.ood.contains(t) {
                ood.push(pair(None));
                continue;
            }
            let in_family = family(t) == family(&m.source);
            if in_family {
                same.push(pair(None));
            } else {
                other.push(pair(None));
            }
            if let Some(x) = m.profile_overlap[i] {
                profile.push(pair(Some(x)));
                by_family.push(pair(Some(if in_family { 1.0 } else { 0.0 })));
            }
            gradient.push(pair(m.gradient_cosine[i]));
        }
    }
    let rl_keeps: Vec<(Arm, TransferSplit)> = analysis
        .map(|a| {
            a.arms
                .iter()
                .filter(|s| RETENTION_ARMS.contains(&s.arm))
                .filter_map(|s| Some((s.arm, s.transfer.clone()?)))
                .collect()
        })
        .unwrap_or_default();
    let mut p = Preconditions {
        base_by_harness,
        harness_transfer: probe_mean(&scaffolded, b, seed),
        harness_transfer_h4: probe_mean(&bare, b, seed),
        transfer_vs_profile: crossed_rank(&profile, b, seed),
        transfer_vs_gradient: crossed_rank(&gradient, b, seed),
        transfer_vs_family: crossed_rank(&by_family, b, seed),
        probe_same_family: crossed_mean(&same, b, seed),
        probe_other_families: crossed_mean(&other, b, seed),
        probe_ood: crossed_mean(&ood, b, seed),
        rl_keeps,
        hdc_reach: hdc_reach(results),
        hdc_regime: hdc_regime(results, b, seed),
        transfer_vs_response: response.and_then(|r| {
            let held_out = results.config.transfer.aes_transfer_probes;
            crossed_rank(&response_pairs(results, r, held_out, &family_of), b, seed)
        }),
        transfer_by_sharing: profiles
            .map(|pr| sharing::by_sharing(results, runs, pr, &family_of, b, seed))
            .unwrap_or_default(),
        testable: vec![],
    };
    p.testable = testability(&p);
    Some(p)
}

/// The pairs (probe, pool target) of the probes after the first `skip` (those the responses
/// were not computed from), each with the cosine of its source's and target's responses.
fn response_pairs(
    results: &Results,
    response: &GradientSet,
    skip: usize,
    family_of: &dyn Fn(&EnvId) -> usize,
) -> Vec<Pair> {
    let Some(runs) = results.precondition_runs.as_ref() else {
        return Vec::new();
    };
    let row = |e: &EnvId| {
        let i = response.env_ids.iter().position(|x| x == e)?;
        let r = response.row(i);
        r.iter().any(|v| *v != 0.0).then_some(r)
    };
    let mut pairs = Vec::new();
    for (p, m) in runs.matrix.iter().enumerate().skip(skip) {
        let Some(source) = row(&m.source) else {
            continue;
        };
        for (i, t) in runs.targets.iter().enumerate() {
            if *t == m.source || results.envs.ood.contains(t) {
                continue;
            }
            let transfer = PTS * (m.after[i] as f64 - runs.base[i] as f64);
            pairs.push(Pair {
                probe: p - skip,
                family: family_of(t),
                transfer: (transfer * 1e6).round() / 1e6,
                x: row(t).map(|r| envdist_core::cosine(source, r)),
            });
        }
    }
    pairs
}
