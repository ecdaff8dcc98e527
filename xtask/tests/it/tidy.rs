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
            .any(|l| l.contains("pip install") && l.contains("-r \"$reqs\"")),
        "test.sh must pip install requirements-test.txt into its virtualenv"
    );
    assert!(
        code.iter()
            .any(|l| l.contains("reqs=") && l.contains("requirements-test.txt")),
        "test.sh must read bindings/python/requirements-test.txt"
    );
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(
        !ci.lines()
            .any(|l| !l.trim_start().starts_with('#') && l.contains("pip install")),
        ".ci/run must not install Python packages itself: the README's test command does"
    );
    let reqs =
        std::fs::read_to_string(repo_root().join("bindings/python/requirements-test.txt")).unwrap();
    for pkg in [
        "maturin",
        "numpy",
        "gymnasium",
        "syllabus-rl",
        "pytest",
        "stable-baselines3",
        "sb3-contrib",
        "verl==",
    ] {
        assert!(
            reqs.lines().any(|l| l.trim_start().starts_with(pkg)),
            "requirements-test.txt must pin {pkg}"
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
