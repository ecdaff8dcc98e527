//! # envdist-world
//!
//! A skill world where the paper's premises hold by construction, so that what AES and HDC
//! do can be measured against ground truth. `K` abilities; families of environments, each
//! requiring a known set of them, some with a rule-inverted twin (the same abilities, an
//! opposed direction on some); base difficulties; harness levels that lower what bare pixels
//! ask for; scales that raise it. A [`Learner`] whose success on an environment follows from
//! the parameters the environment's skill vector reads, and whose training on a mixture moves
//! every environment by the inner product of their vectors (transfer along shared abilities
//! and within a family, interference between twins, a finite capacity), with diminishing
//! returns. An experimenter sees the world as envdist sees a real pool: [`annotate`]'s
//! profiles (an annotator that misses and invents tags) and [`observe_gradients`]'s sampled
//! gradients (exact in the world, observed with noise), both in core's types, so the real
//! `envdist-selection` and `envdist-curriculum` run on it unchanged.
//!
//! Main design decision: learning is the *expected* policy-gradient step of the task played,
//! `learning_rate * p (1 - p)` along its skill vector, never a function of the episode's
//! random outcome. So the gradient the conflict term reads is exactly the direction training
//! moves (premise by construction), a run's only noise is its sampler's draws, and the same
//! dynamics without sampling ([`Learner::practise`]) value any subset cheaply: the
//! [`oracle`] and the transfer [`Probe`]s use it.
//!
//! Every knob is a field of [`WorldConfig`] with a documented default, checked once; the
//! generator draws every random number whatever the knobs say, so worlds of one seed are
//! paired across a sweep; streams are keyed by seed and environment id, so nothing depends on
//! thread scheduling.
//!
//! ```
//! use envdist_core::{HarnessLevel, Validate};
//! use envdist_world::{Learner, Practice, World, WorldConfig, annotate, observe_gradients};
//!
//! let world = World::generate(&WorldConfig::default().checked()?, 7);
//! let profiles = annotate(&world, 7); // core's ProfileSet, noisy tags
//! let base = Learner::base(&world);
//! let gradients = observe_gradients(&world, &base, 7); // core's GradientSet
//! assert_eq!((profiles.profiles.len(), gradients.len()), (world.len(), world.len()));
//! // Training on an environment helps it, and its family more than strangers.
//! let mut trained = base.clone();
//! trained.practise(&world, &[Practice { env: 0, level: HarnessLevel::H4, weight: 1.0 }], 600.0, 16);
//! assert!(trained.h4_success(&world, 0) > base.h4_success(&world, 0));
//! assert!(world.kernel(0, 1) > world.kernel(0, world.len() - 1));
//! # Ok::<(), envdist_core::InvalidValue>(())
//! ```
#![warn(missing_docs)]

mod config;
mod error;
mod learner;
mod observe;
mod references;
mod world;

pub use config::{KNOBS, WorldConfig};
pub use error::WorldError;
pub use learner::{Learner, Practice, Training};
pub use observe::{
    Probe, ProbeLevels, SplitHalf, annotate, measured, measured_transfer, observe_gradients,
    split_half,
};
pub use references::{OracleChoice, OracleSearch, lookahead_pick, oracle, subset_value};
pub use world::{Family, World, WorldEnv};
