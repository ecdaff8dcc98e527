//! Tests of the configuration.

use super::*;

#[test]
fn presets_validate_and_bad_values_are_named() {
    for p in ["cpu", "gpu", "tiny"] {
        TrainConfig::preset(p).unwrap().validate().unwrap();
    }
    let mut c = TrainConfig::cpu();
    c.model.patch = 7;
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("model.patch") && e.contains("divisor"), "{e}");
    let mut c = TrainConfig::cpu();
    c.gamma = 1.5;
    assert!(c.validate().unwrap_err().to_string().contains("gamma"));
    assert!(TrainConfig::preset("huge").is_err());
    let json = serde_json::to_string(&TrainConfig::cpu()).unwrap();
    let back: TrainConfig = serde_json::from_str(&json).unwrap();
    assert_eq!(back, TrainConfig::cpu());
    // The default initialiser is not written, so the configs of earlier records (and the
    // cache keys made of them) stay the same text; another one is written and read back.
    assert!(!json.contains("init"), "{json}");
    let mut c = TrainConfig::cpu();
    c.model.init = WeightInit::Orthogonal;
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.contains(r#""init":"orthogonal""#), "{json}");
    assert_eq!(serde_json::from_str::<TrainConfig>(&json).unwrap(), c);
    // One shard (every preset's, and every record's) is not written either; a config
    // without the field reads as one shard.
    let gpu = serde_json::to_string(&TrainConfig::gpu()).unwrap();
    assert!(!gpu.contains("learn_shards"), "{gpu}");
    assert_eq!(
        serde_json::from_str::<TrainConfig>(&gpu)
            .unwrap()
            .learn_shards,
        1
    );
    for (shards, ok) in [(0, false), (1, true), (2, true), (256, true), (257, false)] {
        let mut c = TrainConfig::cpu();
        c.minibatch = 256;
        c.learn_shards = shards;
        let got = c.validate();
        assert_eq!(
            got.is_ok(),
            ok && shards <= MAX_LEARN_SHARDS,
            "{shards}: {got:?}"
        );
        if let Err(e) = got {
            assert!(e.to_string().contains("learn_shards"), "{e}");
        }
    }
}

#[test]
fn set_overrides_one_field_by_its_path_and_names_what_it_refuses() {
    let mut c = TrainConfig::cpu();
    c.set("lr", "3e-4").unwrap();
    c.set("model.patch", "4").unwrap();
    c.set("model.encoder", "conv").unwrap();
    c.set("model.conv_channels", "[8,16,16]").unwrap();
    c.set("lr_schedule", r#"{"kind":"constant"}"#).unwrap();
    // `model.init` is left out of the text at its default, and can be set all the same.
    c.set("model.init", "orthogonal").unwrap();
    let mut want = TrainConfig::cpu();
    want.model.init = WeightInit::Orthogonal;
    // So is `learn_shards` at one shard.
    let mut g = TrainConfig::gpu();
    g.set("learn_shards", "4").unwrap();
    assert_eq!(g.learn_shards, 4);
    want.lr = 3e-4;
    want.model.patch = 4;
    want.model.encoder = ImageEncoder::Conv;
    want.model.conv_channels = [8, 16, 16];
    want.lr_schedule = LrSchedule::Constant;
    assert_eq!(c, want);
    let before = c.clone();
    for (path, value, named) in [
        ("lrr", "1", "one of"),
        ("model.patchh", "4", "model.patchh"),
        ("lr.x", "1", "a path"),
        (
            "epochs",
            "-1",
            "a whole number of at least 0, like the current 3",
        ),
        // The f32 as written (3e-4), not as widened to f64 (0.0003000000142492354).
        ("lr", "fast", "a number, like the current 0.0003,"),
        ("model.conv_channels", "[1,2]", "a list of 3 values"),
        (
            "model.encoder",
            "cnn",
            "one of the field's names, like the current conv",
        ),
        (
            "lr_schedule",
            "1",
            "an object like the current {\"kind\":\"constant\"}",
        ),
    ] {
        let e = c.set(path, value).unwrap_err().to_string();
        assert!(e.contains(path) && e.contains(named), "{path}={value}: {e}");
        assert_eq!(c, before, "a refused override leaves the config as it was");
    }
}
