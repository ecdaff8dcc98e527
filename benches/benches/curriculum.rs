//! Criterion benchmarks for envdist-curriculum: one `sample` plus one `update` of the HDC
//! sampler on one thread, per mode and pool size, directly and through the shared handle.
//!
//! Run: `cargo bench -p envdist-benches --bench curriculum`. Throughput is reported in
//! sample+update pairs per second.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use envdist_core::{EnvSpec, EpisodeOutcome, TaskSampler};
use envdist_curriculum::{HdcConfig, HdcSampler, Mode, SharedSampler};

fn specs(n: usize) -> Vec<EnvSpec> {
    envdist_curriculum::synthetic_specs("bench", &envdist_curriculum::staggered_ranges(n))
}

/// Outcome rule: solved when the task's seed falls under 75 of 100, so windows and levels
/// keep moving during the measurement (and review sampling is exercised).
fn outcome(task: envdist_core::Task) -> EpisodeOutcome {
    let success = task.seed % 100 < 75;
    EpisodeOutcome {
        task,
        success,
        episode_return: 0.0,
        steps: 1,
    }
}

fn sample_update(c: &mut Criterion) {
    let mut group = c.benchmark_group("curriculum/sample+update");
    group
        .sample_size(15)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(1));
    for envs in [30usize, 200] {
        let pool = specs(envs);
        for mode in [Mode::Full, Mode::Global, Mode::BaselineUniform] {
            let config = HdcConfig {
                mode,
                ..Default::default()
            };
            let mut sampler = HdcSampler::new(&pool, None, config.clone(), 1).unwrap();
            group.bench_function(
                BenchmarkId::new("direct", format!("mode={mode}/envs={envs}")),
                |b| {
                    b.iter(|| {
                        let t = sampler.sample();
                        sampler.update(black_box(&outcome(t))).unwrap();
                    })
                },
            );
            if mode == Mode::Full {
                let mut shared =
                    SharedSampler::new(HdcSampler::new(&pool, None, config, 1).unwrap());
                group.bench_function(
                    BenchmarkId::new("shared", format!("mode={mode}/envs={envs}")),
                    |b| {
                        b.iter(|| {
                            let t = shared.sample();
                            shared.update(black_box(&outcome(t))).unwrap();
                        })
                    },
                );
            }
        }
    }
    group.finish();
}

criterion_group!(benches, sample_update);
criterion_main!(benches);
