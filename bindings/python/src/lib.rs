//! # envdist-python
//!
//! The `envdist._envdist` extension module behind the `envdist` Python package. A composition
//! root like xtask: it sees every library crate except the trainer (no burn in the wheel) and
//! does only glue — converting values, releasing the GIL around Rust work, and turning Rust
//! errors into Python exceptions whose messages name the bad value. The Python-facing API
//! (Gymnasium classes, ticket objects, adapters) lives in `python/envdist/`.
//!
//! Main design decision: structured values cross the boundary as JSON text (specs, configs,
//! sampler states, selections, profiles) and bulk data as numpy arrays. The vector env writes
//! frames and step results straight into numpy arrays that Python allocated once, from rayon
//! threads with the GIL released, so Python reads them without a copy.

mod bench;
mod env;
mod errors;
mod profile;
mod sampler;
mod select;
mod suite;
mod vector;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _envdist(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<env::Env>()?;
    m.add_class::<vector::VectorEnv>()?;
    m.add_class::<sampler::Sampler>()?;
    m.add_function(wrap_pyfunction!(suite::specs_json, m)?)?;
    m.add_function(wrap_pyfunction!(env::parse_action, m)?)?;
    m.add_function(wrap_pyfunction!(env::action_names, m)?)?;
    m.add_function(wrap_pyfunction!(sampler::sampler_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(sampler::default_config_json, m)?)?;
    m.add_function(wrap_pyfunction!(select::select_json, m)?)?;
    m.add_function(wrap_pyfunction!(select::select_defaults_json, m)?)?;
    m.add_function(wrap_pyfunction!(profile::profile_log_json, m)?)?;
    m.add_function(wrap_pyfunction!(bench::bench_native, m)?)?;
    m.add("NUM_ACTIONS", envdist_core::NUM_ACTIONS)?;
    m.add("MIN_CANVAS", envdist_envs::MIN_CANVAS)?;
    m.add("MAX_CANVAS", envdist_envs::MAX_CANVAS)?;
    // The workspace version, which is also the wheel's (maturin reads it from Cargo.toml).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
