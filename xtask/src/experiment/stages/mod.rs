//! The study's stages, one file each. A stage takes the slice of the configuration it depends
//! on (its cache key) and the outputs of earlier stages, and returns a serialisable output that
//! [`super::stage::RunDir::stage`] caches; [`super::run::run_experiment`] wires them.

pub mod arms;
pub mod base;
pub mod eval;
pub mod gradients;
pub mod pool;
pub mod profiles;
pub mod selections;

use anyhow::Context;
use envdist_core::{EnvId, EnvSpec};
use envdist_envs::Suite;
use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar with rate and ETA, labelled `what`.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "  {what:<28} [{{bar:30}}] {{pos}}/{{len}} {{per_sec}} ETA {{eta}} {{msg}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb
}

/// The specs of `ids`, or an error naming the first unknown one.
pub fn specs_of(suite: &Suite, ids: &[EnvId]) -> anyhow::Result<Vec<EnvSpec>> {
    ids.iter()
        .map(|id| {
            suite
                .spec(id)
                .cloned()
                .with_context(|| format!("unknown environment {id}"))
        })
        .collect()
}

/// `path` relative to `root` as text (stage outputs name their files relative to the run
/// directory, so a run directory can be moved).
pub fn relative(path: &std::path::Path, root: &std::path::Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
