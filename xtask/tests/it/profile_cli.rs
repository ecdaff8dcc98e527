//! `xtask profile` end to end: pool mode (summary fields, thread-count independence, cache)
//! and log mode (unknown envs and abilities reported, malformed lines named).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::temp_dir;

/// A fresh, existing directory for one test.
fn tmp(name: &str) -> PathBuf {
    let d = temp_dir(&format!("profile-cli-{name}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn profile(args: &[&str], out: &Path) -> (bool, serde_json::Value, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("profile")
        .args(args)
        .arg("--out")
        .arg(out)
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let summary = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.success(), summary, stderr)
}

#[test]
fn pool_mode_summary_is_thread_independent_and_cached() {
    let d = tmp("pool");
    let (a_dir, b_dir) = (d.join("a"), d.join("b"));
    let (ok, a, err) = profile(&["--trajectories", "2", "--threads", "1"], &a_dir);
    assert!(ok, "{err}");
    for key in [
        "environments",
        "trajectories",
        "atomic_abilities",
        "meta_abilities",
        "seconds",
    ] {
        assert!(a[key].is_number(), "summary lacks {key}: {a}");
    }
    let envs = a["environments"].as_u64().unwrap();
    assert!(envs > 0);
    assert_eq!(a["trajectories"].as_u64().unwrap(), 2 * envs);
    assert_eq!(a["cached"], false);
    let (ok, b, err) = profile(&["--trajectories", "2", "--threads", "2"], &b_dir);
    assert!(ok, "{err}");
    assert_eq!(a["meta"], b["meta"]);
    for f in [
        "profiles.json",
        "trajectories.jsonl",
        "abilities.dot",
        "abilities.svg",
    ] {
        assert_eq!(
            std::fs::read(a_dir.join(f)).unwrap(),
            std::fs::read(b_dir.join(f)).unwrap(),
            "{f} differs between 1 and 2 threads"
        );
    }
    let (ok, again, err) = profile(&["--trajectories", "2", "--threads", "2"], &b_dir);
    assert!(ok, "{err}");
    assert_eq!(again["cached"], true);
    let (ok, other, err) = profile(&["--trajectories", "2", "--seed", "9"], &b_dir);
    assert!(ok, "{err}");
    assert_eq!(other["cached"], false);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn log_mode_reports_unknowns_and_names_malformed_lines() {
    let d = tmp("log");
    let log = d.join("agent.jsonl");
    let mut lines = Vec::new();
    for (env, episode, tags) in [
        ("maze/classic", 1, vec!["navigate"]),
        ("maze/classic", 1, vec!["wall-follow", "teleport"]),
        ("maze/classic", 2, vec!["navigate"]),
        ("my/own-env", 1, vec!["navigate"]),
        ("my/own-env", 1, vec!["juggle"]),
    ] {
        lines.push(
            serde_json::json!({
                "schema_version": 1, "env": env, "episode": episode, "action": "up",
                "abilities": tags,
            })
            .to_string(),
        );
    }
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let out = d.join("out");
    let log_arg = log.to_str().unwrap();
    let (ok, s, err) = profile(&["--from-jsonl", log_arg], &out);
    assert!(ok, "{err}");
    assert_eq!(s["environments"], 2);
    assert_eq!(s["trajectories"], 3);
    assert_eq!(s["check"]["unknown_envs"]["my/own-env"], 1);
    assert_eq!(
        s["check"]["unknown_abilities"]["maze/classic"]["teleport"],
        1
    );
    // Reported, not dropped: the unknown env and ability are in the profiles.
    let profiles: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("profiles.json")).unwrap()).unwrap();
    let own = profiles["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["env"] == "my/own-env")
        .expect("my/own-env profiled");
    assert_eq!(own["atomic_counts"]["juggle"], 1);
    let (ok, s, _) = profile(&["--from-jsonl", log_arg], &out);
    assert!(ok && s["cached"] == true);

    std::fs::write(
        &log,
        format!(
            "{}\n{{\"schema_version\":1,\"env\":\"maze/classic\"\n",
            lines[0]
        ),
    )
    .unwrap();
    let (ok, _, err) = profile(&["--from-jsonl", log_arg], &out);
    assert!(!ok);
    assert!(err.contains("agent.jsonl line 2"), "{err}");

    // Nothing to profile is an error naming the file, not an empty profile.
    let empty = d.join("empty.jsonl");
    std::fs::write(&empty, "\n").unwrap();
    let (ok, _, err) = profile(
        &["--from-jsonl", empty.to_str().unwrap()],
        &d.join("out-empty"),
    );
    assert!(!ok);
    assert!(
        err.contains("empty.jsonl") && err.contains("at least one trajectory"),
        "{err}"
    );
    assert!(!d.join("out-empty/profiles.json").exists());
    let own = d.join("own.jsonl");
    std::fs::write(
        &own,
        "{\"schema_version\":1,\"env\":\"my/own-env\",\"episode\":1,\"action\":\"up\"}\n",
    )
    .unwrap();
    let (ok, _, err) = profile(&["--from-jsonl", own.to_str().unwrap()], &d.join("out-own"));
    assert!(!ok);
    assert!(
        err.contains("own.jsonl: no usable trajectory") && err.contains("does not know"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
