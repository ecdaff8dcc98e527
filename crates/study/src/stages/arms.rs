//! Stage `arms/<arm>/seed<i>` (and `scaling/...`): train one arm at one seed from the base
//! model, then evaluate it at H4.
//!
//! An arm at a seed is an [`ArmPlan`]: its environments, its sampler (HDC in one of its modes,
//! or a rival), its hint style and, for the online arm, a re-selection schedule. The plan is
//! the arm's cache key together with the base model, the RL and evaluation sections: an arm
//! is recomputed only when something it trains with changes (changing the online schedule
//! does not retrain `all-pool`). Training checkpoints into the stage directory; a rerun after
//! an interruption (even `kill -9`) resumes from the last checkpoint when the stage's key is
//! unchanged (`progress.json` holds its hash), losing at most one checkpoint interval.

use std::sync::Arc;
use std::time::Instant;

use envdist_core::{EnvFactory, EnvId, GradientSet, HarnessLevel, ProfileSet, Rng};
use envdist_curriculum::{
    BuildOptions, CurriculumSampler, HdcConfig, Mode, SamplerConfig, StatusFile,
};
use envdist_envs::{HintStyle, Suite, SuiteConfig};
use envdist_trainer::{
    GradientConfig, PolicyModel, RunOptions, RunSpec, Start, TrainConfig, Trainer, UpdateStats,
};
use serde::{Deserialize, Serialize};

use super::eval::evaluate;
use super::pool::PoolStage;
use super::selections::{SelectionSet, study_aes};
use super::specs_of;
use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::{ExperimentConfig, OnlineConfig};
use crate::error::{Context, Result};
use crate::layout::ArmFiles;
use crate::model::Arm;
use crate::model::{ArmRun, CurriculumSummary, Diagnostic};
use crate::model::{Ordering, Recipe};
use crate::observer::Observer;

/// What one arm trains with at one seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArmPlan {
    /// The environments (the first selection, for the online arm).
    pub envs: Vec<EnvId>,
    /// The sampler.
    pub sampler: SamplerConfig,
    /// Hint style of training.
    pub hint_style: HintStyle,
    /// AES re-selected on this schedule (the online arm).
    pub online: Option<OnlineConfig>,
    /// Env steps its selection already spent training (the transfer probes of
    /// `aes-transfer`), taken from its RL budget. Left out of the key when 0, so the other
    /// arms' keys do not change.
    #[serde(skip_serializing_if = "is_zero")]
    pub charged_env_steps: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl ArmPlan {
    /// The env steps this arm trains: the RL budget less what its selection spent training.
    pub fn rl_env_steps(&self, cfg: &ExperimentConfig) -> u64 {
        cfg.rl
            .total_env_steps
            .saturating_sub(self.charged_env_steps)
    }
}

/// The sampler of arms without a curriculum: H4, scale uniform over each env's range
/// (single- and multi-turn environments given equal step shares when `balance_turns`).
pub fn uniform_h4(balance_turns: bool) -> SamplerConfig {
    SamplerConfig::Hdc(HdcConfig {
        mode: Mode::BaselineH4,
        balance_turns,
        ..HdcConfig::default()
    })
}

/// The plan of `arm` at `seed`; an error for the base (not trained) or a missing selection.
pub fn plan(
    arm: Arm,
    seed: u32,
    cfg: &ExperimentConfig,
    pool: &PoolStage,
    sels: &SelectionSet,
) -> Result<ArmPlan> {
    let Some(Recipe {
        envs,
        ordering,
        other_hints,
        online,
    }) = arm.recipe()
    else {
        crate::bail!("the base arm is not trained");
    };
    Ok(ArmPlan {
        envs: match envs.at_seed(seed) {
            None => pool.pool.clone(),
            Some(id) => sels.get(id)?.envs.clone(),
        },
        sampler: match ordering {
            Ordering::UniformH4 => uniform_h4(cfg.balance_turns),
            Ordering::Hdc(mode) => SamplerConfig::Hdc(HdcConfig {
                mode,
                balance_turns: cfg.balance_turns,
                ..cfg.hdc.clone()
            }),
            Ordering::Rival(kind) => SamplerConfig::default_for(kind)?,
        },
        hint_style: if other_hints {
            cfg.other_hint_style()
        } else {
            cfg.suite.hint_style
        },
        online: online.then(|| cfg.online.clone()),
        charged_env_steps: if envs.charges_transfer_probes() {
            cfg.aes_transfer_charge()
        } else {
            0
        },
    })
}

/// The plan of the scaling study's point of `size` random pool environments at `seed`.
pub fn scaling_plan(size: usize, seed: u32, cfg: &ExperimentConfig, pool: &PoolStage) -> ArmPlan {
    let mut rng = Rng::derive(cfg.seed ^ 0x5343_414c, (size as u64) << 8 | seed as u64);
    let mut ids = pool.pool.clone();
    rng.shuffle(&mut ids);
    ids.truncate(size);
    ids.sort();
    ArmPlan {
        envs: ids,
        sampler: uniform_h4(cfg.balance_turns),
        hint_style: cfg.suite.hint_style,
        online: None,
        charged_env_steps: 0,
    }
}

/// The stage's key: the base model (and through it the pool, the suite and the network), the
/// master seed, the arm's seed, the network's RL preset, the `rl` and `eval` sections and the
/// plan, over the code of the suite, curriculum and trainer. The online arm adds what its
/// re-selections read: the profiles, the `selection` section and selection's code.
pub fn key(
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    base: &StageKey,
    profiles: &StageKey,
    plan: &ArmPlan,
    seed: u32,
) -> Result<StageKey> {
    let mut crates = vec![Crate::Core, Crate::Envs, Crate::Curriculum, Crate::Trainer];
    if plan.online.is_some() {
        crates.push(Crate::Selection);
    }
    let key = StageKey::new(code, &crates)?
        .after("base", base)?
        .with("seed", &cfg.seed)?
        .with("arm_seed", &seed)?
        .with("model", &cfg.model)?
        .with("rl", &cfg.rl)?
        .with("eval", &cfg.eval)?
        .with("plan", plan)?;
    if plan.online.is_none() {
        return Ok(key);
    }
    key.after("profiles", profiles)?
        .with("selection", &cfg.selection)
}

/// What the online arm needs to re-select.
pub struct OnlineInputs<'a> {
    /// Profiles of the pool.
    pub profiles: &'a ProfileSet,
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
    /// Hash of the stage's key: a checkpoint left with another hash is not resumed.
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

/// The suite an arm trains in: the study's canvas and the arm's hint style.
fn training_suite(suite: &Arc<Suite>, style: HintStyle) -> Result<Arc<Suite>> {
    if suite.config().hint_style == style {
        return Ok(suite.clone());
    }
    Ok(Arc::new(Suite::new(SuiteConfig {
        hint_style: style,
        ..suite.config().clone()
    })?))
}

/// What an arm's training reads besides its plan.
pub struct ArmInputs<'a> {
    /// The study's configuration.
    pub cfg: &'a ExperimentConfig,
    /// The study's suite (evaluation renders with it).
    pub suite: &'a Arc<Suite>,
    /// The pool stage's output.
    pub pool: &'a PoolStage,
    /// The base model.
    pub base: &'a PolicyModel,
    /// What the online arm re-selects from.
    pub online: Option<OnlineInputs<'a>>,
}

/// Train one arm at one seed from the base into `files`, then evaluate it.
pub fn train_arm(
    inputs: &ArmInputs<'_>,
    job: &ArmJob<'_>,
    files: &ArmFiles,
    observer: &dyn Observer,
) -> Result<ArmRun> {
    let cfg = inputs.cfg;
    let start = Instant::now();
    let train_suite = training_suite(inputs.suite, job.plan.hint_style)?;
    let stream = cfg.seed ^ (job.seed as u64 + 1).wrapping_mul(0x9E37_79B9);
    let ckpt = files.checkpoint();
    let resumable = files.has_checkpoint()
        && envdist_core::io::read_json::<Progress>(
            &files.progress(),
            Some(PROGRESS_SCHEMA_VERSION),
        )
        .is_ok_and(|p| p.key_hash == job.key_hash);
    let mut online_state: OnlineState = if resumable && job.plan.online.is_some() {
        envdist_core::io::read_json(files.online(), Some(PROGRESS_SCHEMA_VERSION))?
    } else {
        OnlineState {
            schema_version: PROGRESS_SCHEMA_VERSION,
            selections: vec![job.plan.envs.clone()],
        }
    };
    let envs = online_state.selections.last().cloned().unwrap_or_default();
    let mut sampler = job.plan.sampler.build_with(
        &specs_of(&train_suite, &envs)?,
        stream,
        BuildOptions {
            trace: true,
            weights: None,
        },
    )?;
    let factory: Arc<dyn EnvFactory> = train_suite.clone();
    if !resumable {
        for stale in files.stale() {
            let _ = std::fs::remove_dir_all(&stale);
            let _ = std::fs::remove_file(&stale);
        }
        envdist_core::io::write_json_atomic(
            files.progress(),
            &Progress {
                schema_version: PROGRESS_SCHEMA_VERSION,
                key_hash: job.key_hash.clone(),
            },
        )?;
        if job.plan.online.is_some() {
            envdist_core::io::write_json_atomic(files.online(), &online_state)?;
        }
    }
    let spec = RunSpec {
        config: TrainConfig {
            total_env_steps: job.plan.rl_env_steps(cfg),
            ..cfg.train_config(stream)
        },
        start: Start::From(inputs.base),
        device: cfg.device,
        resume: resumable,
    };
    let (mut trainer, _) = Trainer::open(files.run(), spec, factory, sampler.as_mut())
        .with_context(|| format!("opening the run in {}", ckpt.display()))?;
    let budget = trainer.config().total_env_steps;
    let progress = observer.progress(&format!("{} seed {}", job.label, job.seed), budget);
    progress.set(trainer.env_steps());
    let mut throughput = Vec::new();
    while trainer.env_steps() < budget {
        let mut stop_at = job
            .plan
            .online
            .as_ref()
            .map(|o| (trainer.env_steps() / o.every_steps + 1) * o.every_steps);
        if let Some(at) = job.interrupt_at {
            stop_at = Some(stop_at.map_or(at, |s| s.min(at)));
        }
        let opts = RunOptions {
            out_dir: Some(files.dir().to_path_buf()),
            checkpoint_every: 20,
            stop_at,
        };
        let summary = trainer.run(sampler.as_mut(), &opts, &mut |s| {
            progress.set(s.env_steps);
            if let Some(r) = s.success_rate {
                progress.message(format!("success {r:.2}"));
            }
        })?;
        throughput.push(summary.env_steps_per_second);
        if job
            .interrupt_at
            .is_some_and(|at| trainer.env_steps() >= at && trainer.env_steps() < budget)
        {
            crate::bail!(
                "interrupted at {} env steps (test hook)",
                trainer.env_steps()
            );
        }
        if let Some(online) = &job.plan.online
            && trainer.env_steps() < budget
        {
            let profiles = inputs
                .online
                .as_ref()
                .context("the online arm needs its re-selection inputs")?
                .profiles;
            let next = reselect_now(
                cfg,
                online,
                &train_suite,
                inputs.pool,
                &trainer.policy(),
                profiles,
            )?;
            sampler.retarget(&specs_of(&train_suite, &next)?)?;
            online_state.selections.push(next);
            // The new selection and the sampler's state land together: the checkpoint that
            // follows is the one a resume would start from.
            envdist_core::io::write_json_atomic(files.online(), &online_state)?;
            trainer.save_checkpoint(&ckpt, sampler.as_mut())?;
        }
    }
    progress.finish();
    let curriculum = match sampler.hdc() {
        Some(hdc) if hdc.config().mode.weakens_harness() => {
            envdist_core::io::write_json_atomic(
                files.curriculum_status(),
                &StatusFile::new(hdc.status()),
            )?;
            envdist_core::io::write_jsonl_atomic(files.curriculum_trace(), sampler.trace())?;
            Some(curriculum_summary(sampler.as_ref()))
        }
        _ => None,
    };
    let model = trainer.policy();
    let eval_start = Instant::now();
    let evaluation = evaluate(&cfg.eval, inputs.suite, &inputs.pool.evaluated(), &model)?;
    let eval_seconds = eval_start.elapsed().as_secs_f64();
    let log: Vec<UpdateStats> = files.run().read_log()?;
    Ok(ArmRun {
        arm: job.arm,
        seed: job.seed,
        train_envs: online_state.selections.last().cloned().unwrap_or_default(),
        scores: evaluation.splits(inputs.suite),
        per_env: evaluation.per_env,
        env_steps: trainer.env_steps(),
        wall_seconds: start.elapsed().as_secs_f64(),
        curve: log
            .iter()
            .filter_map(|s| s.success_rate.map(|r| (s.env_steps, r)))
            .collect(),
        diagnostics: diagnostics(&log, &train_suite),
        curriculum,
        reselections: if job.plan.online.is_some() {
            online_state.selections
        } else {
            vec![]
        },
        env_steps_per_s: throughput.iter().sum::<f32>() / throughput.len().max(1) as f32,
        eval_seconds,
    })
}

/// The RL diagnostics of a training log, at most 128 points (evenly spaced updates, the last
/// one included); training success split by turn kind.
fn diagnostics(log: &[UpdateStats], suite: &Suite) -> Vec<Diagnostic> {
    let stride = log.len().div_ceil(128).max(1);
    let single = |e: &EnvId| {
        suite
            .spec(e)
            .is_some_and(|s| s.turn == envdist_core::Turn::Single)
    };
    let rate = |u: &UpdateStats, want: bool| {
        let (n, k) = u
            .env_outcomes
            .iter()
            .filter(|(e, _)| single(e) == want)
            .fold((0u32, 0u32), |(n, k), (_, c)| (n + c[0], k + c[1]));
        (n > 0).then(|| k as f32 / n as f32)
    };
    log.iter()
        .enumerate()
        .filter(|(i, _)| i % stride == 0 || *i + 1 == log.len())
        .map(|(_, u)| Diagnostic {
            env_steps: u.env_steps,
            success_single: rate(u, true),
            success_multi: rate(u, false),
            value_loss: u.value_loss,
            entropy: u.entropy,
            kl_to_base: u.kl_to_start,
            value_only: u.value_only,
        })
        .collect()
}

/// Cheap gradients of the current policy and a fresh AES selection from them.
fn reselect_now(
    cfg: &ExperimentConfig,
    online: &OnlineConfig,
    suite: &Suite,
    pool: &PoolStage,
    policy: &PolicyModel,
    profiles: &ProfileSet,
) -> Result<Vec<EnvId>> {
    let gcfg = GradientConfig {
        rollouts_per_env: online.episodes as usize,
        dim: online.dim,
        seed: cfg.seed ^ 0x4f4e_4c4e,
        harness: HarnessLevel::H4,
        ..GradientConfig::default()
    };
    let grads: GradientSet = envdist_trainer::per_env_gradients(policy, suite, &pool.pool, &gcfg)?;
    Ok(study_aes(&cfg.selection, profiles, &grads, &pool.pool)?.env_ids)
}

/// Episodes per level, final levels, time to half at H4 and forced advances of a traced HDC
/// run (a sampler whose [`CurriculumSampler::hdc`] is some).
fn curriculum_summary(t: &dyn CurriculumSampler) -> CurriculumSummary {
    let mut s = CurriculumSummary::default();
    let (Some(hdc), trace) = (t.hdc(), t.trace()) else {
        return s;
    };
    for e in trace {
        s.episodes_per_level[e.harness.index()] += 1;
    }
    let status = hdc.status();
    for st in &status {
        s.final_levels[st.harness.index()] += 1;
    }
    let n = status.len().max(1);
    s.share_at_h4 = s.final_levels[4] as f32 / n as f32;
    // When each environment first reached H4, in trace steps.
    let mut first_h4: std::collections::BTreeMap<&EnvId, usize> = Default::default();
    let mut last: std::collections::BTreeMap<&EnvId, (HarnessLevel, u32)> = Default::default();
    for (i, e) in trace.iter().enumerate() {
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
    s.half_at_h4_after = (times.len() >= half && !trace.is_empty())
        .then(|| times[half - 1] as f32 / trace.len() as f32);
    s.capped_advances = (0..status.len())
        .filter_map(|i| hdc.env_state(i))
        .map(|st| st.capped_advances)
        .sum();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Preset;
    use crate::model::{EnvSource, SelectionId, SelectionSummary};

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
        let sels = SelectionSet::from_summaries([
            selection(EnvSource::Aes.at_seed(0).unwrap(), &["a/1", "b/2"]),
            selection(
                EnvSource::AesNoConflict.at_seed(0).unwrap(),
                &["a/2", "b/2"],
            ),
            selection(EnvSource::RandomK.at_seed(0).unwrap(), &["a/2", "b/1"]),
            selection(EnvSource::RandomK.at_seed(1).unwrap(), &["a/1", "a/2"]),
            selection(EnvSource::Aes.at_seed(1).unwrap(), &["a/2", "b/1"]),
            selection(EnvSource::ControlAes.at_seed(1).unwrap(), &["a/1"]),
            selection(EnvSource::ControlRandomK.at_seed(1).unwrap(), &["b/1"]),
        ]);
        let cfg = ExperimentConfig::preset(Preset::Smoke);
        let plan_of = |arm, seed| plan(arm, seed, &cfg, &pool, &sels).unwrap();
        let mode = |p: &ArmPlan| match &p.sampler {
            SamplerConfig::Hdc(c) => Some(c.mode),
            _ => None,
        };
        assert!(plan(Arm::Base, 0, &cfg, &pool, &sels).is_err());
        for (arm, seed, envs, m) in [
            (
                Arm::AllPool,
                0,
                vec!["a/1", "a/2", "b/1", "b/2"],
                Mode::BaselineH4,
            ),
            (Arm::RandomK, 1, vec!["a/1", "a/2"], Mode::BaselineH4),
            (Arm::Aes, 0, vec!["a/1", "b/2"], Mode::BaselineH4),
            // Each seed trains on the selection made from its own gradients.
            (Arm::Aes, 1, vec!["a/2", "b/1"], Mode::BaselineH4),
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
            let p = plan_of(arm, seed);
            assert_eq!(p.envs, ids(&envs), "{}", arm.name());
            assert_eq!(mode(&p), Some(m), "{}", arm.name());
            assert_eq!(
                p.online.is_some(),
                arm == Arm::AesHdcOnline,
                "{}",
                arm.name()
            );
            let other = arm == Arm::AesHdcOtherHints;
            assert_eq!(
                p.hint_style != cfg.suite.hint_style,
                other,
                "{}",
                arm.name()
            );
        }
        for arm in [
            Arm::PassRate,
            Arm::LearningProgress,
            Arm::Sec,
            Arm::Ladder,
            Arm::Plr,
        ] {
            let p = plan_of(arm, 0);
            assert_eq!(
                p.envs,
                pool.pool,
                "{} chooses over the whole pool",
                arm.name()
            );
            assert_eq!(p.sampler.kind().replace('_', "-"), arm.name());
        }
        // Every arm with HDC or without a curriculum gives single- and multi-turn environments
        // equal step shares, as the base had (the rivals draw as their references do).
        for arm in [
            Arm::AllPool,
            Arm::Aes,
            Arm::AesHdc,
            Arm::RandomKHdc,
            Arm::AesScaleOnly,
        ] {
            match plan_of(arm, 0).sampler {
                SamplerConfig::Hdc(c) => assert!(c.balance_turns, "{}", arm.name()),
                other => panic!("{}: {other:?}", arm.name()),
            }
        }
        let mut unbalanced = cfg.clone();
        unbalanced.balance_turns = false;
        match plan(Arm::Aes, 0, &unbalanced, &pool, &sels)
            .unwrap()
            .sampler
        {
            SamplerConfig::Hdc(c) => assert!(!c.balance_turns),
            other => panic!("{other:?}"),
        }
        // A missing selection is an error naming it, not a panic.
        let e = plan(Arm::RandomK, 7, &cfg, &pool, &sels).unwrap_err();
        assert!(e.to_string().contains("random-k/7"), "{e}");
    }

    #[test]
    fn an_arms_key_holds_only_what_it_trains_with() {
        let pool = PoolStage {
            pool: ids(&["a/1", "b/1"]),
            ood: vec![],
            families: 2,
            conflict_pairs: vec![],
            control: ids(&["a/1"]),
        };
        let sels =
            SelectionSet::from_summaries([selection(EnvSource::Aes.at_seed(0).unwrap(), &["a/1"])]);
        let code = CodeVersion::current();
        let up = StageKey::new(&code, &[]).unwrap();
        let hash = |cfg: &ExperimentConfig, arm: Arm| {
            let p = plan(arm, 0, cfg, &pool, &sels).unwrap();
            key(cfg, &code, &up, &up, &p, 0).unwrap().hash().unwrap()
        };
        let cfg = ExperimentConfig::preset(Preset::Smoke);
        let mut other = cfg.clone();
        other.online.every_steps += 1;
        other.hdc.min_episodes += 1;
        for arm in [Arm::AllPool, Arm::Aes, Arm::Plr] {
            assert_eq!(hash(&cfg, arm), hash(&other, arm), "{}", arm.name());
        }
        assert_ne!(hash(&cfg, Arm::AesHdc), hash(&other, Arm::AesHdc));
        assert_ne!(
            hash(&cfg, Arm::AesHdcOnline),
            hash(&other, Arm::AesHdcOnline)
        );
        let mut budget = cfg.clone();
        budget.rl.total_env_steps += 1;
        assert_ne!(hash(&cfg, Arm::AllPool), hash(&budget, Arm::AllPool));
    }
}
