//! Saved sampler states of every kind and sampler configuration files under mutation fuzzing
//! (`envdist_core::fuzz`): each input restores a sampler that then samples, updates and
//! saves, or is refused with an error naming the file; never a panic, a huge allocation or a
//! hang. The long run: `ENVDIST_FUZZ_INPUTS=100000 cargo test -p envdist-curriculum
//! --test fuzz -- --nocapture` (README.md, "Fuzzing the readers").

use std::path::Path;

use envdist_core::fuzz::{Fuzz, Summary, TrackingAllocator, scratch_dir};
use envdist_core::{EnvSpec, EpisodeOutcome, Task, TaskSampler};
use envdist_curriculum::{
    CurriculumSampler, HdcConfig, HdcSampler, Mode, SamplerConfig, StepBalanced, synthetic_specs,
};

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator;

/// Mutants per campaign in `cargo test`: nine campaigns share the time budget.
const INPUTS: usize = 200;

fn specs() -> Vec<EnvSpec> {
    synthetic_specs("fz", &[(1, 3), (2, 6), (4, 4)])
}

/// A deterministic outcome: the learner solves small scales more often.
fn outcome(task: Task, i: u64) -> EpisodeOutcome {
    let success = (task.seed ^ i) % 10 < 8u64.saturating_sub(u64::from(task.scale));
    EpisodeOutcome {
        task,
        success,
        episode_return: f32::from(u8::from(success)),
        steps: 1 + (i % 7) as u32,
    }
}

fn play(sampler: &mut dyn TaskSampler, episodes: u64) {
    for i in 0..episodes {
        let t = sampler.sample();
        let _ = sampler.trains_on(&t);
        sampler.update(&outcome(t, i)).unwrap();
    }
}

/// What a restored sampler must still do: sample, take outcomes, report and save.
fn exercise(sampler: &mut dyn CurriculumSampler) {
    play(sampler, 20);
    let _ = (sampler.snapshot(), sampler.state(), sampler.samples());
}

/// Saved states of `config`'s sampler after a few episodes and after many (HDC then sits at
/// later harness levels; the rivals have filled their windows and buffers).
fn trained_states(config: &SamplerConfig, dir: &Path) -> Vec<(String, Vec<u8>)> {
    [5u64, 400]
        .iter()
        .map(|&episodes| {
            let mut s = config.build(&specs(), 11).unwrap();
            play(s.as_mut(), episodes);
            let path = dir.join(format!("seed-{episodes}.json"));
            s.save_state_file(&path).unwrap();
            (
                format!("{} after {episodes} episodes", config.kind()),
                std::fs::read(path).unwrap(),
            )
        })
        .collect()
}

fn fuzz_state_of(kind: &'static str, reader: &'static str) -> Summary {
    let config = SamplerConfig::default_for(kind).unwrap();
    let dir = scratch_dir(reader);
    let mut fuzz = Fuzz::new(reader);
    for (name, bytes) in trained_states(&config, &dir) {
        fuzz = fuzz.seed(name, bytes);
    }
    fuzz.regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(INPUTS)
        .run_on_file(&dir.join("state.json"), |path| {
            let mut s = config.build(&specs(), 0).unwrap();
            s.load_state_file(path).map_err(|e| e.to_string())?;
            exercise(s.as_mut());
            Ok(())
        })
}

#[test]
fn fuzz_pass_rate_state() {
    fuzz_state_of("pass_rate", "state-pass-rate").assert_clean();
}

#[test]
fn fuzz_learnability_state() {
    fuzz_state_of("learnability", "state-learnability").assert_clean();
}

#[test]
fn fuzz_learning_progress_state() {
    fuzz_state_of("learning_progress", "state-learning-progress").assert_clean();
}

#[test]
fn fuzz_sec_state() {
    fuzz_state_of("sec", "state-sec").assert_clean();
}

#[test]
fn fuzz_ladder_state() {
    fuzz_state_of("ladder", "state-ladder").assert_clean();
}

#[test]
fn fuzz_plr_state() {
    fuzz_state_of("plr", "state-plr").assert_clean();
}

/// HDC's own reader (`HdcSampler::load`, schema checked), for the per-env and the shared
/// level rule: every input is loaded into a sampler of each mode.
#[test]
fn fuzz_hdc_state() {
    let modes = [Mode::Full, Mode::Global];
    let configs: Vec<SamplerConfig> = modes
        .iter()
        .map(|&mode| {
            SamplerConfig::Hdc(HdcConfig {
                mode,
                min_episodes: 3,
                ..Default::default()
            })
        })
        .collect();
    let dir = scratch_dir("state-hdc");
    let mut fuzz = Fuzz::new("state-hdc");
    for c in &configs {
        for (name, bytes) in trained_states(c, &dir) {
            fuzz = fuzz.seed(name, bytes);
        }
    }
    let hdc = |c: &SamplerConfig| match c {
        SamplerConfig::Hdc(h) => HdcSampler::new(&specs(), None, h.clone(), 0).unwrap(),
        _ => unreachable!("HDC configs only"),
    };
    let name = "state.json";
    fuzz.regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(INPUTS)
        .run_on_file(&dir.join(name), |path| {
            let mut first_error = None;
            for c in &configs {
                let mut s = hdc(c);
                match s.load(path) {
                    Ok(()) => {
                        exercise(&mut s);
                        return Ok(());
                    }
                    Err(e) => {
                        let e = e.to_string();
                        // Every refusal must name the file, not only the one returned.
                        if !e.contains(name) {
                            return Err(e);
                        }
                        first_error.get_or_insert(e);
                    }
                }
            }
            Err(first_error.unwrap_or_default())
        })
        .assert_clean();
}

/// A step-balanced mixture (HDC and PLR parts) restored from its state value, as a trainer's
/// checkpoint holds it (no file of its own: errors need not name one).
#[test]
fn fuzz_step_balanced_state() {
    let (a, b) = (
        synthetic_specs("a", &[(1, 3), (2, 4)]),
        synthetic_specs("b", &[(1, 5)]),
    );
    let ids = |s: &[EnvSpec]| s.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
    let mixture = || {
        StepBalanced::new(
            vec![
                (
                    ids(&a),
                    SamplerConfig::default_for("hdc")
                        .unwrap()
                        .build(&a, 1)
                        .unwrap() as Box<dyn TaskSampler>,
                ),
                (
                    ids(&b),
                    SamplerConfig::default_for("plr")
                        .unwrap()
                        .build(&b, 2)
                        .unwrap(),
                ),
            ],
            3,
        )
        .unwrap()
    };
    let mut trained = mixture();
    play(&mut trained, 300);
    Fuzz::new("state-step-balanced")
        .seed(
            "hdc + plr after 300 episodes",
            serde_json::to_vec(&trained.state()).unwrap(),
        )
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(INPUTS)
        .run(|bytes| {
            let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
            let mut m = mixture();
            m.restore(&v).map_err(|e| e.0)?;
            play(&mut m, 20);
            let _ = m.state();
            Ok(())
        })
        .assert_clean();
}

#[test]
fn fuzz_sampler_config() {
    let dir = scratch_dir("sampler-config");
    let mut fuzz = Fuzz::new("sampler-config");
    for kind in SamplerConfig::KINDS {
        let config = SamplerConfig::default_for(kind).unwrap();
        fuzz = fuzz.seed(kind, serde_json::to_vec_pretty(&config).unwrap());
    }
    fuzz.regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(INPUTS * 2)
        .run_on_file(&dir.join("sampler.json"), |path| {
            let config = SamplerConfig::read(path).map_err(|e| e.to_string())?;
            // A valid configuration may still not fit these environments (a scale the
            // ranges lack): that refusal is the builder's, not the file reader's.
            if let Ok(mut s) = config.build(&specs(), 0) {
                exercise(s.as_mut());
            }
            Ok(())
        })
        .assert_clean();
}
