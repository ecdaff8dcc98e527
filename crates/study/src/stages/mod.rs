//! The study's stages, one file each. A stage has a `key` function (the configuration
//! sections it reads, the upstream stages whose outputs it consumes and the crates whose code
//! it runs: nothing else) and a `run` function that returns a serialisable output, which
//! [`crate::cache::cached`] stores under that key. [`crate::pipeline`] wires them.
//!
//! Everything that computes a cached output lives in this directory: its source hash is the
//! [`Crate::Stages`](crate::code::Crate::Stages) part of every key.

pub mod arms;
pub mod base;
pub mod eval;
pub mod gradients;
pub mod pool;
pub mod preconditions;
pub mod profiles;
pub mod selections;
pub mod transfer;

use envdist_core::{EnvId, EnvSpec};
use envdist_envs::Suite;

use envdist_core::EnvFactory;

use crate::error::Result;

/// The specs of `ids`, or an error naming the first unknown one (the suite's
/// [`EnvFactory::specs_of`]).
pub fn specs_of(suite: &Suite, ids: &[EnvId]) -> Result<Vec<EnvSpec>> {
    Ok(suite.specs_of(ids)?)
}
