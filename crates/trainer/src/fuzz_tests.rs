//! A checkpoint of the tiny preset (its `state.json`, model and optimizer records), the
//! training log and the TensorBoard event file under mutation fuzzing (`envdist_core::fuzz`): each input resumes a run, or
//! loads a model, that then acts; or is refused with an error naming the file; never a panic,
//! a huge allocation or a hang. A unit-test module, not a test binary of its own: every test
//! binary links burn. The long run: `ENVDIST_FUZZ_INPUTS=100000 cargo test -p
//! envdist-trainer --lib fuzz -- --nocapture` (docs/fuzzing.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use envdist_core::fuzz::{Fuzz, TrackingAllocator, scratch_dir};
use envdist_core::{EnvId, HarnessLevel};

use crate::toy::ToyFactory;
use crate::*;

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator;

/// Mutants per campaign in `cargo test` (every accepted input builds a network).
const INPUTS: usize = 60;

const ENVS: [&str; 2] = ["toy/goal", "toy/goal-mirrored"];

fn sampler() -> UniformSampler {
    let ids: Vec<EnvId> = ENVS.iter().map(|e| EnvId::new(*e)).collect();
    UniformSampler::new(&ToyFactory, &ids, HarnessLevel::H0, None, 5).unwrap()
}

fn tiny() -> TrainConfig {
    let mut cfg = TrainConfig::preset("tiny").unwrap();
    cfg.total_env_steps = 10_000;
    cfg
}

/// A real checkpoint: the tiny preset after two updates (episodes in progress included),
/// written into `dir/seed`; returns that directory.
fn checkpoint(dir: &Path) -> PathBuf {
    let seed = dir.join("seed");
    let mut s = sampler();
    let mut t = Trainer::new(tiny(), Arc::new(ToyFactory), Device::Cpu).unwrap();
    t.train_update(&mut s).unwrap();
    t.train_update(&mut s).unwrap();
    t.save_checkpoint(&seed, &s).unwrap();
    seed
}

/// A copy of checkpoint `from` into `to`.
fn copy_checkpoint(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn file_named(dir: &Path, prefix: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .unwrap_or_else(|| panic!("no {prefix}* in {}", dir.display()))
}

/// What a loaded model must still do: act greedily for an episode.
fn act(model: &PolicyModel) -> Result<(), String> {
    evaluate(
        model,
        &ToyFactory,
        &[EnvId::new(ENVS[0])],
        &[7],
        HarnessLevel::H4,
        ScaleChoice::Min,
    )
    .map(drop)
    .map_err(|e| e.to_string())
}

/// Resume the run, act with its policy and train once more (the resumed episodes, counters,
/// random stream, optimizer and sampler all take part in an update). The update only runs when
/// it costs no more than a few of the seed's: what a resumed config asks for (a mutated
/// `rollout_len` of 65535 is a 500k-step rollout) is the config's cost, not the reader's.
fn resume(dir: &Path) -> Result<(), String> {
    let mut s = sampler();
    let mut t = Trainer::resume(dir, Arc::new(ToyFactory), Device::Cpu, &mut s)
        .map_err(|e| e.to_string())?;
    act(&t.policy())?;
    let cost = |c: &TrainConfig| c.batch_size() * c.epochs;
    if cost(t.config()) > 4 * cost(&tiny()) {
        return Ok(());
    }
    t.train_update(&mut s).map(drop).map_err(|e| e.to_string())
}

#[test]
fn the_parameter_count_is_known_before_building() {
    for p in ["tiny", "cpu", "gpu"] {
        for encoder in [crate::ImageEncoder::PatchMlp, crate::ImageEncoder::Conv] {
            let mut cfg = TrainConfig::preset(p).unwrap().model;
            cfg.encoder = encoder;
            if p == "tiny" && encoder == crate::ImageEncoder::Conv {
                // 16x16 is too small for three convolutions: refused, naming the field.
                let mut c = TrainConfig::preset(p).unwrap();
                c.model = cfg.clone();
                let e = c.validate().unwrap_err().to_string();
                assert!(e.contains("model.image_size") && e.contains("17"), "{e}");
                cfg.image_size = 24;
            }
            let net = PolicyModel::new(&cfg, 0, Device::Cpu).unwrap();
            assert_eq!(
                cfg.num_params(),
                Some(net.num_params()),
                "{p} {}",
                encoder.name()
            );
        }
        // A padded conv of 3x3 kernels: 32 -> 16 -> 8 -> 4 on the cpu frame.
        let mut cfg = TrainConfig::preset(p).unwrap().model;
        cfg.encoder = crate::ImageEncoder::Conv;
        cfg.conv_kernels = [3, 3, 3];
        cfg.conv_padding = 1;
        if p == "cpu" {
            assert_eq!(cfg.conv_sides(), Some([16, 8, 4]));
        }
        let net = PolicyModel::new(&cfg, 0, Device::Cpu).unwrap();
        assert_eq!(cfg.num_params(), Some(net.num_params()), "{p} padded conv");
    }
    // Kernels and padding the encoder cannot use are refused, naming the field.
    for (kernels, padding, field) in [
        ([3, 0, 3], 0, "model.conv_kernels[1]"),
        ([3, 3, 3], 3, "model.conv_padding"),
        ([9, 9, 9], 0, "model.image_size"),
    ] {
        let mut c = TrainConfig::preset("cpu").unwrap();
        c.model.encoder = crate::ImageEncoder::Conv;
        c.model.conv_kernels = kernels;
        c.model.conv_padding = padding;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains(field), "{kernels:?} {padding}: {e}");
    }
}

/// A campaign on one file of a real checkpoint: the checkpoint is copied into a work
/// directory whose file named `prefix...` each input replaces; `read` gets that directory.
fn fuzz_checkpoint_file(reader: &'static str, prefix: &str, read: fn(&Path) -> Result<(), String>) {
    let dir = scratch_dir(reader);
    let seed = checkpoint(&dir);
    let work = dir.join("work");
    copy_checkpoint(&seed, &work);
    let file = file_named(&work, prefix);
    Fuzz::new(reader)
        .seed("tiny after 2 updates", std::fs::read(&file).unwrap())
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(INPUTS)
        .run_on_file(&file, |_| read(&work))
        .assert_clean();
}

#[test]
fn fuzz_checkpoint_state() {
    fuzz_checkpoint_file("checkpoint-state", "state.json", resume);
}

#[test]
fn fuzz_checkpoint_model() {
    fuzz_checkpoint_file("checkpoint-model", "model-", |dir| {
        act(&PolicyModel::load(dir, Device::Cpu).map_err(|e| e.to_string())?)
    });
}

/// The optimizer's moments are used by the update after the resume.
#[test]
fn fuzz_checkpoint_optimizer() {
    fuzz_checkpoint_file("checkpoint-optimizer", "optimizer-", resume);
}

/// Fuzzes a file a resumed run reads back: a tiny run of two updates writes it (`file` finds it
/// in the run's folder), then a resume reads each mutant. A resumed run keeps the earlier lines
/// of its log and cuts its TensorBoard events to its checkpoint; stopping at once keeps the
/// check to the reading (and the rewrite).
fn fuzz_resumed_file(name: &'static str, file: impl FnOnce(&Path) -> PathBuf) {
    let dir = scratch_dir(name);
    let out = dir.join("run");
    let mut s = sampler();
    let mut t = Trainer::new(tiny(), Arc::new(ToyFactory), Device::Cpu).unwrap();
    let first = RunOptions {
        out_dir: Some(out.clone()),
        checkpoint_every: 0,
        stop_at: Some(256),
    };
    t.run(&mut s, &first, &mut |_| {}).unwrap();
    let path = file(&out);
    let again = RunOptions {
        stop_at: Some(0),
        ..first
    };
    Fuzz::new(name)
        .seed("tiny, 2 updates", std::fs::read(&path).unwrap())
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(INPUTS * 2)
        .run_on_file(&path, |_| {
            t.run(&mut s, &again, &mut |_| {})
                .map(drop)
                .map_err(|e| e.to_string())
        })
        .assert_clean();
}

#[test]
fn fuzz_train_log() {
    fuzz_resumed_file("train-log", |out| out.join("train_log.jsonl"));
}

/// The TensorBoard event file a resumed run reads back (and cuts to its checkpoint).
#[test]
fn fuzz_tensorboard_events() {
    fuzz_resumed_file("tensorboard-events", |out| {
        RunFiles::new(out).tensorboard_events().remove(0)
    });
}

/// The event decoder on its own, past the checksums that stop most mutants of a whole file:
/// a record whose CRC holds but whose protobuf does not parse is refused, never a panic.
#[test]
fn fuzz_tensorboard_event_proto() {
    let event = tensorboard::Event {
        wall_time: 1_700_000_000.5,
        step: 384,
        body: tensorboard::EventBody::Scalars(vec![
            ("loss/policy".into(), -0.25),
            ("env/toy/goal/success_rate".into(), 0.5),
        ]),
    };
    Fuzz::new("tensorboard-event-proto")
        .seed("scalars", event.encode())
        .seed(
            "file version",
            tensorboard::Event::file_version(1.0).encode(),
        )
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(INPUTS * 20)
        .run(|bytes| tensorboard::Event::decode(bytes).map(drop))
        .assert_clean();
}
