//! The trainer learns on real environments, and the harness gap is real.
//!
//! One fixed-seed run of the `cpu` preset on an easy multi-turn mixture (maze and collect,
//! classic variants, smallest scale) at H0. It checks that greedy success rises from near
//! chance to at least 0.8, and that the same policy scores clearly worse at H4 (bare vision)
//! than at H0 on the same environments and scale: the gap HDC exists to close. Takes about a
//! minute in the test profile on two cores.

use std::sync::Arc;

use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, HarnessLevel};
use envdist_envs::Suite;
use envdist_trainer::{
    Device, RunOptions, ScaleChoice, TrainConfig, Trainer, UniformSampler, evaluate,
};

/// Step budget of the learning claim.
const BUDGET: u64 = 40_000;

#[test]
fn learns_easy_multi_turn_mixture_at_h0_and_shows_the_harness_gap() {
    let mut cfg = TrainConfig::cpu();
    cfg.seed = 0;
    cfg.total_env_steps = BUDGET;
    let suite = Arc::new(Suite::with_canvas(cfg.model.image_size as u32).unwrap());
    let factory: Arc<dyn EnvFactory> = suite;
    let envs = [EnvId::new("maze/classic"), EnvId::new("collect/classic")];
    let seeds: Vec<u64> = (0..50).map(|i| 1_000_000 + i).collect();
    let mut sampler = UniformSampler::new(
        factory.as_ref(),
        &envs,
        HarnessLevel::H0,
        Some(ScaleChoice::Min),
        0,
    )
    .unwrap();
    let mut trainer = Trainer::new(cfg, factory.clone(), Device::Cpu).unwrap();
    let eval =
        |t: &Trainer, h, s| evaluate(&t.policy(), factory.as_ref(), &envs, &seeds, h, s).unwrap();

    let before = eval(&trainer, HarnessLevel::H0, ScaleChoice::Min);
    let summary = trainer
        .run(&mut sampler, &RunOptions::default(), &mut |_| {})
        .unwrap();
    let after = eval(&trainer, HarnessLevel::H0, ScaleChoice::Min);
    let gap_h4 = eval(&trainer, HarnessLevel::H4, ScaleChoice::Min);
    eprintln!(
        "greedy success at min scale: before {:.3} (H0), after {:.3} (H0) and {:.3} (H4); {} env steps at {:.0} steps/s",
        before.mean, after.mean, gap_h4.mean, summary.env_steps, summary.env_steps_per_second
    );
    for r in [&before, &after, &gap_h4] {
        for s in &r.per_env {
            eprintln!("  {} {} {:.2}", r.harness, s.env, s.success);
        }
    }
    assert!(
        before.mean <= 0.5,
        "untrained policy should be near chance: {}",
        before.mean
    );
    assert!(
        after.mean >= 0.8,
        "trained greedy success {} < 0.8 within {BUDGET} steps",
        after.mean
    );
    assert!(
        after.mean >= gap_h4.mean + 0.2,
        "H0 {} should clearly beat H4 {}",
        after.mean,
        gap_h4.mean
    );
}
