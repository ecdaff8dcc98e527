//! [`StepBalanced`]: a mixture of samplers over disjoint environment sets that gives each part
//! about the same share of environment *steps*, not of episodes.
//!
//! Why: a sampler uniform over environments is uniform over episodes, and episodes differ in
//! length by an order of magnitude (a single-turn question is one step, a maze tens). Whoever
//! consumes steps (behaviour cloning: one sample per step) then sees the long-episode
//! environments almost exclusively: with 75 one-step and 125 twenty-step environments, 3% of
//! the samples are single-turn. Drawing part `i` with probability proportional to
//! `1 / mean episode length of part i` equalises the parts' expected step shares.
//!
//! Lengths are learned from the reported outcomes (a part starts at length 1, so the first
//! draws favour nobody but the parts' count), and outcomes are routed to the part that owns the
//! environment. The state holds every part's state, the length statistics and the random
//! stream, so a restored mixture continues bit-identically.

use std::collections::HashMap;

use envdist_core::{
    EnvId, EpisodeOutcome, OutcomeError, Rng, SamplerStateError, Task, TaskSampler, check_issued,
};
use serde::{Deserialize, Serialize};

use crate::CurriculumError;

/// Episodes and steps reported for one part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
struct Lengths {
    episodes: u64,
    steps: u64,
}

impl Lengths {
    /// Mean episode length so far (1 before any report).
    fn mean(&self) -> f64 {
        if self.episodes == 0 {
            1.0
        } else {
            (self.steps as f64 / self.episodes as f64).max(1.0)
        }
    }
}

#[derive(Serialize, Deserialize)]
struct State {
    parts: Vec<serde_json::Value>,
    lengths: Vec<Lengths>,
    rng: Rng,
}

/// A step-balanced mixture of samplers (see the module docs).
pub struct StepBalanced {
    parts: Vec<Box<dyn TaskSampler>>,
    owner: HashMap<EnvId, usize>,
    /// Every part's environments, in part order (for errors).
    ids: Vec<EnvId>,
    lengths: Vec<Lengths>,
    rng: Rng,
}

impl StepBalanced {
    /// Mix `parts`, each given with the environments it samples from (disjoint sets, none
    /// empty). `seed` drives the choice of part.
    pub fn new(
        parts: Vec<(Vec<EnvId>, Box<dyn TaskSampler>)>,
        seed: u64,
    ) -> Result<Self, CurriculumError> {
        if parts.is_empty() {
            return Err(CurriculumError::Envs(envdist_core::InvalidValue::new(
                "parts",
                "at least one sampler",
                "none",
            )));
        }
        let mut owner = HashMap::new();
        let mut ids = Vec::new();
        let mut samplers = Vec::with_capacity(parts.len());
        for (i, (envs, sampler)) in parts.into_iter().enumerate() {
            if envs.is_empty() {
                return Err(CurriculumError::Envs(envdist_core::InvalidValue::new(
                    format!("parts[{i}]"),
                    "at least one environment",
                    "none",
                )));
            }
            for env in envs {
                ids.push(env.clone());
                if let Some(j) = owner.insert(env.clone(), i) {
                    return Err(CurriculumError::Envs(envdist_core::InvalidValue::new(
                        format!("parts[{i}]"),
                        "environments no other part has",
                        format!("{env} (also in parts[{j}])"),
                    )));
                }
            }
            samplers.push(sampler);
        }
        let n = samplers.len();
        Ok(Self {
            parts: samplers,
            owner,
            ids,
            lengths: vec![Lengths::default(); n],
            rng: Rng::derive(seed, 0x5354_4550),
        })
    }

    /// Mean episode length of each part so far.
    pub fn mean_lengths(&self) -> Vec<f64> {
        self.lengths.iter().map(Lengths::mean).collect()
    }
}

impl TaskSampler for StepBalanced {
    fn sample(&mut self) -> Task {
        let weights: Vec<f64> = self.lengths.iter().map(|l| 1.0 / l.mean()).collect();
        let total: f64 = weights.iter().sum();
        let mut u = self.rng.next_f64() * total;
        let mut pick = weights.len() - 1;
        for (i, w) in weights.iter().enumerate() {
            if u < *w {
                pick = i;
                break;
            }
            u -= w;
        }
        self.parts[pick].sample()
    }

    /// The owning part's check; an environment no part owns is refused.
    fn check_outcome(&self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        match self.owner.get(&outcome.task.env) {
            Some(&i) => self.parts[i].check_outcome(outcome),
            None => check_issued(outcome, None, &self.ids, &[]),
        }
    }

    fn update(&mut self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        self.check_outcome(outcome)?;
        let i = self.owner[&outcome.task.env];
        self.parts[i].update(outcome)?;
        // Saturating: a restored state may hold any count.
        let l = &mut self.lengths[i];
        l.episodes = l.episodes.saturating_add(1);
        l.steps = l.steps.saturating_add(outcome.steps as u64);
        Ok(())
    }

    fn state(&self) -> serde_json::Value {
        serde_json::to_value(State {
            parts: self.parts.iter().map(|p| p.state()).collect(),
            lengths: self.lengths.clone(),
            rng: self.rng.clone(),
        })
        .unwrap_or(serde_json::Value::Null)
    }

    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError> {
        let s: State = serde_json::from_value(state.clone())
            .map_err(|e| SamplerStateError(format!("step-balanced mixture state: {e}")))?;
        if s.parts.len() != self.parts.len() || s.lengths.len() != self.parts.len() {
            return Err(SamplerStateError(format!(
                "step-balanced mixture state: expected {} parts, found {}",
                self.parts.len(),
                s.parts.len()
            )));
        }
        // Each outcome adds at most u32::MAX steps.
        for (k, l) in s.lengths.iter().enumerate() {
            if l.steps > l.episodes.saturating_mul(u64::from(u32::MAX)) {
                return Err(envdist_core::InvalidValue::new(
                    format!("lengths[{k}].steps"),
                    format!(
                        "at most episodes ({}) x {} (an episode's steps are a u32)",
                        l.episodes,
                        u32::MAX
                    ),
                    l.steps,
                )
                .into());
            }
        }
        // Parts are restored one by one: a part that refuses its state puts the ones before
        // it back, so that a refused state changes nothing.
        let before: Vec<serde_json::Value> = self.parts.iter().map(|p| p.state()).collect();
        for (k, st) in s.parts.iter().enumerate() {
            if let Err(e) = self.parts[k].restore(st) {
                for (p, old) in self.parts.iter_mut().zip(&before).take(k) {
                    p.restore(old)?;
                }
                return Err(SamplerStateError(format!("parts[{k}]: {}", e.0)));
            }
        }
        self.lengths = s.lengths;
        self.rng = s.rng;
        Ok(())
    }

    fn trains_on(&self, task: &Task) -> bool {
        self.owner
            .get(&task.env)
            .is_none_or(|&i| self.parts[i].trains_on(task))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HdcConfig, HdcSampler, Mode, synthetic_specs};

    fn uniform(specs: &[envdist_core::EnvSpec], seed: u64) -> Box<dyn TaskSampler> {
        let cfg = HdcConfig {
            mode: Mode::BaselineUniform,
            ..HdcConfig::default()
        };
        Box::new(HdcSampler::new(specs, None, cfg, seed).unwrap())
    }

    /// Parts of 1-step and 20-step episodes end up with about equal step shares, where a
    /// uniform choice of part would give the long part 20 times the short one's.
    #[test]
    fn equalises_step_shares_of_short_and_long_episodes() {
        let short = synthetic_specs("short", &[(1, 3), (1, 3)]);
        let long = synthetic_specs("long", &[(1, 3), (1, 3)]);
        let ids = |s: &[envdist_core::EnvSpec]| s.iter().map(|e| e.id.clone()).collect();
        let mut mix = StepBalanced::new(
            vec![
                (ids(&short), uniform(&short, 1)),
                (ids(&long), uniform(&long, 2)),
            ],
            7,
        )
        .unwrap();
        let mut steps = [0u64; 2];
        for _ in 0..4000 {
            let task = mix.sample();
            let part = task.env.as_str().starts_with("long") as usize;
            let len = if part == 1 { 20 } else { 1 };
            steps[part] += len as u64;
            mix.update(&EpisodeOutcome {
                task,
                success: false,
                episode_return: 0.0,
                steps: len,
            })
            .unwrap();
        }
        let share = steps[0] as f64 / (steps[0] + steps[1]) as f64;
        assert!(
            (0.4..0.6).contains(&share),
            "short part's step share {share}"
        );
        assert_eq!(mix.mean_lengths(), vec![1.0, 20.0]);
    }

    #[test]
    fn restores_bit_identically_and_refuses_bad_input() {
        let a = synthetic_specs("a", &[(1, 3)]);
        let b = synthetic_specs("b", &[(1, 3)]);
        let ids = |s: &[envdist_core::EnvSpec]| s.iter().map(|e| e.id.clone()).collect();
        let make = || {
            StepBalanced::new(
                vec![(ids(&a), uniform(&a, 1)), (ids(&b), uniform(&b, 2))],
                3,
            )
            .unwrap()
        };
        let mut mix = make();
        for _ in 0..10 {
            let task = mix.sample();
            mix.update(&EpisodeOutcome {
                task,
                success: true,
                episode_return: 1.0,
                steps: 3,
            })
            .unwrap();
        }
        let mut copy = make();
        copy.restore(&mix.state()).unwrap();
        for _ in 0..10 {
            assert_eq!(copy.sample(), mix.sample());
        }
        assert!(copy.restore(&serde_json::json!({"parts": []})).is_err());
        // Overlapping or empty parts are errors naming the part.
        let e = StepBalanced::new(
            vec![(ids(&a), uniform(&a, 1)), (ids(&a), uniform(&a, 2))],
            3,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("parts[1]"), "{e}");
        let e = StepBalanced::new(vec![(vec![], uniform(&a, 1))], 3)
            .err()
            .unwrap();
        assert!(e.to_string().contains("parts[0]"), "{e}");
    }
}
