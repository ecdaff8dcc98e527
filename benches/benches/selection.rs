//! Criterion benchmarks for envdist-selection. Pools are generated once, outside the timed
//! closures, with fixed seeds; ids name the optimizer, objective and size:
//! `select/<optimizer>/<objective>/n=<envs>/k=<budget>`.
//!
//! The coverage pools have the shape of the `large` / `medium` anchor pools (Zipf 1.1
//! popularity, 5-15 abilities per environment); the AES pools add gradients.
//!
//! `select/*` time [`select`] as users call it, certificate included (the default).
//! `certificate/<objective>/n=<envs>/k=<budget>/{greedy,greedy+certificate}` time the same
//! selection without and with the certificate, so their difference is the certificate's cost.
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use envdist_selection::{AbilityWeighting, Optimizer, Problem, SelectConfig, select, synthetic};

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

/// The same selection timed without and with its certificate.
fn bench_certificate(c: &mut Criterion, problem: &Problem, config: SelectConfig, objective: &str) {
    let id = format!(
        "certificate/{objective}/n={}/k={}",
        problem.n_envs(),
        config.k
    );
    let alone = SelectConfig {
        certify: false,
        ..config.clone()
    };
    c.bench_function(&format!("{id}/greedy"), |b| {
        b.iter(|| select(problem, &alone).expect("selection runs"))
    });
    c.bench_function(&format!("{id}/greedy+certificate"), |b| {
        b.iter(|| select(problem, &config).expect("selection runs"))
    });
}

fn certificates(c: &mut Criterion) {
    let large = pool(100_000, 1_000, 0);
    let cov = SelectConfig::aes(1_000).coverage_only();
    // Integer gains: the exact lazy path, which tracks the bound at every prefix as it runs.
    // At k = 1000 it reaches full coverage (the caps then prove it optimal); at k = 100 it
    // does not, and the bound is a real one.
    bench_certificate(c, &large, cov.clone(), "coverage");
    bench_certificate(
        c,
        &large,
        SelectConfig::aes(100).coverage_only(),
        "coverage",
    );
    // Weighted gains: generic lazy greedy, then a replay with the bound at 32 prefixes.
    let rarity = SelectConfig {
        ability_weighting: AbilityWeighting::Rarity,
        ..cov
    };
    bench_certificate(c, &large, rarity, "coverage-rarity");
    // Coverage minus redundancy: the bound with the modular correction, from histograms.
    bench_certificate(
        c,
        &large,
        SelectConfig::aes(1_000).without_conflict(),
        "no-conflict",
    );
    drop(large);
    let aes_medium = pool(10_000, 1_000, 256);
    bench_certificate(c, &aes_medium, SelectConfig::aes(300), "aes");
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
    targets = selection, certificates
}
criterion_main!(benches);
