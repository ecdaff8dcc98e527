//! Repository hygiene checks (rust-analyzer style "tidy" tests).

use std::path::PathBuf;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The test command README.md tells users to run, taken from the line after `# The tests:`.
fn readme_test_command() -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let mut lines = readme.lines();
    lines
        .find(|l| l.trim() == "# The tests:")
        .expect("README.md has a `# The tests:` line");
    lines
        .next()
        .expect("a command after `# The tests:`")
        .trim()
        .to_string()
}

#[test]
fn ci_runs_the_readme_test_command() {
    let command = readme_test_command();
    assert!(command.starts_with("cargo test"), "{command}");
    // One command for both halves: the Rust tests and the Python tests.
    assert!(
        command.contains("bash bindings/python/test.sh"),
        "the README's test command must run the Python tests too: {command}"
    );
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == command),
        ".ci/run must run the README's test command `{command}` verbatim"
    );
}

#[test]
fn the_test_command_does_its_own_python_set_up() {
    // The README's test command must pass on a machine with only Rust and Python: test.sh
    // makes its own virtualenv (not seeing the system's packages) and installs the test
    // requirements into it. CI runs the command on its own, so a set-up step that only CI did
    // would be caught.
    let sh = std::fs::read_to_string(repo_root().join("bindings/python/test.sh")).unwrap();
    let code: Vec<&str> = sh
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    assert!(
        code.iter()
            .any(|l| l.contains("-m venv") && !l.contains("system-site-packages")),
        "test.sh must create its own virtualenv, without --system-site-packages"
    );
    assert!(
        code.iter()
            .any(|l| l.starts_with("pip_install()")
                && l.contains("$venv/bin/python\" -m pip install")),
        "test.sh must install with its virtualenv's pip"
    );
    assert!(
        code.iter()
            .any(|l| l.starts_with("pip_install") && l.contains("-r \"$reqs\"")),
        "test.sh must pip install requirements-test.txt into its virtualenv"
    );
    assert!(
        code.iter()
            .any(|l| l.starts_with("pip_install --no-deps -r") && l.contains("\"$lock\"")),
        "test.sh must install the integration tier from its lock, without resolving"
    );
    assert!(
        code.iter()
            .any(|l| l.contains("reqs=") && l.contains("requirements-test.txt")),
        "test.sh must read bindings/python/requirements-test.txt"
    );
    assert!(
        code.iter()
            .any(|l| l.contains("lock=") && l.contains("requirements-integration.lock")),
        "test.sh must read bindings/python/requirements-integration.lock"
    );
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(
        !ci.lines()
            .any(|l| !l.trim_start().starts_with('#') && l.contains("pip install")),
        ".ci/run must not install Python packages itself: the README's test command does"
    );
    let python = repo_root().join("bindings/python");
    let read = |name: &str| std::fs::read_to_string(python.join(name)).unwrap();
    let pinned = |text: &str, pkg: &str| text.lines().any(|l| l.trim_start().starts_with(pkg));
    let core = read("requirements-test.txt");
    for pkg in ["maturin", "numpy", "gymnasium", "pytest"] {
        assert!(pinned(&core, pkg), "requirements-test.txt must name {pkg}");
    }
    let integration = read("requirements-integration.txt");
    for pkg in ["syllabus-rl", "stable-baselines3", "sb3-contrib", "verl=="] {
        assert!(
            pinned(&integration, pkg),
            "requirements-integration.txt must name {pkg}"
        );
    }
    // The lock pins every package of both tiers (so --no-deps installs a whole set), and leaves
    // triton out on purpose (1 GB that nothing here uses).
    let lock = read("requirements-integration.lock");
    for pkg in [
        "maturin==",
        "numpy==",
        "gymnasium==",
        "pytest==",
        "matplotlib==",
        "torch==",
        "stable_baselines3==",
        "sb3_contrib==",
        "Syllabus-RL==",
        "verl==",
        "ray==",
    ] {
        assert!(
            pinned(&lock, pkg),
            "requirements-integration.lock must pin {pkg}"
        );
    }
    assert!(!pinned(&lock, "triton"), "the lock must leave triton out");
    for line in lock
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        assert!(
            line.contains("=="),
            "requirements-integration.lock: `{line}` is not pinned"
        );
    }
}

#[test]
fn every_library_crate_has_a_doc_header() {
    for krate in [
        "core",
        "envs",
        "profiling",
        "selection",
        "curriculum",
        "trainer",
        "world",
        "study",
    ] {
        let lib = std::fs::read_to_string(repo_root().join(format!("crates/{krate}/src/lib.rs")))
            .unwrap();
        assert!(
            lib.trim_start().starts_with("//!"),
            "crates/{krate}/src/lib.rs must open with a //! header"
        );
    }
}

#[test]
fn the_schema_check_catches_an_unversioned_file() {
    let dir = crate::temp_dir("tidy-schema");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("good.json"), r#"{"schema_version": 1, "x": 2}"#).unwrap();
    std::fs::write(dir.join("sub/bad.json"), r#"{"x": 2}"#).unwrap();
    std::fs::write(dir.join("lines.jsonl"), "{\"schema_version\": 1}\n[1, 2]\n").unwrap();
    let bad = envdist_study::layout::unversioned_files(&dir);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad.iter().any(|b| b.ends_with("bad.json")));
    assert!(bad.iter().any(|b| b.ends_with("lines.jsonl:2")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `.rs` file under `dir`, with its code up to its first `#[cfg(test)]` (the code that
/// ships; a file of tests alone, `tests.rs` or `*_tests.rs`, is left out), comment lines
/// dropped (prose may name what the code reads from elsewhere).
fn shipped_sources(dir: &std::path::Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                stack.push(p);
            } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                let shipped = text
                    .split("#[cfg(test)]")
                    .next()
                    .unwrap_or("")
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push((p, shipped));
            }
        }
    }
    out
}

/// An arm is named in one file, its card (`crates/study/src/model/arms.rs`): the stages, the
/// analysis, the report and the figures read the cards, so a new arm cannot silently drop out
/// of a table that lists arms by hand.
#[test]
fn only_the_cards_name_an_arm() {
    let study = repo_root().join("crates/study/src");
    let cards = study.join("model/arms.rs");
    let names: Vec<String> = envdist_study::model::Arm::ALL
        .iter()
        .map(|a| a.name().to_string())
        // `base` is also a stage and section name; it is checked through `Arm::base()`.
        .filter(|n| n != "base")
        .collect();
    let mut offenders = Vec::new();
    for (path, text) in shipped_sources(&study) {
        if path == cards {
            continue;
        }
        for n in &names {
            if text.contains(&format!("\"{n}\"")) || text.contains(&format!("`{n}`")) {
                offenders.push(format!("{} names {n}", path.display()));
            }
        }
        for variant in [
            "Arm::AesHdc",
            "Arm::RandomK",
            "Arm::Aes,",
            "Arm::AllPool",
            "Arm::Base",
        ] {
            if text.contains(variant) {
                offenders.push(format!("{} names {variant}", path.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "arms named outside their cards: {offenders:#?}"
    );
}

/// The trainer names the files of its run directory (`RunFiles`) and the curriculum those of
/// a simulation (`SimulationFiles`); the study and xtask compose them.
#[test]
fn only_the_trainer_spells_its_run_files() {
    let mut offenders = Vec::new();
    for dir in ["crates/study/src", "xtask/src"] {
        for (path, text) in shipped_sources(&repo_root().join(dir)) {
            for spelled in ["train_log.jsonl", "state.json", "join(\"checkpoint\")"] {
                if text.contains(spelled) {
                    offenders.push(format!("{} spells {spelled}", path.display()));
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}
