//! One environment for `envdist.make`: a [`SuiteEnv`] with Gymnasium's episode-seed rule.

use std::sync::{Mutex, PoisonError};

use envdist_core::{
    ActionId, Env as _, EnvSpec, HarnessLevel, NUM_ACTIONS, ParseActionTextError, Rng, Task, Turn,
};
use envdist_envs::StepInfo;
use envdist_envs::SuiteEnv;
use numpy::{PyArray1, PyArray3, PyArrayMethods};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::errors::{to_json, value_error};
use crate::suite;

/// Stream of the episode seeds an env draws for resets without a seed (shared with the vector
/// env, so that both play the same episodes).
pub const EPISODE_SEED_STREAM: u64 = 0x5eed_e915;

/// Episode settings and the seed stream of one environment.
pub struct Slot {
    pub env: SuiteEnv,
    pub spec: EnvSpec,
    pub harness: HarnessLevel,
    pub scale: u32,
    /// Seeds of the episodes after a seeded reset.
    pub seeds: Rng,
    /// Seed of the current episode.
    pub seed: u64,
    /// Whether an episode was started: a step before the first reset would play an episode
    /// nobody chose (seed 0), so it is refused.
    pub started: bool,
}

impl Slot {
    pub fn new(spec: EnvSpec, env: SuiteEnv, harness: HarnessLevel, scale: u32) -> Self {
        Self {
            env,
            spec,
            harness,
            scale,
            seeds: Rng::seed_from_u64(0),
            seed: 0,
            started: false,
        }
    }

    /// Start an episode: with `seed` its task seed is `seed` and later unseeded resets draw
    /// from a stream derived from it; without, the next seed of that stream.
    pub fn start(&mut self, seed: Option<u64>) {
        self.seed = match seed {
            Some(s) => {
                self.seeds = Rng::derive(s, EPISODE_SEED_STREAM);
                s
            }
            // 63 bits: seeds stay exact in int64 arrays (Gymnasium's vector infos, datasets).
            None => self.seeds.next_u64() >> 1,
        };
        let task = Task {
            env: self.spec.id.clone(),
            seed: self.seed,
            harness: self.harness,
            scale: self.scale,
        };
        // Text channels are built on demand (`harness_text`), not at every reset.
        self.env.reset_fast(&task);
        self.started = true;
    }
}

impl Slot {
    /// One step with Gymnasium's episode-end flags `(terminated, truncated)`. A single-turn env
    /// is one question whose step limit (1) is part of the task, not a time limit from outside:
    /// reaching it without an answer ends the episode as a failure, reported as terminated
    /// (Gymnasium's `truncated` is for limits outside the MDP). Multi-turn envs pass through.
    pub fn step(&mut self, a: ActionId) -> (StepInfo, bool, bool) {
        let s = self.env.step_fast(a);
        let (terminated, truncated) = match self.spec.turn {
            Turn::Single => (s.done || s.truncated, false),
            Turn::Multi => (s.done, s.truncated),
        };
        (s, terminated, truncated)
    }
}

/// The message of a step before the first reset (Python raises it as `envdist.ResetNeeded`,
/// a `RuntimeError` that is also Gymnasium's `ResetNeeded`).
pub const RESET_NEEDED: &str =
    "step() before reset(): call reset() (or reset(seed=...)) to start an episode first";

/// Refuse a step of an env whose first episode was never started.
pub fn check_started(slot: &Slot) -> PyResult<()> {
    if slot.started {
        Ok(())
    } else {
        Err(PyRuntimeError::new_err(RESET_NEEDED))
    }
}

/// Check an action index.
pub fn action(index: i64) -> PyResult<ActionId> {
    usize::try_from(index)
        .ok()
        .and_then(ActionId::new)
        .ok_or_else(|| {
            value_error(format!(
                "action: expected an index from 0 to {} or an action name, found {index}",
                NUM_ACTIONS - 1
            ))
        })
}

/// Read an action from text the way a VLM writes it (`"left"`, `"<answer>answer_3</answer>"`),
/// by its names alone (an env's `parse_action` also reads its answers in words); `ValueError`
/// on text that names no action or several.
#[pyfunction]
pub fn parse_action(text: &str) -> PyResult<usize> {
    ActionId::parse_text(text)
        .map(ActionId::index)
        .map_err(value_error)
}

/// The action names in index order.
#[pyfunction]
pub fn action_names() -> Vec<String> {
    ActionId::all().map(ActionId::name).collect()
}

/// One environment of the suite (used by `envdist.EnvdistEnv`).
#[pyclass(module = "envdist._envdist")]
pub struct Env {
    slot: Mutex<Slot>,
}

impl Env {
    fn slot(&mut self) -> &mut Slot {
        self.slot.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

fn image<'py>(py: Python<'py>, env: &SuiteEnv) -> PyResult<Bound<'py, PyArray3<u8>>> {
    let f = env.frame();
    PyArray1::from_slice(py, &f.data).reshape([f.height as usize, f.width as usize, 3])
}

#[pymethods]
impl Env {
    #[new]
    #[pyo3(signature = (env_id, harness = "H4", scale = None, canvas = 64))]
    fn new(env_id: &str, harness: &str, scale: Option<u32>, canvas: u32) -> PyResult<Self> {
        let s = suite::suite(canvas)?;
        let (spec, env) = suite::make(&s, env_id, "env_id")?;
        let harness = suite::harness(harness)?;
        let scale = suite::scale(&spec, scale)?;
        Ok(Self {
            slot: Mutex::new(Slot::new(spec, env, harness, scale)),
        })
    }

    /// The spec as JSON.
    fn spec_json(&mut self) -> PyResult<String> {
        to_json(&self.slot().spec)
    }

    /// Set the harness level and/or scale of the next episodes.
    #[pyo3(signature = (harness = None, scale = None))]
    fn configure(&mut self, harness: Option<&str>, scale: Option<u32>) -> PyResult<()> {
        let slot = self.slot();
        let h = harness.map(suite::harness).transpose()?;
        let s = match scale {
            Some(s) => Some(suite::scale(&slot.spec, Some(s))?),
            None => None,
        };
        if let Some(h) = h {
            slot.harness = h;
        }
        if let Some(s) = s {
            slot.scale = s;
        }
        Ok(())
    }

    /// Start an episode; returns `(image, legal_mask, seed)`.
    #[pyo3(signature = (seed = None))]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Option<u64>,
    ) -> PyResult<(Bound<'py, PyArray3<u8>>, u32, u64)> {
        let slot = self.slot();
        slot.start(seed);
        let legal = slot.env.legal_actions().0;
        let seed = slot.seed;
        Ok((image(py, &slot.env)?, legal, seed))
    }

    /// Apply an action; returns `(image, reward, terminated, truncated, success, abilities,
    /// legal_mask)`.
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        action: i64,
    ) -> PyResult<(
        Bound<'py, PyArray3<u8>>,
        f32,
        bool,
        bool,
        bool,
        Vec<&'static str>,
        u32,
    )> {
        let a = self::action(action)?;
        let slot = self.slot();
        check_started(slot)?;
        let (s, terminated, truncated) = slot.step(a);
        Ok((
            image(py, &slot.env)?,
            s.reward,
            terminated,
            truncated,
            s.success,
            s.abilities,
            s.legal.0,
        ))
    }

    /// The harness text channels present at this episode's level:
    /// `(observation, state, hints, rules)`, `None` for a dropped channel.
    #[allow(clippy::type_complexity)]
    fn harness_text(
        &mut self,
    ) -> (
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    ) {
        let t = self.slot().env.harness_text();
        (t.observation, t.state, t.hints, t.rules)
    }

    /// `(harness, scale, seed, steps, horizon)` of the current episode.
    fn episode(&mut self) -> (String, u32, u64, u32, u32) {
        let s = self.slot();
        (
            s.harness.to_string(),
            s.env.scale(),
            s.seed,
            s.env.steps(),
            s.env.horizon(),
        )
    }

    /// The built-in solver's action now (`None` once the episode is over).
    fn oracle_action(&mut self) -> Option<usize> {
        self.slot().env.oracle_action().map(ActionId::index)
    }

    /// The action `text` names in this env's current state: a single-turn env reads its
    /// answers in words (`3`, `yes`, `left`, `red`), every env the action names; `ValueError`
    /// naming the env's answers otherwise.
    fn parse_action(&mut self, text: &str) -> PyResult<usize> {
        parse_in(&self.slot().env, text)
            .map(ActionId::index)
            .map_err(value_error)
    }

    /// What each answer action means now: `(action index, [its words, canonical first])`.
    fn answers(&mut self) -> Vec<(usize, Vec<String>)> {
        answer_words(&self.slot().env)
    }
}

/// The action `text` names in `env`'s current state ([`envdist_core::AnswerVocabulary::parse`]).
pub fn parse_in(env: &SuiteEnv, text: &str) -> Result<ActionId, ParseActionTextError> {
    env.answer_vocabulary().parse(text)
}

/// What `env`'s answer actions mean now, by action index: each meaning's canonical phrase.
fn answer_words(env: &SuiteEnv) -> Vec<(usize, Vec<String>)> {
    env.answer_vocabulary()
        .answers()
        .iter()
        .map(|(a, ms)| (a.index(), ms.iter().map(|m| m.phrase()).collect()))
        .collect()
}
