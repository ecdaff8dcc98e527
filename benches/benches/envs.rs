//! Criterion benchmarks for envdist-envs: one step (+ render) of each family's classic
//! variant on one thread at 64x64 and 32x32, and the vectorised stepper over all cores.
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, Env, HarnessLevel, Rng, Task};
use envdist_envs::{Suite, VecEnv};

fn task(spec: &envdist_core::EnvSpec, seed: u64) -> Task {
    Task {
        env: spec.id.clone(),
        seed,
        harness: HarnessLevel::H4,
        scale: spec.scale.mid(),
    }
}

/// Random legal actions with auto-reset, through the public `Env` trait (owned observation).
fn step_families(c: &mut Criterion) {
    for canvas in [64u32, 32] {
        let suite = Suite::with_canvas(canvas).expect("valid canvas");
        let mut group = c.benchmark_group(format!("envs/step/canvas={canvas}"));
        group.throughput(Throughput::Elements(1));
        for spec in suite
            .pool_specs()
            .into_iter()
            .filter(|s| s.variant == "classic")
        {
            let mut env = suite.make(&spec.id).unwrap();
            let mut rng = Rng::seed_from_u64(1);
            let mut seed = 0;
            env.reset(&task(&spec, seed));
            group.bench_function(BenchmarkId::from_parameter(&spec.family), |b| {
                b.iter(|| {
                    let legal = env.legal_actions();
                    let a = legal
                        .iter()
                        .nth(rng.index(legal.count().max(1)))
                        .unwrap_or(ActionId::WAIT);
                    let s = env.step(a);
                    if s.done || s.truncated {
                        seed += 1;
                        env.reset(&task(&spec, seed));
                    }
                    s.reward
                })
            });
        }
        group.finish();
    }
}

fn vectorised(c: &mut Criterion) {
    let suite = Suite::default();
    let mix: Vec<_> = suite
        .pool_specs()
        .into_iter()
        .filter(|s| s.variant == "classic")
        .collect();
    let batch = 256;
    let envs = (0..batch)
        .map(|i| suite.make_env(&mix[i % mix.len()].id).unwrap())
        .collect();
    let mut venv = VecEnv::new(envs).unwrap();
    let tasks: Vec<Task> = (0..batch)
        .map(|i| task(&mix[i % mix.len()], i as u64))
        .collect();
    venv.reset_all(&tasks).unwrap();
    let mut rng = Rng::seed_from_u64(2);
    let mut group = c.benchmark_group("envs/vec");
    group.throughput(Throughput::Elements(batch as u64));
    group.bench_function(BenchmarkId::new("batch", batch), |b| {
        b.iter(|| {
            let actions: Vec<ActionId> = (0..batch)
                .map(|i| {
                    let l = venv.env_mut(i).legal_actions();
                    l.iter()
                        .nth(rng.index(l.count().max(1)))
                        .unwrap_or(ActionId::WAIT)
                })
                .collect();
            let ended: Vec<usize> = venv
                .step(&actions)
                .unwrap()
                .iter()
                .enumerate()
                .filter(|(_, s)| s.done || s.truncated)
                .map(|(i, _)| i)
                .collect();
            for i in ended {
                venv.reset(i, &tasks[i]);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, step_families, vectorised);
criterion_main!(benches);
