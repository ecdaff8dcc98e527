//! A simple task sampler for tests and baselines: uniform over a fixed env list at one harness
//! level and scale choice. (The HDC curriculum lives in `envdist-curriculum`.)

use envdist_core::InvalidValue;
use envdist_core::env::EnvFactory;
use envdist_core::{
    EnvId, EnvSpec, EpisodeOutcome, HarnessLevel, OutcomeError, Rng, SamplerStateError, Task,
    TaskSampler, check_issued,
};
use serde::{Deserialize, Serialize};

use crate::error::TrainerError;
use crate::eval::{ScaleChoice, specs_for};

/// Uniform over environments, fresh seed per episode, fixed harness level; the scale is a
/// [`ScaleChoice`] or, with `uniform_scale`, uniform over each env's range.
#[derive(Debug, Clone)]
pub struct UniformSampler {
    envs: Vec<EnvSpec>,
    harness: HarnessLevel,
    scale: Option<ScaleChoice>,
    rng: Rng,
    episodes: u64,
    successes: u64,
}

#[derive(Serialize, Deserialize)]
struct State {
    envs: Vec<EnvId>,
    harness: HarnessLevel,
    scale: Option<ScaleChoice>,
    rng: Rng,
    episodes: u64,
    successes: u64,
}

impl UniformSampler {
    /// Sample `envs` (which must all be known to `factory`) at `harness`; `scale` `None`
    /// draws uniformly from each env's declared range.
    pub fn new(
        factory: &dyn EnvFactory,
        envs: &[EnvId],
        harness: HarnessLevel,
        scale: Option<ScaleChoice>,
        seed: u64,
    ) -> Result<Self, TrainerError> {
        if envs.is_empty() {
            return Err(TrainerError::Config(InvalidValue::new(
                "envs",
                "at least one environment",
                "none",
            )));
        }
        Ok(Self {
            envs: specs_for(factory, envs)?,
            harness,
            scale,
            rng: Rng::derive(seed, 0x5341_4d50),
            episodes: 0,
            successes: 0,
        })
    }

    /// Success rate of all reported episodes so far.
    pub fn success_rate(&self) -> Option<f32> {
        (self.episodes > 0).then(|| self.successes as f32 / self.episodes as f32)
    }
}

impl TaskSampler for UniformSampler {
    fn sample(&mut self) -> Task {
        let spec = &self.envs[self.rng.index(self.envs.len())];
        let scale = match self.scale {
            Some(c) => c.for_spec(spec),
            None => self.rng.range_inclusive(spec.scale.min, spec.scale.max),
        };
        Task {
            env: spec.id.clone(),
            seed: self.rng.next_u64(),
            harness: self.harness,
            scale,
        }
    }

    /// One of its environments, at its level, inside the environment's scale range.
    fn check_outcome(&self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        let spec = self.envs.iter().find(|s| s.id == outcome.task.env);
        check_issued(
            outcome,
            spec.map(|s| s.scale),
            self.envs.iter().map(|s| &s.id),
            std::slice::from_ref(&self.harness),
        )
    }

    fn update(&mut self, outcome: &EpisodeOutcome) -> Result<(), OutcomeError> {
        self.check_outcome(outcome)?;
        // Saturating: a restored state may hold any count.
        self.episodes = self.episodes.saturating_add(1);
        self.successes = self.successes.saturating_add(outcome.success as u64);
        Ok(())
    }

    fn state(&self) -> serde_json::Value {
        serde_json::to_value(State {
            envs: self.envs.iter().map(|s| s.id.clone()).collect(),
            harness: self.harness,
            scale: self.scale,
            rng: self.rng.clone(),
            episodes: self.episodes,
            successes: self.successes,
        })
        .unwrap_or(serde_json::Value::Null)
    }

    fn restore(&mut self, state: &serde_json::Value) -> Result<(), SamplerStateError> {
        let s: State = serde_json::from_value(state.clone())
            .map_err(|e| SamplerStateError(format!("not a uniform-sampler state: {e}")))?;
        let ids: Vec<EnvId> = self.envs.iter().map(|s| s.id.clone()).collect();
        if s.envs != ids || s.harness != self.harness || s.scale != self.scale {
            return Err(SamplerStateError(format!(
                "configuration mismatch: saved envs {:?} at {} with scale {:?}, this sampler has {:?} at {} with scale {:?}",
                s.envs, s.harness, s.scale, ids, self.harness, self.scale
            )));
        }
        if s.successes > s.episodes {
            return Err(InvalidValue::new(
                "successes",
                format!("at most episodes ({})", s.episodes),
                s.successes,
            )
            .into());
        }
        self.rng = s.rng;
        self.episodes = s.episodes;
        self.successes = s.successes;
        Ok(())
    }
}
