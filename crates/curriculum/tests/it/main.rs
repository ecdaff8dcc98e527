//! The curriculum crate's integration tests as one binary (`it`), one module per area: the
//! golden runs, fuzzed state and config files, property tests of HDC and the rivals, HDC's
//! budget options, state files and what a saved state may mean. Run one area with
//! `cargo test -p envdist-curriculum --test it golden::`.
//!
//! Every test shares this process: none may change the environment or the working directory,
//! and each writes under its own directory.

mod fuzz;
mod golden;
mod options;
mod properties;
mod rivals;
mod state_files;
mod state_meaning;

use envdist_core::{EnvSpec, EpisodeOutcome, Task, TaskSampler};
use envdist_curriculum::{CurriculumSampler, SamplerConfig, synthetic_specs};
use proptest::prelude::{TestCaseError, prop_assert_eq};

// Fuzz campaigns (`fuzz`) measure each input's largest allocation.
#[global_allocator]
static ALLOC: envdist_core::fuzz::TrackingAllocator = envdist_core::fuzz::TrackingAllocator;

/// Environments `fam/e0..` with the given scale ranges.
fn specs(ranges: &[(u32, u32)]) -> Vec<EnvSpec> {
    synthetic_specs("fam", ranges)
}

/// The outcome of one step of `task`: `success`, with that as its return.
fn outcome(task: Task, success: bool) -> EpisodeOutcome {
    EpisodeOutcome {
        task,
        success,
        episode_return: success as u32 as f32,
        steps: 1,
    }
}

/// A deterministic outcome that depends only on the task: solved when the task's seed
/// falls under `p_percent` of 100 (so two runs with the same tasks see the same outcomes).
fn play(task: Task, p_percent: u64) -> EpisodeOutcome {
    let success = task.seed % 100 < p_percent;
    outcome(task, success)
}

/// Play `rounds` draw-and-report rounds ([`play`]).
fn play_rounds(s: &mut (impl TaskSampler + ?Sized), rounds: usize, p_percent: u64) {
    for _ in 0..rounds {
        let t = s.sample();
        s.update(&play(t, p_percent)).unwrap();
    }
}

/// `a` and `b` (which restored `a`'s state) play `rounds` more rounds: they must draw the
/// same tasks and end in the same state.
fn continue_alike<S: TaskSampler + ?Sized>(
    a: &mut S,
    b: &mut S,
    rounds: usize,
    p_percent: u64,
) -> Result<(), TestCaseError> {
    for _ in 0..rounds {
        let (ta, tb) = (a.sample(), b.sample());
        prop_assert_eq!(&ta, &tb);
        a.update(&play(ta, p_percent)).unwrap();
        b.update(&play(tb, p_percent)).unwrap();
    }
    prop_assert_eq!(a.state(), b.state());
    Ok(())
}

/// The sampler of `kind` with its default configuration over `envs`.
fn built(kind: &str, envs: &[EnvSpec], seed: u64) -> Box<dyn CurriculumSampler> {
    SamplerConfig::default_for(kind)
        .unwrap()
        .build(envs, seed)
        .unwrap()
}

/// A fresh directory `envdist-curriculum-{name}-{pid}` in the system temp directory (an
/// earlier run's is removed). The pid is shared by every test of this binary, so `name` must
/// be unique to one test.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("envdist-curriculum-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
