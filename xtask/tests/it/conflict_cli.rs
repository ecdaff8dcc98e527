//! `cargo xtask conflict-estimates` end to end on an untrained tiny model and four pool
//! environments: an estimate whose config equals the reference's agrees with it exactly, the
//! cheaper ones do less work, the JSON carries a schema version, and a bad estimate spec is
//! refused by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use envdist_core::{
    AbilityProfile, EnvId, HarnessLevel, PROFILE_SCHEMA_VERSION, ProfileSet, io::write_json_atomic,
};
use envdist_envs::Suite;
use envdist_trainer::{Device, ScaleChoice, TrainConfig, Trainer, UniformSampler};

use crate::{temp_dir, xtask};

const ENVS: [&str; 4] = [
    "collect/classic",
    "collect/avoid-red",
    "count-objects/classic",
    "maze/classic",
];

fn profile(env: &str, abilities: &[&str]) -> AbilityProfile {
    AbilityProfile {
        env: EnvId::new(env),
        coverage: abilities.iter().map(|a| (a.to_string(), 1.0)).collect(),
        atomic_counts: BTreeMap::new(),
        transitions: vec![],
        trajectories: 1,
    }
}

#[test]
fn conflict_estimates_measure_against_the_reference() {
    let dir = temp_dir("conflict-estimates");
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = TrainConfig::preset("tiny").unwrap();
    let suite = Arc::new(Suite::with_canvas(cfg.model.image_size as u32).unwrap());
    let ids: Vec<EnvId> = ENVS.iter().map(|e| EnvId::new(*e)).collect();
    let sampler = UniformSampler::new(
        suite.as_ref(),
        &ids,
        HarnessLevel::H0,
        Some(ScaleChoice::Min),
        0,
    )
    .unwrap();
    let trainer = Trainer::new(cfg, suite, Device::Cpu).unwrap();
    let checkpoint = dir.join("checkpoint");
    trainer.save_checkpoint(&checkpoint, &sampler).unwrap();
    let profiles = ProfileSet {
        schema_version: PROFILE_SCHEMA_VERSION,
        abilities: vec!["navigate".into(), "collect".into(), "count".into()],
        meta_abilities: vec![],
        profiles: vec![
            profile(ENVS[0], &["navigate", "collect"]),
            profile(ENVS[1], &["navigate", "collect"]),
            profile(ENVS[2], &["count"]),
            profile(ENVS[3], &["navigate"]),
        ],
    };
    let profiles_file = dir.join("profiles.json");
    write_json_atomic(&profiles_file, &profiles).unwrap();
    let out_file = dir.join("estimates.json");
    let base = [
        "conflict-estimates",
        "--checkpoint",
        checkpoint.to_str().unwrap(),
        "--profiles",
        profiles_file.to_str().unwrap(),
        "--episodes",
        "8",
        "--dim",
        "64",
        "--k",
        "2",
    ];
    let out = xtask(
        &[
            &base[..],
            &[
                "--estimates",
                "ep8,head,t2+ep4+sampled,seed1,noise",
                "--out",
                out_file.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("| estimate |"), "{table}");
    assert!(
        table.contains("| head |") && table.contains("(reference)"),
        "{table}"
    );
    assert!(table.contains("Spearman vs seed1"), "{table}");

    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["envs"].as_array().unwrap().len(), 4);
    assert_eq!(v["replicate"], "seed1");
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "reference",
            "ep8",
            "head",
            "t2+ep4+sampled",
            "seed1",
            "noise"
        ]
    );
    let reference = &rows[0];
    assert_eq!(reference["config"]["rollouts_per_env"], 8);
    assert_eq!(reference["config"]["params"], "all");
    assert!(reference["vs_reference"].is_null() && reference["stable"].is_null());
    assert_eq!(reference["vs_replicate"]["agreement"]["pairs"], 6);
    // `ep8` is the reference's own config: the same gradients, so perfect agreement.
    let same = &rows[1]["vs_reference"];
    assert_eq!(same["agreement"]["pairs"], 6);
    assert_eq!(same["agreement"]["mean_abs_diff"], 0.0);
    assert_eq!(same["agreement"]["conflict_recall"], 1.0);
    assert_eq!(same["selection_overlap"], 1.0);
    assert_eq!(rows[1]["selection"], reference["selection"]);
    assert_eq!(rows[1]["vs_replicate"], reference["vs_replicate"]);
    // The head differentiates far fewer parameters; the capped run plays fewer steps (with
    // sampled single-turn answers: the exact estimator plays every answer once).
    let params = |e: &serde_json::Value| e["cost"]["params"].as_u64().unwrap();
    assert!(params(&rows[2]) * 10 < params(reference), "{}", rows[2]);
    assert_eq!(rows[2]["config"]["params"], "policy_head");
    assert!(rows[3]["cost"]["env_steps"].as_u64().unwrap() <= 4 * 4 * 2);
    assert!(rows[3]["cost_ratio"].as_f64().unwrap() > 0.0);
    // The replicate is not compared with itself; noise has no config and no work.
    assert!(rows[4]["vs_replicate"].is_null());
    assert_eq!(
        rows[4]["config"]["seed"],
        reference["config"]["seed"].as_u64().unwrap() + 1
    );
    assert!(rows[5]["config"].is_null());
    assert_eq!(params(&rows[5]), 0);

    let bad = xtask(&[&base[..], &["--estimates", "head+ep0"]].concat());
    assert!(!bad.status.success());
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(e.contains("ep0"), "{e}");
    let bad = xtask(&[&base[..], &["--estimates", "ep16,foo"]].concat());
    assert!(!bad.status.success());
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(e.contains("\"foo\"") && e.contains("unknown part"), "{e}");
    let bad = xtask(&[&base[..], &["--keep-zero-gradient", "drop"]].concat());
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(e.contains("'drop'"), "{e}");
    let bad = xtask(&[&base[..], &["--estimates", "noise+head"]].concat());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("stands alone"));
    let _ = std::fs::remove_dir_all(&dir);
}
