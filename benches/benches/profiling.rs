//! Criterion benchmarks for envdist-profiling: profiling synthetic trajectories (segment,
//! count, graph, cluster), clustering alone, and rolling out real suite environments.
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use envdist_core::{
    ActionId, EnvId, HarnessLevel, Rng, TRAJECTORY_SCHEMA_VERSION, Task, Trajectory, TrajectoryStep,
};
use envdist_envs::Suite;
use envdist_profiling::{
    AbilityGraph, Explorer, MetaConfig, NoisyOracle, PolicyMaker, RolloutConfig, Segmenter,
    TagSegmenter, cluster, profile_sequences, profile_trajectories, rollout_pool,
};

/// `envs` environments, each drawing its steps' tags from its own 5 of `abilities` names.
fn synthetic(envs: usize, per_env: usize, steps: usize, abilities: usize) -> Vec<Trajectory> {
    let mut rng = Rng::seed_from_u64(42);
    let names: Vec<String> = (0..abilities).map(|i| format!("ability-{i:03}")).collect();
    let mut out = Vec::with_capacity(envs * per_env);
    for e in 0..envs {
        let own: Vec<&String> = (0..5).map(|_| &names[rng.index(abilities)]).collect();
        for j in 0..per_env {
            let steps = (0..steps)
                .map(|_| TrajectoryStep {
                    action: ActionId::UP,
                    reward: 0.0,
                    abilities: vec![own[rng.index(own.len())].clone()],
                })
                .collect();
            out.push(Trajectory {
                schema_version: TRAJECTORY_SCHEMA_VERSION,
                task: Task {
                    env: EnvId::new(format!("synthetic/{e:03}")),
                    seed: j as u64,
                    harness: HarnessLevel::H0,
                    scale: 1,
                },
                policy: "bench".into(),
                steps,
                success: false,
                episode_return: 0.0,
            });
        }
    }
    out
}

fn profile_synthetic(c: &mut Criterion) {
    let mut g = c.benchmark_group("profile");
    g.sample_size(10);
    // Pool-sized: 200 envs, 80 atomic abilities (add sizes here to sweep).
    for (envs, abilities) in [(200usize, 80usize), (50, 40)] {
        let ts = synthetic(envs, 40, 30, abilities);
        g.bench_function(
            BenchmarkId::new(
                "tags+stats+graph+cluster",
                format!("envs={envs}/t=40/steps=30/abilities={abilities}"),
            ),
            |b| {
                b.iter(|| {
                    profile_trajectories(&ts, &TagSegmenter::default(), &MetaConfig::default())
                        .unwrap()
                })
            },
        );
        let seg = TagSegmenter::default();
        let seqs: Vec<(EnvId, Vec<String>)> = ts
            .iter()
            .map(|t| (t.task.env.clone(), seg.segment(t).unwrap()))
            .collect();
        let pool = profile_sequences(&seqs, "tags", &MetaConfig::default()).unwrap();
        let stats = pool.stats.clone();
        let graph = AbilityGraph::from_stats(&stats);
        g.bench_function(
            BenchmarkId::new("cluster", format!("envs={envs}/abilities={abilities}")),
            |b| b.iter(|| cluster(&stats, &graph, &MetaConfig::default()).unwrap()),
        );
    }
    g.finish();
}

fn rollouts(c: &mut Criterion) {
    let suite = Suite::default();
    let specs: Vec<_> = suite.pool_specs().into_iter().take(20).collect();
    let first: Box<PolicyMaker> = Box::new(|| Box::new(NoisyOracle::new(0.1)));
    let second: Box<PolicyMaker> = Box::new(|| Box::new(Explorer::new(0.5)));
    let config = RolloutConfig {
        trajectories_per_env: 4,
        ..RolloutConfig::default()
    };
    let mut g = c.benchmark_group("rollout");
    g.sample_size(10);
    g.bench_function(
        BenchmarkId::new("pool", format!("envs={}/t=4/canvas=64", specs.len())),
        |b| b.iter(|| rollout_pool(&suite, &specs, &config, &*first, &*second, &|_| {}).unwrap()),
    );
    g.finish();
}

criterion_group!(benches, profile_synthetic, rollouts);
criterion_main!(benches);
