//! Stage `gradients`: per-environment policy gradients of the base model, randomly projected,
//! with the split-half reliability of each.

use envdist_core::{EnvId, HarnessLevel, PairSummary};
use envdist_envs::Suite;
use envdist_trainer::{GradientConfig, PolicyModel};
use serde::{Deserialize, Serialize};

use super::pool::PoolStage;
use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::ExperimentConfig;
use crate::error::Result;
use crate::layout::RunLayout;
use crate::observer::Observer;

/// Schema version of `gradients/reliability.json`.
pub const RELIABILITY_SCHEMA_VERSION: u32 = 1;

/// The stage's key: the base model, the master seed, the harness level and the `gradients`
/// section, over the suite's and the trainer's code.
pub fn key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    base: &StageKey,
    harness: HarnessLevel,
) -> Result<StageKey> {
    StageKey::new(code, &[Crate::Core, Crate::Envs, Crate::Trainer])?
        .after("base", base)?
        .with("seed", &cfg.seed)?
        .with("harness", &harness)?
        .with("gradients", &cfg.gradients)
}

/// The gradient config of `section` at `harness`: the section with a seed derived from the
/// master seed and the stage's harness level.
pub fn gradient_config(
    section: &GradientConfig,
    seed: u64,
    harness: HarnessLevel,
) -> GradientConfig {
    GradientConfig {
        seed: seed ^ 0x4752_4144,
        harness,
        ..section.clone()
    }
}

/// Gradient output (the set itself is `gradients.safetensors` in the stage directory).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GradientStage {
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

/// Compute, write and summarise the gradients of `base` on the pool at `harness`.
pub fn run(
    cfg: &ExperimentConfig,
    harness: HarnessLevel,
    suite: &Suite,
    pool: &PoolStage,
    base: &PolicyModel,
    layout: &RunLayout,
    observer: &dyn Observer,
) -> Result<GradientStage> {
    let gcfg = gradient_config(&cfg.gradients, cfg.seed, harness);
    let progress = observer.progress(
        &format!("per-env gradients at {harness}"),
        pool.pool.len() as u64,
    );
    let report =
        envdist_trainer::per_env_gradients_report(base, suite, &pool.pool, &gcfg, &mut |_| {
            progress.inc(1)
        })?;
    progress.finish();
    report.set.write(layout.gradients_file(harness))?;
    let rows: Vec<EnvReliability> = (0..report.set.len())
        .map(|i| EnvReliability {
            env: report.set.env_ids[i].clone(),
            split_half_cosine: report.split_half_cosine[i],
            reliability: report.reliability(i),
        })
        .collect();
    envdist_core::io::write_json_atomic(
        layout.gradient_reliability_file(harness),
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
        pairs: report.set.pair_summary(&pool.conflict_pairs, family),
        split_half_cosine_mean: (!signal.is_empty())
            .then(|| signal.iter().sum::<f32>() / signal.len() as f32),
    })
}
