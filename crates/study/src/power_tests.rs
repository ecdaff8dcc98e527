//! The analysis checked by simulation: synthetic studies (the `cpu` preset's central arms, 3
//! seeds × a pool of environments) with a variance structure like the cpu record's, with no
//! effect and with a planted one.
//!
//! - Under no effect, the family-wise rate of false decisions (a "supported" or "refuted")
//!   over the primary claims stays at 5% (within simulation error).
//! - With a difference planted at a claim's stated detection limit, that claim is detected at
//!   least four times in five.
//! - With no difference and a margin wider than the noise, the claims come out "equivalent".
//!
//! Each synthetic score is `μ_env + δ_arm + u_arm,seed + v_arm,env + w_arm,seed,env`: env
//! difficulty shared by every arm (cancels in a paired difference), a per-seed shift of each
//! arm, an arm × env interaction (arms that trained on different envs differ env by env) and
//! residual noise (evaluation instances). The standard deviations are of the order the cpu
//! record's variance components give (REPORT.md, "Variance components"): about 1 point of seed
//! shift, 10 of interaction and 10 of residual, so that a difference between two trained arms
//! has a standard error of 1.5-2 points over the record's 200 environments. Fewer environments
//! here (60) keep `cargo test` fast; the calibration does not depend on the count.

use envdist_core::{EnvId, Rng};

use crate::config::{ExperimentConfig, Preset};
use crate::model::{Arm, ArmRun, ClaimId, CodeInfo, EnvSets, Results, Verdict};

const SEEDS: u32 = 3;
const ENVS: usize = 60;
const STUDIES: usize = 200;

struct Noise {
    seed: f64,
    interaction: f64,
    residual: f64,
}

const RECORD_LIKE: Noise = Noise {
    seed: 0.01,
    interaction: 0.10,
    residual: 0.10,
};

fn run(arm: Arm, seed: u32, envs: &[EnvId], scores: Vec<f32>) -> ArmRun {
    let per_env = envs
        .iter()
        .cloned()
        .zip(scores.into_iter().map(|s| vec![s]))
        .collect();
    ArmRun::evaluated(arm, seed, per_env)
}

/// One synthetic study; `effect(arm)` is the arm's planted shift (success units).
fn study(index: u64, noise: &Noise, effect: &dyn Fn(Arm) -> f64, margin: f64) -> Results {
    let mut cfg = ExperimentConfig::preset(Preset::Cpu);
    cfg.seeds = SEEDS;
    cfg.seed = 1000 + index;
    cfg.analysis.bootstrap = 400;
    cfg.analysis.equivalence_margin = margin;
    let envs: Vec<EnvId> = (0..ENVS)
        .map(|i| EnvId::new(format!("f{}/v{i}", i % 6)))
        .collect();
    let mut results = Results::new(cfg.clone(), CodeInfo::default(), Default::default());
    results.envs = EnvSets {
        pool: envs.clone(),
        ..EnvSets::default()
    };
    let mut rng = Rng::derive(index, 0x5349_4d55);
    let mut normal = |sd: f64| sd * rng.normal() as f64;
    let difficulty: Vec<f64> = (0..ENVS).map(|_| 0.35 + normal(0.25)).collect();
    for &arm in &cfg.arms {
        let seeds = if arm.is_base() { 1 } else { SEEDS };
        let interaction: Vec<f64> = (0..ENVS).map(|_| normal(noise.interaction)).collect();
        for s in 0..seeds {
            let shift = normal(noise.seed);
            let scores = (0..ENVS)
                .map(|e| {
                    let v = difficulty[e] + effect(arm) + shift + interaction[e];
                    (v + normal(noise.residual)) as f32
                })
                .collect();
            results.runs.push(run(arm, s, &envs, scores));
        }
    }
    results
}

fn primary(results: &Results) -> Vec<crate::model::Claim> {
    crate::analysis::pair_claims(results)
        .into_iter()
        .filter(|c| c.primary)
        .collect()
}

/// Simulation error of a rate `p` over `n` studies, at 95%.
fn slack(p: f64, n: usize) -> f64 {
    1.96 * (p * (1.0 - p) / n as f64).sqrt()
}

#[test]
fn holm_keeps_the_family_wise_error_of_the_primary_claims_at_5_percent() {
    let mut false_decisions = 0;
    for i in 0..STUDIES {
        let claims = primary(&study(i as u64, &RECORD_LIKE, &|_| 0.0, 2.0));
        assert_eq!(
            claims.len(),
            ClaimId::central().len(),
            "the primary claims of the cpu preset"
        );
        if claims
            .iter()
            .any(|c| matches!(c.verdict, Verdict::Supported | Verdict::Refuted))
        {
            false_decisions += 1;
        }
    }
    let rate = false_decisions as f64 / STUDIES as f64;
    eprintln!("null studies with a false primary decision: {false_decisions} of {STUDIES}");
    assert!(
        rate <= 0.05 + slack(0.05, STUDIES),
        "family-wise false decisions in {false_decisions} of {STUDIES} null studies"
    );
}

#[test]
fn a_difference_at_the_stated_detection_limit_is_detected_four_times_in_five() {
    // The detection limit each null study states for "AES beats random-k", averaged.
    let claim = ClaimId::AesOverRandomK;
    let mde: f64 = (0..40)
        .map(|i| {
            let claims = primary(&study(10_000 + i, &RECORD_LIKE, &|_| 0.0, 2.0));
            claims.iter().find(|c| c.id == claim).unwrap().mde
        })
        .sum::<f64>()
        / 40.0;
    // Every primary claim's limit is at Holm's first step over the seven: about 3.5 SE.
    let z = crate::stats::detection_z(
        crate::stats::holm_first_step(0.05, ClaimId::central().len()),
        0.8,
    );
    assert!(z > 3.3);
    let planted = mde / 100.0;
    let effect = |arm: Arm| if arm == Arm::Aes { planted } else { 0.0 };
    let mut detected = 0;
    for i in 0..STUDIES {
        let claims = primary(&study(20_000 + i as u64, &RECORD_LIKE, &effect, 2.0));
        let c = claims.iter().find(|c| c.id == claim).unwrap();
        assert!((c.mde_z - z).abs() < 1e-9);
        if c.verdict == Verdict::Supported {
            detected += 1;
        }
    }
    let power = detected as f64 / STUDIES as f64;
    eprintln!("planted at the stated limit {mde:.2} points: detected {detected} of {STUDIES}");
    assert!(
        power >= 0.8 - slack(0.8, STUDIES),
        "detected {detected} of {STUDIES} at the stated limit {mde:.2} points"
    );
}

#[test]
fn no_difference_with_a_margin_above_the_noise_is_equivalent() {
    // A margin of 9 points against a standard error of about 2: every claim should be shown
    // to lie within it most of the time (each equivalence test at Holm's level over the
    // seven primary claims; 8 points sufficed over six).
    let mut equivalent = 0;
    let mut total = 0;
    for i in 0..40 {
        for c in primary(&study(30_000 + i, &RECORD_LIKE, &|_| 0.0, 9.0)) {
            total += 1;
            if c.verdict == Verdict::Equivalent {
                equivalent += 1;
            }
        }
    }
    eprintln!("margin 9 points, no difference: {equivalent} of {total} primary claims equivalent");
    assert!(
        equivalent * 10 >= total * 8,
        "{equivalent} of {total} equivalent"
    );
}
