//! The study's statistics: a two-level (training seed, evaluation environment) bootstrap for
//! every interval, the smallest difference a run could detect, and a verdict per claim.
//!
//! Why two levels: an arm's score varies with its training seed *and* with which
//! environments (and instances) it is evaluated on. Resampling seeds alone treats the
//! evaluation set as the whole population; resampling environments alone ignores that a second
//! training run would come out differently. Each replicate draws seeds with replacement, then
//! environments with replacement (one draw per group, shared by every seed and by both sides
//! of a paired comparison), and recomputes the statistic.

use envdist_core::Rng;
use serde::{Deserialize, Serialize};

/// z for a two-sided 95% interval plus z for 80% power: a true difference of `MDE_Z x SE`
/// would be detected four times in five.
pub const MDE_Z: f64 = 1.96 + 0.8416;

/// A statistic with its 95% percentile-bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The statistic on the data as observed.
    pub estimate: f64,
    /// 2.5th percentile of the replicates.
    pub lo: f64,
    /// 97.5th percentile of the replicates.
    pub hi: f64,
    /// Standard deviation of the replicates (the statistic's standard error).
    pub se: f64,
    /// Two-sided bootstrap p-value of "the statistic is zero": twice the smaller share of
    /// replicates on either side of zero (at least one replicate's worth).
    #[serde(default = "one")]
    pub p: f64,
}

fn one() -> f64 {
    1.0
}

impl Interval {
    /// The smallest true difference this run would detect with 80% power at the 5% level.
    pub fn mde(&self) -> f64 {
        MDE_Z * self.se
    }

    /// The interval scaled (e.g. to percentage points).
    pub fn scaled(&self, k: f64) -> Self {
        let (a, b) = (self.lo * k, self.hi * k);
        Self {
            estimate: self.estimate * k,
            lo: a.min(b),
            hi: a.max(b),
            se: self.se * k.abs(),
            p: self.p,
        }
    }
}

/// What a run says of a claim "the difference is positive".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval is above zero.
    Supported,
    /// The whole interval is below zero.
    Refuted,
    /// The interval contains zero: within noise.
    Inconclusive,
}

impl Verdict {
    /// The verdict on "positive" from an interval.
    pub fn of(i: &Interval) -> Self {
        if i.lo > 0.0 {
            Verdict::Supported
        } else if i.hi < 0.0 {
            Verdict::Refuted
        } else {
            Verdict::Inconclusive
        }
    }

    /// The verdict on "positive" from a (multiplicity-adjusted) p-value and the estimate's
    /// sign, at the 5% level.
    pub fn of_p(estimate: f64, p: f64) -> Self {
        if p >= 0.05 {
            Verdict::Inconclusive
        } else if estimate > 0.0 {
            Verdict::Supported
        } else {
            Verdict::Refuted
        }
    }

    /// The word in tables.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::Refuted => "refuted",
            Verdict::Inconclusive => "inconclusive (within noise)",
        }
    }
}

/// Bootstrap `stat` over `n_seeds` seeds and unit groups of sizes `groups` (e.g. the ID and
/// OOD environments). `stat(seeds, units)` gets the resampled seed indices and, per group, the
/// resampled unit indices; it is called once on the identity sample for the estimate.
pub fn bootstrap(
    n_seeds: usize,
    groups: &[usize],
    replicates: u32,
    seed: u64,
    stat: impl Fn(&[usize], &[Vec<usize>]) -> f64,
) -> Interval {
    let identity_seeds: Vec<usize> = (0..n_seeds).collect();
    let identity_units: Vec<Vec<usize>> = groups.iter().map(|&n| (0..n).collect()).collect();
    let estimate = stat(&identity_seeds, &identity_units);
    let mut rng = Rng::derive(seed, 0x424f_4f54);
    let mut values: Vec<f64> = Vec::with_capacity(replicates as usize);
    let mut seeds = vec![0usize; n_seeds];
    let mut units: Vec<Vec<usize>> = groups.iter().map(|&n| vec![0; n]).collect();
    for _ in 0..replicates {
        for s in seeds.iter_mut() {
            *s = rng.index(n_seeds.max(1));
        }
        for (g, &n) in units.iter_mut().zip(groups) {
            for u in g.iter_mut() {
                *u = rng.index(n.max(1));
            }
        }
        let v = stat(&seeds, &units);
        if v.is_finite() {
            values.push(v);
        }
    }
    interval_of(estimate, values)
}

/// The percentile interval, standard error and p-value of the bootstrap `values` of a
/// statistic whose estimate on the data is `estimate`.
pub fn interval_of(estimate: f64, mut values: Vec<f64>) -> Interval {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    let q = |p: f64| -> f64 {
        if values.is_empty() {
            return f64::NAN;
        }
        let i = ((values.len() - 1) as f64 * p).round() as usize;
        values[i]
    };
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let se = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let below = values.iter().filter(|v| **v <= 0.0).count() as f64;
    let above = values.iter().filter(|v| **v >= 0.0).count() as f64;
    let p = (2.0 * below.min(above).max(1.0) / n).min(1.0);
    Interval {
        estimate,
        lo: q(0.025),
        hi: q(0.975),
        se,
        p,
    }
}

/// Holm's step-down adjustment of `p` (family-wise error at any level): the i-th smallest
/// p-value is multiplied by `m - i` (0-based) and the result made monotone. Same order as `p`.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Mean over the sampled seeds and units of `x[seed][unit]`.
pub fn mean_of(x: &[Vec<f64>], seeds: &[usize], units: &[usize]) -> f64 {
    let mut total = 0.0;
    for &s in seeds {
        let row = &x[s];
        total += units.iter().map(|&u| row[u]).sum::<f64>() / units.len().max(1) as f64;
    }
    total / seeds.len().max(1) as f64
}

/// The mean of `a - b`, paired by seed and unit, with its interval.
pub fn paired_difference(a: &[Vec<f64>], b: &[Vec<f64>], replicates: u32, seed: u64) -> Interval {
    let units = a.first().map_or(0, Vec::len);
    bootstrap(a.len(), &[units], replicates, seed, |s, u| {
        mean_of(a, s, &u[0]) - mean_of(b, s, &u[0])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(seeds: usize, units: usize, f: impl Fn(usize, usize) -> f64) -> Vec<Vec<f64>> {
        (0..seeds)
            .map(|s| (0..units).map(|u| f(s, u)).collect())
            .collect()
    }

    #[test]
    fn a_clear_difference_is_supported_and_noise_is_inconclusive() {
        let base = matrix(5, 40, |s, u| ((s * 7 + u * 13) % 10) as f64 / 10.0);
        let better = matrix(5, 40, |s, u| base[s][u] + 0.2);
        let i = paired_difference(&better, &base, 1000, 1);
        assert!((i.estimate - 0.2).abs() < 1e-12);
        assert!(i.lo > 0.19 && i.hi < 0.21, "{i:?}");
        assert_eq!(Verdict::of(&i), Verdict::Supported);
        let noisy = matrix(5, 40, |s, u| {
            base[s][u] + if (s + u) % 2 == 0 { 0.3 } else { -0.3 }
        });
        let j = paired_difference(&noisy, &base, 1000, 1);
        assert_eq!(Verdict::of(&j), Verdict::Inconclusive, "{j:?}");
        assert!(j.mde() > 0.0);
        assert_eq!(
            Verdict::of(&paired_difference(&base, &better, 1000, 1)),
            Verdict::Refuted
        );
    }

    #[test]
    fn more_seeds_and_units_shrink_the_interval() {
        let noise = |s: usize, u: usize| (((s * 31 + u * 17) % 11) as f64 - 5.0) / 20.0;
        let small = paired_difference(&matrix(3, 10, noise), &matrix(3, 10, |_, _| 0.0), 2000, 3);
        let large = paired_difference(&matrix(12, 80, noise), &matrix(12, 80, |_, _| 0.0), 2000, 3);
        assert!(large.se < small.se, "{small:?} {large:?}");
    }

    #[test]
    fn holm_adjusts_step_down_and_p_values_follow_the_interval() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.5]);
        // Sorted 0.01, 0.03, 0.04, 0.5 times 4, 3, 2, 1, made monotone.
        let expect = [0.04, 0.09, 0.09, 0.5];
        for (a, e) in adj.iter().zip(expect) {
            assert!((a - e).abs() < 1e-12, "{adj:?}");
        }
        let base = matrix(5, 40, |s, u| ((s * 7 + u * 13) % 10) as f64 / 10.0);
        let better = matrix(5, 40, |s, u| base[s][u] + 0.2);
        let clear = paired_difference(&better, &base, 1000, 1);
        assert!(clear.p <= 0.002, "{clear:?}");
        assert_eq!(Verdict::of_p(clear.estimate, clear.p), Verdict::Supported);
        let same = paired_difference(&base, &base, 1000, 1);
        assert_eq!(same.p, 1.0);
        assert_eq!(Verdict::of_p(same.estimate, same.p), Verdict::Inconclusive);
    }

    #[test]
    fn scaling_keeps_the_order_of_the_bounds() {
        let i = Interval {
            estimate: 0.1,
            lo: 0.05,
            hi: 0.2,
            se: 0.03,
            p: 0.01,
        };
        let j = i.scaled(-100.0);
        assert!(j.lo < j.hi && (j.estimate + 10.0).abs() < 1e-9);
    }
}
