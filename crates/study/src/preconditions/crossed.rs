//! The preconditions' statistics over probes: a mean over probes, and a mean or a rank
//! correlation over (probe, target) pairs with intervals that resample probes crossed with the
//! targets' families.

use crate::model::ProbeEstimate;
use crate::stats::bootstrap;
use crate::stats::precision::spearman_cap;

/// The mean over probes of `per_probe` (one value per probe; `None` drops the probe), probes
/// resampled.
pub(crate) fn probe_mean(per_probe: &[Option<f64>], b: u32, seed: u64) -> Option<ProbeEstimate> {
    let v: Vec<f64> = per_probe.iter().flatten().copied().collect();
    if v.is_empty() {
        return None;
    }
    let i = bootstrap(1, &[v.len()], b, seed, |_, u| {
        u[0].iter().map(|&k| v[k]).sum::<f64>() / u[0].len().max(1) as f64
    });
    Some(ProbeEstimate {
        estimate: i.estimate,
        lo: i.lo,
        hi: i.hi,
        probes: v.len(),
        pairs: None,
        crossed: false,
        max: None,
    })
}

/// A probe's transfer to one target, with what the predictors say of the pair.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pair {
    pub probe: usize,
    /// The target's family, as an index into the targets' families.
    pub family: usize,
    /// Points; rounded to 1e-6 so that equal transfers rank as ties whatever the float noise.
    pub transfer: f64,
    /// Predictor values (`None` where unknown).
    pub x: Option<f32>,
}

/// `pairs` grouped by probe, then by target family.
pub(crate) fn cells(pairs: &[Pair], probes: usize, families: usize) -> Vec<Vec<Vec<(f32, f64)>>> {
    let mut c = vec![vec![Vec::new(); families]; probes];
    for p in pairs {
        c[p.probe][p.family].push((p.x.unwrap_or(0.0), p.transfer));
    }
    c
}

/// The probes that have pairs, and the families.
pub(crate) fn drawn(pairs: &[Pair]) -> (Vec<usize>, usize) {
    let mut probes: Vec<usize> = pairs.iter().map(|p| p.probe).collect();
    probes.sort_unstable();
    probes.dedup();
    let families = pairs.iter().map(|p| p.family + 1).max().unwrap_or(0);
    (probes, families)
}

/// The mean over probes of each probe's mean transfer over its pairs, with an interval that
/// resamples probes crossed with target families.
pub(crate) fn crossed_mean(pairs: &[Pair], b: u32, seed: u64) -> Option<ProbeEstimate> {
    let (probes, families) = drawn(pairs);
    if probes.is_empty() {
        return None;
    }
    let cells = cells(pairs, probes.iter().max().map_or(0, |m| m + 1), families);
    let stat = |ps: &[usize], fs: &[usize]| {
        let (mut total, mut n) = (0.0, 0usize);
        for &k in ps {
            let (mut sum, mut count) = (0.0, 0usize);
            for &f in fs {
                for &(_, y) in &cells[probes[k]][f] {
                    sum += y;
                    count += 1;
                }
            }
            if count > 0 {
                total += sum / count as f64;
                n += 1;
            }
        }
        if n == 0 { f64::NAN } else { total / n as f64 }
    };
    let i = bootstrap(1, &[probes.len(), families], b, seed, |_, u| {
        stat(&u[0], &u[1])
    });
    Some(ProbeEstimate {
        estimate: i.estimate,
        lo: i.lo,
        hi: i.hi,
        probes: probes.len(),
        pairs: Some(pairs.len()),
        crossed: true,
        max: None,
    })
}

/// Spearman of the predictor with the transfer over `pairs` (those with a known predictor),
/// with an interval that resamples probes crossed with target families (every pair of a
/// drawn probe and a drawn family comes along), and the largest value the predictor's ties
/// allow.
pub(crate) fn crossed_rank(pairs: &[Pair], b: u32, seed: u64) -> Option<ProbeEstimate> {
    let known: Vec<Pair> = pairs.iter().filter(|p| p.x.is_some()).copied().collect();
    if known.len() < 4 {
        return None;
    }
    let (probes, families) = drawn(&known);
    let cells = cells(&known, probes.iter().max().map_or(0, |m| m + 1), families);
    let stat = |ps: &[usize], fs: &[usize]| {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for &k in ps {
            for &f in fs {
                for &(a, t) in &cells[probes[k]][f] {
                    x.push(a);
                    y.push(t as f32);
                }
            }
        }
        envdist_core::rank::spearman(&x, &y).unwrap_or(f64::NAN)
    };
    let i = bootstrap(1, &[probes.len(), families], b, seed, |_, u| {
        stat(&u[0], &u[1])
    });
    let x: Vec<f32> = known.iter().filter_map(|p| p.x).collect();
    Some(ProbeEstimate {
        estimate: i.estimate,
        lo: i.lo,
        hi: i.hi,
        probes: probes.len(),
        pairs: Some(known.len()),
        crossed: true,
        max: spearman_cap(&x),
    })
}
