//! xtask's integration tests as one binary (`it`), one module per area. Each test binary links
//! the whole workspace (burn included), so one binary links once where twelve linked twelve
//! times. Run one area with `cargo test -p xtask --test it layering::`.
//!
//! Every test shares this process: none may change the environment or the working directory
//! (pass variables to child commands with `Command::env`), and each uses its own
//! [`temp_dir`].

mod conflict_cli;
mod curriculum_cli;
mod curriculum_suite;
mod envs_cli;
mod experiment_cli;
mod fuzz;
mod layering;
mod modules;
mod profile_cli;
mod profile_llm;
mod profile_pool;
mod readme_claims;
mod select_cli;
mod tidy;
mod train_gradients;
mod train_learning;
mod train_tensorboard;

use std::path::PathBuf;

// Fuzz campaigns (`fuzz`) measure each input's largest allocation.
#[global_allocator]
static ALLOC: envdist_core::fuzz::TrackingAllocator = envdist_core::fuzz::TrackingAllocator;
use std::process::{Command, Output};

/// Run the xtask binary with `args`.
fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("run xtask")
}

/// A command's run ended well; its stderr says why where it did not.
fn assert_succeeded(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The path `envdist-{name}-{pid}` in the system temp directory, removed if an earlier run left
/// it behind (not created). The pid is shared by every test of this binary, so `name` must be
/// unique to one test.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("envdist-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}
