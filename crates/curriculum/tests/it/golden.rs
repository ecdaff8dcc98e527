//! Golden runs: every sampler kind (and a few non-default configurations of each), driven by
//! the same deterministic outcomes, must draw exactly the tasks and end in exactly the state
//! recorded in `tests/fixtures/golden.json`. The fixture was written by the samplers before
//! the rivals were rebuilt on one generic sampler; it pins their behaviour bit for bit, and
//! restoring its states checks that old saved states still load.
//!
//! Regenerate (only when a change of behaviour is intended, and say so in the commit):
//! `ENVDIST_BLESS=1 cargo test -p envdist-curriculum --test it golden::`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use envdist_core::{EnvId, HarnessLevel, Task, TaskSampler};
use envdist_curriculum::{HdcConfig, HdcSampler, SamplerConfig, Traced, synthetic_specs};
use serde_json::{Value, json};

use crate::outcome;

const ROUNDS: u64 = 600;
/// Rounds of the traced HDC case (its state holds one trace line per round).
const TRACED_ROUNDS: u64 = 200;

fn specs() -> Vec<envdist_core::EnvSpec> {
    synthetic_specs("g", &[(1, 3), (2, 5), (4, 4)])
}

/// A success that depends only on the round and the task's level and scale: likely at the
/// smallest scale and a strong harness, less so higher up.
fn success(round: u64, task: &Task) -> bool {
    let (min, max) = match task.env.as_str() {
        "g/e0" => (1, 3),
        "g/e1" => (2, 5),
        _ => (4, 4),
    };
    let frac = task.scale.saturating_sub(min) as f64 / (max - min).max(1) as f64;
    let p = 0.98 - 0.25 * frac - 0.01 * task.harness.index() as f64;
    let mut bytes = round.to_le_bytes().to_vec();
    bytes.extend_from_slice(&task.scale.to_le_bytes());
    let u = (envdist_core::hash::fnv1a(&bytes) % 10_000) as f64 / 10_000.0;
    u < p
}

/// The configurations pinned: each kind's default, then variants that reach the other
/// branches (other draws, schedules, transforms, level lists, HDC modes).
fn cases() -> Vec<(&'static str, Value)> {
    vec![
        ("hdc", json!({"kind": "hdc"})),
        ("pass_rate", json!({"kind": "pass_rate"})),
        ("learnability", json!({"kind": "learnability"})),
        ("learning_progress", json!({"kind": "learning_progress"})),
        ("sec", json!({"kind": "sec"})),
        ("ladder", json!({"kind": "ladder"})),
        ("plr", json!({"kind": "plr"})),
        (
            "hdc_full_small",
            json!({"kind": "hdc", "min_episodes": 3, "windows_per_level": 2,
                   "max_stage_episodes": 6, "env_weights": {"g/e1": 2.0}}),
        ),
        (
            "hdc_global",
            json!({"kind": "hdc", "mode": "global", "min_episodes": 3, "global_fraction": 0.6}),
        ),
        (
            "hdc_harness_only_mid",
            json!({"kind": "hdc", "mode": "harness_only", "min_episodes": 4,
                   "harness_only_scale": "mid"}),
        ),
        (
            "hdc_scale_only",
            json!({"kind": "hdc", "mode": "scale_only", "min_episodes": 3, "window_step": 2}),
        ),
        (
            "hdc_baseline_uniform",
            json!({"kind": "hdc", "mode": "baseline_uniform"}),
        ),
        (
            "hdc_none",
            json!({"kind": "hdc", "mode": "none", "fixed_harness": "H2"}),
        ),
        (
            "pass_rate_small",
            json!({"kind": "pass_rate", "group_size": 4, "reprobe_epochs": 0.5,
                   "low": 0.25, "high": 0.75}),
        ),
        (
            "pass_rate_whole_range",
            json!({"kind": "pass_rate", "per_scale": false, "group_size": 3,
                   "harness_levels": ["H2", "H4"], "reprobe_epochs": 0.0}),
        ),
        (
            "learnability_proportional",
            json!({"kind": "learnability", "sampling": "proportional", "harness_levels": ["H0", "H4"]}),
        ),
        (
            "learnability_top2",
            json!({"kind": "learnability", "top_k": 2, "per_scale": false, "learnable_prob": 1.0}),
        ),
        (
            "learning_progress_fast",
            json!({"kind": "learning_progress", "update_interval": 16}),
        ),
        (
            "learning_progress_levels",
            json!({"kind": "learning_progress", "update_interval": 8, "per_scale": false,
                   "harness_levels": ["H0", "H4"]}),
        ),
        (
            "sec_centered",
            json!({"kind": "sec", "batch_episodes": 16, "advantage": "centered",
                   "harness_levels": ["H4"]}),
        ),
        ("sec_fast", json!({"kind": "sec", "batch_episodes": 16})),
        (
            "ladder_levels",
            json!({"kind": "ladder", "check_episodes": 8, "window": 2,
                   "harness_levels": ["H0", "H4"]}),
        ),
        (
            "ladder_fast",
            json!({"kind": "ladder", "check_episodes": 8, "threshold": 0.6, "initial_rung": 1}),
        ),
        (
            "plr_fixed",
            json!({"kind": "plr", "buffer_size": 16, "rho": 0.25, "schedule": "fixed",
                   "replay_prob": 0.7}),
        ),
        (
            "plr_power",
            json!({"kind": "plr", "buffer_size": 32, "score_transform": "power",
                   "staleness_coef": 0.0, "harness_levels": ["H1", "H4"]}),
        ),
        (
            "plr_softmax",
            json!({"kind": "plr", "buffer_size": 8, "score_transform": "softmax",
                   "score": "positive_value_loss", "buffer_priority": "score", "robust": false,
                   "staleness_temperature": 0.5}),
        ),
    ]
}

/// Tasks per block of the fingerprint.
const BLOCK: usize = 50;
/// Tasks recorded in full at the start of each case (the rest as block fingerprints).
const IN_FULL: usize = 40;

/// Drive `s` for `rounds`: sample, ask `trains_on`, report; now and then an outcome of an
/// unknown environment (refused) and one at a level the sampler may not hold (refused unless
/// the sampler draws that level). Returns each task as `env harness scale seed` (plus ` new`
/// when the sampler would not train on it).
fn drive(s: &mut dyn TaskSampler, rounds: u64) -> Vec<String> {
    let mut tasks = Vec::with_capacity(rounds as usize);
    for round in 0..rounds {
        let task = s.sample();
        let trains = s.trains_on(&task);
        tasks.push(format!(
            "{} {} {} {}{}",
            task.env,
            task.harness,
            task.scale,
            task.seed,
            if trains { "" } else { " new" }
        ));
        let ok = success(round, &task);
        s.update(&outcome(task.clone(), ok)).unwrap();
        if round % 97 == 5 {
            let stray = Task {
                env: EnvId::new("zz/unknown"),
                ..task.clone()
            };
            let e = s.update(&outcome(stray, true)).unwrap_err();
            assert_eq!(e.problem.field, "env", "{e}");
        }
        if round % 89 == 7 {
            let off = outcome(
                Task {
                    harness: HarnessLevel::H1,
                    ..task
                },
                round % 2 == 0,
            );
            let checked = s.check_outcome(&off).map_err(|e| e.to_string());
            assert_eq!(s.update(&off).map_err(|e| e.to_string()), checked);
        }
    }
    tasks
}

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden.json")
}

/// The tasks as the fixture keeps them: the first [`IN_FULL`] in full, and an FNV-1a
/// fingerprint of every block of [`BLOCK`] tasks (so a difference is found to its block).
fn task_record(tasks: &[String]) -> Value {
    let blocks: Vec<String> = tasks
        .chunks(BLOCK)
        .map(|b| envdist_core::hash::fnv1a_hex(b.join("\n").as_bytes()))
        .collect();
    json!({"first": &tasks[..IN_FULL.min(tasks.len())], "blocks": blocks, "count": tasks.len()})
}

/// What each case produced: tasks, final state, final snapshot.
fn record() -> BTreeMap<String, Value> {
    let envs = specs();
    let mut out = BTreeMap::new();
    for (name, json) in cases() {
        let config = SamplerConfig::from_json(&json).unwrap();
        let mut s = config.build(&envs, 17).unwrap();
        let tasks = task_record(&drive(s.as_mut(), ROUNDS));
        let snapshot = serde_json::to_value(s.snapshot()).unwrap();
        out.insert(
            name.to_string(),
            json!({"tasks": tasks, "state": s.state(), "snapshot": snapshot,
                   "samples": s.samples(), "updates": s.updates()}),
        );
    }
    // HDC with its trace, whose state holds the trace.
    let hdc = HdcConfig {
        min_episodes: 3,
        ..Default::default()
    };
    let mut traced = Traced::new(HdcSampler::new(&envs, None, hdc, 17).unwrap());
    let tasks = task_record(&drive(&mut traced, TRACED_ROUNDS));
    out.insert(
        "hdc_traced".to_string(),
        json!({"tasks": tasks, "state": traced.state()}),
    );
    out
}

#[test]
fn every_kind_draws_and_saves_exactly_as_recorded() {
    let now = record();
    let path = fixture_path();
    if std::env::var_os("ENVDIST_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // One case per line: compact, and a diff still names the case.
        let lines: Vec<String> = now
            .iter()
            .map(|(k, v)| format!("{}: {}", json!(k), v))
            .collect();
        let text = format!(
            "{{\"rounds\": {ROUNDS}, \"cases\": {{\n{}\n}}}}\n",
            lines.join(",\n")
        );
        std::fs::write(&path, text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let fixture: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(fixture["rounds"], ROUNDS);
    let cases = fixture["cases"].as_object().unwrap();
    assert_eq!(
        cases.keys().collect::<Vec<_>>(),
        now.keys().collect::<Vec<_>>()
    );
    for (name, got) in &now {
        let want = &cases[name];
        let (wt, gt) = (&want["tasks"], &got["tasks"]);
        assert_eq!(wt["first"], gt["first"], "{name}: the first tasks differ");
        let (wb, gb) = (
            wt["blocks"].as_array().unwrap(),
            gt["blocks"].as_array().unwrap(),
        );
        if let Some(i) = (0..wb.len().min(gb.len())).find(|&i| wb[i] != gb[i]) {
            panic!(
                "{name}: tasks {}..{} differ from the recorded ones",
                i * BLOCK,
                (i + 1) * BLOCK
            );
        }
        assert_eq!(wt["count"], gt["count"], "{name}: number of tasks");
        for field in ["state", "snapshot", "samples", "updates"] {
            assert_eq!(want[field], got[field], "{name}: {field} differs");
        }
    }
}

/// The recorded states restore into freshly built samplers (another seed) and save back
/// unchanged; the restored sampler then draws what the original would.
#[test]
fn recorded_states_restore_and_continue() {
    if std::env::var_os("ENVDIST_BLESS").is_some() {
        return;
    }
    let text = std::fs::read_to_string(fixture_path()).unwrap();
    let fixture: Value = serde_json::from_str(&text).unwrap();
    let envs = specs();
    for (name, json) in cases() {
        let config = SamplerConfig::from_json(&json).unwrap();
        let state = &fixture["cases"][name]["state"];
        let mut fresh = config.build(&envs, 999).unwrap();
        fresh.restore(state).unwrap();
        assert_eq!(&fresh.state(), state, "{name}");
        let mut original = config.build(&envs, 17).unwrap();
        drive(original.as_mut(), ROUNDS);
        for _ in 0..25 {
            assert_eq!(original.sample(), fresh.sample(), "{name}");
        }
    }
    let hdc = HdcConfig {
        min_episodes: 3,
        ..Default::default()
    };
    let state = &fixture["cases"]["hdc_traced"]["state"];
    let mut fresh = Traced::new(HdcSampler::new(&envs, None, hdc, 0).unwrap());
    fresh.restore(state).unwrap();
    assert_eq!(&fresh.state(), state);
}
