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
fn ci_installs_what_the_python_tests_need_before_running_them() {
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    let install = ci
        .lines()
        .position(|l| {
            l.contains("pip install") && l.contains("bindings/python/requirements-test.txt")
        })
        .expect(".ci/run must pip install -r bindings/python/requirements-test.txt");
    let command = readme_test_command();
    let test = ci
        .lines()
        .position(|l| l.trim() == command)
        .expect(".ci/run runs the README's test command");
    assert!(
        install < test,
        "install the Python test requirements before the tests"
    );
    let reqs =
        std::fs::read_to_string(repo_root().join("bindings/python/requirements-test.txt")).unwrap();
    for pkg in ["maturin", "numpy", "gymnasium", "syllabus-rl", "pytest"] {
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
