//! `cargo xtask envs`: the list's JSON shape, render's outputs and errors, bench's JSON.

use crate::{assert_succeeded, temp_dir, xtask};

#[test]
fn list_json_has_the_documented_keys_and_counts() {
    let out = xtask(&["envs", "list", "--json"]);
    assert_succeeded(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let arr = v.as_array().unwrap();
    for r in arr {
        for key in [
            "id",
            "family",
            "variant",
            "turn",
            "scale_min",
            "scale_max",
            "abilities",
            "split",
        ] {
            assert!(r.get(key).is_some(), "record without `{key}`: {r}");
        }
        assert!(["ST", "MT"].contains(&r["turn"].as_str().unwrap()));
        assert!(r["scale_min"].as_u64() <= r["scale_max"].as_u64());
    }
    let split = |s: &str| arr.iter().filter(|r| r["split"] == s).count();
    assert_eq!(split("pool"), 200);
    assert!(split("ood") >= 20);
    assert!(split("confirm") >= 20);
}

#[test]
fn render_writes_frames_and_text_and_refuses_bad_scales() {
    let dir = temp_dir("render");
    let out = xtask(&[
        "envs",
        "render",
        "--env",
        "maze/classic",
        "--seed",
        "3",
        "--scale",
        "2",
        "--harness",
        "H0",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_succeeded(&out);
    assert!(dir.join("frame_000.png").exists());
    let ep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("episode.json")).unwrap()).unwrap();
    assert_eq!(ep["schema_version"], 1);
    let steps = ep["steps"].as_array().unwrap();
    assert!(steps.len() >= 2);
    assert!(
        steps[0]["harness"]["hints"]
            .as_str()
            .unwrap()
            .starts_with("next action:")
    );
    assert!(steps.last().unwrap()["success"].as_bool().unwrap());
    let _ = std::fs::remove_dir_all(&dir);

    let bad = xtask(&[
        "envs",
        "render",
        "--env",
        "maze/classic",
        "--scale",
        "99",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--scale") && err.contains("1..=5") && err.contains("99"),
        "{err}"
    );
    assert!(!dir.join("frame_000.png").exists());

    let unknown = xtask(&[
        "envs",
        "render",
        "--env",
        "nope/x",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("nope/x"));
}

#[test]
fn bench_json_has_the_documented_keys() {
    let out = xtask(&["envs", "bench", "--json", "--steps", "2000"]);
    assert_succeeded(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["single_thread_steps_per_s"].as_f64().unwrap() > 0.0);
    assert!(v["vectorized_steps_per_s"].as_f64().unwrap() > 0.0);
    assert!(v["threads"].as_u64().unwrap() >= 1);
}

#[test]
fn answer_reads_a_reply_in_words_and_names_the_answers_when_it_cannot() {
    let play = |reply: &str| {
        xtask(&[
            "envs",
            "answer",
            "--env",
            "reachability/classic",
            "--seed",
            "2",
            "--json",
            reply,
        ])
    };
    let solver = {
        let out = play("answer_0");
        assert_succeeded(&out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["solver"].as_str().unwrap().to_string()
    };
    let words = if solver == "answer_1" { "yes" } else { "no" };
    let out = play(&format!("<answer>{words}</answer>"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["action"], solver.as_str());
    assert_eq!(v["success"], true);
    assert_eq!(v["meaning"][0], words);
    let bad = play("perhaps");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("yes / reachable") && err.contains("perhaps"),
        "{err}"
    );
}
