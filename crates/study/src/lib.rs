//! # envdist-study
//!
//! The paper's study as a library: an environment pool, its ability profiles, a base model
//! (behaviour clone of the solvers), per-environment gradients, the AES selections and their
//! baselines, training arms (AES, HDC, their ablations, the rivals, online re-selection, a
//! control pool) over several paired seeds, greedy evaluation at H4, and the analysis
//! (two-level bootstrap intervals, verdicts, detection limits) written as `results.json`,
//! `REPORT.md` and figures. `cargo xtask experiment` is a thin command line over
//! [`run_and_report`]; `cargo xtask conflict-estimates` over [`tools::conflict`], `cargo xtask
//! profile` over [`tools::profile`].
//!
//! Main design decision: every stage is a pure function of the configuration sections it
//! reads, the outputs of the stages before it and the code of the crates it runs, and its
//! cache key is exactly those (the stages' `key` functions, [`cache`]). A run directory
//! ([`layout`]) therefore resumes where an interrupted run stopped, and a changed field or
//! crate recomputes what depends on it and nothing else. The library draws nothing: progress goes to an
//! [`Observer`] the caller passes in. Every arm is one card in [`model::arms`]: the stages,
//! the analysis, the report and the figures read the cards and name no arm.
//!
//! This crate is, with xtask and the Python binding, one of the composition roots allowed to
//! use every library crate.
//!
//! ```no_run
//! use envdist_core::Validate;
//! use envdist_study::{ExperimentConfig, Preset, Silent};
//!
//! let config = ExperimentConfig::preset(Preset::Smoke).checked()?;
//! let results = envdist_study::run_and_report(&config, "runs/smoke".as_ref(), "example", &Silent)?;
//! println!("{}", envdist_study::report::terminal_summary(&results));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

// The floors, bottom up: `model` (vocabulary) and `config`/`presets`/`overlay` (what a run
// is asked); `stats`, `results` and `analysis` (numbers from records); `cache`, `code`,
// `layout`, `observer`, `error` (the run directory's machinery); `stages` and `pipeline` (the
// study); `report` and `figures` (what it writes); `tools` (what other commands reuse). Only
// what xtask and the Python binding use is public.
mod analysis;
pub mod cache;
#[cfg(test)]
mod card_tests;
mod code;
pub mod config;
pub mod error;
mod figures;
pub mod layout;
pub mod model;
pub mod observer;
pub mod overlay;
mod pipeline;
#[cfg(test)]
mod power_tests;
mod preconditions;
pub mod presets;
pub mod protocol;
pub mod report;
mod results;
mod stages;
mod stats;
#[cfg(test)]
mod tests;
pub mod tools;

use std::path::Path;

pub use config::{CheckedConfig, ExperimentConfig, Preset};
pub use error::{Result, StudyError};
pub use layout::{RunLayout, Stage};
pub use model::Results;
pub use observer::{Observer, Progress, Silent};
pub use pipeline::{run_experiment, run_experiment_with};

/// Run the study into `out` and write `results.json`, `REPORT.md` and the figures; `command`
/// is the command line the report names as the one that made it.
pub fn run_and_report(
    cfg: &CheckedConfig,
    out: &Path,
    command: &str,
    observer: &dyn Observer,
) -> Result<Results> {
    let results = run_experiment(cfg, out, observer)?;
    write_report(&results, &RunLayout::new(out)?, command, observer)?;
    Ok(results)
}

/// Write `results.json`, the figures and `REPORT.md` of `results` into `layout`.
pub fn write_report(
    results: &Results,
    layout: &RunLayout,
    command: &str,
    observer: &dyn Observer,
) -> Result<()> {
    envdist_core::io::write_json_atomic(layout.results_file(), results)?;
    let figures = figures::draw_all(results, layout, observer);
    envdist_core::io::write_atomic(
        layout.report_file(),
        report::render(results, &figures, command).as_bytes(),
    )?;
    Ok(())
}
