//! One world as the experimenter has it before any arm trains, drawn from one seed: what the
//! selections (`arms.rs`) and the descriptors (`measure.rs`) both start from.

use envdist_core::{Checked, GradientSet, ProfileSet};
use envdist_world::{Learner, World, WorldConfig, annotate, observe_gradients};

/// One world as the experimenter has it before any arm trains: its base, the profiles
/// annotated on it and the gradients observed at the base, all drawn from one seed (the
/// selections and the descriptors both start from these).
pub struct Observed {
    /// The world.
    pub world: World,
    /// The learner every arm starts from.
    pub base: Learner,
    /// The annotated profiles.
    pub profiles: ProfileSet,
    /// The gradients observed at the base.
    pub grads: GradientSet,
    /// The seed all of it was drawn with.
    pub seed: u64,
}

impl Observed {
    /// Generate the world of `config` at `seed` and observe it.
    pub fn generate(config: &Checked<WorldConfig>, seed: u64) -> Self {
        let world = World::generate(config, seed);
        let base = Learner::base(&world);
        let profiles = annotate(&world, seed);
        let grads = observe_gradients(&world, &base, seed);
        Self {
            world,
            base,
            profiles,
            grads,
            seed,
        }
    }
}
