//! `cargo xtask select` end to end: the numpy count path reproduces the reference ranking of
//! the small anchor pool, a synthetic pool round-trips through profile and gradient files,
//! and mismatched gradient files are refused with the offending id.

use std::path::PathBuf;
use std::process::Output;

use crate::{assert_succeeded, temp_dir, xtask};

/// Run `xtask select` with `args`.
fn select(args: &[&str]) -> Output {
    xtask(&[&["select"], args].concat())
}

fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/selection/tests/data")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn counts_npy_matches_the_reference_and_prints_json() {
    let out = select(&[
        "--counts-npy",
        &data("small_counts.npy"),
        "--k",
        "30",
        "--objective",
        "coverage",
        "--json",
        "--reference",
        &data("small_ref_greedy_ranking.npy"),
    ]);
    assert_succeeded(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["reference_match"], true);
    assert_eq!(v["ranking"].as_array().unwrap().len(), 30);
    assert_eq!(v["covered"], 72);
    assert!(v["select_seconds"].as_f64().unwrap() >= 0.0);
    assert!(v["gains"].as_array().unwrap()[0].as_f64().unwrap() > 0.0);
    assert!(v["peak_rss_bytes"].as_u64().unwrap() > 0);
    // Greedy reaches full coverage, so the certificate proves it optimal.
    assert_eq!(v["certificate"]["kind"], "submodular");
    assert_eq!(v["certificate"]["upper_bound"], 72.0);
    assert_eq!(v["certificate"]["gap_fraction"], 0.0);
    assert!(v["exact"].is_null());
}

#[test]
fn exact_prints_the_optimum_beside_the_bound() {
    let out = select(&[
        "--synthetic",
        "n=40,abilities=30,dim=8,seed=2,clusters=2,themes=2",
        "--k",
        "5",
        "--exact",
    ]);
    assert_succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("certificate: within"), "{text}");
    assert!(text.contains("exact: optimum"), "{text}");
    let out = select(&[
        "--synthetic",
        "n=40,abilities=30,dim=8,seed=2,clusters=2,themes=2",
        "--k",
        "5",
        "--objective",
        "no-conflict",
        "--exact",
        "--json",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["exact"]["status"], "optimal");
    let (opt, ub) = (
        v["exact"]["objective"].as_f64().unwrap(),
        v["certificate"]["upper_bound"].as_f64().unwrap(),
    );
    let greedy = v["objective"].as_f64().unwrap();
    assert!(
        greedy <= opt + 1e-4 && opt <= ub + 1e-4,
        "{greedy} {opt} {ub}"
    );
    // The whole small anchor pool (200 environments) at k = 3.
    let out = select(&[
        "--counts-npy",
        &data("small_counts.npy"),
        "--k",
        "3",
        "--objective",
        "coverage",
        "--exact",
        "--exact-seconds",
        "0.5",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("exact: optimum"), "{text}");
}

#[test]
fn synthetic_pool_round_trips_through_files() {
    let dir = temp_dir("select-cli-roundtrip");
    let spec = "n=150,abilities=30,dim=16,seed=4";
    let first = select(&[
        "--synthetic",
        spec,
        "--k",
        "12",
        "--json",
        "--write-pool",
        dir.to_str().unwrap(),
        "--out",
        dir.join("selection.json").to_str().unwrap(),
    ]);
    assert_succeeded(&first);
    let second = select(&[
        "--profiles",
        dir.join("profiles.json").to_str().unwrap(),
        "--gradients",
        dir.join("gradients.safetensors").to_str().unwrap(),
        "--k",
        "12",
        "--json",
    ]);
    assert_succeeded(&second);
    let a: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(a["ranking"], b["ranking"]);
    let saved = envdist_selection::Selection::read(dir.join("selection.json")).unwrap();
    assert_eq!(serde_json::json!(saved.ranking), a["ranking"]);

    // Gradients for a different pool: refused, naming an id that has no row.
    let other = temp_dir("select-cli-other");
    let made = select(&[
        "--synthetic",
        "n=20,abilities=30,dim=16,seed=4,clusters=1,themes=1",
        "--k",
        "2",
        "--write-pool",
        other.to_str().unwrap(),
    ]);
    assert_succeeded(&made);
    let bad = select(&[
        "--profiles",
        dir.join("profiles.json").to_str().unwrap(),
        "--gradients",
        other.join("gradients.safetensors").to_str().unwrap(),
        "--k",
        "5",
    ]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("syn/20"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}

#[test]
fn infeasible_full_coverage_is_a_clear_error() {
    let out = select(&[
        "--counts-npy",
        &data("small_counts.npy"),
        "--k",
        "5",
        "--objective",
        "coverage",
        "--full-coverage",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("full coverage is infeasible") && err.contains("raise k to"),
        "{err}"
    );
}

#[test]
fn the_study_flags_reproduce_the_smoke_studys_aes_selection() {
    let record = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/experiments/smoke");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(record.join("results.json")).unwrap())
            .unwrap();
    let study = results["selections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "aes/0")
        .unwrap();
    let k = results["config"]["selection"]["k"].to_string();
    let seed = results["config"]["seed"].to_string();
    let path = |f: &str| record.join(f).display().to_string();
    let out = select(&[
        "--profiles",
        &path("profiles.json"),
        "--gradients",
        &path("gradients.safetensors"),
        "--k",
        &k,
        "--full-coverage",
        "--tie-seed",
        &seed,
        "--exclude-zero-gradient",
        "--relax",
        "--json",
    ]);
    assert_succeeded(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["env_ids"], study["envs"]);
}
