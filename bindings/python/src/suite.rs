//! One shared [`Suite`] per canvas size, and id lookup with a helpful error.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use envdist_core::{EnvId, EnvSpec, HarnessLevel};
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

/// The spec of `id`, or a `KeyError` that suggests ids of the same family or with the same
/// variant.
pub fn spec_of(suite: &Suite, id: &str) -> PyResult<EnvSpec> {
    if let Some(s) = suite.spec(&EnvId::new(id)) {
        return Ok(s.clone());
    }
    let (family, variant) = id.split_once('/').unwrap_or((id, ""));
    let all = envdist_core::env::EnvFactory::specs(suite);
    let mut near: Vec<&str> = all
        .iter()
        .filter(|s| s.family == family || (!variant.is_empty() && s.variant == variant))
        .map(|s| s.id.as_str())
        .take(8)
        .collect();
    if near.is_empty() {
        near = all.iter().map(|s| s.id.as_str()).take(5).collect();
    }
    Err(key_error(format!(
        "unknown environment {id:?}: expected an id `family/variant` of the pool or the held-out set (envdist.env_ids() lists all {}), e.g. {}",
        all.len(),
        near.join(", ")
    )))
}

/// A fresh environment of `id`.
pub fn make(suite: &Suite, id: &str) -> PyResult<(EnvSpec, SuiteEnv)> {
    let spec = spec_of(suite, id)?;
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
        Some(s) if spec.scale.contains(s) => Ok(s),
        Some(s) => Err(value_error(format!(
            "scale for {}: expected {}..={}, found {s}",
            spec.id, spec.scale.min, spec.scale.max
        ))),
    }
}

/// Every spec (pool first, then held-out), as a JSON list.
#[pyfunction]
pub fn specs_json() -> PyResult<String> {
    let s = suite(64)?;
    let mut specs = s.pool_specs();
    specs.extend(s.ood_specs());
    to_json(&specs)
}
