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

/// A chat episode line as a VLM trainer dumps it.
pub fn chat_line(env: &str, episode: u32, turns: &[&str], extra: &str) -> String {
    let mut messages =
        vec![serde_json::json!({"role": "system", "content": "You play a grid game."})];
    for t in turns {
        messages.push(serde_json::json!({"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "What do you do?"}
        ]}));
        messages.push(serde_json::json!({"role": "assistant", "content": t}));
    }
    format!(
        "{{\"env_id\":\"{env}\",\"episode\":{episode},\"messages\":{}{extra}}}",
        serde_json::Value::Array(messages)
    )
}
