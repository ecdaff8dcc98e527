//! The measured-transfer stage's analysis: transfer by relation, and whether the base's
//! gradient cosines rank it.

use super::tables::PTS;
use crate::model::{Interval, Relation, TransferAnalysis, TransferRuns};
use crate::stats::bootstrap;

/// One (source, other target) pair of the measured-transfer stage.
struct TransferPair {
    probe: usize,
    cosine: f32,
    /// Points, rounded to 1e-6 so that equal transfers rank as ties.
    transfer: f32,
    /// The base never solves the target.
    at_floor: bool,
}

/// Spearman of the cosine with the transfer over `pairs`, with an interval that resamples
/// probes (every pair of a drawn probe comes along).
fn probe_level_spearman(
    pairs: &[&TransferPair],
    probes: usize,
    b: u32,
    seed: u64,
) -> Option<Interval> {
    let xy: Vec<(usize, f32, f32)> = pairs
        .iter()
        .map(|p| (p.probe, p.cosine, p.transfer))
        .collect();
    crate::stats::probe_level_spearman(&xy, probes, b, seed)
}

/// The transfer analysis of `t`.
pub(super) fn transfer_analysis(t: &TransferRuns, b: u32, seed: u64) -> TransferAnalysis {
    let n = t.runs.len();
    // transfer[probe][relation]
    let mut by: std::collections::BTreeMap<Relation, Vec<Option<f64>>> = Default::default();
    let mut pairs: Vec<TransferPair> = Vec::new();
    let mut unknown_cosine_pairs = 0;
    for (pi, r) in t.runs.iter().enumerate() {
        for ((target, rel), after) in r.probe.targets.iter().zip(&r.after) {
            let Some(base) = t.base.get(target) else {
                continue;
            };
            let d = PTS * (*after as f64 - *base as f64);
            by.entry(*rel).or_insert_with(|| vec![None; n])[pi] = Some(d);
            if *rel != Relation::Itself
                && let Some((_, _, c)) = t
                    .cosines
                    .iter()
                    .find(|(a, x, _)| *a == r.probe.source && x == target)
            {
                if *c == 0.0 {
                    unknown_cosine_pairs += 1;
                    continue;
                }
                pairs.push(TransferPair {
                    probe: pi,
                    cosine: *c,
                    transfer: ((d * 1e6).round() / 1e6) as f32,
                    at_floor: *base == 0.0,
                });
            }
        }
    }
    let mean_over =
        |v: &[f64], idx: &[usize]| idx.iter().map(|&i| v[i]).sum::<f64>() / idx.len().max(1) as f64;
    let by_relation = by
        .iter()
        .filter_map(|(rel, v)| {
            let v: Vec<f64> = v.iter().flatten().copied().collect();
            (!v.is_empty()).then(|| {
                let i = bootstrap(1, &[v.len()], b, seed, |_, u| mean_over(&v, &u[0]));
                (*rel, i)
            })
        })
        .collect();
    let twin_minus_same_family = match (by.get(&Relation::Twin), by.get(&Relation::SameFamily)) {
        (Some(tw), Some(sf)) => {
            let d: Vec<f64> = tw
                .iter()
                .zip(sf)
                .filter_map(|(a, b)| Some((*a)? - (*b)?))
                .collect();
            (!d.is_empty()).then(|| bootstrap(1, &[d.len()], b, seed, |_, u| mean_over(&d, &u[0])))
        }
        _ => None,
    };
    let all: Vec<&TransferPair> = pairs.iter().collect();
    let above: Vec<&TransferPair> = pairs.iter().filter(|p| !p.at_floor).collect();
    TransferAnalysis {
        probes: n,
        by_relation,
        twin_minus_same_family,
        rank_correlation: probe_level_spearman(&all, n, b, seed),
        pairs: pairs.len(),
        unknown_cosine_pairs,
        floor_pairs: pairs.len() - above.len(),
        rank_correlation_above_floor: probe_level_spearman(&above, n, b, seed),
    }
}
