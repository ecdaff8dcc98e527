//! Criterion benchmarks for envdist-trainer on the `cpu` preset, the study's network and PPO
//! settings, over the six families `xtask bench-train` trains on (H0, each family's smallest
//! scale): one whole update (rollout and learning) in env steps, and its two halves timed by
//! the trainer itself: the rollout (batched inference and env stepping) in env steps and the
//! learning passes (forward, backward, Adam over every epoch) in samples; and the learning
//! passes again with each minibatch split into two shards learned side by side
//! (`learn_shards = 2`, the opt-in that keeps both cores busy).
//!
//! `cargo bench -p envdist-benches --bench trainer`; docs/trainer.md reads it beside the
//! PyTorch anchor (`scripts/bench_torch_policy.py cpu`).
use std::sync::Arc;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use envdist_core::env::EnvFactory;
use envdist_core::{EnvId, HarnessLevel};
use envdist_envs::{BENCH_ENVS, Suite};
use envdist_trainer::{Device, ScaleChoice, TrainConfig, Trainer, UniformSampler, UpdateStats};

/// A trainer of the `cpu` preset with `learn_shards` shards a minibatch, warmed up.
fn trainer(learn_shards: usize) -> (Trainer, UniformSampler, TrainConfig) {
    let mut cfg = TrainConfig::preset("cpu").expect("the cpu preset");
    cfg.learn_shards = learn_shards;
    let suite = Arc::new(Suite::with_canvas(cfg.model.image_size as u32).expect("a canvas"));
    let factory: Arc<dyn EnvFactory> = suite;
    let envs: Vec<EnvId> = BENCH_ENVS.iter().map(|e| EnvId::new(*e)).collect();
    let mut sampler = UniformSampler::new(
        factory.as_ref(),
        &envs,
        HarnessLevel::H0,
        Some(ScaleChoice::Min),
        0,
    )
    .expect("a sampler");
    let mut t = Trainer::new(cfg.clone(), factory, Device::Cpu).expect("a trainer");
    // Warm-up: the first update allocates what the others reuse.
    t.train_update(&mut sampler).expect("an update");
    (t, sampler, cfg)
}

/// Benchmark one half of an update: `seconds` picks its time from the update's statistics.
fn half(
    group: &mut BenchmarkGroup<'_, WallTime>,
    t: &mut Trainer,
    sampler: &mut UniformSampler,
    name: &str,
    seconds: fn(&UpdateStats) -> f32,
) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let u = t.train_update(sampler).expect("an update");
                    Duration::from_secs_f32(seconds(&u))
                })
                .sum()
        })
    });
}

fn update(c: &mut Criterion) {
    let (mut t, mut sampler, cfg) = trainer(1);
    let steps = (cfg.num_envs * cfg.rollout_len) as u64;
    let mut group = c.benchmark_group("trainer/cpu");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(steps));
    group.bench_function("update (env steps)", |b| {
        b.iter(|| t.train_update(&mut sampler).expect("an update"))
    });
    // The halves, timed inside the update by the trainer (the other half runs untimed).
    half(
        &mut group,
        &mut t,
        &mut sampler,
        "rollout (env steps)",
        |u| u.rollout_seconds,
    );
    group.throughput(Throughput::Elements(steps * cfg.epochs as u64));
    half(
        &mut group,
        &mut t,
        &mut sampler,
        "learning (samples)",
        |u| u.learn_seconds,
    );
    let (mut t, mut sampler, _) = trainer(2);
    half(
        &mut group,
        &mut t,
        &mut sampler,
        "learning, 2 shards (samples)",
        |u| u.learn_seconds,
    );
    group.finish();
}

criterion_group!(benches, update);
criterion_main!(benches);
