//! `cargo xtask train` leaves a TensorBoard event file beside its training log, holding the
//! log's numbers; and the copy of one such run that bindings/python's test_tensorboard.py
//! reads with TensorBoard itself (`bindings/python/tests/data/tensorboard/`) is what the
//! trainer writes today, byte for byte.
//!
//! Regenerate that copy (when the events' content is meant to change; say so in the commit):
//! `ENVDIST_BLESS=1 cargo test -p xtask --test it train_tensorboard`.

use std::path::{Path, PathBuf};

use envdist_trainer::tensorboard::{self, EventBody};
use envdist_trainer::{RunFiles, UpdateStats};

/// The run the Python test reads: a train log and its event file.
fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bindings/python/tests/data/tensorboard")
}

fn scalar(values: &[(String, f32)], tag: &str) -> Option<f32> {
    values.iter().find(|(t, _)| t == tag).map(|(_, v)| *v)
}

#[test]
fn train_leaves_tensorboard_events_with_its_log_numbers() {
    let dir = crate::temp_dir("train-tensorboard");
    let out = crate::xtask(&[
        "train",
        "--envs",
        "maze/classic",
        "--sampler",
        "h4",
        "--steps",
        "4096",
        "--preset",
        "tiny",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = RunFiles::new(&dir);
    let events_files = files.tensorboard_events();
    assert_eq!(events_files.len(), 1, "{events_files:?}");
    let name = events_files[0].file_name().unwrap().to_string_lossy();
    assert!(name.starts_with("events.out.tfevents."), "{name}");
    assert!(
        stdout.contains(&*name),
        "the summary names the file: {stdout}"
    );

    let log = files.read_log().unwrap();
    let events = tensorboard::read_events(&events_files[0]).unwrap();
    assert_eq!(
        events[0].body,
        EventBody::FileVersion(tensorboard::FILE_VERSION.into())
    );
    assert_eq!(events.len(), log.len() + 1);
    // 4096 steps of the tiny preset: 32 updates of 128.
    assert_eq!(log.len(), 32);
    for (stats, event) in log.iter().zip(&events[1..]) {
        assert_eq!(event.step as u64, stats.env_steps);
        let EventBody::Scalars(values) = &event.body else {
            panic!("step {}: {:?}", event.step, event.body);
        };
        assert_eq!(values, &stats.tensorboard_scalars());
        assert_eq!(scalar(values, "loss/policy"), Some(stats.policy_loss));
        assert_eq!(scalar(values, "loss/value"), Some(stats.value_loss));
        assert_eq!(scalar(values, "loss/entropy"), Some(stats.entropy));
        assert_eq!(scalar(values, "policy/approx_kl"), Some(stats.approx_kl));
        assert_eq!(scalar(values, "train/success_rate"), stats.success_rate);
        if stats.episodes > 0 {
            // The h4 sampler plays H4 at the smallest scale (maze/classic's is 1).
            assert_eq!(scalar(values, "curriculum/mean_harness_level"), Some(4.0));
            assert_eq!(scalar(values, "env/maze/classic/harness_level"), Some(4.0));
        }
    }
    assert!(log.iter().any(|s| s.episodes > 0));

    if std::env::var_os("ENVDIST_BLESS").is_some() {
        let to = fixture_dir();
        let _ = std::fs::remove_dir_all(&to);
        std::fs::create_dir_all(&to).unwrap();
        let kept = RunFiles::new(&to);
        std::fs::copy(files.train_log(), kept.train_log()).unwrap();
        // The host of the blessing machine is nobody's business: the name says "fixture".
        let secs = name.trim_start_matches("events.out.tfevents.");
        let secs = secs.split('.').next().unwrap();
        std::fs::copy(
            &events_files[0],
            to.join(format!("events.out.tfevents.{secs}.fixture")),
        )
        .unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fixture's event file is what the trainer writes for the fixture's log (at the
/// fixture's wall times): what TensorBoard reads in the Python test is this code's output.
#[test]
fn the_python_tensorboard_fixture_is_what_the_trainer_writes() {
    if std::env::var_os("ENVDIST_BLESS").is_some() {
        // The test beside is rewriting the fixture meanwhile; checked on the next run.
        return;
    }
    let files = RunFiles::new(fixture_dir());
    let log: Vec<UpdateStats> = files.read_log().unwrap();
    let events_files = files.tensorboard_events();
    assert_eq!(events_files.len(), 1, "{events_files:?}");
    let bytes = std::fs::read(&events_files[0]).unwrap();
    let events = tensorboard::read_events(&events_files[0]).unwrap();
    assert_eq!(events.len(), log.len() + 1);
    let mut expected =
        tensorboard::frame_record(&tensorboard::Event::file_version(events[0].wall_time).encode());
    for (stats, event) in log.iter().zip(&events[1..]) {
        expected.extend(tensorboard::frame_record(
            &stats.tensorboard_event(event.wall_time).encode(),
        ));
    }
    assert!(
        expected == bytes,
        "{} is not what the trainer writes for its log: regenerate it with \
         `ENVDIST_BLESS=1 cargo test -p xtask --test it train_tensorboard`",
        events_files[0].display()
    );
}
