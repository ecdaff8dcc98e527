//! Saved sampler states of every kind and sampler configuration files under mutation fuzzing
//! (`envdist_core::fuzz`): each input restores a sampler that then samples, updates and
//! saves, or is refused with an error naming the file; never a panic, a huge allocation or a
//! hang. A state that is not refused must keep the sampler's invariants (`exercise`): the
//! state it loaded and every state it reaches load again unchanged, and every task it draws
//! is one it accepts back; a broken invariant panics, which the campaign counts as a failure.
//! The long run: `ENVDIST_FUZZ_INPUTS=100000 cargo test -p envdist-curriculum --test it fuzz::
//! -- --nocapture` (docs/fuzzing.md).

use std::path::Path;

use envdist_core::fuzz::{Fuzz, Summary, scratch_dir};
use envdist_core::{EnvSpec, EpisodeOutcome, Task, TaskSampler};
use envdist_curriculum::{
    CurriculumSampler, HdcConfig, HdcSampler, Mode, SamplerConfig, StepBalanced, synthetic_specs,
};

use crate::built;

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

/// Draw and report `episodes` tasks; a drawn task the sampler refuses back breaks its
/// invariants (it could not have issued what it issued).
fn play(sampler: &mut dyn TaskSampler, episodes: u64) {
    for i in 0..episodes {
        let t = sampler.sample();
        let _ = sampler.trains_on(&t);
        if let Err(e) = sampler.update(&outcome(t, i)) {
            panic!("invariant broken: the sampler refused a task it drew: {e}");
        }
    }
}

/// The state of `sampler` loads into a fresh one (`fresh()`) and saves back unchanged: the
/// checks on load accept every state the sampler can be in.
fn reloads(sampler: &dyn TaskSampler, fresh: &dyn Fn() -> Box<dyn TaskSampler>, when: &str) {
    let state = sampler.state();
    let mut again = fresh();
    if let Err(e) = again.restore(&state) {
        panic!("invariant broken: the state {when} does not load again: {e}");
    }
    assert_eq!(again.state(), state, "the state {when} saves back changed");
}

/// What a restored sampler must still do, its invariants kept: reload what it loaded, draw
/// tasks it accepts, report finite probabilities summing to 1, and reach states that reload.
fn exercise(sampler: &mut dyn CurriculumSampler, fresh: &dyn Fn() -> Box<dyn TaskSampler>) {
    reloads(sampler, fresh, "as loaded");
    play(sampler, 20);
    let total: f64 = sampler.snapshot().iter().map(|e| e.probability).sum();
    assert!(
        (total - 1.0).abs() < 1e-6,
        "invariant broken: the snapshot's probabilities sum to {total}"
    );
    reloads(sampler, fresh, "after 20 episodes");
}

/// Saved states of `config`'s sampler after a few episodes and after many (HDC then sits at
/// later harness levels; the rivals have filled their windows and buffers), and after a
/// retarget onto these environments from a set that held one more (a state with a retired
/// environment, whose in-flight outcome it took).
fn trained_states(config: &SamplerConfig, dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut states: Vec<(String, Box<dyn CurriculumSampler>)> = [5u64, 400]
        .iter()
        .map(|&episodes| {
            let mut s = config.build(&specs(), 11).unwrap();
            play(s.as_mut(), episodes);
            (format!("{} after {episodes} episodes", config.kind()), s)
        })
        .collect();
    let mut before = specs();
    before.extend(synthetic_specs("old", &[(1, 2)]));
    let mut s = config.build(&before, 11).unwrap();
    play(s.as_mut(), 200);
    let in_flight = (0..100)
        .map(|_| s.sample())
        .find(|t| t.env.as_str() == "old/e0")
        .expect("the dropped environment is drawn");
    s.retarget(&specs()).unwrap();
    s.update(&outcome(in_flight, 0)).unwrap();
    play(s.as_mut(), 100);
    states.push((format!("{} after a retarget", config.kind()), s));
    states
        .into_iter()
        .enumerate()
        .map(|(k, (name, s))| {
            let path = dir.join(format!("seed-{k}.json"));
            s.save_state_file(&path).unwrap();
            (name, std::fs::read(path).unwrap())
        })
        .collect()
}

/// The campaign against `kind`'s saved state, reader `state-<kind>` (`-` for `_`).
fn fuzz_state_of(kind: &'static str) -> Summary {
    // A reader's name lives as long as the campaign's failures may be reported: the test.
    let reader: &'static str = format!("state-{}", kind.replace('_', "-")).leak();
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
            exercise(s.as_mut(), &|| config.build(&specs(), 1).unwrap());
            Ok(())
        })
}

/// Every rival's saved state (HDC's has a reader of its own, below): a campaign per kind, all
/// run before the first one with a failure fails the test.
#[test]
fn fuzz_rival_states() {
    let rivals = SamplerConfig::KINDS.into_iter().filter(|&k| k != "hdc");
    let summaries: Vec<Summary> = rivals.map(fuzz_state_of).collect();
    for summary in &summaries {
        summary.assert_clean();
    }
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
                        exercise(&mut s, &|| Box::new(hdc(c)));
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
                (ids(&a), built("hdc", &a, 1) as Box<dyn TaskSampler>),
                (ids(&b), built("plr", &b, 2)),
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
            let fresh = || Box::new(mixture()) as Box<dyn TaskSampler>;
            reloads(&m, &fresh, "as loaded");
            play(&mut m, 20);
            reloads(&m, &fresh, "after 20 episodes");
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
                exercise(s.as_mut(), &|| config.build(&specs(), 1).unwrap());
            }
            Ok(())
        })
        .assert_clean();
}
