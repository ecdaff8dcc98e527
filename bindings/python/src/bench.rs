//! The Rust-native vectorised rate, measured in the calling process for the throughput
//! comparison (bindings/python/bench/bench_vector.py).

use std::time::Instant;

use envdist_core::{ActionId, NUM_ACTIONS, Rng, Task};
use envdist_envs::VecEnv;
use pyo3::prelude::*;

use crate::errors::value_error;
use crate::suite;

/// Steps/s of `envdist_envs::VecEnv` over `num_envs` envs (`env_ids` cycled) for `steps`
/// batch steps: uniformly random actions (drawn outside the timed loop), finished envs reset
/// before the next step, frames in VecEnv's own buffer. The GIL is released throughout.
#[pyfunction]
#[pyo3(signature = (env_ids, num_envs, steps, harness = "H4", canvas = 64, seed = 0))]
pub fn bench_native(
    py: Python<'_>,
    env_ids: Vec<String>,
    num_envs: usize,
    steps: usize,
    harness: &str,
    canvas: u32,
    seed: u64,
) -> PyResult<f64> {
    if env_ids.is_empty() || num_envs == 0 || steps == 0 {
        return Err(value_error(
            "bench_native: expected at least one env id, env and step",
        ));
    }
    let s = suite::suite(canvas)?;
    let harness = suite::harness(harness)?;
    let mut tasks = Vec::with_capacity(num_envs);
    let mut envs = Vec::with_capacity(num_envs);
    for i in 0..num_envs {
        let (spec, env) = suite::make(&s, &env_ids[i % env_ids.len()], "env_ids")?;
        tasks.push(Task {
            env: spec.id.clone(),
            seed: seed + i as u64,
            harness,
            scale: spec.scale.mid(),
        });
        envs.push(env);
    }
    let mut venv = VecEnv::new(envs).map_err(value_error)?;
    venv.reset_all(&tasks).map_err(value_error)?;
    let mut rng = Rng::seed_from_u64(seed);
    let actions: Vec<Vec<ActionId>> = (0..steps)
        .map(|_| {
            (0..num_envs)
                .map(|_| ActionId::new(rng.index(NUM_ACTIONS)).unwrap_or(ActionId::WAIT))
                .collect()
        })
        .collect();
    py.detach(|| {
        let start = Instant::now();
        let mut ended = Vec::new();
        for (r, batch) in actions.iter().enumerate() {
            ended.clear();
            let infos = venv.step(batch).map_err(value_error)?;
            ended.extend(
                infos
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.done || s.truncated)
                    .map(|(i, _)| i),
            );
            for &i in &ended {
                tasks[i].seed = (r * num_envs + i) as u64 + 1_000_000;
                venv.reset(i, &tasks[i]);
            }
        }
        Ok((steps * num_envs) as f64 / start.elapsed().as_secs_f64())
    })
}
