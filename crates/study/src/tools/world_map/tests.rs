//! The map's guarantees on small worlds: AES cannot beat a random pick where no environment
//! teaches another and all are alike; no selection beats the oracle by more than a run's own
//! noise; the map does not depend on the thread count.

use envdist_core::Validate;
use envdist_world::{Learner, World, WorldConfig};

use super::arms::{self, ORACLE, WorldArm, names};
use super::{Axis, Plane, WorldMapConfig};
use crate::observer::Silent;

fn small(world: WorldConfig) -> WorldMapConfig {
    WorldMapConfig {
        seeds: 4,
        k: 3,
        budget: 900,
        replicates: 200,
        world,
        planes: vec![Plane {
            name: "coverage".into(),
            question: "test".into(),
            x: Axis {
                knob: "transfer".into(),
                values: vec![0.0, 0.4],
            },
            y: Axis {
                knob: "annotator_noise".into(),
                values: vec![0.0, 0.5],
            },
            rivals: false,
            fixed: vec![],
        }],
        ..Default::default()
    }
}

fn tiny_world() -> WorldConfig {
    WorldConfig {
        families: 4,
        variants: 2,
        abilities: 6,
        ..Default::default()
    }
}

fn mean_and_se(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, (var / n).sqrt())
}

#[test]
fn without_transfer_and_with_alike_envs_aes_and_random_k_are_equal_in_expectation() {
    // No environment teaches another (no shared abilities, family or trunk, no interference)
    // and every environment is alike (same ability count, same difficulty): every k-subset
    // trains the pool equally in expectation, so AES's picks can only match random ones.
    let world = WorldConfig {
        transfer: 0.0,
        family_share: 0.0,
        trunk: 0.0,
        interference: 0.0,
        family_spread: 0.0,
        variant_spread: 0.0,
        min_family_abilities: 3,
        max_family_abilities: 3,
        ..tiny_world()
    };
    let cfg = small(world.clone());
    let checked = world.checked().unwrap();
    let diffs: Vec<f64> = (0..12u64)
        .map(|s| {
            let w = super::world::run_world(&cfg, &checked, 100 + s, false).unwrap();
            (w.score(names().aes).unwrap() - w.score(names().random_k).unwrap()) as f64
        })
        .collect();
    let (m, se) = mean_and_se(&diffs);
    assert!(
        m.abs() <= 3.0 * se + 0.05,
        "aes − random-k = {m:+.3} (se {se:.3}) over {diffs:?}"
    );
    // With transfer along abilities on, the same worlds are no longer exchangeable for
    // AES: the test can tell the difference.
    let on = WorldConfig {
        transfer: 0.9,
        ..cfg.world.clone()
    };
    let checked = on.checked().unwrap();
    let moved = (0..12u64).any(|s| {
        let w = super::world::run_world(&cfg, &checked, 100 + s, false).unwrap();
        (w.score(names().aes).unwrap() - w.score(names().random_k).unwrap()).abs() > 0.5
    });
    assert!(
        moved,
        "transfer on should separate AES from random picks somewhere"
    );
}

#[test]
fn no_selection_beats_the_oracle_by_more_than_a_runs_noise() {
    let cfg = small(tiny_world());
    let checked = cfg.world.clone().checked().unwrap();
    let n = names();
    let selections = [
        n.random_k,
        n.aes,
        n.no_conflict,
        "coverage-only",
        "lookahead",
    ];
    for s in 0..4u64 {
        let seed = 300 + s;
        let run = super::world::run_world(&cfg, &checked, seed, false).unwrap();
        assert!(run.world.oracle_exact, "8 choose 3 is enumerated");
        // The oracle's pick trained under other training seeds: a run's own noise.
        let world = World::generate(&checked, seed);
        let base = Learner::base(&world);
        let oracle_arm = WorldArm::main()
            .into_iter()
            .find(|a| a.name == ORACLE)
            .unwrap();
        let pick = envdist_world::oracle(
            &world,
            &base,
            cfg.k,
            cfg.budget as f32,
            &[],
            &cfg.oracle,
            seed,
        )
        .envs;
        let reruns: Vec<f64> = (0..6u64)
            .map(|r| {
                let (l, _) = arms::train(
                    &world,
                    &base,
                    &oracle_arm,
                    &pick,
                    &cfg,
                    seed + 1000 * (r + 1),
                )
                .unwrap();
                100.0 * l.score(&world) as f64
            })
            .collect();
        let (mean, se) = mean_and_se(&reruns);
        let sd = se * (reruns.len() as f64).sqrt();
        for arm in &selections {
            let score = run.score(arm).unwrap() as f64;
            assert!(
                score <= mean + 4.0 * sd + 0.1,
                "seed {seed}: {arm} {score:.2} beats the oracle {mean:.2} (sd {sd:.3})"
            );
        }
    }
}

#[test]
fn the_map_is_the_same_at_one_and_two_threads() {
    let cfg = small(tiny_world()).checked().unwrap();
    let at = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| super::run(&cfg, None, &Silent).unwrap())
            .reproducible()
    };
    let (one, two) = (at(1), at(2));
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&two).unwrap()
    );
    assert_eq!(one.planes[0].cells.len(), 4);
    assert!(one.thresholds.iter().all(|t| t.plane == "coverage"));
}
