//! `cargo xtask experiment`: the paper's study end to end.
//!
//! Stages (each cached under the run directory, see [`stage`]): pool -> profiles -> warm-up
//! model + per-env gradients -> selections -> training arms x seeds -> evaluation -> report.

pub mod config;
pub mod results;
pub mod stage;
