//! What a selection chose and what it covers.

use envdist_core::EnvId;
use serde::{Deserialize, Serialize};

use super::sources::SelectionId;

/// Summary of one selection (for the report).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionSummary {
    /// Which selection.
    pub name: SelectionId,
    /// Chosen env ids in pick order.
    pub envs: Vec<EnvId>,
    /// Abilities covered.
    pub covered: usize,
    /// Abilities the allowed pool covers.
    pub coverable: usize,
    /// Mean pairwise gradient cosine inside the selection.
    pub mean_pairwise_cosine: Option<f32>,
    /// Number of pairs with cosine below -0.1 inside the selection.
    pub conflicting_pairs: usize,
    /// Certified gap to the optimum of the objective, where a bound holds.
    #[serde(default)]
    pub certificate_gap: Option<f32>,
    /// Anything the selection had to give up (e.g. the zero-gradient exclusion).
    #[serde(default)]
    pub note: Option<String>,
}
