//! Crate-level tests on the toy environment, by subject; the helpers they share.

use std::sync::Arc;

use envdist_core::{EnvId, HarnessLevel, TaskSampler};

use crate::toy::ToyFactory;
use crate::*;

fn tiny(steps: u64) -> TrainConfig {
    let mut cfg = TrainConfig::preset("tiny").unwrap();
    cfg.total_env_steps = steps;
    cfg
}

fn sampler(envs: &[&str], harness: HarnessLevel) -> UniformSampler {
    let ids: Vec<EnvId> = envs.iter().map(|e| EnvId::new(*e)).collect();
    UniformSampler::new(&ToyFactory, &ids, harness, Some(ScaleChoice::Fixed(3)), 5).unwrap()
}

/// Greedy success of `model` on `toy/goal` at H0 and scale 3 over forty seeds: how the runs'
/// tests tell that a run learned.
fn goal_eval(model: &PolicyModel) -> EvalReport {
    let seeds: Vec<u64> = (1000..1040).collect();
    let envs = [EnvId::new("toy/goal")];
    let factory = ToyFactory;
    evaluate(
        model,
        &factory,
        &envs,
        &seeds,
        HarnessLevel::H0,
        ScaleChoice::Fixed(3),
    )
    .unwrap()
}

/// `f` run on a rayon pool of `threads` threads (the backend's products and env stepping use it).
fn at_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("envdist-trainer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

mod gradients;
mod numerics;
mod runs;
