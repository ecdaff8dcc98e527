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
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == command),
        ".ci/run must run the README's test command `{command}` verbatim"
    );
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
    ] {
        let lib = std::fs::read_to_string(repo_root().join(format!("crates/{krate}/src/lib.rs")))
            .unwrap();
        assert!(
            lib.trim_start().starts_with("//!"),
            "crates/{krate}/src/lib.rs must open with a //! header"
        );
    }
}
