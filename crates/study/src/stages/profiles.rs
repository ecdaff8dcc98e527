//! Stage `profiles`: roll out the pool with two policies and profile it.

use envdist_core::HarnessLevel;
use envdist_envs::Suite;
use envdist_profiling::{
    Explorer, MetaConfig, NoisyOracle, PolicyMaker, RolloutConfig, TagSegmenter,
    profile_trajectories, rollout_pool, write_outputs,
};
use serde::{Deserialize, Serialize};

use super::pool::PoolStage;
use super::specs_of;
use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::ExperimentConfig;
use crate::error::Result;
use crate::layout::{RunLayout, Stage};
use crate::observer::Observer;

/// Step tags that mark a conflict twin's rule inversion rather than an ability an annotator
/// could see in a trajectory; the profiling stage ignores them.
pub const IGNORED_RULE_TAGS: [&str; 2] = super::pool::RULE_INVERSION_TAGS;

/// Profiles output (the profile set itself is `profiles.json` in the stage directory).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProfileStage {
    /// Atomic abilities seen.
    pub atomic_abilities: usize,
    /// Meta-abilities after clustering.
    pub meta_abilities: usize,
    /// Trajectories rolled out.
    pub trajectories: usize,
    /// Mean coverage cosine of conflict twins (profiles cannot tell them apart).
    pub twin_profile_cosine: Option<f32>,
}

/// The stage's key: the pool, the master seed, the `profiles` section and the ignored tags,
/// over the suite's and profiling's code.
pub fn key(cfg: &ExperimentConfig, code: &CodeVersion, pool: &StageKey) -> Result<StageKey> {
    StageKey::new(code, &[Crate::Core, Crate::Envs, Crate::Profiling])?
        .after("pool", pool)?
        .with("seed", &cfg.seed)?
        .with("profiles", &cfg.profiles)?
        .with("ignored_tags", &IGNORED_RULE_TAGS)
}

/// Roll out the pool with a noisy solver and an explorer, segment by the envs' tags (minus
/// the rule-inversion tags), cluster into meta-abilities, write the profile set (and its
/// graph) into the stage directory.
pub fn run(
    cfg: &ExperimentConfig,
    suite: &Suite,
    pool: &PoolStage,
    layout: &RunLayout,
    observer: &dyn Observer,
) -> Result<ProfileStage> {
    let specs = specs_of(suite, &pool.pool)?;
    let rollout = RolloutConfig {
        trajectories_per_env: cfg.profiles.trajectories,
        harness: HarnessLevel::H0,
        seed: cfg.seed ^ 0x5052_4f46,
    };
    let first: Box<PolicyMaker> = Box::new(|| Box::new(NoisyOracle::new(0.1)));
    let second: Box<PolicyMaker> = Box::new(|| Box::new(Explorer::new(0.5)));
    let progress = observer.progress("profiling rollouts (envs)", specs.len() as u64);
    let trajectories = rollout_pool(suite, &specs, &rollout, &*first, &*second, &|_| {
        progress.inc(1)
    })?;
    progress.finish();
    // The suite tags a twin's rule inversion (`mirrored-control`, `negation`); an annotator
    // segmenting trajectories into skills would not see it (same pixels, same moves), so we
    // profile without those tags: what conflict the profiles cannot see, gradients must.
    let segmenter = TagSegmenter::new(
        true,
        IGNORED_RULE_TAGS.iter().map(|t| t.to_string()).collect(),
    );
    let profile = profile_trajectories(&trajectories, &segmenter, &MetaConfig::default())?;
    write_outputs(&profile, &layout.stage_dir(Stage::Profiles))?;
    let mut twin_cos = Vec::new();
    for (a, b) in &pool.conflict_pairs {
        if let (Some(pa), Some(pb)) = (profile.profile(a), profile.profile(b)) {
            twin_cos.push(envdist_profiling::pipeline::coverage_cosine(pa, pb));
        }
    }
    crate::ensure!(
        layout.profiles_file().exists(),
        "profiling wrote no {}",
        layout.profiles_file().display()
    );
    Ok(ProfileStage {
        atomic_abilities: profile.atomic_abilities(),
        meta_abilities: profile.meta_abilities.len(),
        trajectories: trajectories.len(),
        twin_profile_cosine: (!twin_cos.is_empty())
            .then(|| twin_cos.iter().sum::<f32>() / twin_cos.len() as f32),
    })
}
