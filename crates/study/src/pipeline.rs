//! The stages wired in order. Each is cached in its directory under the key its own module
//! builds (see [`crate::stages`]), so rerunning the same configuration resumes where an earlier
//! run stopped and a changed section or crate recomputes exactly what depends on it.

use std::sync::Arc;
use std::time::Instant;

use envdist_core::{EnvId, GradientSet, HarnessLevel, ProfileSet, Turn};
use envdist_envs::{Suite, SuiteConfig};
use envdist_trainer::PolicyModel;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::cache::{StageKey, cached};
use crate::code::CodeVersion;
use crate::config::{CheckedConfig, ExperimentConfig};
use crate::error::Result;
use crate::layout::{RunLayout, Stage};
use crate::model::{Arm, SCALING_RECIPE};
use crate::model::{
    ArmRun, EnvSets, HarnessProbe, MatrixProbe, PreconditionRuns, Results, ScalingPoint,
    TransferRuns,
};
use crate::observer::Observer;
use crate::observer::StageInfo;
use crate::stages::arms::{self, ArmInputs, ArmJob, ArmPlan, OnlineInputs};
use crate::stages::pool::PoolStage;
use crate::stages::selections::SelectionSet;
use crate::stages::transfer::Harness;
use crate::stages::{base, eval, gradients, pool, preconditions, profiles, selections, transfer};

/// One run of the study: its directory, observer and what it has measured so far.
struct Study<'a> {
    layout: RunLayout,
    observer: &'a dyn Observer,
    results: Results,
    /// Compute time of every stage, whether computed now or loaded from the cache (then it is
    /// the time the run that computed it took), so a resumed run still reports the full cost.
    compute_seconds: f64,
}

impl Study<'_> {
    /// Run `stage` under `key` (or take it from the cache) and count its time.
    fn stage<T: Serialize + DeserializeOwned>(
        &mut self,
        stage: Stage,
        key: &StageKey,
        compute: impl FnOnce(&RunLayout) -> Result<T>,
    ) -> Result<T> {
        let name = stage.to_string();
        let layout = &self.layout;
        let (out, info): (T, StageInfo) =
            cached(&layout.stage_dir(stage), &name, key, self.observer, |_| {
                compute(layout)
            })?;
        self.compute_seconds += info.seconds;
        if !matches!(
            stage,
            Stage::Arm(..)
                | Stage::Scaling(..)
                | Stage::Transfer(..)
                | Stage::MatrixProbe(..)
                | Stage::HarnessProbe(..)
        ) {
            self.results.stage_seconds.insert(name, info.seconds);
        }
        Ok(out)
    }
}

/// Run the whole study into `run_dir` with the code of this library.
pub fn run_experiment(
    cfg: &CheckedConfig,
    run_dir: &std::path::Path,
    observer: &dyn Observer,
) -> Result<Results> {
    run_experiment_with(cfg, run_dir, &CodeVersion::current(), observer)
}

/// Run the whole study into `run_dir`, keying every stage on `code`.
pub fn run_experiment_with(
    cfg: &CheckedConfig,
    run_dir: &std::path::Path,
    code: &CodeVersion,
    observer: &dyn Observer,
) -> Result<Results> {
    let cfg: &ExperimentConfig = cfg;
    crate::ensure!(
        cfg.device.is_available(),
        "config field `device`: {} needs a build with `--features cuda`",
        cfg.device
    );
    let t0 = Instant::now();
    let layout = RunLayout::new(run_dir)?;
    // One process at a time per run directory; a killed run's lock is taken over.
    let _lock = layout.lock(&|h| {
        observer.note(&format!(
            "taking over {}: its holder, process {} ({}), is gone",
            layout.lock_file().display(),
            h.pid,
            h.command
        ))
    })?;
    envdist_core::io::write_json_atomic(layout.config_file(), cfg)?;
    let suite = Arc::new(Suite::new(SuiteConfig {
        hint_style: cfg.suite.hint_style,
        ..SuiteConfig::with_canvas(cfg.suite.canvas)
    })?);
    let mut s = Study {
        layout,
        observer,
        results: Results::new(cfg.clone(), code.info(), crate::code::this_machine()),
        compute_seconds: 0.0,
    };

    let pool_key = pool::key(cfg, code)?;
    let pool = s.stage(Stage::Pool, &pool_key, |_| pool::run(cfg, &suite))?;
    record_pool(&mut s.results, &pool, &suite);

    let profiles_key = profiles::key(cfg, code, &pool_key)?;
    let prof = s.stage(Stage::Profiles, &profiles_key, |l| {
        profiles::run(cfg, &suite, &pool, l, observer)
    })?;
    let f = &mut s.results.facts;
    f.atomic_abilities = prof.atomic_abilities;
    f.meta_abilities = prof.meta_abilities;
    f.twin_profile_cosine = prof.twin_profile_cosine;
    let profile_set = ProfileSet::read(s.layout.profiles_file())?;

    let base_key = base::key(cfg, code, &pool_key)?;
    let base_out = s.stage(Stage::Base, &base_key, |l| {
        base::run(cfg, suite.clone(), &pool, l, observer)
    })?;
    s.results.facts.base_clone_accuracy = base_out.clone.final_accuracy;
    let base_model = PolicyModel::load(&s.layout.base_checkpoint(), cfg.device)?;

    let all = pool.evaluated();
    let constant_key = eval::constant_key(cfg, code, &pool_key)?;
    s.results.constant_baseline = s.stage(Stage::ConstantBaseline, &constant_key, |_| {
        eval::constant_baselines(&cfg.evaluation(), &suite, &all)
    })?;

    let gradients_at = |s: &mut Study<'_>, harness: HarnessLevel| -> Result<_> {
        let key = gradients::key(cfg, code, &base_key, harness)?;
        let out = s.stage(Stage::Gradients(harness), &key, |l| {
            gradients::run(cfg, harness, &suite, &pool, &base_model, l, observer)
        })?;
        Ok((out, key))
    };
    let (grad, grad_key) = gradients_at(&mut s, HarnessLevel::H4)?;
    let grad_h0 = if cfg.polarisation {
        Some(gradients_at(&mut s, HarnessLevel::H0)?.0)
    } else {
        None
    };
    let grads = GradientSet::read(s.layout.gradients_file(HarnessLevel::H4))?;
    let f = &mut s.results.facts;
    f.gradients = Some(grad.pairs.clone());
    f.gradients_h0 = grad_h0.map(|g| g.pairs);
    f.gradient_split_half = grad.split_half_cosine_mean;
    f.zero_gradient_envs = grads.zero_rows().len();

    // Every training seed selects from gradients of its own (seed i: the master seed + i, so
    // other episodes and another projection): an AES arm's seeds then carry the selection's
    // noise, and the seeds' picks say how reproducible the selection is. Index 0's are the
    // master gradients (a development run's first seed); a confirmatory run's seeds all have
    // their own.
    let mut seed_grads = Vec::new();
    let mut grad_keys = Vec::new();
    for i in cfg.seed_indices() {
        if i == 0 {
            seed_grads.push(grads.clone());
            grad_keys.push(grad_key.clone());
            continue;
        }
        let seed_cfg = ExperimentConfig {
            seed: cfg.seed.wrapping_add(i as u64),
            ..cfg.clone()
        };
        let key = gradients::key(&seed_cfg, code, &base_key, HarnessLevel::H4)?
            .with("training_seed", &i)?;
        let seed_layout = RunLayout::at(s.layout.stage_dir(Stage::GradientsSeed(i)));
        s.stage(Stage::GradientsSeed(i), &key, |_| {
            let h4 = HarnessLevel::H4;
            gradients::run(
                &seed_cfg,
                h4,
                &suite,
                &pool,
                &base_model,
                &seed_layout,
                observer,
            )
        })?;
        seed_grads.push(GradientSet::read(
            seed_layout.gradients_file(HarnessLevel::H4),
        )?);
        grad_keys.push(key);
    }
    // The preconditions before anything that depends on them: `aes-transfer` selects with the
    // transfer matrix.
    let (pre, matrix_keys) = measure_preconditions(
        &mut s,
        cfg,
        code,
        &suite,
        &pool,
        &base_key,
        &base_model,
        &profile_set,
        &grads,
    )?;
    let response =
        preconditions::transfer_response(&pre, &pool.pool, cfg.transfer.aes_transfer_probes);
    s.results.precondition_runs = Some(pre);
    let sel_key = selections::key(cfg, code, &profiles_key, &grad_keys)?
        .with("transfer_matrix", &matrix_keys)?
        .with("aes_transfer_probes", &cfg.transfer.aes_transfer_probes)?;
    let sels: SelectionSet = s.stage(Stage::Selections, &sel_key, |_| {
        selections::run(cfg, &pool, &profile_set, &seed_grads, response.as_ref())
    })?;
    s.results.selections = sels.in_order();
    // How many of seed 0's AES picks seed 1's gradients keep (what a rerun of the gradients
    // stage keeps).
    let aes = |seed| {
        crate::model::EnvSource::Aes
            .at_seed(seed)
            .expect("a selection")
    };
    if cfg.seeds >= 2 {
        let first_seed = cfg.protocol.split.seed_base();
        let (first, again) = (
            &sels.get(aes(first_seed))?.envs,
            &sels.get(aes(first_seed + 1))?.envs,
        );
        s.results.facts.aes_rerun_kept = Some(again.iter().filter(|e| first.contains(e)).count());
    }

    if cfg.transfer.probes > 0 {
        let probes = transfer::probes(&suite, &pool, cfg.transfer.probes, cfg.seed);
        let key = transfer::base_key(cfg, code, &base_key, &probes)?;
        let targets = transfer::targets(&probes);
        let base_scores = s.stage(Stage::TransferBase, &key, |_| {
            Ok(eval::evaluate(&transfer::eval_config(cfg), &suite, &targets, &base_model)?.means())
        })?;
        let mut runs = Vec::new();
        for (i, probe) in probes.iter().enumerate() {
            let key = transfer::probe_key(cfg, code, &base_key, probe)?;
            runs.push(s.stage(Stage::Transfer(i), &key, |_| {
                transfer::run_probe(cfg, &cfg.transfer, &suite, &base_model, probe, observer)
            })?);
        }
        let cosines = probes
            .iter()
            .flat_map(|p| {
                p.targets
                    .iter()
                    .map(move |(t, _)| (p.source.clone(), t.clone()))
            })
            .filter(|(a, b)| a != b)
            .filter_map(|(a, b)| {
                let (i, j) = (grads.index_of(&a)?, grads.index_of(&b)?);
                Some((a, b, grads.cosine(i, j)))
            })
            .collect();
        s.results.transfer = Some(TransferRuns {
            base: base_scores,
            runs,
            cosines,
        });
    }

    let base_eval_key = eval::base_eval_key(cfg, code, &base_key)?;
    let base_eval = s.stage(Stage::BaseEval, &base_eval_key, |_| {
        eval::evaluate(&cfg.evaluation(), &suite, &all, &base_model)
    })?;
    s.results.runs.push(ArmRun {
        scores: base_eval.splits(&suite),
        wall_seconds: s.results.stage_seconds["arms/base"],
        ..ArmRun::evaluated(Arm::base(), 0, base_eval.per_env.clone())
    });

    let inputs = ArmInputs {
        cfg,
        suite: &suite,
        pool: &pool,
        base: &base_model,
        online: Some(OnlineInputs {
            profiles: &profile_set,
        }),
    };
    let train = |s: &mut Study<'_>, stage: Stage, label: &str, arm: Arm, seed, plan: &ArmPlan| {
        let key = arms::key(cfg, code, &base_key, &profiles_key, plan, seed)?;
        let job = ArmJob {
            arm,
            label,
            seed,
            plan,
            key_hash: key.hash()?,
            interrupt_at: None,
        };
        s.stage(stage, &key, |l| {
            arms::train_arm(&inputs, &job, &l.arm_files(stage), observer)
        })
    };
    for seed in cfg.seed_indices() {
        for &arm in cfg.arms.iter().filter(|a| !a.is_base()) {
            let plan = arms::plan(arm, seed, cfg, &pool, &sels)?;
            let run = train(&mut s, Stage::Arm(arm, seed), arm.name(), arm, seed, &plan)?;
            s.results.runs.push(run);
        }
        for &size in &cfg.scaling_sizes {
            let plan = arms::scaling_plan(size, seed, cfg, &pool);
            let label = format!("scaling n={size}");
            let stage = Stage::Scaling(size, seed);
            let run = train(&mut s, stage, &label, SCALING_RECIPE, seed, &plan)?;
            s.results.scaling.push(ScalingPoint {
                pool_size: size,
                seed,
                run,
            });
        }
    }

    let mut results = s.results;
    let trained: Vec<f32> = results
        .runs
        .iter()
        .filter(|r| !r.arm.is_base())
        .map(|r| r.env_steps_per_s)
        .filter(|v| *v > 0.0)
        .collect();
    results.facts.train_env_steps_per_s = trained.iter().sum::<f32>() / trained.len().max(1) as f32;
    results.total_seconds = t0.elapsed().as_secs_f64();
    results.compute_seconds = s.compute_seconds;
    results.analysis = crate::analysis::analyse(&results);
    results.preconditions = crate::preconditions::analyse(
        &results,
        results.analysis.as_ref(),
        response.as_ref(),
        Some(&profile_set),
    );
    if let (Some(a), Some(p)) = (results.analysis.as_mut(), results.preconditions.as_ref()) {
        crate::analysis::apply_testability(a, &p.testable);
    }
    Ok(results)
}

/// The precondition stages ([`preconditions`]): the base at every harness level, then the
/// transfer matrix's probes and the harness probes (skipped when `transfer.matrix_probes` is
/// 0). The probes' total compute is recorded as two `stage_seconds` entries. Also returns
/// the matrix probes' key hashes, which key what is computed from the matrix.
#[allow(clippy::too_many_arguments)]
fn measure_preconditions(
    s: &mut Study<'_>,
    cfg: &ExperimentConfig,
    code: &CodeVersion,
    suite: &Arc<Suite>,
    pool: &PoolStage,
    base_key: &StageKey,
    base_model: &PolicyModel,
    profile_set: &ProfileSet,
    grads: &GradientSet,
) -> Result<(PreconditionRuns, Vec<String>)> {
    let key = preconditions::by_harness_key(cfg, code, base_key)?;
    let base_by_harness = s.stage(Stage::BaseByHarness, &key, |_| {
        preconditions::base_by_harness(cfg, suite, &pool.pool, base_model)
    })?;
    let mut runs = PreconditionRuns {
        base_by_harness,
        ..PreconditionRuns::default()
    };
    let t = &cfg.transfer;
    let mut matrix_keys = Vec::new();
    if t.matrix_probes == 0 {
        return Ok((runs, matrix_keys));
    }
    let targets = pool.evaluated();
    let key = transfer::targets_base_key(cfg, code, base_key, &targets)?;
    matrix_keys.push(key.hash()?);
    runs.base = s.stage(Stage::MatrixBase, &key, |_| {
        preconditions::run_matrix_base(cfg, suite, &targets, base_model)
    })?;
    let sources =
        preconditions::sources(&pool.pool, profile_set, t.matrix_probes, t.strata, cfg.seed);
    let observer = s.observer;
    for (harness, n, name) in [
        (Harness::H4, sources.len(), "preconditions/matrix"),
        (
            Harness::Scaffolded,
            t.harness_probes,
            "preconditions/harness",
        ),
    ] {
        let before = s.compute_seconds;
        for (i, src) in sources.iter().take(n).enumerate() {
            // The harness probes are measured on their source alone.
            let on: &[EnvId] = match harness {
                Harness::H4 => &targets,
                Harness::Scaffolded => std::slice::from_ref(&src.env),
            };
            let key = preconditions::probe_key(cfg, code, base_key, &src.env, on, harness)?;
            if harness == Harness::H4 {
                matrix_keys.push(key.hash()?);
            }
            let stage = match harness {
                Harness::H4 => Stage::MatrixProbe(i),
                Harness::Scaffolded => Stage::HarnessProbe(i),
            };
            let out = s.stage(stage, &key, |_| {
                preconditions::run_probe(cfg, suite, base_model, &src.env, on, harness, observer)
            })?;
            match harness {
                Harness::H4 => {
                    let (profile_overlap, gradient_cosine) =
                        preconditions::similarities(&src.env, &targets, profile_set, grads);
                    runs.matrix.push(MatrixProbe {
                        source: src.env.clone(),
                        stratum: src.stratum,
                        after: out.after,
                        profile_overlap,
                        gradient_cosine,
                        final_train_success: out.final_train_success,
                    });
                }
                Harness::Scaffolded => runs.harness.push(HarnessProbe {
                    source: src.env.clone(),
                    after: out.after[0],
                    final_train_success: out.final_train_success,
                }),
            }
        }
        let spent = s.compute_seconds - before;
        s.results.stage_seconds.insert(name.into(), spent);
    }
    runs.targets = targets;
    Ok((runs, matrix_keys))
}

/// The pool's facts and environment sets.
fn record_pool(results: &mut Results, pool: &PoolStage, suite: &Suite) {
    let f = &mut results.facts;
    f.pool_envs = pool.pool.len();
    f.pool_families = pool.families;
    f.ood_envs = pool.ood.len();
    f.conflict_pairs = pool.conflict_pairs.len();
    f.control_envs = pool.control.len();
    let all = pool.evaluated();
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
}
