//! How fast the suite steps: one thread through the public [`Env`] trait (an owned observation
//! with its text each step, as a gym step returns), and the vectorised [`VecEnv`] at 1, 2, 4,
//! ... threads up to every core. The mix is fixed (the classic variant of every pool family at
//! its middle scale), actions are random legal ones, ended episodes reset.

use std::time::Instant;

use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, ActionMask, Env, EnvSpec, HarnessLevel, InvalidValue, Rng, Task};
use serde::Serialize;

use super::InspectError;
use crate::{Suite, VecEnv};

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchOptions {
    /// Steps per measurement (at least 1).
    pub steps: u64,
    /// Harness level of the single-thread run (H0 builds every text channel each step).
    pub harness: HarnessLevel,
}

/// The measurements, as `cargo xtask envs bench --json` prints them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    /// Single thread, through the `Env` trait.
    pub single_thread_steps_per_s: f64,
    /// Vectorised at every core (the last entry of `vectorized_scaling`).
    pub vectorized_steps_per_s: f64,
    /// Cores of the current rayon pool.
    pub threads: usize,
    /// Canvas side of the suite.
    pub canvas: u32,
    /// Harness level of the single-thread run.
    pub harness: HarnessLevel,
    /// Environments in the mix.
    pub envs: usize,
    /// Environments in the vectorised batch (64 per thread).
    pub vectorized_batch: usize,
    /// The vectorised rate at each thread count.
    pub vectorized_scaling: Vec<ThreadScaling>,
    /// Single-thread steps/s of each family of the mix (not part of the JSON record).
    #[serde(skip)]
    pub per_family: Vec<FamilyRate>,
}

/// The vectorised rate at one thread count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ThreadScaling {
    /// Threads stepping the batch.
    pub threads: usize,
    /// Steps per second (rounded).
    pub steps_per_s: f64,
    /// `steps_per_s / (threads x the 1-thread rate)`, to two decimals.
    pub efficiency: f64,
}

/// One family's single-thread rate.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyRate {
    /// Family name.
    pub family: String,
    /// Steps per second.
    pub steps_per_s: f64,
}

/// The fixed mix: the classic variant of every pool family.
pub fn bench_mix(suite: &Suite) -> Vec<EnvSpec> {
    suite
        .pool_specs()
        .into_iter()
        .filter(|s| s.variant == "classic")
        .collect()
}

/// Measure `suite` (at its canvas). `on_steps` gets the single-thread steps done so far
/// (progress). Zero `steps` is refused.
pub fn run(
    suite: &Suite,
    options: &BenchOptions,
    on_steps: &mut dyn FnMut(u64),
) -> Result<BenchReport, InspectError> {
    let steps = options.steps;
    if steps == 0 {
        return Err(InvalidValue::new("steps", "at least 1", steps).into());
    }
    let mix = bench_mix(suite);
    let task_for = |i: usize, episode: u64| {
        let s = &mix[i % mix.len()];
        Task {
            env: s.id.clone(),
            seed: episode,
            harness: options.harness,
            scale: s.scale.mid(),
        }
    };
    let (single, per_family) = single_thread(suite, &mix, steps, &task_for, on_steps)?;

    // One batch stepped by 1, 2, 4, ... threads up to all cores, frames into one reused
    // buffer, ended episodes reset in parallel. The same batch and the same work at every
    // thread count, so the 1-thread figure is the baseline of the scaling.
    let threads = rayon::current_num_threads();
    let batch = 64 * threads;
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|t| *t < threads)
        .collect();
    counts.push(threads);
    let mut scaling = Vec::new();
    for &t in &counts {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|e| InspectError::ThreadPool {
                threads: t,
                message: e.to_string(),
            })?;
        let rate = pool.install(|| vectorized_rate(suite, &mix, batch, steps, &task_for))?;
        scaling.push(ThreadScaling {
            threads: t,
            steps_per_s: rate.round(),
            efficiency: 0.0,
        });
    }
    let one = scaling[0].steps_per_s.max(1.0);
    for s in &mut scaling {
        s.efficiency = (s.steps_per_s / (one * s.threads as f64) * 100.0).round() / 100.0;
    }
    Ok(BenchReport {
        single_thread_steps_per_s: single.round(),
        vectorized_steps_per_s: scaling.last().map_or(0.0, |s| s.steps_per_s),
        threads,
        canvas: suite.config().canvas,
        harness: options.harness,
        envs: mix.len(),
        vectorized_batch: batch,
        vectorized_scaling: scaling,
        per_family,
    })
}

/// Single thread through the public `Env` trait, `steps / mix` steps per environment: the
/// overall rate and each family's.
fn single_thread(
    suite: &Suite,
    mix: &[EnvSpec],
    steps: u64,
    task_for: &dyn Fn(usize, u64) -> Task,
    on_steps: &mut dyn FnMut(u64),
) -> Result<(f64, Vec<FamilyRate>), InspectError> {
    let mut rng = Rng::seed_from_u64(7);
    let mut envs: Vec<Box<dyn Env>> = mix
        .iter()
        .map(|s| suite.make(&s.id))
        .collect::<Result<_, _>>()?;
    let per_env = (steps / envs.len() as u64).max(1);
    let mut episode = 0u64;
    let start = Instant::now();
    let mut total = 0u64;
    let mut per_family = Vec::new();
    for (i, env) in envs.iter_mut().enumerate() {
        let family_start = Instant::now();
        episode += 1;
        env.reset(&task_for(i, episode));
        let mut legal = env.legal_actions();
        for _ in 0..per_env {
            let s = env.step(random_legal(legal, &mut rng));
            legal = s.legal;
            if s.done || s.truncated {
                episode += 1;
                env.reset(&task_for(i, episode));
                legal = env.legal_actions();
            }
        }
        total += per_env;
        per_family.push(FamilyRate {
            family: mix[i].family.clone(),
            steps_per_s: per_env as f64 / family_start.elapsed().as_secs_f64(),
        });
        on_steps(total);
    }
    Ok((total as f64 / start.elapsed().as_secs_f64(), per_family))
}

/// Steps/s of a [`VecEnv`] of `batch` environments over `mix`, random legal actions, ended
/// episodes reset in parallel, on the current rayon pool.
fn vectorized_rate(
    suite: &Suite,
    mix: &[EnvSpec],
    batch: usize,
    steps: u64,
    task_for: &(dyn Fn(usize, u64) -> Task + Sync),
) -> Result<f64, InspectError> {
    let mut rng = Rng::seed_from_u64(11);
    let vec_envs = (0..batch)
        .map(|i| suite.make_env(&mix[i % mix.len()].id))
        .collect::<Result<Vec<_>, _>>()?;
    let mut venv = VecEnv::new(vec_envs)?;
    let tasks: Vec<Task> = (0..batch).map(|i| task_for(i, i as u64)).collect();
    venv.reset_all(&tasks)?;
    let mut legal: Vec<ActionMask> = (0..batch)
        .map(|i| venv.env_mut(i).legal_actions())
        .collect();
    let rounds = (steps / batch as u64).max(1);
    let mut actions = vec![ActionId::WAIT; batch];
    let mut resets: Vec<(usize, Task)> = Vec::new();
    let start = Instant::now();
    for r in 0..rounds {
        for (a, l) in actions.iter_mut().zip(&legal) {
            *a = random_legal(*l, &mut rng);
        }
        let infos = venv.step(&actions)?;
        resets.clear();
        for (i, (l, s)) in legal.iter_mut().zip(infos).enumerate() {
            *l = s.legal;
            if s.done || s.truncated {
                resets.push((i, task_for(i, r * batch as u64 + i as u64 + 1_000_000)));
            }
        }
        venv.reset_many(&resets)?;
        for (i, _) in &resets {
            legal[*i] = venv.env_mut(*i).legal_actions();
        }
    }
    Ok((rounds * batch as u64) as f64 / start.elapsed().as_secs_f64())
}

/// A uniformly random legal action (`wait` when none is legal).
fn random_legal(legal: ActionMask, rng: &mut Rng) -> ActionId {
    let n = legal.count();
    if n == 0 {
        return ActionId::WAIT;
    }
    legal.iter().nth(rng.index(n)).unwrap_or(ActionId::WAIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_run_measures_every_family_and_thread_count() {
        let suite = Suite::with_canvas(16).unwrap();
        let options = BenchOptions {
            steps: 500,
            harness: HarnessLevel::H4,
        };
        let mut last = 0;
        let r = run(&suite, &options, &mut |n| last = n).unwrap();
        assert_eq!(r.envs, bench_mix(&suite).len());
        assert_eq!(r.per_family.len(), r.envs);
        assert_eq!(last, (500 / r.envs as u64).max(1) * r.envs as u64);
        assert!(r.single_thread_steps_per_s > 0.0 && r.vectorized_steps_per_s > 0.0);
        assert_eq!(r.vectorized_scaling.last().unwrap().threads, r.threads);
        assert_eq!(r.vectorized_scaling[0].efficiency, 1.0);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["canvas"], 16);
        assert!(json.get("per_family").is_none());
    }

    #[test]
    fn zero_steps_are_refused_by_name() {
        let options = BenchOptions {
            steps: 0,
            harness: HarnessLevel::H4,
        };
        let e = run(&Suite::with_canvas(16).unwrap(), &options, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("`steps`"), "{e}");
    }
}
