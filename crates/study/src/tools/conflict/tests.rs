//! Tests of the conflict-estimates study.

use super::*;
use envdist_trainer::{Baseline, SingleTurn};

#[test]
fn estimator_parts_change_the_reference_config() {
    let reference = GradientConfig::default();
    let e: Estimate = "sampled+value+lam50+ep512".parse().unwrap();
    let c = e.config(&reference).unwrap();
    assert_eq!(c.single_turn, SingleTurn::Sampled);
    assert_eq!((c.baseline, c.lambda), (Baseline::Value, 0.5));
    assert_eq!(c.rollouts_per_env, 512);
    // Back to the mean baseline: lambda returns to 1 (the only value it takes there).
    let value = GradientConfig {
        baseline: Baseline::Value,
        lambda: 0.9,
        ..reference.clone()
    };
    let c = "mean+exact+all"
        .parse::<Estimate>()
        .unwrap()
        .config(&value)
        .unwrap();
    assert_eq!((c.baseline, c.lambda), (Baseline::Mean, 1.0));
    assert_eq!(c.single_turn, SingleTurn::Exact);
    assert_eq!(c.params, GradientParams::All);
    for bad in ["lam101", "lam", "lamx"] {
        let e = bad.parse::<Estimate>().unwrap_err().to_string();
        assert!(e.contains("lam<N>"), "{e}");
    }
    // A seed offset moves the gradient seed; a plain estimate keeps it.
    let c = "seed1+d256"
        .parse::<Estimate>()
        .unwrap()
        .config(&reference)
        .unwrap();
    assert_eq!((c.seed, c.dim), (reference.seed + 1, 256));
}
