//! Stage `arms/<arm>/seed<i>` (and `scaling/...`): train one arm at one seed from the base
//! model, then evaluate it at H4.
//!
//! An arm is a set of environments, a sampler (an HDC mode or a rival method), a hint style,
//! and for the online arm a schedule of re-selections. Training checkpoints into the stage
//! directory; a rerun after an interruption (even `kill -9`) resumes from the last checkpoint
//! when the stage's inputs are unchanged (`progress.json` holds their hash), losing at most one
//! checkpoint interval.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use envdist_core::{EnvFactory, EnvId, GradientSet, HarnessLevel, ProfileSet, TaskSampler};
use envdist_curriculum::{
    CurriculumSampler, HdcConfig, HdcSampler, Mode, SamplerConfig, StatusFile, Traced,
};
use envdist_envs::{HintStyle, Suite, SuiteConfig};
use envdist_trainer::{
    Device, GradientConfig, PolicyModel, RunOptions, TrainPreset, Trainer, UpdateStats,
};
use serde::{Deserialize, Serialize};

use super::base::train_config;
use super::eval::{EvalKey, evaluate};
use super::pool::PoolStage;
use super::selections::{SelectionsKey, reselect};
use super::{bar, specs_of};
use crate::experiment::config::{Arm, ExperimentConfig, FinetuneConfig, OnlineConfig};
use crate::experiment::results::{ArmRun, CurriculumSummary, SelectionId, SelectionSummary};

/// How arms are trained.
#[derive(Debug, Clone, Serialize)]
pub struct TrainKey {
    /// Environment steps per arm and seed.
    pub steps: u64,
    /// Network and RL preset.
    pub model: TrainPreset,
    /// Overrides of the preset's RL settings.
    pub finetune: FinetuneConfig,
    /// Device.
    pub device: Device,
    /// Master seed.
    pub seed: u64,
    /// The HDC config of HDC arms.
    pub hdc: HdcConfig,
    /// The study's hint style.
    pub hint_style: HintStyle,
    /// Canvas side.
    pub canvas: u32,
    /// The online arm's schedule.
    pub online: OnlineConfig,
}

impl TrainKey {
    /// The training settings of `cfg`.
    pub fn of(cfg: &ExperimentConfig) -> Self {
        Self {
            steps: cfg.train_steps,
            model: cfg.model,
            finetune: cfg.finetune.clone(),
            device: cfg.device,
            seed: cfg.seed,
            hdc: cfg.hdc.clone(),
            hint_style: cfg.hint_style,
            canvas: cfg.canvas,
            online: cfg.online.clone(),
        }
    }
}

/// What an arm trains with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum SamplerPlan {
    /// The HDC sampler in one of its modes (the baselines are modes too).
    Hdc(Mode),
    /// A rival method.
    Rival(SamplerConfig),
}

/// Which environments, sampler and hint style an arm trains with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArmPlan {
    /// The environments (the first selection, for the online arm).
    pub envs: Vec<EnvId>,
    /// The sampler.
    pub sampler: SamplerPlan,
    /// Hint style of training.
    pub hint_style: HintStyle,
    /// Re-select AES every `online.every_steps`.
    pub online: bool,
}

/// The plan of `arm` at `seed`.
pub fn arm_plan(
    arm: Arm,
    seed: u32,
    pool: &PoolStage,
    sels: &[SelectionSummary],
    cfg: &TrainKey,
) -> anyhow::Result<ArmPlan> {
    let ids = |name: SelectionId| -> anyhow::Result<Vec<EnvId>> {
        Ok(sels
            .iter()
            .find(|s| s.name == name)
            .with_context(|| format!("no selection named {name}"))?
            .envs
            .clone())
    };
    let hdc = |envs: Vec<EnvId>, mode: Mode| ArmPlan {
        envs,
        sampler: SamplerPlan::Hdc(mode),
        hint_style: cfg.hint_style,
        online: false,
    };
    Ok(match arm {
        Arm::Base => bail!("the base arm is not trained"),
        Arm::AllPool => hdc(pool.pool.clone(), Mode::BaselineH4),
        Arm::RandomK => hdc(ids(SelectionId::RandomK(seed))?, Mode::BaselineH4),
        Arm::Aes => hdc(ids(SelectionId::Aes)?, Mode::BaselineH4),
        Arm::AesHdc => hdc(ids(SelectionId::Aes)?, Mode::Full),
        Arm::RandomKHdc => hdc(ids(SelectionId::RandomK(seed))?, Mode::Full),
        Arm::AesNoConflict => hdc(ids(SelectionId::AesNoConflict)?, Mode::BaselineH4),
        Arm::AesHarnessOnly => hdc(ids(SelectionId::Aes)?, Mode::HarnessOnly),
        Arm::AesScaleOnly => hdc(ids(SelectionId::Aes)?, Mode::ScaleOnly),
        Arm::AesHdcOnline => ArmPlan {
            online: true,
            ..hdc(ids(SelectionId::Aes)?, Mode::Full)
        },
        Arm::AesHdcOtherHints => ArmPlan {
            hint_style: match cfg.hint_style {
                HintStyle::Action => HintStyle::Subgoal,
                HintStyle::Subgoal => HintStyle::Action,
            },
            ..hdc(ids(SelectionId::Aes)?, Mode::Full)
        },
        Arm::PassRate | Arm::LearningProgress | Arm::Sec | Arm::Ladder | Arm::Plr => ArmPlan {
            envs: pool.pool.clone(),
            sampler: SamplerPlan::Rival(
                arm.rival()
                    .with_context(|| format!("{} has no rival sampler", arm.name()))?,
            ),
            hint_style: cfg.hint_style,
            online: false,
        },
        Arm::ControlAes => hdc(ids(SelectionId::ControlAes)?, Mode::BaselineH4),
        Arm::ControlRandomK => hdc(ids(SelectionId::ControlRandomK(seed))?, Mode::BaselineH4),
    })
}

/// What the online arm needs to re-select.
pub struct OnlineInputs<'a> {
    /// Profiles of the pool.
    pub profiles: &'a ProfileSet,
    /// How AES selects.
    pub selections: &'a SelectionsKey,
}

/// One arm's training job.
pub struct ArmJob<'a> {
    /// The arm.
    pub arm: Arm,
    /// Its label in progress output.
    pub label: &'a str,
    /// Training seed index.
    pub seed: u32,
    /// What it trains with.
    pub plan: &'a ArmPlan,
    /// Hash of the stage's inputs: a checkpoint left with another hash is not resumed.
    pub key_hash: String,
    /// Tests only: fail (as an interruption would) once this many env steps are done.
    pub interrupt_at: Option<u64>,
}

/// Schema version of `progress.json` and `online.json`.
const PROGRESS_SCHEMA_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Progress {
    schema_version: u32,
    key_hash: String,
}

#[derive(Serialize, Deserialize, Default)]
struct OnlineState {
    schema_version: u32,
    /// Every selection so far, the current one last.
    selections: Vec<Vec<EnvId>>,
}

/// The sampler of a run: HDC (traced) or a rival.
enum Sampler {
    Hdc(Box<Traced>),
    Rival(Box<dyn CurriculumSampler>),
}

impl Sampler {
    fn as_task_sampler(&mut self) -> &mut dyn TaskSampler {
        match self {
            Sampler::Hdc(t) => t.as_mut(),
            Sampler::Rival(r) => r.as_mut(),
        }
    }
}

fn make_sampler(
    plan: &SamplerPlan,
    hdc: &HdcConfig,
    specs: &[envdist_core::EnvSpec],
    stream: u64,
) -> anyhow::Result<Sampler> {
    Ok(match plan {
        SamplerPlan::Hdc(mode) => Sampler::Hdc(Box::new(Traced::new(HdcSampler::new(
            specs,
            None,
            HdcConfig {
                mode: *mode,
                ..hdc.clone()
            },
            stream,
        )?))),
        SamplerPlan::Rival(config) => Sampler::Rival(config.build(specs, stream)?),
    })
}

/// The suite an arm trains in: the study's canvas and the arm's hint style.
fn training_suite(suite: &Arc<Suite>, style: HintStyle) -> anyhow::Result<Arc<Suite>> {
    if suite.config().hint_style == style {
        return Ok(suite.clone());
    }
    Ok(Arc::new(Suite::new(SuiteConfig {
        hint_style: style,
        ..suite.config().clone()
    })?))
}

/// Train one arm at one seed from `base` into `dir`, then evaluate it.
#[allow(clippy::too_many_arguments)]
pub fn train_arm(
    train: &TrainKey,
    eval: &EvalKey,
    suite: &Arc<Suite>,
    pool: &PoolStage,
    base: &PolicyModel,
    job: &ArmJob<'_>,
    online: Option<&OnlineInputs<'_>>,
    dir: &Path,
) -> anyhow::Result<ArmRun> {
    let start = Instant::now();
    let train_suite = training_suite(suite, job.plan.hint_style)?;
    let stream = train.seed ^ (job.seed as u64 + 1).wrapping_mul(0x9E37_79B9);
    let ckpt = dir.join("checkpoint");
    let progress_path = dir.join("progress.json");
    let online_path = dir.join("online.json");
    let resumable = ckpt.join("state.json").exists()
        && envdist_core::io::read_json::<Progress>(&progress_path, Some(PROGRESS_SCHEMA_VERSION))
            .is_ok_and(|p| p.key_hash == job.key_hash);
    let mut online_state: OnlineState = if resumable && job.plan.online {
        envdist_core::io::read_json(&online_path, Some(PROGRESS_SCHEMA_VERSION))?
    } else {
        OnlineState {
            schema_version: PROGRESS_SCHEMA_VERSION,
            selections: vec![job.plan.envs.clone()],
        }
    };
    let envs = online_state.selections.last().cloned().unwrap_or_default();
    let mut sampler = make_sampler(
        &job.plan.sampler,
        &train.hdc,
        &specs_of(&train_suite, &envs)?,
        stream,
    )?;
    let factory: Arc<dyn EnvFactory> = train_suite.clone();
    let mut trainer = if resumable {
        Trainer::resume(&ckpt, factory, train.device, sampler.as_task_sampler())
            .with_context(|| format!("resuming {}", ckpt.display()))?
    } else {
        // A fresh start: nothing of an earlier run with other inputs may leak in.
        for stale in ["checkpoint", "train_log.jsonl", "online.json"] {
            let p = dir.join(stale);
            let _ = std::fs::remove_dir_all(&p);
            let _ = std::fs::remove_file(&p);
        }
        envdist_core::io::write_json_atomic(
            &progress_path,
            &Progress {
                schema_version: PROGRESS_SCHEMA_VERSION,
                key_hash: job.key_hash.clone(),
            },
        )?;
        if job.plan.online {
            envdist_core::io::write_json_atomic(&online_path, &online_state)?;
        }
        let mut rl = train_config(train.model, train.steps, stream);
        train.finetune.apply(&mut rl);
        Trainer::from_policy(rl, factory, base)?
    };
    let pb = bar(train.steps, &format!("{} seed {}", job.label, job.seed));
    pb.set_position(trainer.env_steps());
    let mut throughput = Vec::new();
    while trainer.env_steps() < train.steps {
        let mut stop_at = if job.plan.online {
            let every = train.online.every_steps;
            Some((trainer.env_steps() / every + 1) * every)
        } else {
            None
        };
        if let Some(at) = job.interrupt_at {
            stop_at = Some(stop_at.map_or(at, |s| s.min(at)));
        }
        let opts = RunOptions {
            out_dir: Some(dir.to_path_buf()),
            checkpoint_every: 20,
            stop_at,
        };
        let summary = trainer.run(sampler.as_task_sampler(), &opts, &mut |s| {
            pb.set_position(s.env_steps);
            if let Some(r) = s.success_rate {
                pb.set_message(format!("success {r:.2}"));
            }
        })?;
        throughput.push(summary.env_steps_per_second);
        if job
            .interrupt_at
            .is_some_and(|at| trainer.env_steps() >= at && trainer.env_steps() < train.steps)
        {
            bail!(
                "interrupted at {} env steps (test hook)",
                trainer.env_steps()
            );
        }
        if job.plan.online && trainer.env_steps() < train.steps {
            let inputs = online.context("the online arm needs its re-selection inputs")?;
            let next = reselect_now(train, &train_suite, pool, &trainer.policy(), inputs)?;
            if let Sampler::Hdc(t) = &mut sampler {
                t.sampler = t.sampler.with_envs(&specs_of(&train_suite, &next)?)?;
            }
            online_state.selections.push(next);
            // The new selection and the sampler's state land together: the checkpoint that
            // follows is the one a resume would start from.
            envdist_core::io::write_json_atomic(&online_path, &online_state)?;
            trainer.save_checkpoint(&ckpt, sampler.as_task_sampler())?;
        }
    }
    pb.finish_and_clear();
    let curriculum = match &sampler {
        Sampler::Hdc(t) if t.sampler.config().mode.weakens_harness() => {
            envdist_core::io::write_json_atomic(
                dir.join("curriculum_status.json"),
                &StatusFile::new(t.sampler.status()),
            )?;
            envdist_core::io::write_jsonl_atomic(dir.join("curriculum_trace.jsonl"), &t.trace)?;
            Some(curriculum_summary(t))
        }
        _ => None,
    };
    let model = trainer.policy();
    let mut eval_envs = pool.pool.clone();
    eval_envs.extend(pool.ood.iter().cloned());
    let evaluation = evaluate(eval, suite, &eval_envs, &model)?;
    let log: Vec<UpdateStats> = read_log(&dir.join("train_log.jsonl"))?;
    Ok(ArmRun {
        arm: job.arm,
        seed: job.seed,
        train_envs: online_state.selections.last().cloned().unwrap_or_default(),
        scores: evaluation.splits(suite),
        per_env: evaluation.per_env,
        env_steps: trainer.env_steps(),
        wall_seconds: start.elapsed().as_secs_f64(),
        curve: log
            .iter()
            .filter_map(|s| s.success_rate.map(|r| (s.env_steps, r)))
            .collect(),
        curriculum,
        reselections: if job.plan.online {
            online_state.selections
        } else {
            vec![]
        },
        env_steps_per_s: throughput.iter().sum::<f32>() / throughput.len().max(1) as f32,
    })
}

fn read_log(path: &Path) -> anyhow::Result<Vec<UpdateStats>> {
    #[derive(Deserialize)]
    struct Line {
        #[serde(flatten)]
        stats: UpdateStats,
    }
    if !path.exists() {
        return Ok(vec![]);
    }
    Ok(envdist_core::io::read_jsonl::<Line>(path, None)?
        .into_iter()
        .map(|l| l.stats)
        .collect())
}

/// Cheap gradients of the current policy and a fresh AES selection from them.
fn reselect_now(
    train: &TrainKey,
    suite: &Suite,
    pool: &PoolStage,
    policy: &PolicyModel,
    inputs: &OnlineInputs<'_>,
) -> anyhow::Result<Vec<EnvId>> {
    let gcfg = GradientConfig {
        rollouts_per_env: train.online.episodes as usize,
        dim: train.online.dim,
        seed: train.seed ^ 0x4f4e_4c4e,
        harness: HarnessLevel::H4,
        ..GradientConfig::default()
    };
    let grads: GradientSet = envdist_trainer::per_env_gradients(policy, suite, &pool.pool, &gcfg)?;
    reselect(inputs.selections, pool, inputs.profiles, &grads)
}

/// Episodes per level, final levels, time to half at H4 and forced advances of a traced HDC
/// run.
fn curriculum_summary(t: &Traced) -> CurriculumSummary {
    let mut s = CurriculumSummary::default();
    for e in &t.trace {
        s.episodes_per_level[e.harness.index()] += 1;
    }
    let status = t.sampler.status();
    for st in &status {
        s.final_levels[st.harness.index()] += 1;
    }
    let n = status.len().max(1);
    s.share_at_h4 = s.final_levels[4] as f32 / n as f32;
    // When each environment first reached H4, in trace steps.
    let mut first_h4: std::collections::BTreeMap<&EnvId, usize> = Default::default();
    let mut last: std::collections::BTreeMap<&EnvId, (HarnessLevel, u32)> = Default::default();
    for (i, e) in t.trace.iter().enumerate() {
        if e.level == HarnessLevel::H4 {
            first_h4.entry(&e.env).or_insert(i);
        }
        let now = (e.level, e.window_lo);
        if let Some(prev) = last.insert(&e.env, now)
            && prev != now
        {
            s.advances += 1;
        }
    }
    let mut times: Vec<usize> = first_h4.values().copied().collect();
    times.sort();
    let half = n.div_ceil(2);
    s.half_at_h4_after = (times.len() >= half && !t.trace.is_empty())
        .then(|| times[half - 1] as f32 / t.trace.len() as f32);
    s.capped_advances = (0..status.len())
        .filter_map(|i| t.sampler.env_state(i))
        .map(|st| st.capped_advances)
        .sum();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::config::{ExperimentConfig, Preset};

    fn ids(names: &[&str]) -> Vec<EnvId> {
        names.iter().map(|n| EnvId::new(*n)).collect()
    }

    fn selection(name: SelectionId, envs: &[&str]) -> SelectionSummary {
        SelectionSummary {
            name,
            envs: ids(envs),
            covered: 1,
            coverable: 1,
            mean_pairwise_cosine: None,
            conflicting_pairs: 0,
            certificate_gap: None,
            note: None,
        }
    }

    #[test]
    fn every_arm_trains_with_its_selection_and_curriculum() {
        let pool = PoolStage {
            pool: ids(&["a/1", "a/2", "b/1", "b/2"]),
            ood: ids(&["o/1"]),
            families: 2,
            conflict_pairs: vec![],
            control: ids(&["a/1", "b/1"]),
        };
        let sels = vec![
            selection(SelectionId::Aes, &["a/1", "b/2"]),
            selection(SelectionId::AesNoConflict, &["a/2", "b/2"]),
            selection(SelectionId::RandomK(0), &["a/2", "b/1"]),
            selection(SelectionId::RandomK(1), &["a/1", "a/2"]),
            selection(SelectionId::ControlAes, &["a/1"]),
            selection(SelectionId::ControlRandomK(1), &["b/1"]),
        ];
        let key = TrainKey::of(&ExperimentConfig::preset(Preset::Smoke));
        let plan = |arm, seed| arm_plan(arm, seed, &pool, &sels, &key).unwrap();
        let hdc = |p: &ArmPlan| match &p.sampler {
            SamplerPlan::Hdc(m) => Some(*m),
            SamplerPlan::Rival(_) => None,
        };
        assert!(arm_plan(Arm::Base, 0, &pool, &sels, &key).is_err());
        for (arm, seed, envs, mode) in [
            (
                Arm::AllPool,
                0,
                vec!["a/1", "a/2", "b/1", "b/2"],
                Mode::BaselineH4,
            ),
            (Arm::RandomK, 1, vec!["a/1", "a/2"], Mode::BaselineH4),
            (Arm::Aes, 0, vec!["a/1", "b/2"], Mode::BaselineH4),
            (Arm::AesHdc, 0, vec!["a/1", "b/2"], Mode::Full),
            (Arm::RandomKHdc, 0, vec!["a/2", "b/1"], Mode::Full),
            (Arm::AesNoConflict, 0, vec!["a/2", "b/2"], Mode::BaselineH4),
            (
                Arm::AesHarnessOnly,
                0,
                vec!["a/1", "b/2"],
                Mode::HarnessOnly,
            ),
            (Arm::AesScaleOnly, 0, vec!["a/1", "b/2"], Mode::ScaleOnly),
            (Arm::AesHdcOnline, 0, vec!["a/1", "b/2"], Mode::Full),
            (Arm::AesHdcOtherHints, 0, vec!["a/1", "b/2"], Mode::Full),
            (Arm::ControlAes, 1, vec!["a/1"], Mode::BaselineH4),
            (Arm::ControlRandomK, 1, vec!["b/1"], Mode::BaselineH4),
        ] {
            let p = plan(arm, seed);
            assert_eq!(p.envs, ids(&envs), "{}", arm.name());
            assert_eq!(hdc(&p), Some(mode), "{}", arm.name());
            assert_eq!(p.online, arm == Arm::AesHdcOnline, "{}", arm.name());
            let other = arm == Arm::AesHdcOtherHints;
            assert_eq!(p.hint_style != key.hint_style, other, "{}", arm.name());
        }
        for arm in [
            Arm::PassRate,
            Arm::LearningProgress,
            Arm::Sec,
            Arm::Ladder,
            Arm::Plr,
        ] {
            let p = plan(arm, 0);
            assert_eq!(
                p.envs,
                pool.pool,
                "{} chooses over the whole pool",
                arm.name()
            );
            match &p.sampler {
                SamplerPlan::Rival(c) => {
                    assert_eq!(c.kind().replace('_', "-"), arm.name())
                }
                SamplerPlan::Hdc(_) => panic!("{} is a rival", arm.name()),
            }
        }
        // A missing selection is an error naming it, not a panic.
        let e = arm_plan(Arm::RandomK, 7, &pool, &sels, &key).unwrap_err();
        assert!(e.to_string().contains("random-k/7"), "{e}");
    }
}
