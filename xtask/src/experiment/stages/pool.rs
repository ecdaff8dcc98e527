//! Stage `pool`: the pool subset (conflict twins kept together) and the held-out set.

use envdist_core::EnvId;
use envdist_envs::Suite;
use serde::{Deserialize, Serialize};

/// What the pool stage depends on.
#[derive(Debug, Clone, Serialize)]
pub struct PoolKey {
    /// Master seed (orders families for a subset).
    pub seed: u64,
    /// Pool environments wanted (200 = the whole pool).
    pub pool_size: usize,
    /// Held-out environments wanted (0 = all).
    pub ood_envs: usize,
    /// Canvas side.
    pub canvas: u32,
}

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

/// Step tags that mark a conflict twin's rule inversion.
pub const RULE_INVERSION_TAGS: [&str; 2] = ["mirrored-control", "negation"];

/// Choose the pool subset and the OOD set.
pub fn run(key: &PoolKey, suite: &Suite) -> anyhow::Result<PoolStage> {
    let pool = suite.pool_subset(key.pool_size, key.seed);
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
        ood: suite.ood_subset(key.ood_envs),
        families,
        pool,
    })
}
