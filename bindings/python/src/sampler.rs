//! Curriculum samplers for Python: every kind of the curriculum crate's [`SamplerConfig`]
//! registry (HDC and its rivals) behind one class holding a `Box<dyn CurriculumSampler>`,
//! with HDC's own introspection on top when the sampler is HDC
//! ([`CurriculumSampler::hdc`]).

use std::sync::{Mutex, PoisonError};

use envdist_core::{EnvId, EpisodeOutcome, HarnessLevel, OutcomeError, Task};
use envdist_curriculum::{BuildOptions, CurriculumSampler, SamplerConfig};
use pyo3::prelude::*;
use serde::Serialize;

use crate::errors::{key_error, to_json, value_error};
use crate::suite;

/// A curriculum sampler over environments of the suite (used by `envdist.Curriculum` and
/// `envdist.HDC`).
#[pyclass(module = "envdist._envdist")]
pub struct Sampler {
    sampler: Mutex<Box<dyn CurriculumSampler>>,
    config: SamplerConfig,
    env_ids: Vec<String>,
}

impl Sampler {
    fn get(&mut self) -> &mut dyn CurriculumSampler {
        self.sampler
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
    }
}

/// What `probabilities()` reports.
#[derive(Serialize)]
struct Probabilities {
    env_ids: Vec<String>,
    /// Probability of drawing each environment.
    env: Vec<f64>,
    /// Per environment, the smallest and largest scale its next task can have.
    scale_window: Vec<(u32, u32)>,
    /// HDC only: per environment, the probability of each harness level H0..H4.
    #[serde(skip_serializing_if = "Option::is_none")]
    harness: Option<Vec<[f64; 5]>>,
}

/// Tickets as `(env_id, harness, scale, seed)` to tasks; `KeyError` for an environment the
/// sampler does not know, `ValueError` for a bad harness level.
fn tasks_of(env_ids: &[String], tickets: Vec<(String, String, u32, u64)>) -> PyResult<Vec<Task>> {
    tickets
        .into_iter()
        .enumerate()
        .map(|(i, (env, harness, scale, seed))| {
            if !env_ids.contains(&env) {
                return Err(key_error(format!(
                    "ticket_ids[{i}]: environment {env:?} is not one of this sampler's {} environments",
                    env_ids.len()
                )));
            }
            let harness: HarnessLevel = harness
                .parse()
                .map_err(|e| value_error(format!("ticket_ids[{i}]: {e}")))?;
            Ok(Task {
                env: EnvId(env),
                seed,
                harness,
                scale,
            })
        })
        .collect()
}

/// The configuration's fields, without the `kind` tag.
fn fields_json(config: &SamplerConfig) -> PyResult<String> {
    // Through text, not `to_value`: a value tree widens f32 fields to f64 (0.7 would read
    // 0.699999988079071), the text keeps their shortest form.
    let mut v: serde_json::Value = serde_json::from_str(&to_json(config)?)
        .map_err(|e| value_error(format!("cannot serialise the configuration: {e}")))?;
    if let serde_json::Value::Object(map) = &mut v {
        map.remove("kind");
    }
    to_json(&v)
}

/// Every sampler kind, in documentation order.
#[pyfunction]
pub fn sampler_kinds() -> Vec<&'static str> {
    SamplerConfig::KINDS.to_vec()
}

/// The documented default configuration of `kind` as JSON (its fields, without `kind`).
#[pyfunction]
pub fn default_config_json(kind: &str) -> PyResult<String> {
    fields_json(&SamplerConfig::default_for(kind).map_err(value_error)?)
}

#[pymethods]
impl Sampler {
    /// A sampler of `kind` over `env_ids` of the suite. `config_json` holds the kind's
    /// config fields (missing ones take their defaults; unknown ones, bad types and bad values
    /// are a `ValueError` naming the field); a `kind` key in it must name the same kind.
    /// `weights` (one per env) is HDC's alone: other kinds draw environments by their rule.
    #[new]
    #[pyo3(signature = (kind, env_ids, config_json = None, seed = 0, weights = None))]
    fn new(
        kind: &str,
        env_ids: Vec<String>,
        config_json: Option<&str>,
        seed: u64,
        weights: Option<Vec<f32>>,
    ) -> PyResult<Self> {
        let canonical = SamplerConfig::default_for(kind)
            .map_err(value_error)?
            .kind();
        let mut fields = match config_json {
            None => serde_json::Value::Object(Default::default()),
            Some(text) => serde_json::from_str(text)
                .map_err(|e| value_error(format!("config: not JSON: {e}")))?,
        };
        let serde_json::Value::Object(map) = &mut fields else {
            return Err(value_error(format!(
                "config: expected an object of {canonical} fields, found {fields}"
            )));
        };
        if let Some(tag) = map.remove("kind") {
            let same = tag
                .as_str()
                .and_then(|t| SamplerConfig::default_for(t).ok())
                .is_some_and(|c| c.kind() == canonical);
            if !same {
                return Err(value_error(format!(
                    "config: field `kind`: expected {canonical:?} (the sampler's kind) or no `kind`, found {tag}: a configuration of another sampler"
                )));
            }
        }
        let config = SamplerConfig::from_fields(canonical, &fields).map_err(value_error)?;
        let s = suite::suite(64)?;
        let specs = env_ids
            .iter()
            .enumerate()
            .map(|(i, id)| suite::spec_of(&s, id, &format!("env_ids[{i}]")))
            .collect::<PyResult<Vec<_>>>()?;
        let options = BuildOptions {
            weights: weights.as_deref(),
            ..BuildOptions::default()
        };
        let sampler = config
            .build_with(&specs, seed, options)
            .map_err(value_error)?;
        Ok(Self {
            sampler: Mutex::new(sampler),
            config,
            env_ids,
        })
    }

    /// The sampler's kind (`hdc`, `pass_rate`, ...).
    #[getter(kind)]
    fn kind_name(&self) -> &'static str {
        self.config.kind()
    }

    /// The environments, in sampler order.
    #[getter]
    fn env_ids(&self) -> Vec<String> {
        self.env_ids.clone()
    }

    /// Tasks drawn so far.
    #[getter]
    fn samples(&mut self) -> u64 {
        self.get().samples()
    }

    /// Outcomes of known environments reported so far.
    #[getter]
    fn updates(&mut self) -> u64 {
        self.get().updates()
    }

    /// `k` tasks as `(env_id, harness, scale, seed)`.
    fn sample(&mut self, k: usize) -> Vec<(String, String, u32, u64)> {
        let s = self.get();
        (0..k)
            .map(|_| {
                let t = s.sample();
                (t.env.0, t.harness.to_string(), t.scale, t.seed)
            })
            .collect()
    }

    /// Report outcomes: `tasks[i] = (env_id, harness, scale, seed)` ended with `successes[i]`
    /// (a bool or a number; non-zero is solved). Environments the sampler does not know are a
    /// `KeyError`; a ticket the sampler could not have issued (a scale outside the
    /// environment's range, a level it never draws) or a non-finite success is a `ValueError`
    /// naming the ticket. Every outcome is checked before any is recorded: on error nothing
    /// is. `steps[i]`: the episode's length (what HDC's `balance_turns` counts); 0 when not
    /// given.
    #[pyo3(signature = (tasks, successes, steps=None))]
    fn update(
        &mut self,
        tasks: Vec<(String, String, u32, u64)>,
        successes: Vec<f64>,
        steps: Option<Vec<u32>>,
    ) -> PyResult<()> {
        if tasks.len() != successes.len() {
            return Err(value_error(format!(
                "successes: expected {} values (one per ticket), found {}",
                tasks.len(),
                successes.len()
            )));
        }
        let steps = steps.unwrap_or_else(|| vec![0; tasks.len()]);
        if steps.len() != tasks.len() {
            return Err(value_error(format!(
                "steps: expected {} values (one per ticket), found {}",
                tasks.len(),
                steps.len()
            )));
        }
        let tasks = tasks_of(&self.env_ids, tasks)?;
        let mut outcomes = Vec::with_capacity(tasks.len());
        for (i, ((task, value), steps)) in tasks.into_iter().zip(successes).zip(steps).enumerate() {
            if !value.is_finite() {
                return Err(value_error(format!(
                    "successes[{i}] (ticket {task}): expected a bool or a finite number (non-zero is solved), found {value}"
                )));
            }
            let success = value != 0.0;
            outcomes.push(EpisodeOutcome {
                task,
                success,
                episode_return: if success { 1.0 } else { 0.0 },
                steps,
            });
        }
        let s = self.get();
        let refused = |i: usize, e: OutcomeError| value_error(format!("ticket_ids[{i}]: {e}"));
        for (i, o) in outcomes.iter().enumerate() {
            s.check_outcome(o).map_err(|e| refused(i, e))?;
        }
        for (i, o) in outcomes.iter().enumerate() {
            s.update(o).map_err(|e| refused(i, e))?;
        }
        Ok(())
    }

    /// Whether a trainer should take gradients from each task's episode (false only for
    /// robust PLR's new levels); ask before reporting the outcome.
    fn trains_on(&mut self, tasks: Vec<(String, String, u32, u64)>) -> PyResult<Vec<bool>> {
        let tasks = tasks_of(&self.env_ids, tasks)?;
        let s = self.get();
        Ok(tasks.iter().map(|t| s.trains_on(t)).collect())
    }

    /// The full state as JSON (restoring it continues bit-identically).
    fn state_json(&mut self) -> PyResult<String> {
        to_json(&self.get().state())
    }

    /// Restore a state from `state_json`; a state from another sampler or configuration, or
    /// a corrupt one, is a `ValueError` saying what differs, and nothing changes.
    fn load_state_json(&mut self, text: &str) -> PyResult<()> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            // The position in the user's own text, in words (not serde's "at line 1 column 2").
            value_error(format!(
                "cannot restore sampler state: not JSON: {} (at character {} of line {})",
                envdist_core::plain_serde_message(&e.to_string()),
                e.column(),
                e.line()
            ))
        })?;
        let kind = self.config.kind();
        self.get()
            .restore(&v)
            .map_err(|e| value_error(format!("cannot restore {kind} sampler state: {}", e.0)))
    }

    /// Where the next tasks will come from, as JSON (HDC adds harness probabilities).
    fn probabilities_json(&mut self) -> PyResult<String> {
        let env_ids = self.env_ids.clone();
        let s = self.get();
        let snap = s.snapshot();
        let harness = s
            .hdc()
            .map(|h| (0..snap.len()).map(|i| h.level_probabilities(i)).collect());
        to_json(&Probabilities {
            env_ids,
            env: snap.iter().map(|e| e.probability).collect(),
            scale_window: snap.iter().map(|e| (e.scale_lo, e.scale_hi)).collect(),
            harness,
        })
    }

    /// One snapshot per environment (probability, score, success, harness, scales,
    /// episodes), as JSON; NaN (no estimate) is `null`.
    fn snapshot_json(&mut self) -> PyResult<String> {
        to_json(&self.get().snapshot())
    }

    /// Each environment's position: HDC's stage status, the snapshot for other kinds.
    fn status_json(&mut self) -> PyResult<String> {
        let s = self.get();
        match s.hdc() {
            Some(h) => to_json(&h.status()),
            None => to_json(&s.snapshot()),
        }
    }

    /// The configuration, defaults included, as JSON (its fields, without `kind`).
    fn config_json(&self) -> PyResult<String> {
        fields_json(&self.config)
    }
}
