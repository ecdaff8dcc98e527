//! Stage `pool`: the pool subset (conflict twins kept together), the held-out set and the
//! control pool.

use envdist_core::EnvId;
use envdist_envs::Suite;
use serde::{Deserialize, Serialize};

use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::ExperimentConfig;
use crate::error::Result;
use crate::protocol::Split;

/// The pool and held-out sets the study uses.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PoolStage {
    /// In-pool env ids (the candidates of selection and the ID evaluation set).
    pub pool: Vec<EnvId>,
    /// Held-out env ids (OOD evaluation set).
    pub ood: Vec<EnvId>,
    /// Families in the pool.
    pub families: usize,
    /// Conflict pairs with both members in the pool.
    pub conflict_pairs: Vec<(EnvId, EnvId)>,
    /// The control pool: the pool without the rule-inverted member of every conflict pair
    /// (mirrored controls, negated goals), so no two environments ask for opposite actions
    /// on the same pixels by design.
    pub control: Vec<EnvId>,
}

impl PoolStage {
    /// Every evaluated environment: the pool, then the held-out set.
    pub fn evaluated(&self) -> Vec<EnvId> {
        self.pool.iter().chain(&self.ood).cloned().collect()
    }
}

/// Step tags that mark a conflict twin's rule inversion.
pub const RULE_INVERSION_TAGS: [&str; 2] = ["mirrored-control", "negation"];

/// The stage's key: the master seed, the `pool` section and the split (which held-out set),
/// over the suite's code.
pub fn key(cfg: &ExperimentConfig, code: &CodeVersion) -> Result<StageKey> {
    let key = StageKey::new(code, &[Crate::Core, Crate::Envs])?
        .with("seed", &cfg.seed)?
        .with("pool", &cfg.pool)?;
    match cfg.protocol.split {
        // Development keys stay as they were before there was a split.
        Split::Development => Ok(key),
        split => key.with("split", &split),
    }
}

/// Choose the pool subset and the OOD set.
pub fn run(cfg: &ExperimentConfig, suite: &Suite) -> Result<PoolStage> {
    let pool = suite.pool_subset(cfg.pool.size, cfg.seed);
    let families = pool
        .iter()
        .filter_map(|id| suite.spec(id).map(|s| s.family.clone()))
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let control = pool
        .iter()
        .filter(|id| {
            suite.spec(id).is_some_and(|s| {
                !s.abilities
                    .iter()
                    .any(|a| RULE_INVERSION_TAGS.contains(&a.as_str()))
            })
        })
        .cloned()
        .collect();
    Ok(PoolStage {
        conflict_pairs: suite.conflict_pairs(&pool),
        control,
        // The held-out set: the development one, or the confirmatory one no pilot has played.
        ood: match cfg.protocol.split {
            Split::Development => suite.ood_subset(cfg.pool.ood_envs),
            Split::Confirmatory => suite.confirm_subset(cfg.pool.ood_envs),
        },
        families,
        pool,
    })
}
