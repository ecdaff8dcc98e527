//! Stage `profiles`: roll out the pool with two policies and profile it.

use std::path::Path;

use envdist_core::HarnessLevel;
use envdist_envs::Suite;
use envdist_profiling::{
    Explorer, MetaConfig, NoisyOracle, PolicyMaker, RolloutConfig, TagSegmenter,
    profile_trajectories, rollout_pool, write_outputs,
};
use serde::{Deserialize, Serialize};

use super::pool::PoolStage;
use super::{bar, relative, specs_of};

/// Where the profiles stage writes its profile set, relative to the run directory.
pub const PROFILES_FILE: &str = "profiles/profiles.json";

/// Step tags that mark a conflict twin's rule inversion rather than an ability an annotator
/// could see in a trajectory; the profiling stage ignores them.
pub const IGNORED_RULE_TAGS: [&str; 2] = super::pool::RULE_INVERSION_TAGS;

/// What the profiles stage depends on (besides the pool).
#[derive(Debug, Clone, Serialize)]
pub struct ProfilesKey {
    /// Trajectories per environment (half per policy).
    pub trajectories: u32,
    /// Master seed (the rollout streams derive from it).
    pub seed: u64,
    /// Tags the segmenter ignores.
    pub ignored_tags: [&'static str; 2],
}

/// Profiles output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProfileStage {
    /// `profiles.json` path (relative to the run directory).
    pub profiles_file: String,
    /// Atomic abilities seen.
    pub atomic_abilities: usize,
    /// Meta-abilities after clustering.
    pub meta_abilities: usize,
    /// Trajectories rolled out.
    pub trajectories: usize,
    /// Mean coverage cosine of conflict twins (profiles cannot tell them apart).
    pub twin_profile_cosine: Option<f32>,
}

/// Roll out the pool with a noisy solver and an explorer, segment by the envs' tags (minus
/// the rule-inversion tags), cluster into meta-abilities, write `profiles.json` into `dir`.
pub fn run(
    key: &ProfilesKey,
    suite: &Suite,
    pool: &PoolStage,
    dir: &Path,
    run_root: &Path,
) -> anyhow::Result<ProfileStage> {
    let specs = specs_of(suite, &pool.pool)?;
    let rollout = RolloutConfig {
        trajectories_per_env: key.trajectories,
        harness: HarnessLevel::H0,
        seed: key.seed ^ 0x5052_4f46,
    };
    let first: Box<PolicyMaker> = Box::new(|| Box::new(NoisyOracle::new(0.1)));
    let second: Box<PolicyMaker> = Box::new(|| Box::new(Explorer::new(0.5)));
    let pb = bar(specs.len() as u64, "profiling rollouts (envs)");
    let trajectories = rollout_pool(suite, &specs, &rollout, &*first, &*second, &|_| pb.inc(1))?;
    pb.finish_and_clear();
    // The suite tags a twin's rule inversion (`mirrored-control`, `negation`); an annotator
    // segmenting trajectories into skills would not see it (same pixels, same moves), so we
    // profile without those tags: what conflict the profiles cannot see, gradients must.
    let segmenter = TagSegmenter::new(
        true,
        key.ignored_tags.iter().map(|t| t.to_string()).collect(),
    );
    let profile = profile_trajectories(&trajectories, &segmenter, &MetaConfig::default())?;
    write_outputs(&profile, dir)?;
    let mut twin_cos = Vec::new();
    for (a, b) in &pool.conflict_pairs {
        if let (Some(pa), Some(pb)) = (profile.profile(a), profile.profile(b)) {
            twin_cos.push(envdist_profiling::pipeline::coverage_cosine(pa, pb));
        }
    }
    let file = dir.join("profiles.json");
    anyhow::ensure!(
        file.exists(),
        "profiling wrote no profiles.json in {}",
        dir.display()
    );
    Ok(ProfileStage {
        profiles_file: relative(&file, run_root),
        atomic_abilities: profile.atomic_abilities(),
        meta_abilities: profile.meta_abilities.len(),
        trajectories: trajectories.len(),
        twin_profile_cosine: (!twin_cos.is_empty())
            .then(|| twin_cos.iter().sum::<f32>() / twin_cos.len() as f32),
    })
}
