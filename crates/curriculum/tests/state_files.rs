//! Saved state files: round trip, and readable errors for mismatches and corruption.

mod common;

use std::path::PathBuf;

use envdist_core::TaskSampler;
use envdist_curriculum::{HdcConfig, HdcSampler, Mode};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("envdist-curriculum-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn trained(config: HdcConfig) -> HdcSampler {
    let envs = common::specs(&[(2, 6), (1, 3), (4, 9)]);
    let mut s = HdcSampler::new(&envs, None, config, 7).unwrap();
    for _ in 0..400 {
        let t = s.sample();
        s.update(&common::play(t, 80)).unwrap();
    }
    s
}

fn fresh(config: HdcConfig) -> HdcSampler {
    HdcSampler::new(&common::specs(&[(2, 6), (1, 3), (4, 9)]), None, config, 0).unwrap()
}

#[test]
fn file_round_trip_resumes_identically() {
    let d = dir("rt");
    let cfg = HdcConfig {
        min_episodes: 5,
        ..Default::default()
    };
    let mut a = trained(cfg.clone());
    let path = d.join("hdc.json");
    a.save(&path).unwrap();
    let mut b = fresh(cfg);
    b.load(&path).unwrap();
    for _ in 0..100 {
        assert_eq!(a.sample(), b.sample());
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn config_mismatch_is_refused_with_the_differing_fields() {
    let d = dir("mismatch");
    let path = d.join("hdc.json");
    trained(HdcConfig::default()).save(&path).unwrap();
    let mut other = fresh(HdcConfig {
        mode: Mode::Global,
        window_width: 3,
        ..Default::default()
    });
    let before = other.state();
    let e = other.load(&path).unwrap_err().to_string();
    assert!(e.contains("hdc.json"), "{e}");
    assert!(e.contains("different configuration"), "{e}");
    assert!(e.contains("mode: \"full\" -> \"global\""), "{e}");
    assert!(e.contains("window_width: 2 -> 3"), "{e}");
    assert_eq!(other.state(), before, "a refused restore changes nothing");
}

#[test]
fn truncated_corrupt_or_edited_files_name_the_file() {
    let d = dir("corrupt");
    let good = d.join("good.json");
    trained(HdcConfig::default()).save(&good).unwrap();
    let text = std::fs::read_to_string(&good).unwrap();

    let cases: Vec<(&str, String, &str)> = vec![
        (
            "truncated.json",
            text[..text.len() / 2].to_string(),
            "not valid JSON",
        ),
        (
            "garbage.json",
            "\u{0}\u{1}binary junk".to_string(),
            "not valid JSON",
        ),
        ("empty.json", String::new(), "not valid JSON"),
        (
            "schema.json",
            text.replacen("\"schema_version\": 1", "\"schema_version\": 9", 1),
            "schema_version",
        ),
        (
            "hash.json",
            text.replacen("\"config_hash\": \"", "\"config_hash\": \"0", 1),
            "config_hash",
        ),
        (
            "window.json",
            text.replacen("\"window_lo\": ", "\"window_lo\": 4000", 1),
            "window_lo",
        ),
        (
            "field.json",
            text.replacen("\"ema\": ", "\"ema\": \"x\", \"was\": ", 1),
            "ema",
        ),
    ];
    for (name, content, needle) in cases {
        let p = d.join(name);
        std::fs::write(&p, content).unwrap();
        let mut s = fresh(HdcConfig::default());
        let e = s.load(&p).unwrap_err().to_string();
        assert!(e.contains(name), "{name}: {e}");
        assert!(e.contains(needle), "{name}: {e}");
    }
    let e = fresh(HdcConfig::default())
        .load(d.join("missing.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.json"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}
