//! The one error type of the crate.

use envdist_core::{EnvId, FileError, InvalidValue};

/// Everything that can go wrong building a selection problem or running a selection.
/// Messages name the source (file or `config`), the field and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// Reading or decoding a file failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// A well-formed value that is not acceptable (config field, matrix entry, shape, ...).
    #[error("{source_name}: {value}")]
    Invalid {
        /// The file path, or `config` / `problem` / `synthetic` for in-memory values.
        source_name: String,
        /// The field, what would have been accepted, what was there.
        value: InvalidValue,
    },
    /// A profiled environment has no gradient row.
    #[error("gradients: no row for environment {env:?}, which the profiles list")]
    MissingGradient {
        /// The environment without a row.
        env: EnvId,
    },
    /// A gradient row belongs to an environment the profiles do not list.
    #[error("gradients: row for environment {env:?}, which the profiles do not list")]
    UnknownGradientRow {
        /// The unmatched row's environment.
        env: EnvId,
    },
    /// The full-coverage constraint cannot be met within the budget.
    #[error(
        "full coverage is infeasible: k = {k} leaves {budget} free picks but covering the {uncovered} \
         still-uncovered abilities takes {needed} greedy picks (at least {lower_bound}); raise k to \
         {suggested_k} or turn `require_full_coverage` off"
    )]
    CoverageInfeasible {
        /// The budget.
        k: usize,
        /// Picks left after must-include picks.
        budget: usize,
        /// Abilities coverable by the pool but not by the must-include picks.
        uncovered: usize,
        /// Picks a greedy set cover needs.
        needed: usize,
        /// A lower bound on any cover (uncovered abilities / most abilities of one env).
        lower_bound: usize,
        /// The smallest k for which the greedy cover fits.
        suggested_k: usize,
    },
}

impl SelectError {
    /// Shorthand for [`SelectError::Invalid`].
    pub fn invalid(
        source_name: impl Into<String>,
        field: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Self::Invalid {
            source_name: source_name.into(),
            value: InvalidValue::new(field, expected, found.into()),
        }
    }
}
