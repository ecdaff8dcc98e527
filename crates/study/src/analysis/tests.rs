//! Tests of the analysis.

use super::*;
use crate::config::{ExperimentConfig, Preset};
use crate::model::ArmRun;
use crate::model::{CodeInfo, EnvSets};

fn run(arm: Arm, seed: u32, envs: &[EnvId], score: impl Fn(usize) -> f32) -> ArmRun {
    let per_env = envs
        .iter()
        .enumerate()
        .map(|(i, e)| (e.clone(), vec![score(i)]))
        .collect();
    ArmRun {
        train_envs: envs.to_vec(),
        ..ArmRun::evaluated(arm, seed, per_env)
    }
}

fn results(base: impl Fn(usize) -> f32, arm: impl Fn(u32, usize) -> f32) -> Results {
    let mut cfg = ExperimentConfig::preset(Preset::Smoke);
    cfg.seeds = 3;
    cfg.arms = vec![Arm::Base, Arm::Aes, Arm::RandomK];
    cfg.analysis.bootstrap = 500;
    let envs: Vec<EnvId> = (0..20)
        .map(|i| EnvId::new(format!("f{}/v{i}", i % 4)))
        .collect();
    let mut r = Results::new(cfg, CodeInfo::default(), Default::default());
    r.envs = EnvSets {
        pool: envs.clone(),
        ood: vec![],
        single_turn: vec![],
        family: Default::default(),
    };
    r.runs.push(run(Arm::Base, 0, &envs, &base));
    for s in 0..3 {
        r.runs.push(run(Arm::Aes, s, &envs, |i| arm(s, i)));
        r.runs
            .push(run(Arm::RandomK, s, &envs, |i| arm(s, i) * 0.5));
    }
    r
}

#[test]
fn a_zero_base_has_point_gains_but_no_relative_gain() {
    let r = results(|_| 0.0, |s, i| ((s as usize + i) % 3) as f32 * 0.2);
    let a = analyse(&r).unwrap();
    let aes = a.arms.iter().find(|s| s.arm == Arm::Aes).unwrap();
    // Points are defined: the mean of 0, .2, .4 over envs and seeds is 0.2 = 20 points.
    let d = aes.delta_id.unwrap();
    assert!((d.estimate - 20.0).abs() < 1e-4, "{d:?}");
    assert_eq!(Verdict::of(&d), Verdict::Supported);
    // A relative gain over a zero base is undefined, in both statistics.
    assert!(aes.pooled_gain_id.is_none());
    assert!(aes.paper_gain.is_none());
    let claim = a
        .claims
        .iter()
        .find(|c| c.comparison == format!("{} − {}", Arm::Aes.name(), Arm::RandomK.name()))
        .unwrap();
    assert!((claim.difference.estimate - 10.0).abs() < 1e-4);
}

#[test]
fn pooled_gain_is_the_ratio_of_means() {
    // Base 0.5 everywhere, the arm 0.6: +20% pooled, +10 points.
    let r = results(|_| 0.5, |_, _| 0.6);
    let a = analyse(&r).unwrap();
    let aes = a.arms.iter().find(|s| s.arm == Arm::Aes).unwrap();
    assert!((aes.pooled_gain_id.unwrap().estimate - 20.0).abs() < 1e-4);
    assert!((aes.delta_id.unwrap().estimate - 10.0).abs() < 1e-4);
    // Without any variation the interval collapses on the estimate.
    let d = aes.delta_id.unwrap();
    assert!((d.hi - d.lo).abs() < 1e-9);
}
