//! Stage `gradients`: per-environment policy gradients of the base model, randomly projected,
//! with the split-half reliability of each.

use std::path::Path;

use envdist_core::{EnvId, HarnessLevel, PairSummary};
use envdist_envs::Suite;
use envdist_trainer::{GradientConfig, GradientParams, PolicyModel};
use serde::{Deserialize, Serialize};

use super::pool::PoolStage;
use super::{bar, relative};

/// Where the gradients stage writes the gradient set, relative to the run directory.
pub const GRADIENTS_FILE: &str = "gradients/gradients.safetensors";
/// Schema version of `gradients/reliability.json`.
pub const RELIABILITY_SCHEMA_VERSION: u32 = 1;

/// What the gradients depend on (besides the pool and the base model).
#[derive(Debug, Clone, Serialize)]
pub struct GradientsKey {
    /// Episodes per environment.
    pub episodes: u32,
    /// Projection dimension.
    pub dim: usize,
    /// Master seed.
    pub seed: u64,
    /// Harness level the episodes are played at (H4 for selection; H0 for the polarisation
    /// comparison).
    pub harness: HarnessLevel,
    /// Parameters the gradient is taken with respect to (left out of the key when `all`, so
    /// caches of runs before the option existed stay valid).
    #[serde(skip_serializing_if = "crate::experiment::config::is_all_params")]
    pub params: GradientParams,
    /// Episode step cut (left out of the key when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_episode_steps: Option<u32>,
}

impl GradientsKey {
    /// The gradient config the stage runs with: the defaults but for episodes, dimension,
    /// harness level, parameters, step cut and a seed derived from the master seed.
    pub fn config(&self) -> GradientConfig {
        GradientConfig {
            rollouts_per_env: self.episodes as usize,
            dim: self.dim,
            seed: self.seed ^ 0x4752_4144,
            harness: self.harness,
            params: self.params,
            max_episode_steps: self.max_episode_steps,
            ..GradientConfig::default()
        }
    }
}

/// Gradient output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GradientStage {
    /// `gradients.safetensors` path (relative to the run directory).
    pub gradients_file: String,
    /// Pairwise cosines: twins, same family, all pairs, fraction negative.
    pub pairs: PairSummary,
    /// Mean over envs with signal of the split-half cosine of their gradients.
    pub split_half_cosine_mean: Option<f32>,
}

/// One row of `reliability.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnvReliability {
    /// The environment.
    pub env: EnvId,
    /// Cosine between the gradients of its even and odd episodes.
    pub split_half_cosine: f32,
    /// Spearman-Brown corrected reliability of the whole gradient's direction.
    pub reliability: f32,
}

#[derive(Serialize)]
struct ReliabilityFile<'a> {
    schema_version: u32,
    envs: &'a [EnvReliability],
}

/// Compute, write and summarise the gradients of `base` on the pool.
pub fn run(
    key: &GradientsKey,
    suite: &Suite,
    pool: &PoolStage,
    base: &PolicyModel,
    dir: &Path,
    run_root: &Path,
) -> anyhow::Result<GradientStage> {
    let gcfg = key.config();
    let pb = bar(
        pool.pool.len() as u64,
        &format!("per-env gradients at {}", key.harness),
    );
    let report =
        envdist_trainer::per_env_gradients_report(base, suite, &pool.pool, &gcfg, &mut |_| {
            pb.inc(1)
        })?;
    pb.finish_and_clear();
    let path = dir.join("gradients.safetensors");
    report.set.write(&path)?;
    let rows: Vec<EnvReliability> = (0..report.set.len())
        .map(|i| EnvReliability {
            env: report.set.env_ids[i].clone(),
            split_half_cosine: report.split_half_cosine[i],
            reliability: report.reliability(i),
        })
        .collect();
    envdist_core::io::write_json_atomic(
        dir.join("reliability.json"),
        &ReliabilityFile {
            schema_version: RELIABILITY_SCHEMA_VERSION,
            envs: &rows,
        },
    )?;
    let zero = report.set.zero_rows();
    let signal: Vec<f32> = rows
        .iter()
        .filter(|r| !zero.contains(&r.env))
        .map(|r| r.split_half_cosine)
        .collect();
    let family = |id: &EnvId| suite.spec(id).map(|s| s.family.clone());
    Ok(GradientStage {
        gradients_file: relative(&path, run_root),
        pairs: report.set.pair_summary(&pool.conflict_pairs, family),
        split_half_cosine_mean: (!signal.is_empty())
            .then(|| signal.iter().sum::<f32>() / signal.len() as f32),
    })
}
