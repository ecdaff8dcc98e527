//! Certificates against the exact optimum: on random small synthetic pools the bound is never
//! below the optimum (wherever a bound is claimed), the optimum never below the greedy value,
//! and the coverage bound never below the best coverage.

use envdist_core::EnvId;
use envdist_selection::synthetic::{SyntheticConfig, generate};
use envdist_selection::{
    AbilityWeighting, Aggregation, Baseline, BoundKind, ExactLimits, Problem, SelectConfig,
    baseline, select, solve_exact,
};
use proptest::prelude::*;

fn pool() -> impl Strategy<Value = (Problem, usize)> {
    (
        6usize..=18,
        4usize..=12,
        any::<u64>(),
        0usize..=1,
        0usize..=1,
        0.0f64..1.0,
    )
        .prop_map(|(n, abilities, seed, clusters, themes, f)| {
            let cfg = SyntheticConfig {
                n,
                abilities,
                abilities_per_env: [1, abilities.min(4) as u32],
                dim: 4,
                conflict_clusters: clusters,
                cluster_size: 4,
                redundant_themes: themes,
                theme_size: 2,
                seed,
                ..Default::default()
            };
            let k = 1 + ((n.min(8) - 1) as f64 * f) as usize;
            (generate(&cfg).unwrap().problem, k)
        })
}

/// Every objective configuration the certificate covers, plus the unclamped ones it refuses.
fn configs(k: usize) -> Vec<(&'static str, SelectConfig)> {
    let aes = SelectConfig::aes(k);
    let with = |f: &dyn Fn(&mut SelectConfig)| {
        let mut c = aes.clone();
        f(&mut c);
        c
    };
    vec![
        ("coverage", aes.clone().coverage_only()),
        (
            "coverage/rarity",
            SelectConfig {
                ability_weighting: AbilityWeighting::Rarity,
                ..aes.clone().coverage_only()
            },
        ),
        ("no-conflict", aes.clone().without_conflict()),
        (
            "no-conflict/frequency",
            SelectConfig {
                ability_weighting: AbilityWeighting::Frequency,
                ..aes.clone().without_conflict()
            },
        ),
        ("aes/max", aes.clone()),
        ("aes/max/no-redundancy", aes.clone().without_redundancy()),
        ("aes/sum", with(&|c| c.aggregation = Aggregation::Sum)),
        ("aes/mean", with(&|c| c.aggregation = Aggregation::Mean)),
        ("aes/max/unclamped", with(&|c| c.clamp_conflict = false)),
        (
            "aes/sum/unclamped",
            with(&|c| {
                c.aggregation = Aggregation::Sum;
                c.clamp_conflict = false
            }),
        ),
    ]
}

fn tol(v: f32) -> f32 {
    1e-4 * (1.0 + v.abs())
}

fn limits() -> ExactLimits {
    ExactLimits {
        max_nodes: 400_000,
        ..ExactLimits::default()
    }
}

/// Check one config on one pool; returns whether the exact solver finished.
fn check(p: &Problem, name: &str, cfg: &SelectConfig) -> Result<bool, TestCaseError> {
    let s = select(p, cfg).unwrap();
    let cert = s
        .certificate
        .clone()
        .expect("certificates are on by default");
    prop_assert_eq!(cert.value, s.objective);
    let claims = !matches!(cert.kind, BoundKind::Unclamped);
    prop_assert_eq!(cert.upper_bound.is_some(), claims, "{}", name);
    if let Some(ub) = cert.upper_bound {
        prop_assert!(
            ub >= s.objective - tol(ub),
            "{name}: bound {ub} below the greedy {}",
            s.objective
        );
    }
    let exact = solve_exact(p, cfg, &limits()).unwrap();
    let Some(opt) = exact.optimum() else {
        return Ok(false);
    };
    prop_assert!(
        opt >= s.objective - tol(opt),
        "{name}: optimum {opt} below the greedy {}",
        s.objective
    );
    if let Some(ub) = cert.upper_bound {
        prop_assert!(
            ub >= opt - tol(opt),
            "{name}: bound {ub} below the optimum {opt} ({cert:?})"
        );
    }
    // The coverage bound holds whatever the objective: check it against the best coverage.
    let cov_cfg = SelectConfig {
        ability_weighting: cfg.ability_weighting,
        ..cfg.clone().coverage_only()
    };
    let best_cov = solve_exact(p, &cov_cfg, &limits()).unwrap();
    if let Some(c) = best_cov.optimum() {
        prop_assert!(
            cert.coverage_upper_bound >= c - tol(c),
            "{name}: coverage bound {} below the best coverage {c}",
            cert.coverage_upper_bound
        );
        prop_assert!(cert.coverage <= c + tol(c));
    }
    // The bound holds from any ranking's prefixes, not only the greedy's.
    let random = baseline(p, cfg, Baseline::Random { seed: 7 }).unwrap();
    if let Some(ub) = random.certificate.and_then(|c| c.upper_bound) {
        prop_assert!(
            ub >= opt - tol(opt),
            "{name}: random-prefix bound {ub} below {opt}"
        );
    }
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn bound_is_never_below_the_exact_optimum_and_the_optimum_never_below_greedy((p, k) in pool()) {
        for (name, cfg) in configs(k) {
            let finished = check(&p, name, &cfg)?;
            // Set-function objectives on pools this small always finish.
            if !name.starts_with("aes/max") && !name.starts_with("aes/mean") {
                prop_assert!(finished, "{name}: exact solver did not finish");
            }
        }
    }

    #[test]
    fn constraints_keep_the_bound_valid((p, k) in pool(), pick in 0usize..64, full in any::<bool>()) {
        let n = p.n_envs();
        let id = |i: usize| EnvId::new(format!("syn/{i}"));
        for (name, cfg) in configs(k.max(2)) {
            let cfg = SelectConfig {
                must_include: vec![id(pick % n)],
                must_exclude: vec![id((pick + 1) % n)],
                require_full_coverage: full,
                ..cfg
            };
            if full && select(&p, &cfg).is_err() {
                continue; // greedy cannot meet full coverage within k: nothing to certify
            }
            check(&p, name, &cfg)?;
        }
    }
}
