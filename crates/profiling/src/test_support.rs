//! Helpers shared by the unit tests.

use envdist_core::{
    ActionId, EnvId, HarnessLevel, TRAJECTORY_SCHEMA_VERSION, Task, Trajectory, TrajectoryStep,
};

/// A trajectory of `env` whose steps carry the given tags (actions are all `wait`).
pub fn traj(env: &str, tags: &[&[&str]]) -> Trajectory {
    Trajectory {
        schema_version: TRAJECTORY_SCHEMA_VERSION,
        task: Task {
            env: EnvId::new(env),
            seed: 0,
            harness: HarnessLevel::H0,
            scale: 3,
        },
        policy: "test".into(),
        steps: tags
            .iter()
            .map(|t| TrajectoryStep {
                action: ActionId::WAIT,
                reward: 0.0,
                abilities: t.iter().map(|s| s.to_string()).collect(),
            })
            .collect(),
        success: false,
        episode_return: 0.0,
    }
}

/// A fresh, empty temporary directory unique to this process and `name`.
pub fn tmp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("envdist-profiling-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
