//! Criterion benchmarks for envdist-world: one world run as `xtask world-map` makes it for a
//! cell, and its parts. The world and its base are generated once, outside the timed closures,
//! with fixed seeds; ids name the world's size, the budget and `k`:
//!
//! - `world/generate/envs=<n>`: families, abilities, twins and skill vectors;
//! - `world/observe/envs=<n>`: the annotator's profiles and the sampled gradients;
//! - `world/train/<sampler>/envs=<n>/k=<k>/episodes=<e>`: one arm's training run through a real
//!   sampler (the study's uniform H4 draw, HDC as the study sizes it);
//! - `world/oracle/envs=<n>/k=<k>/episodes=<e>`: the oracle's search for the best k-subset;
//! - `world/run/envs=<n>/k=<k>/episodes=<e>`: one world end to end: generate, observe, AES
//!   (with the study's settings), train AES and random-k with and without HDC, score.
//!
//! Run: `cargo bench -p envdist-benches --bench world`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use envdist_core::{HarnessLevel, Validate};
use envdist_curriculum::{HdcConfig, Mode, SamplerConfig};
use envdist_selection::{Baseline, Problem, SelectConfig, TieBreak, baseline, select};
use envdist_world::{
    Learner, OracleSearch, World, WorldConfig, annotate, observe_gradients, oracle,
};

const SEED: u64 = 2026;
const K: usize = 10;
const EPISODES: u64 = 8_000;

/// The study's HDC sizing (`envdist_study::presets::study_hdc`).
fn hdc() -> SamplerConfig {
    SamplerConfig::Hdc(HdcConfig::study_sizing())
}

fn uniform() -> SamplerConfig {
    SamplerConfig::Hdc(HdcConfig {
        mode: Mode::BaselineH4,
        ..HdcConfig::default()
    })
}

fn train(world: &World, base: &Learner, envs: &[usize], sampler: &SamplerConfig) -> f32 {
    let mut s = sampler
        .build(&world.specs_at(envs), SEED)
        .expect("the world's specs build every sampler");
    let mut l = base.clone();
    l.train(world, s.as_mut(), EPISODES, SEED)
        .expect("samplers draw the world's tasks");
    l.score(world)
}

fn picks(world: &World, base: &Learner) -> (Vec<usize>, Vec<usize>) {
    let profiles = annotate(world, SEED);
    let grads = observe_gradients(world, base, SEED);
    let problem = Problem::from_profiles(&profiles, Some(&grads)).expect("world profiles");
    let aes = SelectConfig {
        require_full_coverage: true,
        tie_break: TieBreak::Seeded(SEED),
        exclude_zero_gradient: true,
        relax: true,
        certify: false,
        ..SelectConfig::aes(K)
    };
    let a = select(&problem, &aes).expect("aes").ranking;
    let plain = SelectConfig {
        certify: false,
        ..SelectConfig::aes(K)
    };
    let r = baseline(&problem, &plain, Baseline::Random { seed: SEED })
        .expect("random")
        .ranking;
    (a, r)
}

fn world_bench(c: &mut Criterion) {
    let cfg = WorldConfig::default()
        .checked()
        .expect("defaults are valid");
    let world = World::generate(&cfg, SEED);
    let base = Learner::base(&world);
    let n = world.len();
    let mut group = c.benchmark_group("world");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.bench_function(format!("generate/envs={n}"), |b| {
        b.iter(|| World::generate(black_box(&cfg), SEED))
    });
    group.bench_function(format!("observe/envs={n}"), |b| {
        b.iter(|| {
            (
                annotate(black_box(&world), SEED),
                observe_gradients(&world, &base, SEED),
            )
        })
    });
    let (aes, random) = picks(&world, &base);
    for (name, sampler) in [("uniform-h4", uniform()), ("hdc", hdc())] {
        group.bench_function(
            format!("train/{name}/envs={n}/k={K}/episodes={EPISODES}"),
            |b| b.iter(|| train(&world, &base, black_box(&aes), &sampler)),
        );
    }
    group.bench_function(format!("oracle/envs={n}/k={K}/episodes={EPISODES}"), |b| {
        b.iter(|| {
            oracle(
                &world,
                &base,
                K,
                EPISODES as f32,
                black_box(&[aes.clone(), random.clone()]),
                &OracleSearch::default(),
                SEED,
            )
        })
    });
    group.bench_function(format!("run/envs={n}/k={K}/episodes={EPISODES}"), |b| {
        b.iter(|| {
            let world = World::generate(&cfg, SEED);
            let base = Learner::base(&world);
            let (aes, random) = picks(&world, &base);
            let scores: Vec<f32> = [&aes, &random]
                .into_iter()
                .flat_map(|envs| [uniform(), hdc()].map(|s| train(&world, &base, envs, &s)))
                .collect();
            black_box((scores, base.success(&world, 0, HarnessLevel::H4, 1)))
        })
    });
    group.finish();
}

criterion_group!(benches, world_bench);
criterion_main!(benches);
