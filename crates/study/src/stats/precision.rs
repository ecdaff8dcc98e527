//! How precise a record's numbers are, said honestly: the Monte-Carlo error of a bootstrap
//! p-value, the uncertainty of a seed variance estimated from a handful of seeds, the seeds
//! and families a target precision needs (from the bootstrap's own variance), and the largest
//! rank correlation a tied statistic can reach.

/// Standard error of a bootstrap p-value `p` estimated from `replicates` replicates: the
/// binomial `sqrt(p (1 − p) / B)`.
pub fn mc_error(p: f64, replicates: usize) -> f64 {
    let p = p.clamp(0.0, 1.0);
    (p * (1.0 - p) / replicates.max(1) as f64).sqrt()
}

/// Whether `p` lies within a factor 2 of `threshold` (between half and twice it): where
/// Monte-Carlo error could flip a decision, so the bootstrap is rerun with more replicates.
pub fn near_threshold(p: f64, threshold: f64) -> bool {
    p >= threshold / 2.0 && p <= 2.0 * threshold
}

/// The regularised lower incomplete gamma function `P(a, x)` (series for `x < a + 1`,
/// continued fraction otherwise; Numerical Recipes' `gammp`).
fn gamma_p(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let ln_gamma_a = ln_gamma(a);
    if x < a + 1.0 {
        let (mut sum, mut term, mut n) = (1.0 / a, 1.0 / a, a);
        for _ in 0..500 {
            n += 1.0;
            term *= x / n;
            sum += term;
            if term.abs() < sum.abs() * 1e-15 {
                break;
            }
        }
        sum * (-x + a * x.ln() - ln_gamma_a).exp()
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..500 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-15 {
                break;
            }
        }
        1.0 - (-x + a * x.ln() - ln_gamma_a).exp() * h
    }
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The `p` quantile of the chi-square distribution with `df` degrees of freedom (bisection
/// on its distribution function).
pub fn chi_square_quantile(p: f64, df: f64) -> f64 {
    let cdf = |x: f64| gamma_p(df / 2.0, x / 2.0);
    let (mut lo, mut hi) = (0.0f64, df.max(1.0));
    while cdf(hi) < p {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The one-sided upper `level` confidence bound (e.g. 0.8) of a variance estimated as
/// `estimate` with `df` degrees of freedom: `df · estimate / χ²_{1 − level}(df)`.
pub fn variance_upper_bound(estimate: f64, df: usize, level: f64) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    let df = df as f64;
    df * estimate / chi_square_quantile(1.0 - level, df)
}

/// The seeds (families as now) or families (seeds as now) that bring `z` standard errors of
/// a crossed bootstrap whose variance splits into `var_seed` (from `seeds` seeds) and
/// `var_unit` (from `families` families) down to `target`; `None` where the other part alone
/// keeps it above (or the count would pass `limit`).
pub fn needed_from_parts(
    (var_seed, var_unit): (f64, f64),
    (seeds, families): (usize, usize),
    target: f64,
    z: f64,
    limit: usize,
) -> (Option<usize>, Option<usize>) {
    let se = |vs: f64, vu: f64| (vs + vu).max(0.0).sqrt();
    let seeds_needed = super::needed(limit, target, z, |n| {
        se(var_seed * seeds as f64 / n as f64, var_unit)
    });
    let families_needed = super::needed(limit, target, z, |n| {
        se(var_seed, var_unit * families as f64 / n as f64)
    });
    (seeds_needed, families_needed)
}

/// The largest Spearman correlation any `y` can reach with `x`, given `x`'s ties: that of a `y`
/// ordered exactly as `x` (ties broken arbitrarily). A 1/0 statistic with few ones, or an
/// overlap that is mostly zero, cannot come near 1 however well it predicts.
pub fn spearman_cap(x: &[f32]) -> Option<f64> {
    if x.len() < 2 {
        return None;
    }
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut y = vec![0.0f32; x.len()];
    for (r, &i) in order.iter().enumerate() {
        y[i] = r as f32;
    }
    envdist_core::rank::spearman(x, &y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi_square_quantiles_match_tables() {
        // df 2 is exponential: the 0.2 quantile is −2 ln 0.8.
        let q = chi_square_quantile(0.2, 2.0);
        assert!((q - (-2.0 * 0.8f64.ln())).abs() < 1e-9, "{q}");
        // Table values: χ²_{0.95}(3) = 7.8147, χ²_{0.05}(10) = 3.9403.
        assert!((chi_square_quantile(0.95, 3.0) - 7.8147).abs() < 1e-3);
        assert!((chi_square_quantile(0.05, 10.0) - 3.9403).abs() < 1e-3);
    }

    #[test]
    fn a_variance_from_three_seeds_is_uncertain() {
        // Two degrees of freedom: the 80% upper bound is about 4.5 times the estimate.
        let up = variance_upper_bound(1.0, 2, 0.8);
        assert!((up - 2.0 / (-2.0 * 0.8f64.ln())).abs() < 1e-9, "{up}");
        assert!(up > 4.0 && up < 5.0);
    }

    #[test]
    fn monte_carlo_error_and_near_threshold() {
        assert!((mc_error(0.05, 2000) - (0.05f64 * 0.95 / 2000.0).sqrt()).abs() < 1e-15);
        assert!(near_threshold(0.05, 0.05 / 7.0 * 4.0));
        assert!(!near_threshold(0.2, 0.05));
        assert!(!near_threshold(0.001, 0.05));
    }

    #[test]
    fn the_cap_of_a_rare_indicator_is_far_below_one() {
        // 4 ones among 100: a perfect predictor's Spearman is about 0.33.
        let x: Vec<f32> = (0..100).map(|i| if i < 4 { 1.0 } else { 0.0 }).collect();
        let cap = spearman_cap(&x).unwrap();
        assert!(cap > 0.3 && cap < 0.36, "{cap}");
        let distinct: Vec<f32> = (0..50).map(|i| i as f32).collect();
        assert!((spearman_cap(&distinct).unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn seeds_needed_come_from_the_seed_part_alone() {
        // var_seed 4 from 3 seeds, var_unit 0.25: z·se ≤ 3 at z 2.8 needs se ≤ 1.07.
        let (s, f) = needed_from_parts((4.0, 0.25), (3, 24), 3.0, 2.8, 1000);
        let se = |n: f64| (4.0 * 3.0 / n + 0.25f64).sqrt();
        let s = s.unwrap();
        assert!(2.8 * se(s as f64) <= 3.0 && 2.8 * se(s as f64 - 1.0) > 3.0);
        // The seed part alone (4.0) keeps se at 2: no family count helps.
        assert_eq!(f, None);
    }
}
