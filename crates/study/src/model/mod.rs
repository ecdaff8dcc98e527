//! The study's vocabulary, and nothing else: the arms and claims with their cards
//! ([`arms`]: the one file that names an arm), where an arm's environments come from
//! ([`sources`]), and the record types of `results.json`, a file a subject: [`runs`],
//! [`selections`], [`transfer`], [`preconditions`], [`analysis`] (with [`interval`]: a
//! statistic's interval and the verdict rules), and [`results`], the record as a whole. The
//! ground floor of the crate: it computes nothing, and every other module of the study builds
//! on it.

pub mod analysis;
pub mod arms;
pub mod interval;
pub mod preconditions;
pub mod results;
pub mod runs;
pub mod selections;
pub mod sources;
pub mod transfer;

pub use analysis::*;
pub use arms::{
    Arm, CONTROL_PAIRS, Card, ClaimId, FLAGSHIP, HDC_CLAIM_ARMS, HINT_PAIR, ONLINE_PAIR, Ordering,
    RETENTION_ARMS, Recipe, Role, SCALING_ARMS, SCALING_RECIPE,
};
pub use interval::*;
pub use preconditions::*;
pub use results::*;
pub use runs::*;
pub use selections::*;
pub use sources::{EnvSource, SelectionId};
pub use transfer::*;
