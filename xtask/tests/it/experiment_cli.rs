//! `cargo xtask experiment` as a second process on a run directory another process holds: it
//! is refused at once, naming the holder, and touches nothing.

use crate::{temp_dir, xtask};

#[test]
fn a_second_experiment_on_a_held_directory_is_refused_naming_the_holder() {
    let dir = temp_dir("held-run");
    std::fs::create_dir_all(&dir).unwrap();
    // This test process holds the directory, as a running study would.
    let me = envdist_study::layout::LockHolder::current();
    let lock = dir.join("lock.json");
    std::fs::write(&lock, serde_json::to_vec(&me).unwrap()).unwrap();
    let out = xtask(&[
        "experiment",
        "--preset",
        "smoke",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("in use by process") && e.contains(&std::process::id().to_string()),
        "{e}"
    );
    // Nothing was written: no stage, no config, and the holder's lock is untouched.
    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(
        std::fs::read(&lock).unwrap(),
        serde_json::to_vec(&me).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
