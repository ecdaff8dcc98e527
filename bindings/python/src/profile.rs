//! Ability profiles from a trainer's own log (chat JSONL, envdist trajectories or steps).

use std::path::PathBuf;

use envdist_core::env::EnvFactory;
use envdist_profiling::{MetaConfig, ProfilingError, TagSegmenter, profile_log, write_outputs};
use pyo3::prelude::*;
use serde::Serialize;

use crate::errors::{file_error, to_json, value_error};
use crate::suite;

#[derive(Serialize)]
struct Out<'a> {
    profiles: &'a envdist_core::ProfileSet,
    trajectories: usize,
    unreadable_turns: u64,
    dropped_episodes: &'a [String],
    replay: Option<&'a envdist_profiling::ReplayReport>,
    atomic_abilities: usize,
    segmenter: &'a str,
}

/// Profile the log at `path`: read it, replay untagged trajectories in the suite's
/// environments (`replay`), segment by tags (dropping `ignore_tags`), cluster into
/// meta-abilities. Writes profiles.json, abilities.dot and abilities.svg into `out` when
/// given. Returns JSON with the `ProfileSet` and what was read.
#[pyfunction]
#[pyo3(signature = (path, replay = true, ignore_tags = vec![], threshold = None, cooccurrence_weight = None, out = None))]
pub fn profile_log_json(
    py: Python<'_>,
    path: PathBuf,
    replay: bool,
    ignore_tags: Vec<String>,
    threshold: Option<f32>,
    cooccurrence_weight: Option<f32>,
    out: Option<PathBuf>,
) -> PyResult<String> {
    let mut meta = MetaConfig::default();
    if let Some(t) = threshold {
        meta.threshold = t;
    }
    if let Some(w) = cooccurrence_weight {
        meta.cooccurrence_weight = w;
    }
    meta.validate().map_err(value_error)?;
    let suite = suite::suite(64)?;
    let segmenter = TagSegmenter::new(true, ignore_tags);
    let factory: Option<&dyn EnvFactory> = if replay { Some(suite.as_ref()) } else { None };
    let got = py
        .detach(|| profile_log(&path, &segmenter, &meta, factory))
        .map_err(|e| match e {
            ProfilingError::File(f) => file_error(&f),
            other => value_error(other),
        })?;
    if let Some(dir) = out {
        write_outputs(&got.profile, &dir).map_err(|e| file_error(&e))?;
    }
    to_json(&Out {
        profiles: &got.profile.profiles,
        trajectories: got.trajectories,
        unreadable_turns: got.unreadable_turns,
        dropped_episodes: &got.dropped_episodes,
        replay: got.replay.as_ref(),
        atomic_abilities: got.profile.atomic_abilities(),
        segmenter: &got.profile.segmenter,
    })
}
