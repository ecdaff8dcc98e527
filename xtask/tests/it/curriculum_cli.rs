//! `cargo xtask curriculum`: simulate writes a trace that walks the staircase, a state that
//! resumes, and a plot; config prints a loadable default; bad input is refused.

use std::collections::BTreeMap;

use envdist_core::{EnvSpec, HarnessLevel, Split, TaskSampler, Turn};
use envdist_curriculum::{HdcConfig, HdcSampler, SavedState, TRACE_SCHEMA_VERSION, TraceEvent};

use crate::{assert_succeeded, temp_dir, xtask};

#[test]
fn simulate_full_walks_the_staircase_and_resumes() {
    let d = temp_dir("curriculum-cli-full");
    let out = xtask(&[
        "curriculum",
        "simulate",
        "--mode",
        "full",
        "--steps",
        "60000",
        "--envs",
        "3",
        "--seed",
        "5",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_succeeded(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("sample+learner+update/s"), "{stdout}");

    let trace: Vec<TraceEvent> =
        envdist_core::io::read_jsonl(d.join("trace.jsonl"), Some(TRACE_SCHEMA_VERSION)).unwrap();
    assert_eq!(trace.len(), 60_000);
    // Per env: the window stays in place or moves up by one within a level; a level change
    // is one level and restarts the window at the bottom of the range.
    let mut last: BTreeMap<String, (HarnessLevel, u32)> = BTreeMap::new();
    let mut restarts = 0;
    let mut climbs = 0;
    let mut bottom: BTreeMap<String, u32> = BTreeMap::new();
    for e in &trace {
        // A task is played at its env's current level or an earlier (review) one.
        assert!(e.harness <= e.level, "{e:?}");
        let b = *bottom.entry(e.env.0.clone()).or_insert(e.window_lo);
        if let Some(&(lvl, lo)) = last.get(&e.env.0) {
            if e.level == lvl {
                assert!(
                    e.window_lo == lo || e.window_lo == lo + 1,
                    "{e:?} after {lo}"
                );
                climbs += (e.window_lo == lo + 1) as u32;
            } else {
                assert_eq!(Some(e.level), lvl.weaker(), "{e:?}");
                assert_eq!(e.window_lo, b, "window restarts at the bottom: {e:?}");
                restarts += 1;
            }
        }
        last.insert(e.env.0.clone(), (e.level, e.window_lo));
    }
    assert!(
        restarts >= 3 && climbs >= 10,
        "restarts {restarts}, climbs {climbs}"
    );

    // The saved state resumes in a sampler rebuilt from its own environment list.
    let state: SavedState = envdist_core::io::read_json(d.join("state.json"), Some(1)).unwrap();
    let specs: Vec<EnvSpec> = state
        .envs
        .iter()
        .map(|e| EnvSpec {
            id: e.id.clone(),
            family: "sim".into(),
            variant: String::new(),
            turn: Turn::Multi,
            scale: e.scale,
            split: Split::Pool,
            abilities: vec![],
            conflict_twin: None,
            instruction: String::new(),
            max_steps: 1,
        })
        .collect();
    let mut s = HdcSampler::new(&specs, None, HdcConfig::default(), 0).unwrap();
    s.load(d.join("state.json")).unwrap();
    assert_eq!(s.state(), serde_json::to_value(&state).unwrap());
    let png = std::fs::read(d.join("curriculum.png")).unwrap();
    assert!(png.len() > 10_000 && png.starts_with(b"\x89PNG"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn every_mode_simulates() {
    for mode in [
        "harness_only",
        "scale_only",
        "none",
        "global",
        "baseline_uniform",
        "baseline_h4",
    ] {
        let d = temp_dir(&format!("curriculum-cli-{mode}"));
        let out = xtask(&[
            "curriculum",
            "simulate",
            "--mode",
            mode,
            "--steps",
            "3000",
            "--envs",
            "2",
            "--plot-envs",
            "2",
            "--out",
            d.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(d.join("curriculum.png").exists() && d.join("trace.jsonl").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn config_prints_the_defaults_and_bad_input_is_refused() {
    let out = xtask(&["curriculum", "config"]);
    assert!(out.status.success());
    let cfg: HdcConfig = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cfg, HdcConfig::default());

    let out = xtask(&["curriculum", "simulate", "--mode", "sideways"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mode") && err.contains("harness_only"),
        "{err}"
    );

    let d = temp_dir("curriculum-cli-badcfg");
    std::fs::create_dir_all(&d).unwrap();
    let cfg = d.join("cfg.json");
    std::fs::write(&cfg, r#"{"lambda": -3}"#).unwrap();
    let out = xtask(&[
        "curriculum",
        "simulate",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`lambda`"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
