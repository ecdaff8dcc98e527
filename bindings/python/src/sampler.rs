//! Task samplers for Python: HDC now; any `Box<dyn TaskSampler>` in one line (see
//! [`Kind::Other`]), with HDC's introspection on top when the sampler is HDC.

use std::sync::{Mutex, PoisonError};

use envdist_core::{EnvId, EpisodeOutcome, HarnessLevel, Task, TaskSampler};
use envdist_curriculum::{HdcConfig, HdcSampler};
use pyo3::prelude::*;
use serde::Serialize;

use crate::errors::{key_error, to_json, value_error};
use crate::suite;

/// The sampler behind a [`Sampler`]. A new curriculum crate sampler is one more constructor
/// that builds `Kind::Other(config.build(...))`.
pub enum Kind {
    /// The HDC curriculum (with `probabilities()` and `status()`).
    Hdc(Box<HdcSampler>),
    /// Any other sampler: sample / update / state / restore only.
    #[allow(dead_code)]
    Other(Box<dyn TaskSampler>),
}

impl Kind {
    fn sampler(&mut self) -> &mut dyn TaskSampler {
        match self {
            Kind::Hdc(h) => h.as_mut(),
            Kind::Other(s) => s.as_mut(),
        }
    }

    fn state(&self) -> serde_json::Value {
        match self {
            Kind::Hdc(h) => h.state(),
            Kind::Other(s) => s.state(),
        }
    }

    fn hdc(&self) -> PyResult<&HdcSampler> {
        match self {
            Kind::Hdc(h) => Ok(h),
            Kind::Other(_) => Err(pyo3::exceptions::PyNotImplementedError::new_err(
                "this sampler is not HDC: probabilities() and status() are HDC's introspection",
            )),
        }
    }
}

/// A task sampler over environments of the suite (used by `envdist.HDC`).
#[pyclass(module = "envdist._envdist")]
pub struct Sampler {
    kind: Mutex<Kind>,
    env_ids: Vec<String>,
}

impl Sampler {
    fn kind(&mut self) -> &mut Kind {
        self.kind.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What `probabilities()` reports for HDC.
#[derive(Serialize)]
struct Probabilities {
    env_ids: Vec<String>,
    /// Probability of drawing each environment.
    env: Vec<f64>,
    /// Per environment, the probability of each harness level H0..H4 for its next task.
    harness: Vec<[f64; 5]>,
    /// Per environment, the scale window `[lo, hi]` its next task's scale is drawn from.
    scale_window: Vec<(u32, u32)>,
}

#[pymethods]
impl Sampler {
    /// HDC over `env_ids` of the suite; `config_json` is an `HdcConfig` (unknown fields
    /// refused), `weights` one sampling weight per env.
    #[staticmethod]
    #[pyo3(signature = (env_ids, config_json = None, seed = 0, weights = None))]
    fn hdc(
        env_ids: Vec<String>,
        config_json: Option<&str>,
        seed: u64,
        weights: Option<Vec<f32>>,
    ) -> PyResult<Self> {
        let s = suite::suite(64)?;
        let specs = env_ids
            .iter()
            .map(|id| suite::spec_of(&s, id))
            .collect::<PyResult<Vec<_>>>()?;
        let config: HdcConfig = match config_json {
            None => HdcConfig::default(),
            Some(text) => {
                let de = &mut serde_json::Deserializer::from_str(text);
                serde_path_to_error::deserialize(de).map_err(|e| {
                    value_error(format!("HDC config: field `{}`: {}", e.path(), e.inner()))
                })?
            }
        };
        let hdc = HdcSampler::new(&specs, weights.as_deref(), config, seed).map_err(value_error)?;
        Ok(Self {
            kind: Mutex::new(Kind::Hdc(Box::new(hdc))),
            env_ids,
        })
    }

    /// The environments, in sampler order.
    #[getter]
    fn env_ids(&self) -> Vec<String> {
        self.env_ids.clone()
    }

    /// `k` tasks as `(env_id, harness, scale, seed)`.
    fn sample(&mut self, k: usize) -> Vec<(String, String, u32, u64)> {
        let s = self.kind().sampler();
        (0..k)
            .map(|_| {
                let t = s.sample();
                (t.env.0, t.harness.to_string(), t.scale, t.seed)
            })
            .collect()
    }

    /// Report outcomes: `tasks[i] = (env_id, harness, scale, seed)` ended with `successes[i]`.
    /// Environments the sampler does not know are a `KeyError`; nothing is recorded then.
    fn update(
        &mut self,
        tasks: Vec<(String, String, u32, u64)>,
        successes: Vec<bool>,
    ) -> PyResult<()> {
        if tasks.len() != successes.len() {
            return Err(value_error(format!(
                "successes: expected {} values (one per ticket), found {}",
                tasks.len(),
                successes.len()
            )));
        }
        let mut outcomes = Vec::with_capacity(tasks.len());
        for (i, ((env, harness, scale, seed), success)) in
            tasks.into_iter().zip(successes).enumerate()
        {
            if !self.env_ids.contains(&env) {
                return Err(key_error(format!(
                    "ticket_ids[{i}]: environment {env:?} is not one of this sampler's {} environments",
                    self.env_ids.len()
                )));
            }
            let harness: HarnessLevel = harness
                .parse()
                .map_err(|e| value_error(format!("ticket_ids[{i}]: {e}")))?;
            outcomes.push(EpisodeOutcome {
                task: Task {
                    env: EnvId(env),
                    seed,
                    harness,
                    scale,
                },
                success,
                episode_return: if success { 1.0 } else { 0.0 },
                steps: 0,
            });
        }
        let s = self.kind().sampler();
        for o in &outcomes {
            s.update(o);
        }
        Ok(())
    }

    /// The full state as JSON (restoring it continues bit-identically).
    fn state_json(&mut self) -> PyResult<String> {
        to_json(&self.kind().state())
    }

    /// Restore a state from `state_json`; a state from another configuration or a corrupt
    /// one is a `ValueError` saying what differs, and nothing changes.
    fn load_state_json(&mut self, text: &str) -> PyResult<()> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| value_error(format!("cannot restore sampler state: not JSON: {e}")))?;
        self.kind().sampler().restore(&v).map_err(value_error)
    }

    /// HDC: where the next tasks will come from, as JSON.
    fn probabilities_json(&mut self) -> PyResult<String> {
        let env_ids = self.env_ids.clone();
        let h = self.kind().hdc()?;
        let n = h.envs().len();
        to_json(&Probabilities {
            env_ids,
            env: h.env_probabilities(),
            harness: (0..n).map(|i| h.level_probabilities(i)).collect(),
            scale_window: (0..n).map(|i| h.window(i)).collect(),
        })
    }

    /// HDC: each environment's curriculum position, as JSON.
    fn status_json(&mut self) -> PyResult<String> {
        to_json(&self.kind().hdc()?.status())
    }

    /// HDC: the configuration, as JSON.
    fn config_json(&mut self) -> PyResult<String> {
        to_json(self.kind().hdc()?.config())
    }
}
