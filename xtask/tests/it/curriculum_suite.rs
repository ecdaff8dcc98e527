//! The HDC sampler over the real environment suite: every task it draws is one the
//! environment accepts, and the observation's harness text matches the drawn level.

use std::collections::HashMap;

use envdist_core::{EnvFactory, HarnessChannel, HarnessSchedule, Split, TaskSampler};
use envdist_curriculum::{HdcConfig, HdcSampler, LearnerParams, SharedSampler, SyntheticLearner};
use envdist_envs::Suite;

#[test]
fn sampled_tasks_play_in_the_suite() {
    let suite = Suite::default();
    let all: Vec<_> = suite
        .specs()
        .into_iter()
        .filter(|s| s.split == Split::Pool)
        .collect();
    assert!(!all.is_empty());
    // Ten environments spread over the pool, so the curriculum gets far in a short test.
    let pool: Vec<_> = all
        .iter()
        .step_by(all.len().div_ceil(10))
        .cloned()
        .collect();
    let config = HdcConfig {
        min_episodes: 5,
        ..Default::default()
    };
    let mut sampler = SharedSampler::new(HdcSampler::new(&pool, None, config, 3).unwrap());
    let mut learner = SyntheticLearner::new(
        &pool,
        LearnerParams {
            practice_scale: 20.0,
            bias: 3.0,
            ..Default::default()
        },
        3,
    );
    let schedule = HarnessSchedule::default();
    let mut envs = HashMap::new();
    let mut levels_seen = [0usize; 5];
    for _ in 0..1500 {
        let task = sampler.sample();
        let spec = pool.iter().find(|s| s.id == task.env).unwrap();
        assert!(
            spec.scale.contains(task.scale),
            "{task:?} outside {:?}",
            spec.scale
        );
        let env = envs
            .entry(task.env.clone())
            .or_insert_with(|| suite.make(&task.env).unwrap());
        let obs = env.reset(&task);
        for c in HarnessChannel::ALL {
            if !schedule.keeps(task.harness, c) {
                assert!(
                    obs.harness.get(c).is_none(),
                    "{task:?}: {c:?} should be dropped"
                );
            }
        }
        levels_seen[task.harness.index()] += 1;
        sampler.update(&learner.play(&task)).unwrap();
    }
    // The curriculum moved past H0 for some environments within 1500 episodes.
    assert!(
        levels_seen[1..].iter().sum::<usize>() > 0,
        "{levels_seen:?}"
    );
}
