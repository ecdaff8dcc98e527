//! One shared [`Suite`] per canvas size, and id lookup with a helpful error.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use envdist_core::{EnvId, EnvSpec, HarnessLevel, nearest_ids};
use envdist_envs::{Suite, SuiteEnv};
use pyo3::prelude::*;

use crate::errors::{key_error, to_json, value_error};

/// The suite rendering at `canvas` pixels (16..=128), built once per size.
pub fn suite(canvas: u32) -> PyResult<Arc<Suite>> {
    static SUITES: OnceLock<Mutex<BTreeMap<u32, Arc<Suite>>>> = OnceLock::new();
    let mut map = SUITES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = map.get(&canvas) {
        return Ok(s.clone());
    }
    let s = Arc::new(Suite::with_canvas(canvas).map_err(value_error)?);
    map.insert(canvas, s.clone());
    Ok(s)
}

/// The spec of `id`, or a `KeyError` naming the argument `arg` and the nearest ids
/// (`tictactoe/classic` -> `tic-tac-toe/classic`; `maze/nope` -> `maze/noise`, `maze/...`).
pub fn spec_of(suite: &Suite, id: &str, arg: &str) -> PyResult<EnvSpec> {
    use envdist_core::env::EnvFactory;
    let unknown = match suite.specs_of(&[EnvId::new(id)]) {
        Ok(mut specs) => return Ok(specs.remove(0)),
        Err(e) => e,
    };
    let all = suite.specs();
    let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    Err(key_error(format!(
        "{arg}: {unknown}: expected an id of the pool or a held-out set such as `maze/classic` (envdist.env_ids() lists all {}); the nearest: {}",
        all.len(),
        nearest_ids(id, &ids).join(", ")
    )))
}

/// A fresh environment of `id` (the argument `arg`, for the message of an unknown id).
pub fn make(suite: &Suite, id: &str, arg: &str) -> PyResult<(EnvSpec, SuiteEnv)> {
    let spec = spec_of(suite, id, arg)?;
    let env = suite
        .make_env(&spec.id)
        .map_err(|e| key_error(e.to_string()))?;
    Ok((spec, env))
}

/// Parse a harness level (`"H2"`, `"2"`).
pub fn harness(text: &str) -> PyResult<HarnessLevel> {
    text.parse().map_err(value_error)
}

/// A scale for `spec`: `None` is the middle of the range; others must lie inside it.
pub fn scale(spec: &EnvSpec, scale: Option<u32>) -> PyResult<u32> {
    match scale {
        None => Ok(spec.scale.mid()),
        Some(s) => spec
            .scale
            .check(&spec.id, s)
            .map_err(|e| value_error(e.to_string())),
    }
}

/// Every spec (pool first, then the held-out OOD set, then the confirmatory set), as a JSON
/// list.
#[pyfunction]
pub fn specs_json() -> PyResult<String> {
    let s = suite(64)?;
    let mut specs = s.pool_specs();
    specs.extend(s.ood_specs());
    specs.extend(s.confirm_specs());
    to_json(&specs)
}
