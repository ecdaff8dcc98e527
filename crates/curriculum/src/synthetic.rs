//! A synthetic learner for simulations, tests and benchmarks: its success probability
//! rises with practice in an environment and falls with scale and with weaker harness.
//! It stands in for a real policy so the curriculum's dynamics can be looked at in seconds.

use std::collections::HashMap;

use envdist_core::{EnvId, EnvSpec, EpisodeOutcome, Rng, ScaleRange, Task};
use serde::{Deserialize, Serialize};

/// Parameters of [`SyntheticLearner`]: `P(success) = sigmoid(bias + ease + skill -
/// scale_penalty * scale_fraction - harness_penalty * level)`, where `skill =
/// max_skill * (1 - exp(-practice / practice_scale))` and `practice` counts the episodes
/// played in that environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LearnerParams {
    /// Logit of success at zero skill, smallest scale, H0.
    pub bias: f32,
    /// Skill reached after a lot of practice.
    pub max_skill: f32,
    /// Episodes of practice for 63% of `max_skill`.
    pub practice_scale: f32,
    /// Logit lost from the smallest to the largest scale.
    pub scale_penalty: f32,
    /// Logit lost per harness level.
    pub harness_penalty: f32,
    /// Environments differ: each gets an `ease` uniform in `[-spread, spread]`.
    pub spread: f32,
}

impl Default for LearnerParams {
    fn default() -> Self {
        Self {
            bias: 0.5,
            max_skill: 7.0,
            practice_scale: 2500.0,
            scale_penalty: 2.5,
            harness_penalty: 0.8,
            spread: 0.5,
        }
    }
}

#[derive(Debug, Clone)]
struct Known {
    scale: ScaleRange,
    ease: f32,
    practice: u64,
}

/// A learner that gets better with practice. Deterministic from its seed.
#[derive(Debug, Clone)]
pub struct SyntheticLearner {
    params: LearnerParams,
    envs: HashMap<EnvId, Known>,
    rng: Rng,
}

impl SyntheticLearner {
    /// A learner for `envs`, with per-environment ease drawn from `seed`.
    pub fn new(envs: &[EnvSpec], params: LearnerParams, seed: u64) -> Self {
        let mut rng = Rng::derive(seed, 1);
        let envs = envs
            .iter()
            .map(|e| {
                let ease = (rng.next_f32() * 2.0 - 1.0) * params.spread;
                (
                    e.id.clone(),
                    Known {
                        scale: e.scale,
                        ease,
                        practice: 0,
                    },
                )
            })
            .collect();
        Self {
            params,
            envs,
            rng: Rng::derive(seed, 2),
        }
    }

    /// Probability that `task` is solved now (0 for an unknown environment).
    pub fn success_probability(&self, task: &Task) -> f32 {
        let Some(k) = self.envs.get(&task.env) else {
            return 0.0;
        };
        let p = &self.params;
        let span = (k.scale.max - k.scale.min).max(1) as f32;
        let frac = (task.scale.saturating_sub(k.scale.min) as f32 / span).min(1.0);
        let skill = p.max_skill * (1.0 - (-(k.practice as f32) / p.practice_scale).exp());
        let logit = p.bias + k.ease + skill
            - p.scale_penalty * frac
            - p.harness_penalty * task.harness.index() as f32;
        1.0 / (1.0 + (-logit).exp())
    }

    /// Play `task` once: draw success, then count the practice.
    pub fn play(&mut self, task: &Task) -> EpisodeOutcome {
        let success = self.rng.chance(self.success_probability(task));
        if let Some(k) = self.envs.get_mut(&task.env) {
            k.practice += 1;
        }
        EpisodeOutcome {
            task: task.clone(),
            success,
            episode_return: success as u32 as f32,
            steps: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::specs;
    use envdist_core::HarnessLevel;

    #[test]
    fn practice_helps_scale_and_harness_hurt() {
        let envs = specs(1, 2, 10);
        let mut l = SyntheticLearner::new(&envs, LearnerParams::default(), 0);
        let t = |h, s| Task {
            env: envs[0].id.clone(),
            seed: 0,
            harness: h,
            scale: s,
        };
        let p0 = l.success_probability(&t(HarnessLevel::H0, 2));
        assert!(l.success_probability(&t(HarnessLevel::H0, 10)) < p0);
        assert!(l.success_probability(&t(HarnessLevel::H4, 2)) < p0);
        for _ in 0..1000 {
            l.play(&t(HarnessLevel::H0, 2));
        }
        assert!(l.success_probability(&t(HarnessLevel::H0, 2)) > p0);
    }
}
