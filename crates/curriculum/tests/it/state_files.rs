//! Saved state files: round trip, and readable errors for mismatches and corruption.

use envdist_core::TaskSampler;
use envdist_curriculum::{HdcConfig, HdcSampler, Mode};

use crate::{play, specs, temp_dir};

fn fresh(config: HdcConfig) -> HdcSampler {
    HdcSampler::new(&specs(&[(2, 6), (1, 3), (4, 9)]), None, config, 0).unwrap()
}

fn trained(config: HdcConfig) -> HdcSampler {
    let mut s = HdcSampler::new(&specs(&[(2, 6), (1, 3), (4, 9)]), None, config, 7).unwrap();
    for _ in 0..400 {
        let t = s.sample();
        s.update(&play(t, 80)).unwrap();
    }
    s
}

#[test]
fn file_round_trip_resumes_identically() {
    let d = temp_dir("state-file-rt");
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
    let d = temp_dir("state-file-mismatch");
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
    let d = temp_dir("state-file-corrupt");
    let good = d.join("good.json");
    trained(HdcConfig::default()).save(&good).unwrap();
    let text = std::fs::read_to_string(&good).unwrap();
    // The good file with its first `from` replaced by `to`.
    let edited = |from: &str, to: &str| text.replacen(from, to, 1);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "truncated.json",
            text[..text.len() / 2].into(),
            "not valid JSON",
        ),
        (
            "garbage.json",
            "\u{0}\u{1}binary junk".into(),
            "not valid JSON",
        ),
        ("empty.json", String::new(), "not valid JSON"),
        (
            "schema.json",
            edited("\"schema_version\": 1", "\"schema_version\": 9"),
            "schema_version",
        ),
        (
            "hash.json",
            edited("\"config_hash\": \"", "\"config_hash\": \"0"),
            "config_hash",
        ),
        (
            "window.json",
            edited("\"window_lo\": ", "\"window_lo\": 4000"),
            "window_lo",
        ),
        (
            "field.json",
            edited("\"ema\": ", "\"ema\": \"x\", \"was\": "),
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
