//! The study's vocabulary, and nothing else: the arms and claims with their cards
//! ([`arms`]: the one file that names an arm), the selections an arm trains on, and the record
//! types of `results.json` ([`record`]). The ground floor of the crate: it computes nothing,
//! and every other module of the study builds on it.

pub mod arms;
pub mod record;

pub use arms::{
    Arm, CONTROL_PAIRS, Card, ClaimId, EnvSource, FLAGSHIP, HDC_CLAIM_ARMS, HINT_PAIR, ONLINE_PAIR,
    Ordering, RETENTION_ARMS, Recipe, Role, SCALING_ARMS, SCALING_RECIPE, SelectionId,
};
pub use record::*;
