//! The whole study on the `smoke` preset: every arm of every seed present, scores in [0, 1],
//! every file versioned, the numbers equal to the committed record (docs/experiments/smoke), a
//! rerun reusing every cached stage, a code change invalidating the caches, and an arm
//! interrupted mid-training resuming to the same result.

use std::path::{Path, PathBuf};

use envdist_core::{EnvId, ProfileSet};
use envdist_envs::Suite;
use envdist_trainer::PolicyModel;
use xtask::experiment::code::CodeVersion;
use xtask::experiment::config::{Arm, ExperimentConfig, Preset};
use xtask::experiment::results::{ArmRun, Results, SelectionSummary};
use xtask::experiment::stages::arms::{ArmJob, OnlineInputs, TrainKey, arm_plan, train_arm};
use xtask::experiment::stages::eval::EvalKey;
use xtask::experiment::stages::pool::PoolStage;
use xtask::experiment::stages::selections::SelectionsKey;

use crate::temp_dir;

const COMMAND: &str = "cargo xtask experiment --preset smoke --out docs/experiments/smoke";

fn record_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/experiments/smoke")
}

/// The numbers a record pins: every run's per-env scores, the selections, the baselines.
fn numbers(r: &Results) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = r
        .runs
        .iter()
        .chain(r.scaling.iter().map(|p| &p.run))
        .map(|x| {
            serde_json::json!({
                "arm": x.arm, "seed": x.seed, "per_env": x.per_env,
                "train_envs": x.train_envs, "curriculum": x.curriculum,
                "reselections": x.reselections,
            })
        })
        .collect();
    serde_json::json!({
        "runs": runs,
        "selections": r.selections,
        "constant_baseline": r.constant_baseline,
        "facts": {"zero_gradient_envs": r.facts.zero_gradient_envs,
                  "meta_abilities": r.facts.meta_abilities},
    })
}

fn stage_output<T: serde::de::DeserializeOwned>(dir: &Path, stage: &str) -> T {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(stage).join("stage.json")).unwrap())
            .unwrap();
    serde_json::from_value(v["output"].clone()).unwrap()
}

#[test]
fn smoke_study_runs_matches_its_record_resumes_and_recomputes_on_code_change() {
    let dir = temp_dir("smoke");
    let cfg = ExperimentConfig::preset(Preset::Smoke);
    let results = xtask::experiment::run_and_report(&cfg, &dir, COMMAND).expect("smoke study");

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
                assert!(
                    r.env_steps >= cfg.train_steps,
                    "{} trained {}",
                    arm.name(),
                    r.env_steps
                );
            }
        }
    }
    let analysis = results.analysis.as_ref().expect("analysis");
    assert!(analysis.claims.len() >= 10, "every claim tested");
    let unversioned = crate::tidy::files_without_schema_version(&dir);
    assert!(
        unversioned.is_empty(),
        "files without schema_version: {unversioned:?}"
    );
    let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    for section in [
        "## Verdicts on the paper's claims",
        "## Main table",
        "## HDC",
        "## Control pool",
    ] {
        assert!(report.contains(section), "REPORT.md lacks {section}");
    }

    // The committed record: a code change that moves the numbers must update it.
    let record: Results = serde_json::from_str(
        &std::fs::read_to_string(record_dir().join("results.json"))
            .expect("docs/experiments/smoke/results.json"),
    )
    .unwrap();
    assert!(
        numbers(&record) == numbers(&results),
        "the smoke study no longer reproduces docs/experiments/smoke: if the change is meant to \
         move the numbers, regenerate the record with `{COMMAND}`"
    );

    // Rerun: every stage comes from the cache.
    let again = xtask::experiment::run_and_report(&cfg, &dir, COMMAND).expect("rerun");
    assert_eq!(numbers(&again), numbers(&results));

    // An arm interrupted mid-training resumes from its checkpoint to the same result.
    let pool: PoolStage = stage_output(&dir, "pool");
    let sels: Vec<SelectionSummary> = stage_output(&dir, "selections");
    let suite = std::sync::Arc::new(Suite::with_canvas(cfg.canvas).unwrap());
    let base = PolicyModel::load(&dir.join("base/checkpoint"), cfg.device).unwrap();
    let profiles = ProfileSet::read(dir.join("profiles/profiles.json")).unwrap();
    let sel_key = SelectionsKey {
        k: cfg.k,
        seeds: cfg.seeds,
        seed: cfg.seed,
        zero_gradient: cfg.gradients.zero_gradient,
    };
    let online = OnlineInputs {
        profiles: &profiles,
        selections: &sel_key,
    };
    let train = TrainKey::of(&cfg);
    let eval = EvalKey {
        episodes: cfg.eval.episodes,
        scales: cfg.eval.scales.clone(),
    };
    for arm in [Arm::AesHdc, Arm::AesHdcOnline, Arm::Plr] {
        let plan = arm_plan(arm, 0, &pool, &sels, &train).unwrap();
        let resumed_dir = temp_dir(&format!("smoke-resume-{}", arm.name().replace('+', "-")));
        let job = |interrupt_at| ArmJob {
            arm,
            label: arm.name(),
            seed: 0,
            plan: &plan,
            key_hash: "test".into(),
            interrupt_at,
        };
        let stop = cfg.train_steps / 2 + 1;
        let e = train_arm(
            &train,
            &eval,
            &suite,
            &pool,
            &base,
            &job(Some(stop)),
            Some(&online),
            &resumed_dir,
        )
        .unwrap_err();
        assert!(e.to_string().contains("interrupted"), "{e}");
        let resumed = train_arm(
            &train,
            &eval,
            &suite,
            &pool,
            &base,
            &job(None),
            Some(&online),
            &resumed_dir,
        )
        .unwrap();
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
        let _ = std::fs::remove_dir_all(&resumed_dir);
    }

    // A code change recomputes the stages it can affect; the same code reuses them.
    let small = ExperimentConfig {
        arms: vec![Arm::Base, Arm::Aes],
        seeds: 1,
        scaling_sizes: vec![],
        ..cfg.clone()
    };
    let code_dir = temp_dir("smoke-code");
    let key_of = |stage: &str| -> String {
        let v: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(code_dir.join(stage).join("stage.json")).unwrap(),
        )
        .unwrap();
        v["key_hash"].as_str().unwrap().to_string()
    };
    let first =
        xtask::experiment::run::run_experiment_with(&small, &code_dir, &CodeVersion::fake("a"))
            .unwrap();
    let keys_a: Vec<String> = ["pool", "base", "arms/aes/seed0"]
        .iter()
        .map(|s| key_of(s))
        .collect();
    let same =
        xtask::experiment::run::run_experiment_with(&small, &code_dir, &CodeVersion::fake("a"))
            .unwrap();
    assert_eq!(numbers(&same), numbers(&first));
    let changed =
        xtask::experiment::run::run_experiment_with(&small, &code_dir, &CodeVersion::fake("b"))
            .unwrap();
    let keys_b: Vec<String> = ["pool", "base", "arms/aes/seed0"]
        .iter()
        .map(|s| key_of(s))
        .collect();
    for (a, b) in keys_a.iter().zip(&keys_b) {
        assert_ne!(a, b, "every stage was recomputed under the new code");
    }
    assert_eq!(
        numbers(&changed),
        numbers(&first),
        "same code in fact: same numbers"
    );
    let aes: Vec<EnvId> = first.runs[1].train_envs.clone();
    assert!(!aes.is_empty());
    let _ = std::fs::remove_dir_all(&code_dir);
    let _ = std::fs::remove_dir_all(&dir);
}
