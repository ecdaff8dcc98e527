//! Library half of xtask: the experiment pipeline (stages, presets, results, report), kept in
//! library code so that tests can drive it directly; `main.rs` is only the CLI.
#![warn(missing_docs)]

pub mod experiment;
pub mod plot;
