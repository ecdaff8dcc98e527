//! The HDC sampler: per environment a harness level and a scale window, moved by a
//! success-rate EMA; sampling with exponentially decaying review of earlier levels. This module
//! holds the sampler, its construction and accessors; the state machine, its persistence and
//! its status snapshots live in the submodules.

mod machine;
mod persistence;
mod status;

use envdist_core::InvalidValue;
use std::collections::HashMap;

use envdist_core::{
    EnvId, EnvSpec, EpisodeOutcome, HarnessLevel, OutcomeError, Rng, SamplerStateError, ScaleRange,
    Task, TaskSampler, Turn, check_issued,
};
use serde::{Deserialize, Serialize};

use crate::config::{HdcConfig, LevelRule};
use crate::error::CurriculumError;
use crate::rivals::{Retired, check_envs, issued_range, retire};
use machine::decay_tables;
pub use machine::{EnvState, UpdateEffect};
pub use persistence::{STATE_SCHEMA_VERSION, SavedState};
pub use status::{EnvStatus, STATUS_SCHEMA_VERSION, StatusFile, TRACE_SCHEMA_VERSION, TraceEvent};

/// One environment as the sampler knows it: id, scale range, sampling weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvEntry {
    /// The environment.
    pub id: EnvId,
    /// Its declared scale range.
    pub scale: ScaleRange,
    /// Its (unnormalised) sampling weight.
    pub weight: f32,
}

/// The HDC sampler. Deterministic: the same environments, weights, config, seed and order of
/// `sample`/`update` calls give the same tasks; [`TaskSampler::state`] captures all of it.
#[derive(Debug, Clone)]
pub struct HdcSampler {
    config: HdcConfig,
    config_hash: String,
    envs: Vec<EnvEntry>,
    index: HashMap<EnvId, usize>,
    /// Cumulative weights; `None` when all weights are equal (then one `Rng::index` suffices).
    env_cumulative: Option<Vec<f64>>,
    /// `decay_cumulative[back][d]`: P(level = current - d' for some d' <= d) when `back`
    /// earlier levels are reviewable.
    decay_cumulative: [[f64; 5]; 5],
    rng: Rng,
    global_level: HarnessLevel,
    samples: u64,
    updates: u64,
    unknown: u64,
    per_env: Vec<EnvState>,
    /// Environments a retarget dropped ([`HdcSampler::with_envs`]), whose outcomes may still
    /// come in.
    retired: Vec<Retired>,
    /// [`HdcConfig::balance_turns`]: the environments of each kind (single-turn first) and
    /// the steps each kind has played so far.
    turns: TurnBalance,
}

/// The state of [`HdcConfig::balance_turns`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TurnBalance {
    /// Indices of the single-turn, then the multi-turn environments.
    pub members: [Vec<usize>; 2],
    /// Steps played by each kind (from the outcomes reported).
    pub steps: [u64; 2],
}

impl TurnBalance {
    fn of(envs: &[EnvSpec]) -> Self {
        let kind =
            |t: Turn| -> Vec<usize> { (0..envs.len()).filter(|&i| envs[i].turn == t).collect() };
        Self {
            members: [kind(Turn::Single), kind(Turn::Multi)],
            steps: [0, 0],
        }
    }

    /// The kind of environment `i` (0 single-turn, 1 multi-turn).
    pub fn kind_of(&self, i: usize) -> usize {
        usize::from(self.members[0].binary_search(&i).is_err())
    }
}

impl HdcSampler {
    /// A sampler over `envs` (their ids and scale ranges). `weights`, aligned with `envs`,
    /// replaces `config.env_weights` when given; otherwise that map (default 1.0) applies.
    /// Errors name the bad config field, a duplicate id, an unknown id in the weight map, a
    /// wrong weight count, or all-zero weights.
    pub fn new(
        envs: &[EnvSpec],
        weights: Option<&[f32]>,
        config: HdcConfig,
        seed: u64,
    ) -> Result<Self, CurriculumError> {
        config.validate()?;
        let index = check_envs(envs)?;
        for id in config.env_weights.keys() {
            if !index.contains_key(id) {
                return Err(CurriculumError::Config(InvalidValue::new(
                    format!("env_weights.{id}"),
                    "an id among the sampler's environments",
                    "an unknown id",
                )));
            }
        }
        let weights: Vec<f32> = match weights {
            Some(w) => {
                if w.len() != envs.len() {
                    return Err(CurriculumError::Envs(InvalidValue::new(
                        "weights",
                        format!("one per environment ({})", envs.len()),
                        w.len(),
                    )));
                }
                if let Some((i, bad)) = w
                    .iter()
                    .enumerate()
                    .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
                {
                    return Err(CurriculumError::Envs(InvalidValue::new(
                        format!("weights[{i}] ({})", envs[i].id),
                        "a finite weight >= 0",
                        bad,
                    )));
                }
                w.to_vec()
            }
            None => envs
                .iter()
                .map(|e| config.env_weights.get(&e.id).copied().unwrap_or(1.0))
                .collect(),
        };
        let entries: Vec<EnvEntry> = envs
            .iter()
            .zip(&weights)
            .map(|(e, &weight)| EnvEntry {
                id: e.id.clone(),
                scale: e.scale,
                weight,
            })
            .collect();
        let env_cumulative = Self::cumulative(&entries)?;
        let initial_level = config.initial_level();
        let per_env = entries
            .iter()
            .map(|e| EnvState {
                level: initial_level,
                window_lo: e.scale.min,
                ema: 0.0,
                stage_episodes: 0,
                ready: false,
                episodes: 0,
                successes: 0,
                capped_advances: 0,
            })
            .collect();
        Ok(Self {
            config_hash: config.hash_hex(),
            decay_cumulative: decay_tables(config.lambda),
            global_level: config.harness_start,
            config,
            index,
            env_cumulative,
            envs: entries,
            rng: Rng::seed_from_u64(seed),
            samples: 0,
            updates: 0,
            unknown: 0,
            per_env,
            retired: Vec::new(),
            turns: TurnBalance::of(envs),
        })
    }

    /// The same sampler over another environment set (uniform weights): environments in both
    /// keep their curriculum state (level, window, competence, counts), new ones start fresh,
    /// dropped ones are retired (outcomes of their tasks still in flight are accepted and
    /// counted apart); the random stream and counters carry on. How a selection that changes
    /// during training keeps the curriculum of the environments it keeps.
    pub fn with_envs(&self, envs: &[EnvSpec]) -> Result<Self, CurriculumError> {
        let mut next = Self::new(envs, None, self.config.clone(), 0)?;
        next.rng = self.rng.clone();
        next.samples = self.samples;
        next.updates = self.updates;
        next.unknown = self.unknown;
        next.global_level = self.global_level;
        next.turns.steps = self.turns.steps;
        next.retired = self.retired.clone();
        let mut kept = vec![false; self.envs.len()];
        let shared = self.config.mode.level_rule() == LevelRule::Shared;
        for (i, e) in next.envs.iter().enumerate() {
            if let Some(&j) = self.index.get(&e.id)
                && self.envs[j].scale == e.scale
            {
                next.per_env[i] = self.per_env[j].clone();
                kept[j] = true;
            } else if shared {
                // A new environment joins at the shared level, as every other one is.
                next.per_env[i].level = self.global_level;
            }
        }
        for (j, e) in self.envs.iter().enumerate().filter(|&(j, _)| !kept[j]) {
            retire(&mut next.retired, &e.id, e.scale, self.per_env[j].episodes);
        }
        Ok(next)
    }

    /// The harness levels this sampler's tasks can have: from the start level on when levels
    /// weaken (reviews never go below it), the one fixed level, or all five.
    pub fn issued_levels(&self) -> &'static [HarnessLevel] {
        let all = &HarnessLevel::ALL;
        match self.config.mode.level_rule() {
            LevelRule::PerEnv | LevelRule::Shared => &all[self.config.harness_start.index()..],
            LevelRule::Fixed => {
                let i = self.config.initial_level().index();
                &all[i..=i]
            }
            LevelRule::Uniform => all,
        }
    }

    /// Environments a retarget dropped whose outcomes are still accepted.
    pub fn retired(&self) -> &[Retired] {
        &self.retired
    }

    fn cumulative(entries: &[EnvEntry]) -> Result<Option<Vec<f64>>, CurriculumError> {
        let total: f64 = entries.iter().map(|e| e.weight as f64).sum();
        if total.is_nan() || total <= 0.0 {
            return Err(CurriculumError::Envs(InvalidValue::new(
                "weights",
                "at least one positive weight",
                "all zero",
            )));
        }
        let first = entries[0].weight;
        if entries.iter().all(|e| e.weight == first) {
            return Ok(None);
        }
        let mut acc = 0.0;
        Ok(Some(
            entries
                .iter()
                .map(|e| {
                    acc += e.weight as f64;
                    acc
                })
                .collect(),
        ))
    }

    /// The configuration.
    pub fn config(&self) -> &HdcConfig {
        &self.config
    }

    /// The environments in sampler order, with their weights.
    pub fn envs(&self) -> &[EnvEntry] {
        &self.envs
    }

    /// Position of `id` in [`HdcSampler::envs`].
    pub fn env_index(&self, id: &EnvId) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The shared level of [`Mode::Global`](crate::Mode::Global).
    pub fn global_level(&self) -> HarnessLevel {
        self.global_level
    }

    /// Tasks sampled so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Outcomes of known environments reported so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The raw state of environment `i`.
    pub fn env_state(&self, i: usize) -> Option<&EnvState> {
        self.per_env.get(i)
    }
}

impl TaskSampler for HdcSampler {
    fn sample(&mut self) -> Task {
        self.sample_task()
    }

    fn check_outcome(&self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        let task = &outcome.task;
        let current = self.env_index(&task.env).map(|i| self.envs[i].scale);
        check_issued(
            outcome,
            issued_range(current, &self.retired, task),
            self.envs.iter().map(|e| &e.id),
            self.issued_levels(),
        )
    }

    fn update(&mut self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        self.record(outcome).map(drop)
    }

    fn state(&self) -> serde_json::Value {
        serde_json::to_value(self.saved_state()).unwrap_or(serde_json::Value::Null)
    }

    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError> {
        Ok(self.restore_value(state)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::specs;

    #[test]
    fn a_new_env_set_keeps_the_state_of_the_envs_it_keeps() {
        let mut s = crate::test_support::sampler(crate::Mode::Full);
        let envs = s.envs().iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        for _ in 0..3 {
            s.record(&crate::test_support::outcome(
                &envs[1],
                HarnessLevel::H0,
                2,
                true,
            ))
            .unwrap();
        }
        let moved = s.env_state(1).unwrap().clone();
        assert_ne!(moved.window_lo, 2, "the stage advanced");
        let mut next_specs = specs(3, 2, 5);
        next_specs[0].id = EnvId::new("other/x");
        let next = s.with_envs(&next_specs[..2]).unwrap();
        assert_eq!(next.env_state(1).unwrap(), &moved, "fam/e1 kept its state");
        assert_eq!(
            next.env_state(0).unwrap().episodes,
            0,
            "a new env starts fresh"
        );
        assert_eq!(next.samples(), s.samples());
    }

    #[test]
    fn construction_errors_name_the_problem() {
        let e = HdcSampler::new(&[], None, HdcConfig::default(), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least one environment"), "{e}");
        let mut dup = specs(2, 1, 3);
        dup[1].id = dup[0].id.clone();
        let e = HdcSampler::new(&dup, None, HdcConfig::default(), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("duplicate"), "{e}");
        let e = HdcSampler::new(&specs(2, 1, 3), Some(&[1.0]), HdcConfig::default(), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("one per environment"), "{e}");
        let e = HdcSampler::new(&specs(2, 1, 3), Some(&[0.0, 0.0]), HdcConfig::default(), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("positive"), "{e}");
        let cfg = HdcConfig {
            env_weights: [(EnvId::new("zzz/q"), 1.0)].into_iter().collect(),
            ..Default::default()
        };
        let e = HdcSampler::new(&specs(2, 1, 3), None, cfg, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("env_weights.zzz/q"), "{e}");
    }
}
