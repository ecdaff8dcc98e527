//! The pilots of the pixel testbed's two bets (docs/experiments/BETS.md, where each design
//! and its go/no-go thresholds are written before it runs): `cargo xtask bet`.
//!
//! - [`compositional`]: bet 1, abilities that transfer by construction — does transfer follow
//!   the operation on the compositional sub-pool?
//! - [`scaffold`]: bet 2, a scaffold that carries over where reward is scarce — first, do the
//!   settings it needs (bare-pixel reward scarce, scaffolded reward not) exist?
//!
//! Both are development runs: their own master seeds and the development instances, never a
//! record's; each writes results.json and REPORT.md into its output directory.

pub mod compositional;
pub mod scaffold;
#[cfg(test)]
mod tests;

pub use compositional::{CompositionalPilot, PilotResults, run_compositional};
pub use scaffold::{ScaffoldResults, ScaffoldSearch, run_scaffold_search};

/// Schema version of the pilots' results.json.
pub const BET_SCHEMA_VERSION: u32 = 1;
