//! One world of a cell: every arm trained on it, and the world measured the way the record
//! measures a pool.

use std::collections::BTreeMap;

use envdist_core::Checked;
use envdist_world::WorldConfig;
use serde::{Deserialize, Serialize};

use super::WorldMapConfig;
use super::arms::{GainSplit, Picks, WorldArm, names, split, split_arms, train};
use super::measure::{self, Descriptors};
use super::observed::Observed;
use crate::error::Result;

/// One world of a cell: every arm's score and the world's descriptors.
pub(super) fn run_world(
    cfg: &WorldMapConfig,
    world_cfg: &Checked<WorldConfig>,
    seed: u64,
    rivals: bool,
) -> Result<ArmScores> {
    let observed = Observed::generate(world_cfg, seed);
    let picks = Picks::make(cfg, &observed)?;
    let (world, base) = (&observed.world, &observed.base);
    let mut scores = BTreeMap::new();
    let n = names();
    scores.insert(n.base.to_string(), 100.0 * base.score(world));
    let mut arms = WorldArm::main();
    if rivals {
        arms.extend(WorldArm::rivals());
    }
    let mut below_h4 = None;
    let mut splits = BTreeMap::new();
    let before = base.successes(world);
    for arm in &arms {
        let (learner, below) = train(world, base, arm, picks.of(arm.pick), cfg, seed)?;
        if arm.name == n.random_k_hdc {
            below_h4 = Some(below);
        }
        if split_arms().contains(&arm.name.as_str()) {
            let after = learner.successes(world);
            splits.insert(
                arm.name.clone(),
                split(world, &before, &after, picks.of(arm.pick)),
            );
        }
        scores.insert(arm.name.clone(), 100.0 * learner.score(world));
    }
    let mut descriptors = measure::describe(cfg, &observed)?;
    descriptors.hdc_below_h4 = below_h4;
    descriptors.oracle_exact = picks.oracle_exact;
    Ok(ArmScores {
        seed,
        scores,
        splits,
        world: descriptors,
    })
}

/// One world's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmScores {
    /// The world's seed.
    pub seed: u64,
    /// Every arm's whole-pool H4 success after training (points; `base` before any).
    pub scores: BTreeMap<String, f32>,
    /// The gains of [`split_arms`] by where they trained.
    pub splits: BTreeMap<String, GainSplit>,
    /// What the world looked like to an experimenter, and what its selections did.
    pub world: Descriptors,
}

impl ArmScores {
    /// The score of `arm`, if it ran.
    pub fn score(&self, arm: &str) -> Option<f32> {
        self.scores.get(arm).copied()
    }
}
