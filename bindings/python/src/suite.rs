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

/// The spec of `id`, or a `KeyError` that suggests the nearest ids (`tictactoe/classic` ->
/// `tic-tac-toe/classic`; `maze/nope` -> `maze/noise`, `maze/...`).
pub fn spec_of(suite: &Suite, id: &str) -> PyResult<EnvSpec> {
    use envdist_core::env::EnvFactory;
    let unknown = match suite.specs_of(&[EnvId::new(id)]) {
        Ok(mut specs) => return Ok(specs.remove(0)),
        Err(e) => e,
    };
    let all = suite.specs();
    let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    Err(key_error(format!(
        "{unknown}: expected an id `family/variant` of the pool or the held-out set (envdist.env_ids() lists all {}); the nearest: {}",
        all.len(),
        near_ids(id, &ids).join(", ")
    )))
}

/// Up to five of `ids` nearest to `id`: by edit distance between their letters and digits
/// (case and punctuation ignored), of the whole id or of family plus variant.
fn near_ids<'a>(id: &str, ids: &[&'a str]) -> Vec<&'a str> {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (family, variant) = id.split_once('/').unwrap_or((id, ""));
    let (nid, nfam, nvar) = (norm(id), norm(family), norm(variant));
    let mut scored: Vec<(usize, usize, &str)> = ids
        .iter()
        .map(|&cand| {
            let (f, v) = cand.split_once('/').unwrap_or((cand, ""));
            let nf = norm(f);
            // A family named by its first word (`count` for `count-objects`) is near too.
            let prefix = !nfam.is_empty() && nf.starts_with(&nfam[..]);
            let fam = edit_distance(&nfam, &nf).min(if prefix { 1 } else { usize::MAX });
            let parts = fam + edit_distance(&nvar, &norm(v));
            // The whole id (a misplaced slash), or family and variant apart; ties go to the
            // nearer family.
            (edit_distance(&nid, &norm(cand)).min(parts), fam, cand)
        })
        .collect();
    scored.sort();
    scored.into_iter().take(5).map(|(_, _, c)| c).collect()
}

/// Levenshtein distance between two character sequences.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
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
        Some(s) => spec
            .scale
            .check(&spec.id, s)
            .map_err(|e| value_error(e.to_string())),
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
