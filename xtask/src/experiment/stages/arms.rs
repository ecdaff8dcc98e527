//! Stage `arms/<arm>/seed<i>` (and `scaling/...`): train one arm at one seed from the base
//! model, then evaluate it at H4 on the pool (ID) and the held-out set (OOD).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use envdist_core::{EnvFactory, EnvId, HarnessLevel};
use envdist_curriculum::{HdcConfig, HdcSampler, Mode, Traced};
use envdist_envs::Suite;
use envdist_trainer::{
    PolicyModel, RunOptions, ScaleChoice, SplitScores, TrainPreset, Trainer, evaluate,
};
use serde::Serialize;

use super::pool::PoolStage;
use super::warmup::train_config;
use super::{bar, specs_of};
use crate::experiment::config::Arm;
use crate::experiment::results::{ArmRun, SelectionId, SelectionSummary};

/// How arms are evaluated.
#[derive(Debug, Clone, Serialize)]
pub struct EvalKey {
    /// Episodes per environment.
    pub episodes: u32,
    /// Scale of every episode.
    pub scale: ScaleChoice,
}

/// How arms are trained.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TrainKey {
    /// Environment steps per arm and seed.
    pub steps: u64,
    /// Network and RL preset.
    pub model: TrainPreset,
    /// Master seed.
    pub seed: u64,
}

/// Which environments and which curriculum mode an arm trains with.
pub fn arm_plan(
    arm: Arm,
    seed: u32,
    pool: &PoolStage,
    sels: &[SelectionSummary],
) -> anyhow::Result<(Vec<EnvId>, Mode)> {
    let ids = |name: SelectionId| -> anyhow::Result<Vec<EnvId>> {
        Ok(sels
            .iter()
            .find(|s| s.name == name)
            .with_context(|| format!("no selection named {name}"))?
            .envs
            .clone())
    };
    Ok(match arm {
        Arm::Base => bail!("the base arm is not trained"),
        Arm::AllPool => (pool.pool.clone(), Mode::BaselineH4),
        Arm::RandomK => (ids(SelectionId::RandomK(seed))?, Mode::BaselineH4),
        Arm::Aes => (ids(SelectionId::Aes)?, Mode::BaselineH4),
        Arm::AesHdc => (ids(SelectionId::Aes)?, Mode::Full),
        Arm::RandomKHdc => (ids(SelectionId::RandomK(seed))?, Mode::Full),
        Arm::AesNoConflict => (ids(SelectionId::AesNoConflict)?, Mode::BaselineH4),
        Arm::AesHarnessOnly => (ids(SelectionId::Aes)?, Mode::HarnessOnly),
        Arm::AesScaleOnly => (ids(SelectionId::Aes)?, Mode::ScaleOnly),
    })
}

/// The fixed evaluation seeds shared by every arm.
pub fn eval_seeds(episodes: u32) -> Vec<u64> {
    (0..episodes as u64).map(|i| 9_000_000 + i).collect()
}

/// Evaluate `model` at H4 on the pool (ID) and held-out (OOD) sets.
pub fn evaluate_model(
    key: &EvalKey,
    suite: &Suite,
    pool: &PoolStage,
    model: &PolicyModel,
) -> anyhow::Result<(BTreeMap<EnvId, f32>, SplitScores)> {
    let mut envs = pool.pool.clone();
    envs.extend(pool.ood.iter().cloned());
    let report = evaluate(
        model,
        suite,
        &envs,
        &eval_seeds(key.episodes),
        HarnessLevel::H4,
        key.scale,
    )?;
    let per_env = report
        .per_env
        .iter()
        .map(|s| (s.env.clone(), s.success))
        .collect();
    Ok((per_env, report.splits))
}

/// One arm's training: its environments, curriculum mode and identity.
pub struct ArmJob<'a> {
    /// The arm.
    pub arm: Arm,
    /// Its label in progress output.
    pub label: &'a str,
    /// Training seed index.
    pub seed: u32,
    /// Environments trained on.
    pub envs: &'a [EnvId],
    /// Curriculum mode.
    pub mode: Mode,
}

/// Train one arm at one seed from `base` into `dir`, then evaluate it.
pub fn train_arm(
    train: &TrainKey,
    eval: &EvalKey,
    suite: Arc<Suite>,
    pool: &PoolStage,
    base: &PolicyModel,
    job: &ArmJob<'_>,
    dir: &Path,
) -> anyhow::Result<ArmRun> {
    let start = Instant::now();
    let specs = specs_of(&suite, job.envs)?;
    let hdc = HdcConfig {
        mode: job.mode,
        ..HdcConfig::default()
    };
    let stream = train.seed ^ (job.seed as u64 + 1).wrapping_mul(0x9E37_79B9);
    let mut sampler = Traced::new(HdcSampler::new(&specs, None, hdc, stream)?);
    let tcfg = train_config(train.model, train.steps, stream);
    let factory: Arc<dyn EnvFactory> = suite.clone();
    let mut trainer = Trainer::from_policy(tcfg, factory, base)?;
    let pb = bar(train.steps, &format!("{} seed {}", job.label, job.seed));
    let mut curve = Vec::new();
    let opts = RunOptions {
        out_dir: Some(dir.to_path_buf()),
        checkpoint_every: 20,
    };
    trainer.run(&mut sampler, &opts, &mut |s| {
        pb.set_position(s.env_steps);
        if let Some(r) = s.success_rate {
            curve.push((s.env_steps, r));
            pb.set_message(format!("success {r:.2}"));
        }
    })?;
    // Where the curriculum stood at the end, and how it got there.
    envdist_core::io::write_json_atomic(
        dir.join("curriculum_status.json"),
        &envdist_curriculum::StatusFile::new(sampler.sampler.status()),
    )?;
    envdist_core::io::write_jsonl_atomic(dir.join("curriculum_trace.jsonl"), &sampler.trace)?;
    pb.finish_and_clear();
    let model = trainer.policy();
    let (per_env, scores) = evaluate_model(eval, &suite, pool, &model)?;
    Ok(ArmRun {
        arm: job.arm,
        seed: job.seed,
        train_envs: job.envs.to_vec(),
        per_env,
        scores,
        relative_gain: None,
        env_steps: trainer.env_steps(),
        wall_seconds: start.elapsed().as_secs_f64(),
        curve,
    })
}
