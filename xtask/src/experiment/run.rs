//! [`run_experiment`]: the stages wired in order, each cached under the run directory (see
//! [`super::stage`]) with a key made of the configuration it depends on and the source hashes
//! of the code it runs, so rerunning the same command resumes where an earlier run stopped and
//! a code change recomputes what it can affect.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use envdist_core::{GradientSet, HarnessLevel, ProfileSet, Rng, Turn, Validate};
use envdist_curriculum::Mode;
use envdist_envs::{Suite, SuiteConfig};
use envdist_trainer::PolicyModel;

use super::code::CodeVersion;
use super::config::{Arm, ExperimentConfig};
use super::results::{ArmRun, EnvSets, Results, ScalingPoint};
use super::stage::{RunDir, StageInfo, stable_hash};
use super::stages::arms::{
    ArmJob, ArmPlan, OnlineInputs, SamplerPlan, TrainKey, arm_plan, train_arm,
};
use super::stages::base::BaseKey;
use super::stages::eval::{EvalKey, constant_baselines, evaluate};
use super::stages::gradients::GradientsKey;
use super::stages::pool::PoolKey;
use super::stages::profiles::{IGNORED_RULE_TAGS, ProfilesKey};
use super::stages::selections::SelectionsKey;
use super::stages::{base, gradients, pool, profiles, selections};

/// Run the whole study into `run_dir` with the code of this binary.
pub fn run_experiment(cfg: &ExperimentConfig, run_dir: &Path) -> anyhow::Result<Results> {
    run_experiment_with(cfg, run_dir, &CodeVersion::current())
}

/// Run the whole study into `run_dir`, keying every stage on `code`.
pub fn run_experiment_with(
    cfg: &ExperimentConfig,
    run_dir: &Path,
    code: &CodeVersion,
) -> anyhow::Result<Results> {
    cfg.validate()?;
    anyhow::ensure!(
        cfg.device.is_available(),
        "config field `device`: {} needs a build with `--features cuda`",
        cfg.device
    );
    let t0 = Instant::now();
    let run = RunDir::new(run_dir)?;
    envdist_core::io::write_json_atomic(run.root().join("config.json"), cfg)?;
    let mut results = Results::new(cfg.clone(), code.info());
    let suite = Arc::new(Suite::new(SuiteConfig {
        hint_style: cfg.hint_style,
        ..SuiteConfig::with_canvas(cfg.canvas)
    })?);
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
    let pool_deps = (&pool_key, code.of(&["core", "envs"]));
    let (pool, info) = run.stage("pool", &pool_deps, |_| pool::run(&pool_key, &suite))?;
    say("pool", &info);
    results.stage_seconds.insert("pool".into(), info.seconds);
    {
        let f = &mut results.facts;
        f.pool_envs = pool.pool.len();
        f.pool_families = pool.families;
        f.ood_envs = pool.ood.len();
        f.conflict_pairs = pool.conflict_pairs.len();
        f.control_envs = pool.control.len();
    }
    let all: Vec<_> = pool.pool.iter().chain(&pool.ood).cloned().collect();
    results.envs = EnvSets {
        pool: pool.pool.clone(),
        ood: pool.ood.clone(),
        single_turn: all
            .iter()
            .filter(|e| suite.spec(e).is_some_and(|s| s.turn == Turn::Single))
            .cloned()
            .collect(),
        family: all
            .iter()
            .filter_map(|e| suite.spec(e).map(|s| (e.clone(), s.family.clone())))
            .collect(),
    };

    let profiles_key = ProfilesKey {
        trajectories: cfg.profile_trajectories,
        seed: cfg.seed,
        ignored_tags: IGNORED_RULE_TAGS,
    };
    let profiles_deps = (&pool_deps, &profiles_key, code.of(&["profiling"]));
    let (prof, info) = run.stage("profiles", &profiles_deps, |dir| {
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

    let base_key = BaseKey {
        base: cfg.base.clone(),
        model: cfg.model,
        device: cfg.device,
        seed: cfg.seed,
    };
    let base_deps = (
        &pool_deps,
        &base_key,
        cfg.hint_style,
        code.of(&["trainer", "curriculum"]),
    );
    let (base_out, info) = run.stage("base", &base_deps, |dir| {
        base::run(&base_key, suite.clone(), &pool, dir, run.root())
    })?;
    say("base", &info);
    results.stage_seconds.insert("base".into(), info.seconds);
    results.facts.base_clone_accuracy = base_out.clone.final_accuracy;
    let base_model = PolicyModel::load(&run.root().join(&base_out.checkpoint), cfg.device)?;

    let eval_key = EvalKey {
        episodes: cfg.eval.episodes,
        scales: cfg.eval.scales.clone(),
    };
    let (constant, info) = run.stage("constant-baseline", &(&pool_deps, &eval_key), |_| {
        constant_baselines(&eval_key, &suite, &all)
    })?;
    say("constant-baseline", &info);
    results.constant_baseline = constant;

    let mut grad_stage = |harness: HarnessLevel| {
        let key = GradientsKey {
            episodes: cfg.gradients.episodes,
            dim: cfg.gradients.dim,
            seed: cfg.seed,
            harness,
            params: cfg.gradients.params,
            max_episode_steps: cfg.gradients.max_episode_steps,
        };
        let name = match harness {
            HarnessLevel::H4 => "gradients".to_string(),
            h => format!("gradients-{}", h.to_string().to_lowercase()),
        };
        let deps = (&base_deps, key.clone());
        let (out, info) = run.stage(&name, &deps, |dir| {
            gradients::run(&key, &suite, &pool, &base_model, dir, run.root())
        })?;
        say(&name, &info);
        results.stage_seconds.insert(name, info.seconds);
        anyhow::Ok((out, stable_hash(&deps)))
    };
    let (grad, grad_hash) = grad_stage(HarnessLevel::H4)?;
    let grad_h0 = if cfg.gradients.polarisation {
        Some(grad_stage(HarnessLevel::H0)?.0)
    } else {
        None
    };
    let grads = GradientSet::read(run.root().join(&grad.gradients_file))?;
    results.facts.gradients = Some(grad.pairs.clone());
    results.facts.gradients_h0 = grad_h0.map(|g| g.pairs);
    results.facts.gradient_split_half = grad.split_half_cosine_mean;
    results.facts.zero_gradient_envs = grads.zero_rows().len();

    let sel_key = SelectionsKey {
        k: cfg.k,
        seeds: cfg.seeds,
        seed: cfg.seed,
        zero_gradient: cfg.gradients.zero_gradient,
    };
    let sel_deps = (
        &grad_hash,
        &profiles_deps,
        &sel_key,
        code.of(&["selection"]),
    );
    let (sels, info) = run.stage("selections", &sel_deps, |_| {
        selections::run(&sel_key, &pool, &profile_set, &grads)
    })?;
    say("selections", &info);
    results
        .stage_seconds
        .insert("selections".into(), info.seconds);
    results.selections = sels.clone();

    let every_crate = code.of(&[
        "core",
        "envs",
        "profiling",
        "selection",
        "curriculum",
        "trainer",
    ]);
    let eval_deps = (&base_deps, &eval_key, &every_crate);
    let (base_eval, info) = run.stage("arms/base", &eval_deps, |_| {
        evaluate(&eval_key, &suite, &all, &base_model)
    })?;
    say("arms/base", &info);
    results.runs.push(ArmRun {
        arm: Arm::Base,
        seed: 0,
        train_envs: vec![],
        scores: base_eval.splits(&suite),
        per_env: base_eval.per_env.clone(),
        env_steps: 0,
        wall_seconds: info.seconds,
        curve: vec![],
        curriculum: None,
        reselections: vec![],
        env_steps_per_s: 0.0,
    });

    let train_key = TrainKey::of(cfg);
    let online = OnlineInputs {
        profiles: &profile_set,
        selections: &sel_key,
    };
    let run_arm = |name: String, label: &str, arm: Arm, seed: u32, plan: &ArmPlan| {
        let key = (&eval_deps, &sel_deps, &train_key, arm, seed, plan);
        let job = ArmJob {
            arm,
            label,
            seed,
            plan,
            key_hash: stable_hash(&key),
            interrupt_at: None,
        };
        let (r, info) = run.stage(&name, &key, |dir| {
            train_arm(
                &train_key,
                &eval_key,
                &suite,
                &pool,
                &base_model,
                &job,
                Some(&online),
                dir,
            )
        })?;
        say(&name, &info);
        anyhow::Ok(r)
    };
    for seed in 0..cfg.seeds {
        for &arm in cfg.arms.iter().filter(|a| **a != Arm::Base) {
            let plan = arm_plan(arm, seed, &pool, &sels, &train_key)?;
            let r = run_arm(
                format!("arms/{}/seed{seed}", arm.name()),
                arm.name(),
                arm,
                seed,
                &plan,
            )?;
            results.runs.push(r);
        }
        for &size in &cfg.scaling_sizes {
            let mut rng = Rng::derive(cfg.seed ^ 0x5343_414c, (size as u64) << 8 | seed as u64);
            let mut ids = pool.pool.clone();
            rng.shuffle(&mut ids);
            ids.truncate(size);
            ids.sort();
            let plan = ArmPlan {
                envs: ids,
                sampler: SamplerPlan::Hdc(Mode::BaselineH4),
                hint_style: cfg.hint_style,
                online: false,
            };
            let run = run_arm(
                format!("scaling/n{size}/seed{seed}"),
                &format!("scaling n={size}"),
                Arm::RandomK,
                seed,
                &plan,
            )?;
            results.scaling.push(ScalingPoint {
                pool_size: size,
                seed,
                run,
            });
        }
    }
    let trained: Vec<f32> = results
        .runs
        .iter()
        .filter(|r| r.arm != Arm::Base)
        .map(|r| r.env_steps_per_s)
        .filter(|v| *v > 0.0)
        .collect();
    results.facts.train_env_steps_per_s = trained.iter().sum::<f32>() / trained.len().max(1) as f32;
    results.total_seconds = t0.elapsed().as_secs_f64();
    results.compute_seconds = compute.get();
    results.analysis = super::analysis::analyse(&results);
    Ok(results)
}
