//! The study's statistics: a crossed (training seed × evaluation environment) bootstrap for
//! every interval, equivalence tests, Holm's adjustment, detection limits at the level a
//! verdict uses, variance components, and rliable's aggregates (IQM, probability of
//! improvement, stratified bootstrap).
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
    bootstrap_replicates(n_seeds, groups, replicates, seed, stat).interval()
}

/// Spearman of `x` with `y` over `(probe, x, y)` pairs, with an interval that resamples
/// probes (every pair of a drawn probe comes along: a probe's pairs share its fine-tune);
/// `None` under 4 pairs. Probe indices are below `probes`.
pub fn probe_level_spearman(
    pairs: &[(usize, f32, f32)],
    probes: usize,
    b: u32,
    seed: u64,
) -> Option<Interval> {
    let mut by_probe: Vec<Vec<(f32, f32)>> = vec![Vec::new(); probes];
    for &(p, a, b) in pairs {
        if let Some(v) = by_probe.get_mut(p) {
            v.push((a, b));
        }
    }
    let of = |idx: &[usize]| -> f64 {
        let (x, y): (Vec<f32>, Vec<f32>) = idx
            .iter()
            .flat_map(|&p| by_probe[p].iter().copied())
            .unzip();
        envdist_core::rank::spearman(&x, &y).unwrap_or(f64::NAN)
    };
    (pairs.len() >= 4).then(|| bootstrap(1, &[probes], b, seed, |_, u| of(&u[0])))
}

/// [`bootstrap`]'s replicates themselves (for tests beyond the interval: equivalence).
pub fn bootstrap_replicates(
    n_seeds: usize,
    groups: &[usize],
    replicates: u32,
    seed: u64,
    stat: impl Fn(&[usize], &[Vec<usize>]) -> f64,
) -> Replicates {
    let identity_seeds: Vec<usize> = (0..n_seeds).collect();
    let identity_units: Vec<Vec<usize>> = groups.iter().map(|&n| (0..n).collect()).collect();
    let estimate = stat(&identity_seeds, &identity_units);
    let mut seeds = vec![0usize; n_seeds];
    let mut units: Vec<Vec<usize>> = groups.iter().map(|&n| vec![0; n]).collect();
    Replicates::draw(
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

/// A statistic on the data and its bootstrap replicates (finite ones, sorted).
/// [`Replicates::draw`] is the one replicate loop of every interval of the study.
#[derive(Debug, Clone, PartialEq)]
pub struct Replicates {
    /// The statistic on the data as observed.
    pub estimate: f64,
    /// The replicates, finite and sorted.
    pub values: Vec<f64>,
}

impl Replicates {
    /// `replicates` draws of `replicate(rng)` from `rng`.
    pub fn draw(
        estimate: f64,
        replicates: u32,
        mut rng: Rng,
        mut replicate: impl FnMut(&mut Rng) -> f64,
    ) -> Self {
        let mut values: Vec<f64> = (0..replicates)
            .map(|_| replicate(&mut rng))
            .filter(|v| v.is_finite())
            .collect();
        values.sort_by(f64::total_cmp);
        Self { estimate, values }
    }

    /// The 95% percentile interval, standard error and two-sided p-value of "zero".
    pub fn interval(&self) -> Interval {
        interval_of(self.estimate, self.values.clone())
    }

    /// The p-value of "the statistic lies within ±`margin`" by two one-sided tests (TOST):
    /// the larger of the shares of replicates at or beyond each bound (at least one
    /// replicate's worth). Below 0.05 exactly when the 90% percentile interval lies inside
    /// (−margin, +margin).
    pub fn equivalence_p(&self, margin: f64) -> f64 {
        let n = self.values.len().max(1) as f64;
        let below = self.values.iter().filter(|v| **v <= -margin).count() as f64;
        let above = self.values.iter().filter(|v| **v >= margin).count() as f64;
        (below.max(above).max(1.0) / n).min(1.0)
    }
}

/// The standard normal quantile `Φ⁻¹(p)` for `p` in (0, 1) (Acklam's rational approximation:
/// relative error below 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return if p <= 0.0 {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// z-multiple of a standard error that a true difference must reach to be detected with
/// `power` by a two-sided test at level `alpha`: `Φ⁻¹(1 − α/2) + Φ⁻¹(power)`.
pub fn detection_z(alpha: f64, power: f64) -> f64 {
    normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power)
}

/// The level at which a primary claim is detected for sure by Holm's step-down over `m`
/// claims: its first step, `α / m` (a claim that passes it is rejected whatever the others
/// do). Detection limits of primary claims use it.
pub fn holm_first_step(alpha: f64, m: usize) -> f64 {
    alpha / m.max(1) as f64
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

/// The variance components of a paired-difference table `d[seed][env]` (any unit): the
/// additive model `d = μ + a_seed + b_env + ε` fitted by least squares (nalgebra's SVD on the
/// sum-to-zero design), the residual variance from its residuals, and the seed and
/// environment variances by the method of moments (`E[Σ a²/(S−1)] = σ²_seed + σ²_res/E`,
/// likewise for environments; negative estimates clamped at 0). `None` below 2 seeds or 2
/// environments.
pub fn variance_components(d: &[Vec<f64>]) -> Option<(f64, f64, f64)> {
    use nalgebra::{DMatrix, DVector};
    let seeds = d.len();
    let envs = d.first().map_or(0, Vec::len);
    if seeds < 2 || envs < 2 || d.iter().any(|r| r.len() != envs) {
        return None;
    }
    // Columns: intercept, S − 1 seed contrasts, E − 1 env contrasts (effect coding: the last
    // level is minus the sum of the others).
    let cols = 1 + (seeds - 1) + (envs - 1);
    let rows = seeds * envs;
    let mut x = DMatrix::<f64>::zeros(rows, cols);
    let mut y = DVector::<f64>::zeros(rows);
    for s in 0..seeds {
        for e in 0..envs {
            let r = s * envs + e;
            y[r] = d[s][e];
            x[(r, 0)] = 1.0;
            if s + 1 < seeds {
                x[(r, 1 + s)] = 1.0;
            } else {
                (0..seeds - 1).for_each(|k| x[(r, 1 + k)] = -1.0);
            }
            if e + 1 < envs {
                x[(r, seeds + e)] = 1.0;
            } else {
                (0..envs - 1).for_each(|k| x[(r, seeds + k)] = -1.0);
            }
        }
    }
    let beta = x.clone().svd(true, true).solve(&y, 1e-12).ok()?;
    let fitted = &x * &beta;
    let rss: f64 = (&y - &fitted).iter().map(|r| r * r).sum();
    let residual = rss / ((seeds - 1) * (envs - 1)) as f64;
    let effect = |first: usize, n: usize| -> Vec<f64> {
        let mut v: Vec<f64> = (0..n - 1).map(|k| beta[first + k]).collect();
        v.push(-v.iter().sum::<f64>());
        v
    };
    let spread = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>() / (v.len() - 1) as f64;
    let seed = (spread(&effect(1, seeds)) - residual / envs as f64).max(0.0);
    let env = (spread(&effect(seeds, envs)) - residual / seeds as f64).max(0.0);
    Some((seed, env, residual))
}

/// The standard error of a mean over `seeds` × `envs` under variance components
/// `(seed, env, residual)`.
pub fn se_of(components: (f64, f64, f64), seeds: usize, envs: usize) -> f64 {
    let (s, e, r) = components;
    let (n_s, n_e) = (seeds.max(1) as f64, envs.max(1) as f64);
    (s / n_s + e / n_e + r / (n_s * n_e)).sqrt()
}

/// The smallest count in `1..=limit` for which `z · se(count) ≤ target`, if any.
pub fn needed(limit: usize, target: f64, z: f64, se: impl Fn(usize) -> f64) -> Option<usize> {
    // se falls as the count grows: a binary search over the monotone predicate.
    let ok = |n: usize| z * se(n) <= target;
    if !ok(limit) {
        return None;
    }
    let (mut lo, mut hi) = (1usize, limit);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) { hi = mid } else { lo = mid + 1 }
    }
    Some(lo)
}

/// The interquartile mean of `values`: the mean of the middle half after sorting, cutting
/// `⌊n/4⌋` from each end (scipy's `trim_mean(values, 0.25)`, which rliable's IQM is).
pub fn iqm(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let cut = v.len() / 4;
    let mid = &v[cut..v.len() - cut];
    mid.iter().sum::<f64>() / mid.len().max(1) as f64
}

/// rliable's probability of improvement of `x` over `y` (`[run][task]` tables with the same
/// tasks): per task the Mann-Whitney share of run pairs with `x > y` (ties a half), averaged
/// over tasks.
pub fn probability_of_improvement(x: &[Vec<f64>], y: &[Vec<f64>]) -> f64 {
    let tasks = x.first().map_or(0, Vec::len);
    let mut total = 0.0;
    for t in 0..tasks {
        let mut u = 0.0;
        for a in x {
            for b in y {
                u += match a[t].total_cmp(&b[t]) {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                };
            }
        }
        total += u / (x.len() * y.len()).max(1) as f64;
    }
    total / tasks.max(1) as f64
}

/// rliable's stratified bootstrap of a statistic of `[run][task]` tables: each replicate
/// resamples the runs of every table within each task, independently per task and table.
pub fn stratified_bootstrap(
    tables: &[&[Vec<f64>]],
    replicates: u32,
    seed: u64,
    stat: impl Fn(&[Vec<Vec<f64>>]) -> f64,
) -> Interval {
    let owned: Vec<Vec<Vec<f64>>> = tables.iter().map(|t| t.to_vec()).collect();
    let estimate = stat(&owned);
    let mut drawn = owned.clone();
    Replicates::draw(
        estimate,
        replicates,
        Rng::derive(seed, 0x5354_5241),
        |rng| {
            for (src, dst) in owned.iter().zip(drawn.iter_mut()) {
                let (runs, tasks) = (src.len(), src.first().map_or(0, Vec::len));
                for t in 0..tasks {
                    for row in dst.iter_mut() {
                        row[t] = src[rng.index(runs.max(1))][t];
                    }
                }
            }
            stat(&drawn)
        },
    )
    .interval()
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

/// The replicates of the mean of `a - b`, paired by seed and unit.
pub fn paired_replicates(a: &[Vec<f64>], b: &[Vec<f64>], replicates: u32, seed: u64) -> Replicates {
    let units = a.first().map_or(0, Vec::len);
    bootstrap_replicates(a.len(), &[units], replicates, seed, |s, u| {
        mean_of(a, s, &u[0]) - mean_of(b, s, &u[0])
    })
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
    fn normal_quantiles_and_detection_levels() {
        for (p, z) in [
            (0.975, 1.959_963_985),
            (0.8, 0.841_621_234),
            (0.5, 0.0),
            (0.01, -2.326_347_874),
        ] {
            assert!(
                (normal_quantile(p) - z).abs() < 1e-8,
                "{p}: {}",
                normal_quantile(p)
            );
        }
        // 80% power at 5%: the familiar 2.8 standard errors; at Holm's first step over six
        // claims (α/6): about 3.48.
        assert!((detection_z(0.05, 0.8) - 2.8016).abs() < 1e-3);
        let z6 = detection_z(holm_first_step(0.05, 6), 0.8);
        assert!((z6 - 3.4797).abs() < 1e-3, "{z6}");
    }

    #[test]
    fn equivalence_is_shown_only_when_the_90_percent_interval_is_inside_the_margin() {
        let narrow = Replicates::draw(0.1, 1000, Rng::derive(1, 1), |r| 0.1 + (r.next_f64() - 0.5));
        assert!(
            narrow.equivalence_p(1.0) < 0.05,
            "{}",
            narrow.equivalence_p(1.0)
        );
        assert!(narrow.equivalence_p(0.3) > 0.05);
        let far = Replicates::draw(3.0, 1000, Rng::derive(1, 2), |r| 3.0 + r.next_f64());
        assert_eq!(far.equivalence_p(1.0), 1.0);
    }

    /// A table built from known effects: the least-squares split recovers them (exactly for
    /// the residual, up to the method-of-moments correction for seeds and environments).
    #[test]
    fn variance_components_recover_planted_effects() {
        let mut rng = Rng::derive(3, 4);
        let (seeds, envs) = (8, 300);
        let a: Vec<f64> = (0..seeds).map(|_| 2.0 * rng.normal() as f64).collect();
        let b: Vec<f64> = (0..envs).map(|_| 5.0 * rng.normal() as f64).collect();
        let d: Vec<Vec<f64>> = (0..seeds)
            .map(|s| {
                (0..envs)
                    .map(|e| 1.0 + a[s] + b[e] + 3.0 * rng.normal() as f64)
                    .collect()
            })
            .collect();
        let (s, e, r) = variance_components(&d).unwrap();
        assert!((r - 9.0).abs() < 1.0, "residual {r}");
        assert!((e - 25.0).abs() < 5.0, "env {e}");
        assert!(s > 1.0 && s < 10.0, "seed {s}");
        assert!(variance_components(&d[..1]).is_none());
        // More of either count lowers the standard error; the env term alone caps what seeds buy.
        let c = (s, e, r);
        assert!(se_of(c, 16, envs) < se_of(c, 8, envs));
        let z = detection_z(0.05, 0.8);
        let seeds_for = |t: f64| needed(10_000, t, z, |n| se_of(c, n, envs));
        assert!(seeds_for(1.0).is_some() && seeds_for(0.01).is_none());
    }

    #[test]
    fn iqm_and_probability_of_improvement_follow_rliable() {
        // trim_mean([1..8], 0.25) = mean(3, 4, 5, 6); with 10 values ⌊2.5⌋ = 2 cut each end.
        assert_eq!(iqm(&[8.0, 1.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0]), 4.5);
        assert_eq!(iqm(&(1..=10).map(f64::from).collect::<Vec<_>>()), 5.5);
        let x = vec![vec![1.0, 0.0], vec![1.0, 1.0]];
        let y = vec![vec![0.0, 0.0], vec![1.0, 0.0]];
        // Task 0: pairs (1>0, 1=1, 1>0, 1=1) = 3/4; task 1: (0=0, 0=0, 1>0, 1>0) = 3/4.
        assert_eq!(probability_of_improvement(&x, &y), 0.75);
        assert_eq!(probability_of_improvement(&x, &x), 0.5);
        let i = stratified_bootstrap(&[&x, &y], 200, 1, |t| {
            probability_of_improvement(&t[0], &t[1])
        });
        assert_eq!(i.estimate, 0.75);
        assert!(i.lo <= 0.75 && i.hi >= 0.75);
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
