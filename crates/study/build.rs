//! Build-time facts the experiment records: a hash of every library crate's sources (so a
//! stage cached by older code is recomputed, not reused) and the git commit.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates whose code decides the study's numbers, each hashed on its own so that a stage
/// is invalidated only by the crates it uses. `STAGES` is the study's own stage code: everything that computes a cached output lives
/// under `src/stages` (the report, analysis and figures are recomputed on every run and need
/// no hash).
const CRATES: [(&str, &str); 7] = [
    ("CORE", "../core/src"),
    ("ENVS", "../envs/src"),
    ("PROFILING", "../profiling/src"),
    ("SELECTION", "../selection/src"),
    ("CURRICULUM", "../curriculum/src"),
    ("TRAINER", "../trainer/src"),
    ("STAGES", "src/stages"),
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

// Core's FNV-1a, the one definition, compiled into the build script too (it is
// self-contained: a build script cannot depend on the crate it describes without building it
// twice for the host).
#[path = "../core/src/hash.rs"]
#[allow(dead_code)]
mod hash;

fn fnv(h: &mut u64, bytes: &[u8]) {
    *h = hash::fnv1a_from(*h, bytes);
}

fn main() {
    println!("cargo:rerun-if-changed=../core/src/hash.rs");
    for (name, dir) in CRATES {
        println!("cargo:rerun-if-changed={dir}");
        let mut paths = Vec::new();
        files(Path::new(dir), &mut paths);
        paths.sort();
        let mut h: u64 = hash::FNV_OFFSET;
        for p in &paths {
            // Paths relative to the crate, so the hash does not depend on where the checkout is.
            fnv(
                &mut h,
                p.strip_prefix(dir)
                    .unwrap_or(p)
                    .to_string_lossy()
                    .as_bytes(),
            );
            fnv(&mut h, &std::fs::read(p).unwrap_or_default());
        }
        println!("cargo:rustc-env=ENVDIST_SOURCE_{name}={h:016x}");
    }
    // Dependency versions decide numbers too (burn's kernels).
    println!("cargo:rerun-if-changed=../../Cargo.lock");
    let mut h: u64 = hash::FNV_OFFSET;
    fnv(
        &mut h,
        &std::fs::read("../../Cargo.lock").unwrap_or_default(),
    );
    println!("cargo:rustc-env=ENVDIST_SOURCE_LOCK={h:016x}");

    println!("cargo:rerun-if-changed=../../.git/HEAD");
    println!("cargo:rerun-if-changed=../../.git/index");
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir("../..")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = match git(&["rev-parse", "HEAD"]) {
        Some(c) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty { format!("{c}+dirty") } else { c }
        }
        None => "unknown".into(),
    };
    println!("cargo:rustc-env=ENVDIST_GIT_COMMIT={commit}");
}
