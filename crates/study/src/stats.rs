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

pub use crate::model::Interval;

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
    let mut seeds = vec![0usize; n_seeds];
    let mut units: Vec<Vec<usize>> = groups.iter().map(|&n| vec![0; n]).collect();
    resample(
        estimate,
        replicates,
        Rng::derive(seed, 0x424f_4f54),
        |rng| {
            for s in seeds.iter_mut() {
                *s = rng.index(n_seeds.max(1));
            }
            for (g, &n) in units.iter_mut().zip(groups) {
                for u in g.iter_mut() {
                    *u = rng.index(n.max(1));
                }
            }
            stat(&seeds, &units)
        },
    )
}

/// The one replicate loop of every interval of the study: `replicate(rng)` draws one
/// resample from `rng` and returns the statistic on it; the interval of `replicates` of them
/// around `estimate` ([`interval_of`]; non-finite replicates are dropped).
pub fn resample(
    estimate: f64,
    replicates: u32,
    mut rng: Rng,
    mut replicate: impl FnMut(&mut Rng) -> f64,
) -> Interval {
    let values = (0..replicates).map(|_| replicate(&mut rng)).collect();
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
    use crate::model::Verdict;

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

    /// The worked example of Holm's method in Holm (1979)'s textbook form (as in, e.g., the
    /// Wikipedia article "Holm–Bonferroni method"): four hypotheses with raw p-values 0.01,
    /// 0.04, 0.03 and 0.005 at α = 0.05. Sorted, 0.005 ≤ 0.05/4 and 0.01 ≤ 0.05/3 are
    /// rejected; 0.03 > 0.05/2 stops the procedure, so 0.03 and 0.04 are retained although
    /// 0.04 alone is below α. Adjusted: max over the steps so far of (m − rank) · p.
    #[test]
    fn holm_reproduces_the_textbook_example() {
        let raw = [0.01, 0.04, 0.03, 0.005];
        let adj = holm(&raw);
        let expect = [0.03, 0.06, 0.06, 0.02];
        for (a, e) in adj.iter().zip(expect) {
            assert!((a - e).abs() < 1e-12, "{adj:?}");
        }
        let rejected: Vec<bool> = adj.iter().map(|p| *p < 0.05).collect();
        assert_eq!(rejected, [true, false, false, true]);
        // Bonferroni alone would also retain 0.03 and 0.04; unadjusted testing would reject all
        // four: Holm sits between them.
        assert!(raw.iter().all(|p| *p < 0.05));
        // One hypothesis: no adjustment; none: nothing.
        assert_eq!(holm(&[0.2]), vec![0.2]);
        assert!(holm(&[]).is_empty());
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
