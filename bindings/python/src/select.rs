//! AES selection from numpy arrays or from the files the CLI reads.

use std::path::PathBuf;

use envdist_core::{EnvId, GradientSet, ProfileSet};
use envdist_selection::{Problem, SelectConfig, Selection, SparseCounts, read_counts_npy, select};
use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use serde::Serialize;

use crate::errors::{file_error, to_json, value_error};

fn json_arg<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> PyResult<T> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let v = envdist_core::invalid_from_serde(e.path().to_string(), &e.inner().to_string());
        value_error(format!("{what}: {v}"))
    })
}

/// What `select_json` returns: the selection as the CLI writes it, and the certificate's
/// one-line summary and bound explanation (Rust's `Display` and `BoundKind::explanation`).
#[derive(Serialize)]
struct Out<'a> {
    selection: &'a Selection,
    certificate_summary: Option<String>,
    certificate_explanation: Option<&'static str>,
}

/// `SelectConfig::default()` as JSON: every option with its default.
#[pyfunction]
pub fn select_defaults_json() -> PyResult<String> {
    to_json(&SelectConfig::default())
}

fn select_error(e: envdist_selection::SelectError) -> PyErr {
    match e {
        envdist_selection::SelectError::File(f) => file_error(&f),
        other => value_error(other),
    }
}

/// Run AES. The pool comes from exactly one of: `counts` (an env x ability matrix, with
/// optional `env_ids` / `abilities` names), `profiles_json` (a `ProfileSet`), `profiles_path`
/// (profiles.json) or `counts_npy` (a .npy matrix). Gradients, optional, from `gradients` (an
/// env x dim matrix in pool order) or `gradients_path` (safetensors, matched by env id).
/// Returns `{"selection": <Selection>, "certificate_summary", "certificate_explanation"}` as
/// JSON.
#[pyfunction]
#[pyo3(signature = (config_json, counts = None, env_ids = None, abilities = None, profiles_json = None, profiles_path = None, counts_npy = None, gradients = None, gradients_path = None))]
#[allow(clippy::too_many_arguments)]
pub fn select_json(
    py: Python<'_>,
    config_json: &str,
    counts: Option<PyReadonlyArray2<'_, f32>>,
    env_ids: Option<Vec<String>>,
    abilities: Option<Vec<String>>,
    profiles_json: Option<&str>,
    profiles_path: Option<PathBuf>,
    counts_npy: Option<PathBuf>,
    gradients: Option<PyReadonlyArray2<'_, f32>>,
    gradients_path: Option<PathBuf>,
) -> PyResult<String> {
    let config: SelectConfig = json_arg("select config", config_json)?;
    let ids = env_ids.map(|v| v.into_iter().map(EnvId).collect());
    let mut problem = match (counts, profiles_json, profiles_path, counts_npy) {
        (Some(c), None, None, None) => {
            let [rows, cols] = [c.shape()[0], c.shape()[1]];
            let dense = c.as_slice().map_err(value_error)?;
            let sparse =
                SparseCounts::from_dense(rows, cols, dense, "profiles").map_err(select_error)?;
            Problem::from_counts(sparse, ids, abilities).map_err(select_error)?
        }
        (None, Some(text), None, None) => {
            let set: ProfileSet = json_arg("profiles", text)?;
            Problem::from_profiles(&set, None).map_err(select_error)?
        }
        (None, None, Some(path), None) => {
            let set = ProfileSet::read(&path).map_err(|e| file_error(&e))?;
            Problem::from_profiles(&set, None).map_err(select_error)?
        }
        (None, None, None, Some(path)) => {
            let sparse = read_counts_npy(&path).map_err(select_error)?;
            Problem::from_counts(sparse, ids, abilities).map_err(select_error)?
        }
        _ => {
            return Err(value_error(
                "profiles: expected exactly one of an array, a profile dict or a file path",
            ));
        }
    };
    match (gradients, gradients_path) {
        (Some(g), None) => {
            let [rows, dim] = [g.shape()[0], g.shape()[1]];
            if rows != problem.n_envs() {
                return Err(value_error(format!(
                    "gradients: expected {} rows (one per environment of the profiles), found {rows}",
                    problem.n_envs()
                )));
            }
            let values = g.as_slice().map_err(value_error)?.to_vec();
            problem = problem
                .with_gradient_rows(dim, values)
                .map_err(select_error)?;
        }
        (None, Some(path)) => {
            let g = GradientSet::read(&path).map_err(|e| file_error(&e))?;
            // A row the profiles lack (or the other way round): name the file too.
            problem = problem.with_gradients(&g).map_err(|e| match e {
                envdist_selection::SelectError::File(f) => file_error(&f),
                other => value_error(format!("{}: {other}", path.display())),
            })?;
        }
        (None, None) => {}
        (Some(_), Some(_)) => {
            return Err(value_error(
                "gradients: expected an array or a file path, not both",
            ));
        }
    }
    let selection = py
        .detach(|| select(&problem, &config))
        .map_err(select_error)?;
    let cert = selection.certificate.as_ref();
    to_json(&Out {
        selection: &selection,
        certificate_summary: cert.map(ToString::to_string),
        certificate_explanation: cert.map(|c| c.kind.explanation()),
    })
}
