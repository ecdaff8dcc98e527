//! # envdist-selection
//!
//! AES (Ability-aware Environment Selection): choose `k` environments from a pool by greedy
//! maximisation of `w_c·NewCoverage − w_r·Redundancy − w_x·Conflict`, where Conflict comes
//! from the cosine of per-environment gradients. It sees ability profiles and a gradient
//! matrix (core's [`ProfileSet`](envdist_core::ProfileSet) and
//! [`GradientSet`](envdist_core::GradientSet), a numpy count matrix, or a synthetic pool)
//! and nothing else.
//!
//! Main design decision: the terms have a reference definition behind one small trait
//! ([`Term`]), but the optimizers run on one incremental engine in which each candidate
//! caches its conflict accumulator and folds in only the picks made since it was last
//! evaluated (`O(dim)` each). With the default max aggregation and clamped penalties every
//! candidate's gain can only fall as the set grows, so lazy greedy (a priority queue of
//! stale upper bounds) is exact: it returns the naive greedy selection bit for bit, ties to
//! the lowest environment index. For objectives whose gains can rise (mean aggregation,
//! unclamped penalties) lazy greedy runs naive instead and says so. No dense `n x n` matrix
//! is ever formed.
//!
//! Every selection carries a [`Certificate`]: an upper bound on the best objective any
//! feasible selection of `k` could reach, read off the ranking's prefixes (the classic online
//! bound for coverage, with corrections for redundancy; [`BoundKind`] says when it holds), so a
//! user sees "within X% of optimal" rather than greedy gains alone. On small pools
//! [`solve_exact`] finds the optimum itself by branch and bound.
//!
//! ```
//! use envdist_selection::{SelectConfig, select, synthetic};
//!
//! let pool = synthetic::generate(&synthetic::SyntheticConfig { n: 300, seed: 7, ..Default::default() })?;
//! let aes = select(&pool.problem, &SelectConfig::aes(20))?;
//! let naive = select(&pool.problem, &SelectConfig {
//!     optimizer: envdist_selection::Optimizer::Naive,
//!     ..SelectConfig::aes(20)
//! })?;
//! assert_eq!(aes.ranking, naive.ranking); // lazy is exact here
//! assert!(!aes.lazy_fell_back && aes.gains_non_increasing);
//! println!("{} of {} abilities covered; objective {}", aes.covered, aes.abilities, aes.objective);
//! let certificate = aes.certificate.as_ref().expect("on by default");
//! assert!(certificate.upper_bound.unwrap() >= aes.objective);
//! println!("{certificate}"); // within X% of optimal (objective .. <= OPT <= ..); coverage ..
//! # Ok::<(), envdist_selection::SelectError>(())
//! ```
#![warn(missing_docs)]

pub mod baselines;
pub mod certificate;
pub mod config;
pub mod error;
pub mod exact;
#[cfg(test)]
mod fuzz_tests;
pub mod greedy;
pub mod npy;
pub mod objective;
pub mod problem;
pub mod synthetic;

pub use baselines::{Baseline, baseline};
pub use certificate::{BoundKind, Certificate};
pub use config::{
    AbilityWeighting, Aggregation, CheckedSelectConfig, EXACT_MAX_ENVS, ExactLimits, Optimizer,
    SelectConfig, Terms, TieBreak, Weights,
};
pub use error::SelectError;
pub use exact::{ExactSolution, ExactStatus, solve_exact};
pub use greedy::{
    Relaxation, SELECTION_SCHEMA_VERSION, Selection, TermTotals, select, select_checked,
};
pub use npy::{SparseCounts, parse_counts_npy, read_counts_npy, read_index_npy};
pub use objective::{
    Conflict, NewCoverage, PickReason, Redundancy, StepTrace, Term, evaluate_ranking,
};
pub use problem::{Problem, UnitGradients};
pub use synthetic::{PlantedCluster, SyntheticConfig, SyntheticPool};
