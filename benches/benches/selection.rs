//! Criterion benchmarks for envdist-selection. Pools are generated once, outside the timed
//! closures, with fixed seeds; ids name the optimizer, objective and size:
//! `select/<optimizer>/<objective>/n=<envs>/k=<budget>`.
//!
//! The coverage pools have the shape of the `large` / `medium` anchor pools (Zipf 1.1
//! popularity, 5-15 abilities per environment); the AES pools add gradients.
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use envdist_selection::{Optimizer, Problem, SelectConfig, select, synthetic};

fn pool(n: usize, abilities: usize, dim: usize) -> Problem {
    let cfg = synthetic::SyntheticConfig {
        n,
        abilities,
        dim,
        conflict_clusters: if dim > 0 { 16 } else { 0 },
        cluster_size: 16,
        redundant_themes: 16,
        theme_size: 8,
        seed: 20240103,
        ..Default::default()
    };
    synthetic::generate(&cfg)
        .expect("valid synthetic config")
        .problem
}

fn bench_one(
    c: &mut Criterion,
    problem: &Problem,
    config: SelectConfig,
    name: &str,
    objective: &str,
) {
    let id = format!(
        "select/{name}/{objective}/n={}/k={}",
        problem.n_envs(),
        config.k
    );
    c.bench_function(&id, |b| {
        b.iter(|| select(problem, &config).expect("selection runs"))
    });
}

fn selection(c: &mut Criterion) {
    let stochastic = Optimizer::Stochastic {
        epsilon: 0.1,
        seed: 1,
    };
    let with = |k: usize, optimizer: Optimizer| SelectConfig {
        optimizer,
        ..SelectConfig::aes(k)
    };

    let large = pool(100_000, 1_000, 0);
    bench_one(
        c,
        &large,
        with(1_000, Optimizer::Lazy).coverage_only(),
        "lazy",
        "coverage",
    );
    let medium = pool(10_000, 1_000, 0);
    bench_one(
        c,
        &medium,
        with(300, Optimizer::Lazy).coverage_only(),
        "lazy",
        "coverage",
    );
    bench_one(
        c,
        &medium,
        with(300, Optimizer::Naive).coverage_only(),
        "naive",
        "coverage",
    );
    drop(large);

    let aes_large = pool(100_000, 1_000, 1_024);
    bench_one(c, &aes_large, with(1_000, Optimizer::Lazy), "lazy", "aes");
    drop(aes_large);
    let aes_medium = pool(10_000, 1_000, 256);
    bench_one(c, &aes_medium, with(300, Optimizer::Lazy), "lazy", "aes");
    bench_one(c, &aes_medium, with(300, stochastic), "stochastic", "aes");
    let aes_small = pool(2_000, 200, 64);
    bench_one(c, &aes_small, with(100, Optimizer::Naive), "naive", "aes");
    bench_one(c, &aes_small, with(100, Optimizer::Lazy), "lazy", "aes");
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = selection
}
criterion_main!(benches);
