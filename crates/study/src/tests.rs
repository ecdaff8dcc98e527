//! The whole study on the `smoke` preset: every arm of every seed present, scores in [0, 1],
//! every file versioned, the numbers equal to the committed record (docs/experiments/smoke), a
//! rerun reusing every cached stage, a change of one crate's code or of one section
//! recomputing exactly the stages that use it, and an arm interrupted mid-training resuming to
//! the same result.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use envdist_core::{ProfileSet, Validate};
use envdist_envs::Suite;
use envdist_trainer::PolicyModel;

use crate::cache::StageKey;
use crate::code::{CodeVersion, Crate};
use crate::config::{ExperimentConfig, Preset};
use crate::layout::{RunLayout, Stage, unversioned_files};
use crate::model::Arm;
use crate::model::ArmRun;
use crate::observer::{Recorder, Silent};
use crate::stages::arms::{self, ArmInputs, ArmJob, OnlineInputs};
use crate::stages::pool::PoolStage;
use crate::stages::selections::SelectionSet;

const COMMAND: &str = "cargo xtask experiment --preset smoke --out docs/experiments/smoke";

fn record_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/experiments/smoke")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("envdist-study-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The numbers a record pins: every run's per-env scores, the claims' differences, verdicts
/// and Holm-adjusted p-values, the selections, the baselines. Read from the JSON, so that a
/// record written under an older configuration schema is still compared number by number.
fn numbers(r: &serde_json::Value) -> serde_json::Value {
    use serde_json::{Value, json};
    let pick = |v: &Value, keys: &[&str]| -> Value {
        Value::Object(
            keys.iter()
                .map(|k| (k.to_string(), v.get(*k).cloned().unwrap_or(Value::Null)))
                .collect(),
        )
    };
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    let runs: Vec<Value> = list(&r["runs"])
        .iter()
        .chain(list(&r["scaling"]).iter().map(|p| &p["run"]))
        .map(|x| {
            pick(
                x,
                &[
                    "arm",
                    "seed",
                    "per_env",
                    "train_envs",
                    "curriculum",
                    "reselections",
                ],
            )
        })
        .collect();
    // A change to the analysis (dropping the Holm step, a verdict rule) moves the record as a
    // change to a stage does.
    let claims: Vec<Value> = list(&r["analysis"]["claims"])
        .iter()
        .map(|c| {
            pick(
                c,
                &["id", "primary", "difference", "verdict", "p_holm", "mde"],
            )
        })
        .collect();
    json!({
        "runs": runs,
        "claims": claims,
        "selections": r["selections"],
        "constant_baseline": r["constant_baseline"],
        "facts": pick(&r["facts"], &["zero_gradient_envs", "meta_abilities"]),
    })
}

/// The JSON path of the first place where `a` and `b` differ, with both values there.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: String) -> Option<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .keys()
            .chain(y.keys().filter(|k| !x.contains_key(*k)))
            .find_map(|k| {
                let (u, v) = (x.get(k), y.get(k));
                let here = format!("{at}.{k}");
                match (u, v) {
                    (Some(u), Some(v)) => first_difference(u, v, here),
                    _ => Some(format!("{here}: record {u:?}, this run {v:?}")),
                }
            }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{at}: record {a}, this run {b}")),
    }
}

fn stage_output<T: serde::de::DeserializeOwned>(layout: &RunLayout, stage: Stage) -> T {
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(layout.stage_dir(stage).join("stage.json")).unwrap(),
    )
    .unwrap();
    serde_json::from_value(v["output"].clone()).unwrap()
}

/// The stages a rerun of `cfg` in `dir` under `code` computes (all others come from the cache).
/// A training stage's TensorBoard event file holds its training log: one event per logged
/// update, each step once, at the update's env steps, with its numbers.
fn assert_tensorboard_holds_the_log(files: &crate::layout::ArmFiles, what: &str) {
    use envdist_trainer::tensorboard::{self, EventBody};
    let run = files.run();
    let events_files = run.tensorboard_events();
    assert_eq!(events_files.len(), 1, "{what}: {events_files:?}");
    let events = tensorboard::read_events(&events_files[0]).unwrap();
    let log = run.read_log().unwrap();
    assert!(!log.is_empty(), "{what}");
    assert_eq!(events.len(), log.len() + 1, "{what}: one event per update");
    for (stats, event) in log.iter().zip(&events[1..]) {
        assert_eq!(event.step as u64, stats.env_steps, "{what}");
        assert_eq!(
            event.body,
            EventBody::Scalars(stats.tensorboard_scalars()),
            "{what} at {}",
            event.step
        );
    }
}

fn recomputed(cfg: &ExperimentConfig, dir: &Path, code: &CodeVersion) -> Vec<String> {
    let recorder = Recorder::default();
    crate::run_experiment_with(&cfg.clone().checked().unwrap(), dir, code, &recorder).unwrap();
    let mut stages = recorder.computed();
    stages.sort();
    stages
}

fn online_arms(cfg: &ExperimentConfig) -> Vec<String> {
    (0..cfg.seeds)
        .map(|s| Stage::Arm(Arm::AesHdcOnline, s).to_string())
        .collect()
}

#[test]
fn smoke_study_matches_its_record_resumes_and_recomputes_exactly_what_changed() {
    let dir = temp_dir("smoke");
    let cfg = ExperimentConfig::preset(Preset::Smoke);
    let checked = cfg.clone().checked().unwrap();
    let results = crate::run_and_report(&checked, &dir, COMMAND, &Silent).expect("smoke study");
    // The training logs of the arms resumed below, as this run wrote them (the recomputations
    // further down retrain some arms in place, under other configurations).
    let resumed_arms = [Arm::AesHdc, Arm::AesHdcOnline, Arm::Plr];
    let clean_logs: Vec<Vec<envdist_trainer::UpdateStats>> = resumed_arms
        .iter()
        .map(|&arm| {
            RunLayout::at(&dir)
                .arm_files(Stage::Arm(arm, 0))
                .run()
                .read_log()
                .unwrap()
        })
        .collect();

    for arm in &cfg.arms {
        let runs = results.arm_runs(*arm);
        let expected = if *arm == Arm::Base {
            1
        } else {
            cfg.seeds as usize
        };
        assert_eq!(runs.len(), expected, "arm {} runs", arm.name());
        for r in runs {
            for (env, s) in &r.per_env {
                assert!(s.iter().all(|s| (0.0..=1.0).contains(s)), "{env}: {s:?}");
            }
            if *arm != Arm::Base {
                // An arm whose selection trained (aes-transfer's probes) trains that much less.
                let charged = arm.recipe().is_some_and(|r| r.charges_probes());
                let budget = cfg.rl.total_env_steps
                    - if charged {
                        cfg.aes_transfer_charge()
                    } else {
                        0
                    };
                assert!(
                    r.env_steps >= budget && (!charged || r.env_steps < cfg.rl.total_env_steps),
                    "{} trained {} of a budget of {budget}",
                    arm.name(),
                    r.env_steps
                );
                assert_tensorboard_holds_the_log(
                    &RunLayout::at(&dir).arm_files(Stage::Arm(*arm, r.seed)),
                    &format!("{} seed {}", arm.name(), r.seed),
                );
            }
        }
    }
    let analysis = results.analysis.as_ref().expect("analysis");
    assert!(analysis.claims.len() >= 10, "every claim tested");
    let unversioned = unversioned_files(&dir);
    assert!(
        unversioned.is_empty(),
        "files without schema_version: {unversioned:?}"
    );
    let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    // The preconditions: measured before the arms, shown first.
    let pre = results.preconditions.as_ref().expect("preconditions");
    assert_eq!(pre.base_by_harness.len(), 5, "every harness level");
    let runs = results.precondition_runs.as_ref().unwrap();
    assert_eq!(runs.matrix.len(), cfg.transfer.matrix_probes);
    assert_eq!(runs.harness.len(), cfg.transfer.harness_probes);
    assert!(
        runs.matrix
            .iter()
            .all(|m| m.after.len() == runs.targets.len())
    );
    assert_eq!(pre.testable.len(), 4);
    let (at_preconditions, at_verdicts) = (
        report
            .find("## Preconditions")
            .expect("a preconditions section"),
        report.find("## Verdicts").unwrap(),
    );
    assert!(at_preconditions < at_verdicts, "preconditions come first");
    for section in [
        "## Verdicts on the paper's claims",
        "## Main table",
        "## HDC",
        "## Control pool",
    ] {
        assert!(report.contains(section), "REPORT.md lacks {section}");
    }

    // The committed record: a code change that moves the numbers must update it.
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(record_dir().join("results.json"))
            .expect("docs/experiments/smoke/results.json"),
    )
    .unwrap();
    // Through text, as the record was: an f32 is written as its shortest decimal.
    let results_json: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&results).unwrap()).unwrap();
    let (want, got) = (numbers(&record), numbers(&results_json));
    assert!(
        want == got,
        "the smoke study no longer reproduces docs/experiments/smoke (first difference: {}; this \
         run's output is in {}): if the change is meant to move the numbers, regenerate the \
         record with `{COMMAND}`",
        first_difference(&want, &got, String::new()).unwrap_or_default(),
        dir.display()
    );

    // The record ships the selection's inputs, so that `envdist.select` (Python) and
    // `xtask select` can be checked against the study's AES on them: they must be this run's.
    let layout = RunLayout::at(&dir);
    assert!(
        std::fs::read(record_dir().join("profiles.json")).unwrap()
            == std::fs::read(layout.profiles_file()).unwrap(),
        "docs/experiments/smoke/profiles.json is not what the smoke study writes: copy {}",
        layout.profiles_file().display()
    );
    // safetensors headers hold a map in no fixed order: compare the sets, not the bytes.
    let written = layout.gradients_file(envdist_core::HarnessLevel::H4);
    assert!(
        envdist_core::GradientSet::read(record_dir().join("gradients.safetensors")).unwrap()
            == envdist_core::GradientSet::read(&written).unwrap(),
        "docs/experiments/smoke/gradients.safetensors is not what the smoke study writes: copy {}",
        written.display()
    );

    // Rerun: every stage comes from the cache.
    let code = CodeVersion::current();
    assert_eq!(recomputed(&cfg, &dir, &code), Vec::<String>::new());

    // A change to one crate recomputes the stages that run its code (directly or through an
    // upstream stage) and no other: selection's code feeds the selections and the online arm's
    // re-selections; the other arms train on the selections' environment lists, which are
    // unchanged, so they stay cached.
    let selection_changed = CodeVersion::with_changed(&[Crate::Selection], "edited");
    let mut expected = online_arms(&cfg);
    expected.push("selections".into());
    expected.sort();
    assert_eq!(recomputed(&cfg, &dir, &selection_changed), expected);
    // Changing the online schedule retrains only the online arm.
    let mut every = cfg.clone();
    every.online.every_steps += 128;
    assert_eq!(
        recomputed(&every, &dir, &selection_changed),
        online_arms(&cfg)
    );

    // An arm interrupted mid-training resumes from its checkpoint to the same result and the
    // same diagnostics: every update's log line (KL to the base included) but its timings.
    let pool: PoolStage = stage_output(&layout, Stage::Pool);
    let sels: SelectionSet = stage_output(&layout, Stage::Selections);
    let suite = Arc::new(Suite::with_canvas(cfg.suite.canvas).unwrap());
    let base = PolicyModel::load(&layout.base_checkpoint(), cfg.device).unwrap();
    let profiles = ProfileSet::read(layout.profiles_file()).unwrap();
    let inputs = ArmInputs {
        cfg: &cfg,
        suite: &suite,
        pool: &pool,
        base: &base,
        online: Some(OnlineInputs {
            profiles: &profiles,
        }),
    };
    for (arm, clean_log) in resumed_arms.into_iter().zip(&clean_logs) {
        let plan = arms::plan(arm, 0, &cfg, &pool, &sels).unwrap();
        let files = crate::layout::ArmFiles::in_dir(temp_dir(&format!(
            "smoke-resume-{}",
            arm.name().replace('+', "-")
        )));
        let job = |interrupt_at| ArmJob {
            arm,
            label: arm.name(),
            seed: 0,
            plan: &plan,
            key_hash: "test".into(),
            interrupt_at,
        };
        let stop = cfg.rl.total_env_steps / 2 + 1;
        let e = arms::train_arm(&inputs, &job(Some(stop)), &files, &Silent).unwrap_err();
        assert!(e.to_string().contains("interrupted"), "{e}");
        let resumed = arms::train_arm(&inputs, &job(None), &files, &Silent).unwrap();
        let clean: &ArmRun = results
            .arm_runs(arm)
            .into_iter()
            .find(|r| r.seed == 0)
            .unwrap();
        assert_eq!(resumed.per_env, clean.per_env, "{} resumed", arm.name());
        assert_eq!(resumed.curve, clean.curve, "{} resumed", arm.name());
        assert_eq!(
            resumed.curriculum,
            clean.curriculum,
            "{} resumed",
            arm.name()
        );
        assert_eq!(
            resumed.reselections,
            clean.reselections,
            "{} resumed",
            arm.name()
        );
        assert_eq!(
            resumed.diagnostics,
            clean.diagnostics,
            "{} resumed",
            arm.name()
        );
        let resumed_log = files.run().read_log().unwrap();
        assert!(!clean_log.is_empty());
        assert_eq!(
            untimed(&resumed_log),
            untimed(clean_log),
            "{} resumed: the training log",
            arm.name()
        );
        assert!(
            resumed_log
                .iter()
                .filter(|u| !u.value_only)
                .all(|u| u.kl_to_start.is_some()),
            "{} resumed: every update after the warm-up has its KL to the base",
            arm.name()
        );
        assert_tensorboard_holds_the_log(&files, &format!("{} resumed", arm.name()));
        let _ = std::fs::remove_dir_all(files.dir());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A training log without its wall-clock fields (the only ones a resume may change).
fn untimed(log: &[envdist_trainer::UpdateStats]) -> Vec<envdist_trainer::UpdateStats> {
    log.iter()
        .map(|u| envdist_trainer::UpdateStats {
            rollout_seconds: 0.0,
            rollout_infer_seconds: 0.0,
            learn_seconds: 0.0,
            seconds: 0.0,
            env_steps_per_second: 0.0,
            ..u.clone()
        })
        .collect()
}

/// Which stage keys change when one crate's code changes, computed from the key functions
/// alone (no stage runs): every stage that runs a crate's code, directly or through an
/// upstream stage, and no other.
#[test]
fn a_crate_change_invalidates_the_stages_that_use_it_and_no_other() {
    use crate::stages::{base, eval, gradients, pool as pool_stage, profiles, selections};
    use envdist_core::HarnessLevel;
    let cfg = ExperimentConfig::preset(Preset::Smoke);
    let pool = PoolStage {
        pool: vec![envdist_core::EnvId::new("maze/classic")],
        ood: vec![],
        families: 1,
        conflict_pairs: vec![],
        control: vec![],
    };
    let sels = SelectionSet::from_summaries([crate::model::SelectionSummary {
        name: crate::model::EnvSource::Aes
            .at_seed(0)
            .expect("a selection"),
        envs: pool.pool.clone(),
        covered: 1,
        coverable: 1,
        mean_pairwise_cosine: None,
        conflicting_pairs: 0,
        certificate_gap: None,
        note: None,
    }]);
    let keys = |code: &CodeVersion| -> Vec<(String, String)> {
        let mut out: Vec<(String, StageKey)> = Vec::new();
        let p = pool_stage::key(&cfg, code).unwrap();
        let pr = profiles::key(&cfg, code, &p).unwrap();
        let b = base::key(&cfg, code, &p).unwrap();
        let g = gradients::key(&cfg, code, &b, HarnessLevel::H4).unwrap();
        let s = selections::key(&cfg, code, &pr, std::slice::from_ref(&g)).unwrap();
        out.push((
            "constant-baseline".into(),
            eval::constant_key(&cfg, code, &p).unwrap(),
        ));
        out.push((
            "arms/base".into(),
            eval::base_eval_key(&cfg, code, &b).unwrap(),
        ));
        for arm in [Arm::Aes, Arm::AesHdcOnline] {
            let plan = arms::plan(arm, 0, &cfg, &pool, &sels).unwrap();
            let k = arms::key(&cfg, code, &b, &pr, &plan, 0).unwrap();
            out.push((Stage::Arm(arm, 0).to_string(), k));
        }
        out.extend([
            ("pool".to_string(), p),
            ("profiles".into(), pr),
            ("base".into(), b),
            ("gradients".into(), g),
            ("selections".into(), s),
        ]);
        out.into_iter()
            .map(|(n, k)| (n, k.hash().unwrap()))
            .collect()
    };
    let before = keys(&CodeVersion::current());
    let changed = |c: Crate| -> Vec<String> {
        let after = keys(&CodeVersion::with_changed(&[c], "x"));
        let mut names: Vec<String> = before
            .iter()
            .zip(&after)
            .filter(|(a, b)| a.1 != b.1)
            .map(|(a, _)| a.0.clone())
            .collect();
        names.sort();
        names
    };
    let all = [
        "arms/aes+hdc-online/seed0",
        "arms/aes/seed0",
        "arms/base",
        "base",
        "constant-baseline",
        "gradients",
        "pool",
        "profiles",
        "selections",
    ];
    let of = |names: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(changed(Crate::Core), of(&all));
    assert_eq!(changed(Crate::Envs), of(&all));
    assert_eq!(changed(Crate::Stages), of(&all));
    assert_eq!(changed(Crate::Lock), of(&all));
    assert_eq!(
        changed(Crate::Profiling),
        of(&["profiles", "selections", "arms/aes+hdc-online/seed0"])
    );
    assert_eq!(
        changed(Crate::Selection),
        of(&["selections", "arms/aes+hdc-online/seed0"])
    );
    let downstream_of_base = [
        "base",
        "gradients",
        "selections",
        "arms/base",
        "arms/aes/seed0",
        "arms/aes+hdc-online/seed0",
    ];
    assert_eq!(changed(Crate::Curriculum), of(&downstream_of_base));
    let mut trainer = downstream_of_base.to_vec();
    trainer.push("constant-baseline");
    assert_eq!(changed(Crate::Trainer), of(&trainer));
}

/// Evaluation plays every task of every environment in one batch (one inference per step for
/// all running episodes); it must score exactly as playing each environment on its own.
#[test]
fn batched_evaluation_equals_one_environment_at_a_time() {
    use crate::config::EvalConfig;
    use crate::stages::eval::evaluate;
    let suite = Suite::with_canvas(16).unwrap();
    let factory: Arc<dyn envdist_core::EnvFactory> = Arc::new(Suite::with_canvas(16).unwrap());
    let mut cfg = envdist_trainer::TrainConfig::of(envdist_trainer::TrainPreset::Tiny);
    cfg.seed = 4;
    let model = envdist_trainer::Trainer::new(cfg, factory, envdist_trainer::Device::Cpu)
        .unwrap()
        .policy();
    let envs: Vec<envdist_core::EnvId> = [
        "maze/classic",
        "count-objects/classic",
        "key-door/classic",
        "symmetry/classic",
        "collect/avoid-red",
        "tic-tac-toe/classic",
    ]
    .iter()
    .map(|e| envdist_core::EnvId::new(*e))
    .collect();
    let eval = EvalConfig {
        episodes: 5,
        ..EvalConfig::default()
    };
    let together = evaluate(&eval, &suite, &envs, &model).unwrap();
    let all: Vec<f32> = together.per_env.values().flatten().copied().collect();
    assert!(
        all.iter().any(|s| *s > 0.0) && all.iter().any(|s| *s < 1.0),
        "scores that can tell evaluations apart: {all:?}"
    );
    for e in &envs {
        let alone = evaluate(&eval, &suite, std::slice::from_ref(e), &model).unwrap();
        assert_eq!(alone.per_env[e], together.per_env[e], "{e}");
    }
}

#[test]
fn first_difference_names_the_path_and_both_values() {
    let a = serde_json::json!({"runs": [{"arm": "aes", "per_env": {"maze": [0.5, 0.25]}}]});
    let b = serde_json::json!({"runs": [{"arm": "aes", "per_env": {"maze": [0.5, 0.75]}}]});
    assert_eq!(
        first_difference(&a, &b, String::new()).unwrap(),
        ".runs[0].per_env.maze[1]: record 0.25, this run 0.75"
    );
    assert_eq!(first_difference(&a, &a, String::new()), None);
}

/// A pilot may train another network than its preset's (`rl.model`: the base clones into it
/// and the arms start from it); the base's key names the network only then, so the records
/// made at the presets' networks keep their cached stages.
#[test]
fn the_base_key_names_the_network_only_where_it_is_not_the_presets() {
    use crate::stages::{base, pool as pool_stage};
    let code = CodeVersion::current();
    let cfg = ExperimentConfig::preset(Preset::Smoke);
    assert!(cfg.custom_network().is_none());
    let p = pool_stage::key(&cfg, &code).unwrap();
    let preset_key = base::key(&cfg, &code, &p).unwrap();
    assert!(preset_key.part("network").is_none());

    let mut wider = cfg.clone();
    wider.rl.model.image_size *= 2;
    wider.validate().unwrap();
    assert_eq!(wider.custom_network(), Some(&wider.rl.model));
    let wider_key = base::key(&wider, &code, &p).unwrap();
    assert_eq!(
        wider_key.part("network").and_then(|n| n.get("image_size")),
        Some(&serde_json::json!(wider.rl.model.image_size))
    );
    assert_ne!(preset_key.hash().unwrap(), wider_key.hash().unwrap());
}
