//! [`run_experiment`]: the stages wired in order, each cached under the run directory (see
//! [`super::stage`]), so rerunning the same command resumes where an earlier run stopped.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use envdist_core::{GradientSet, ProfileSet, Rng, Validate};
use envdist_curriculum::Mode;
use envdist_envs::{Suite, SuiteConfig};
use envdist_trainer::PolicyModel;

use super::config::{Arm, ExperimentConfig};
use super::results::{ArmRun, Results, ScalingPoint, relative_gain};
use super::stage::{RunDir, StageInfo};
use super::stages::arms::{ArmJob, EvalKey, TrainKey, arm_plan, evaluate_model, train_arm};
use super::stages::gradients::GradientsKey;
use super::stages::pool::PoolKey;
use super::stages::profiles::{IGNORED_RULE_TAGS, ProfilesKey};
use super::stages::selections::SelectionsKey;
use super::stages::warmup::WarmupKey;
use super::stages::{gradients, pool, profiles, selections, warmup};

/// Run the whole study into `run_dir`.
pub fn run_experiment(cfg: &ExperimentConfig, run_dir: &Path) -> anyhow::Result<Results> {
    cfg.validate()?;
    anyhow::ensure!(
        cfg.device.is_available(),
        "config field `device`: {} needs a build with `--features cuda`",
        cfg.device
    );
    let t0 = Instant::now();
    let run = RunDir::new(run_dir)?;
    envdist_core::io::write_json_atomic(run.root().join("config.json"), cfg)?;
    let mut results = Results::new(cfg.clone());
    let suite = Arc::new(Suite::new(SuiteConfig::with_canvas(cfg.canvas))?);
    // Compute time of every stage, whether computed now or loaded from the cache (then it is
    // the time the run that computed it took), so a resumed run still reports the full cost.
    let compute = std::cell::Cell::new(0.0f64);
    let say = |stage: &str, info: &StageInfo| {
        let how = if info.cached { "cached" } else { "done" };
        eprintln!("[{stage}] {how} ({:.1}s)", info.seconds);
        compute.set(compute.get() + info.seconds);
    };

    let pool_key = PoolKey {
        seed: cfg.seed,
        pool_size: cfg.pool_size,
        ood_envs: cfg.ood_envs,
        canvas: cfg.canvas,
    };
    let (pool, info) = run.stage("pool", &pool_key, |_| pool::run(&pool_key, &suite))?;
    say("pool", &info);
    results.stage_seconds.insert("pool".into(), info.seconds);
    let facts = &mut results.facts;
    facts.pool_envs = pool.pool.len();
    facts.pool_families = pool.families;
    facts.ood_envs = pool.ood.len();
    facts.conflict_pairs = pool.conflict_pairs.len();

    let profiles_key = ProfilesKey {
        trajectories: cfg.profile_trajectories,
        seed: cfg.seed,
        ignored_tags: IGNORED_RULE_TAGS,
    };
    let (prof, info) = run.stage("profiles", &(&pool_key, &profiles_key), |dir| {
        profiles::run(&profiles_key, &suite, &pool, dir, run.root())
    })?;
    say("profiles", &info);
    results
        .stage_seconds
        .insert("profiles".into(), info.seconds);
    results.facts.atomic_abilities = prof.atomic_abilities;
    results.facts.meta_abilities = prof.meta_abilities;
    results.facts.twin_profile_cosine = prof.twin_profile_cosine;
    let profile_set = ProfileSet::read(run.root().join(&prof.profiles_file))?;

    let warm_key = WarmupKey {
        steps: cfg.warmup_steps,
        model: cfg.model,
        device: cfg.device,
        seed: cfg.seed,
    };
    let warm_deps = (&pool_key, &warm_key);
    let (warm, info) = run.stage("warmup", &warm_deps, |dir| {
        warmup::run(&warm_key, suite.clone(), &pool, dir, run.root())
    })?;
    say("warmup", &info);
    results.stage_seconds.insert("warmup".into(), info.seconds);
    results.facts.train_env_steps_per_s = warm.env_steps_per_second;
    results.facts.rollout_steps_per_s = warm.rollout_steps_per_second;
    results.facts.learn_samples_per_s = warm.learn_samples_per_second;
    let base = PolicyModel::load(&run.root().join(&warm.checkpoint), cfg.device)?;

    let grad_key = GradientsKey {
        episodes: cfg.gradient_episodes,
        dim: cfg.gradient_dim,
        seed: cfg.seed,
    };
    let grad_deps = (&warm_deps, &grad_key);
    let (grad, info) = run.stage("gradients", &grad_deps, |dir| {
        gradients::run(&grad_key, &suite, &pool, &base, dir, run.root())
    })?;
    say("gradients", &info);
    results
        .stage_seconds
        .insert("gradients".into(), info.seconds);
    let grads = GradientSet::read(run.root().join(&grad.gradients_file))?;
    results.facts.gradients = Some(grad.pairs.clone());
    results.facts.zero_gradient_envs = grads.zero_rows().len();

    let sel_key = SelectionsKey {
        k: cfg.k,
        seeds: cfg.seeds,
        seed: cfg.seed,
        exclude_no_signal: cfg.exclude_no_signal,
    };
    let sel_deps = (&grad_deps, &sel_key);
    let (sels, info) = run.stage("selections", &sel_deps, |_| {
        selections::run(&sel_key, &profile_set, &grads)
    })?;
    say("selections", &info);
    results
        .stage_seconds
        .insert("selections".into(), info.seconds);
    results.selections = sels.clone();

    let eval_key = EvalKey {
        episodes: cfg.eval_episodes,
        scale: cfg.eval_scale,
    };
    let eval_deps = (&warm_deps, &eval_key, cfg.ood_envs);
    let (base_eval, info) = run.stage("arms/base", &eval_deps, |_| {
        evaluate_model(&eval_key, &suite, &pool, &base)
    })?;
    say("arms/base", &info);
    results.runs.push(ArmRun {
        arm: Arm::Base,
        seed: 0,
        train_envs: vec![],
        per_env: base_eval.0.clone(),
        scores: base_eval.1.clone(),
        relative_gain: None,
        env_steps: 0,
        wall_seconds: info.seconds,
        curve: vec![],
    });
    let train_key = TrainKey {
        steps: cfg.train_steps,
        model: cfg.model,
        seed: cfg.seed,
    };
    for &arm in cfg.arms.iter().filter(|a| **a != Arm::Base) {
        for seed in 0..cfg.seeds {
            let (envs, mode) = arm_plan(arm, seed, &pool, &sels)?;
            let name = format!("arms/{}/seed{seed}", arm.name());
            let key = (&eval_deps, &sel_deps, &train_key, arm, seed, &envs);
            let job = ArmJob {
                arm,
                label: arm.name(),
                seed,
                envs: &envs,
                mode,
            };
            let (mut r, info) = run.stage(&name, &key, |dir| {
                train_arm(
                    &train_key,
                    &eval_key,
                    suite.clone(),
                    &pool,
                    &base,
                    &job,
                    dir,
                )
            })?;
            say(&name, &info);
            r.relative_gain = relative_gain(&r.scores, &base_eval.1);
            results.runs.push(r);
        }
    }

    for &size in &cfg.scaling_sizes {
        for seed in 0..cfg.seeds {
            let mut rng = Rng::derive(cfg.seed ^ 0x5343_414c, (size as u64) << 8 | seed as u64);
            let mut ids = pool.pool.clone();
            rng.shuffle(&mut ids);
            ids.truncate(size);
            ids.sort();
            let name = format!("scaling/n{size}/seed{seed}");
            let key = (&eval_deps, &train_key, size, seed, &ids);
            let label = format!("scaling n={size}");
            let job = ArmJob {
                arm: Arm::RandomK,
                label: &label,
                seed,
                envs: &ids,
                mode: Mode::BaselineH4,
            };
            let (r, info) = run.stage(&name, &key, |dir| {
                train_arm(
                    &train_key,
                    &eval_key,
                    suite.clone(),
                    &pool,
                    &base,
                    &job,
                    dir,
                )
            })?;
            say(&name, &info);
            results.scaling.push(ScalingPoint {
                pool_size: size,
                seed,
                scores: r.scores,
            });
        }
    }

    results.total_seconds = t0.elapsed().as_secs_f64();
    results.compute_seconds = compute.get();
    Ok(results)
}
