//! Rollouts: play tasks with a policy and record [`Trajectory`]s, one env or a whole pool.
//!
//! Pool rollouts are deterministic from one seed whatever the thread count: each environment's
//! task seeds come from a stream derived from the seed and a hash of the environment id (not
//! its position), each trajectory gets its own policy instance and RNG stream, and the results
//! are collected in spec order.

use envdist_core::InvalidValue;
use envdist_core::env::EnvFactory;
use envdist_core::{
    Env, EnvId, EnvSpec, HarnessLevel, Policy, PolicyInput, Rng, TRAJECTORY_SCHEMA_VERSION, Task,
    Trajectory, TrajectoryStep,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ProfilingError;

/// Builds a fresh policy for one trajectory (policies keep per-episode state such as the
/// explorer's last action, and `act` needs `&mut self`, so threads cannot share one).
pub type PolicyMaker = dyn Fn() -> Box<dyn Policy> + Send + Sync;

/// How a pool is rolled out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutConfig {
    /// Trajectories per environment (the paper uses 40): the first half (rounded up) from the
    /// first policy, the rest from the second.
    pub trajectories_per_env: u32,
    /// Harness level of every task.
    pub harness: HarnessLevel,
    /// Seed of everything random in the rollout.
    pub seed: u64,
}

impl Default for RolloutConfig {
    fn default() -> Self {
        Self {
            trajectories_per_env: 40,
            harness: HarnessLevel::H0,
            seed: 0,
        }
    }
}

/// The id's stable hash, so that an environment's stream does not depend on its pool position.
pub(crate) fn id_hash(id: &EnvId) -> u64 {
    id.stable_hash()
}

/// Play one episode of `task` in an already built `env`. The episode ends when the env says
/// done or truncated, or after `spec.max_steps` steps as a guard against an env that never
/// ends (the guard is recorded as a failure).
pub fn rollout_env(
    env: &mut dyn Env,
    task: &Task,
    policy: &mut dyn Policy,
    rng: &mut Rng,
) -> Trajectory {
    let mut observation = env.reset(task);
    let mut legal = env.legal_actions();
    let cap = env.spec().max_steps.max(1);
    let mut steps = Vec::new();
    let mut success = false;
    let mut episode_return = 0.0f32;
    for _ in 0..cap {
        let oracle = if policy.wants_oracle() {
            env.oracle_action()
        } else {
            None
        };
        let action = policy.act(
            &PolicyInput {
                task,
                observation: &observation,
                legal,
                oracle,
            },
            rng,
        );
        let step = env.step(action);
        episode_return += step.reward;
        steps.push(TrajectoryStep {
            action,
            reward: step.reward,
            abilities: step.abilities.iter().map(|s| s.to_string()).collect(),
        });
        let end = step.done || step.truncated;
        success = step.done && step.success;
        observation = step.observation;
        legal = step.legal;
        if end {
            break;
        }
    }
    Trajectory {
        schema_version: TRAJECTORY_SCHEMA_VERSION,
        task: task.clone(),
        policy: policy.name().to_string(),
        steps,
        success,
        episode_return,
    }
}

/// Play one episode of `task` with an env made by `factory`.
pub fn rollout(
    factory: &dyn EnvFactory,
    task: &Task,
    policy: &mut dyn Policy,
    rng: &mut Rng,
) -> Result<Trajectory, ProfilingError> {
    let mut env = factory
        .make(&task.env)
        .map_err(|e| ProfilingError::UnknownEnv(e.0))?;
    Ok(rollout_env(env.as_mut(), task, policy, rng))
}

/// The tasks and policy roles of one environment's trajectories: `(task, uses_first_policy,
/// policy rng)`, at the env's mid scale.
fn env_plan(spec: &EnvSpec, config: &RolloutConfig) -> Vec<(Task, bool, Rng)> {
    let t = config.trajectories_per_env;
    let first_count = t.div_ceil(2);
    let mut seeds = Rng::derive(config.seed, id_hash(&spec.id));
    (0..t)
        .map(|j| {
            let task = Task {
                env: spec.id.clone(),
                seed: seeds.next_u64(),
                harness: config.harness,
                scale: spec.scale.mid(),
            };
            let rng = Rng::derive(task.seed, j as u64);
            (task, j < first_count, rng)
        })
        .collect()
}

/// Roll out every environment of `specs` in parallel on the current rayon pool:
/// `trajectories_per_env` each, half by `first`, half by `second`. Returns them grouped by
/// environment in spec order. `on_env_done` is called once per finished environment (for
/// progress bars) from worker threads.
pub fn rollout_pool(
    factory: &dyn EnvFactory,
    specs: &[EnvSpec],
    config: &RolloutConfig,
    first: &PolicyMaker,
    second: &PolicyMaker,
    on_env_done: &(dyn Fn(&EnvId) + Sync),
) -> Result<Vec<Trajectory>, ProfilingError> {
    if config.trajectories_per_env == 0 {
        return Err(ProfilingError::Config(InvalidValue::new(
            "trajectories_per_env",
            "at least 1",
            "0",
        )));
    }
    let per_env: Vec<Result<Vec<Trajectory>, ProfilingError>> = specs
        .par_iter()
        .map(|spec| {
            let mut env = factory
                .make(&spec.id)
                .map_err(|e| ProfilingError::UnknownEnv(e.0))?;
            let out = env_plan(spec, config)
                .into_iter()
                .map(|(task, use_first, mut rng)| {
                    let mut policy = if use_first { first() } else { second() };
                    rollout_env(env.as_mut(), &task, policy.as_mut(), &mut rng)
                })
                .collect();
            on_env_done(&spec.id);
            Ok(out)
        })
        .collect();
    let mut all = Vec::with_capacity(specs.len() * config.trajectories_per_env as usize);
    for r in per_env {
        all.extend(r?);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Explorer, NoisyOracle};
    use crate::toy::ToyFactory;

    fn pool(threads: usize, config: &RolloutConfig) -> Vec<Trajectory> {
        let f = ToyFactory;
        let specs = f.specs();
        let first: Box<PolicyMaker> = Box::new(|| Box::new(NoisyOracle::new(0.2)));
        let second: Box<PolicyMaker> = Box::new(|| Box::new(Explorer::new(0.5)));
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| rollout_pool(&f, &specs, config, &*first, &*second, &|_| {}))
            .unwrap()
    }

    #[test]
    fn pool_rollout_is_deterministic_across_thread_counts_and_splits_policies() {
        let config = RolloutConfig {
            trajectories_per_env: 5,
            harness: HarnessLevel::H2,
            seed: 11,
        };
        let a = pool(1, &config);
        let b = pool(3, &config);
        assert_eq!(a, b);
        assert_eq!(a.len(), 10);
        let oracle_runs = a.iter().filter(|t| t.policy.starts_with("oracle")).count();
        assert_eq!(oracle_runs, 6); // ceil(5/2) per env
        for t in &a {
            assert_eq!(t.task.scale, 5); // mid of 3..=7
            assert_eq!(t.task.harness, HarnessLevel::H2);
            assert!(t.steps.len() <= 12);
        }
        let other = pool(
            1,
            &RolloutConfig {
                seed: 12,
                ..config.clone()
            },
        );
        assert_ne!(a, other);
    }

    #[test]
    fn noiseless_oracle_solves_the_mirrored_twin_too() {
        let mut p = NoisyOracle::new(0.0);
        let task = Task {
            env: EnvId::new("toy/mirror"),
            seed: 0,
            harness: HarnessLevel::H0,
            scale: 4,
        };
        let t = rollout(&ToyFactory, &task, &mut p, &mut Rng::seed_from_u64(1)).unwrap();
        assert!(t.success);
        assert_eq!(t.steps.len(), 3);
        assert!(
            t.steps
                .iter()
                .all(|s| s.action == envdist_core::ActionId::LEFT)
        );
        assert_eq!(t.episode_return, 1.0);
        let bad = Task {
            env: EnvId::new("toy/none"),
            ..task
        };
        let e = rollout(&ToyFactory, &bad, &mut p, &mut Rng::seed_from_u64(1)).unwrap_err();
        assert!(e.to_string().contains("toy/none"), "{e}");
    }

    #[test]
    fn zero_trajectories_is_a_config_error() {
        let f = ToyFactory;
        let first: Box<PolicyMaker> = Box::new(|| Box::new(NoisyOracle::new(0.2)));
        let config = RolloutConfig {
            trajectories_per_env: 0,
            ..RolloutConfig::default()
        };
        let e = rollout_pool(&f, &f.specs(), &config, &*first, &*first, &|_| {}).unwrap_err();
        assert!(e.to_string().contains("trajectories_per_env"), "{e}");
    }
}
