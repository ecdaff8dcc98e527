//! A mixed-model figure for a paired difference table `d[seed][env]`, as a sensitivity check
//! beside the bootstrap: `d = μ + a_seed + b_family + c_env(family) + ε`, the variance
//! components by the method of moments (ANOVA mean squares), and a normal test of `μ` with the
//! standard error those components imply.

use super::clustered::Clusters;
use super::variance_components;

/// What the mixed model says of a difference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixedFit {
    /// The mean difference.
    pub estimate: f64,
    /// Its standard error under the fitted components.
    pub se: f64,
    /// Two-sided normal p-value of `μ = 0`.
    pub p: f64,
    /// Variance components: seed, family, environment within family, residual.
    pub components: [f64; 4],
}

/// The standard normal distribution function (Abramowitz and Stegun 7.1.26 for `erf`:
/// absolute error below 1.5e-7).
pub fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Fit the model to `d` with environments grouped by `families`; `None` below 2 seeds, 2
/// families or a family-free split (every environment its own family leaves nothing nested).
pub fn mixed_model(d: &[Vec<f64>], families: &Clusters) -> Option<MixedFit> {
    let (seed, _, residual) = variance_components(d)?;
    let seeds = d.len();
    let envs = families.units();
    let f = families.count();
    if f < 2 || f == envs {
        return None;
    }
    let env_means: Vec<f64> = (0..envs)
        .map(|e| d.iter().map(|r| r[e]).sum::<f64>() / seeds as f64)
        .collect();
    let grand = env_means.iter().sum::<f64>() / envs as f64;
    let (mut ss_between, mut ss_within, mut sum_n2) = (0.0, 0.0, 0.0);
    for k in 0..f {
        let members = families.members(k);
        let n = members.len() as f64;
        let m = members.iter().map(|&e| env_means[e]).sum::<f64>() / n;
        ss_between += n * (m - grand).powi(2);
        ss_within += members
            .iter()
            .map(|&e| (env_means[e] - m).powi(2))
            .sum::<f64>();
        sum_n2 += n * n;
    }
    let ms_between = ss_between / (f - 1) as f64;
    let ms_within = ss_within / (envs - f) as f64;
    let n0 = (envs as f64 - sum_n2 / envs as f64) / (f - 1) as f64;
    let env = (ms_within - residual / seeds as f64).max(0.0);
    let family = ((ms_between - ms_within) / n0).max(0.0);
    let e = envs as f64;
    let var =
        seed / seeds as f64 + family * sum_n2 / (e * e) + env / e + residual / (seeds as f64 * e);
    let estimate = d.iter().flatten().sum::<f64>() / (seeds as f64 * e);
    let se = var.max(0.0).sqrt();
    let p = if se > 0.0 {
        2.0 * (1.0 - normal_cdf(estimate.abs() / se))
    } else if estimate == 0.0 {
        1.0
    } else {
        0.0
    };
    Some(MixedFit {
        estimate,
        se,
        p,
        components: [seed, family, env, residual],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::Rng;

    #[test]
    fn normal_cdf_matches_known_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 2e-7);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 2e-7);
    }

    /// A planted family variance is recovered, and the standard error includes it.
    #[test]
    fn the_family_component_is_recovered() {
        let (families, per, seeds) = (30usize, 8usize, 3usize);
        let labels: Vec<usize> = (0..families * per).map(|u| u / per).collect();
        let clusters = Clusters::by_label(&labels);
        let mut rng = Rng::seed_from_u64(11);
        let fam: Vec<f64> = (0..families).map(|_| 2.0 * rng.normal() as f64).collect();
        let env: Vec<f64> = (0..families * per).map(|_| rng.normal() as f64).collect();
        let d: Vec<Vec<f64>> = (0..seeds)
            .map(|_| {
                (0..families * per)
                    .map(|u| fam[labels[u]] + env[u] + 0.5 * rng.normal() as f64)
                    .collect()
            })
            .collect();
        let fit = mixed_model(&d, &clusters).unwrap();
        let [_, family, env_var, residual] = fit.components;
        assert!(family > 2.0 && family < 7.0, "family {family} (planted 4)");
        assert!(env_var > 0.6 && env_var < 1.5, "env {env_var} (planted 1)");
        assert!(
            residual > 0.15 && residual < 0.4,
            "residual {residual} (planted 0.25)"
        );
        // Mostly the family part: about sqrt(4 / 30).
        assert!(fit.se > 0.25 && fit.se < 0.5, "{}", fit.se);
    }
}
