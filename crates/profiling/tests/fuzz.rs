//! The trajectory-log reader (envdist's trajectory and step lines, trainers' chat logs) and the
//! LLM segmenter's answer parser under mutation fuzzing (`envdist_core::fuzz`): each input is
//! profiled, or refused with an error naming the file (and the line); never a panic, a huge
//! allocation or a hang. The long run: `ENVDIST_FUZZ_INPUTS=100000 cargo test --release -p
//! envdist-profiling --test fuzz -- --nocapture` (README.md, "Fuzzing the readers").

use std::path::{Path, PathBuf};

use envdist_core::fuzz::{Fuzz, TrackingAllocator, scratch_dir};
use envdist_core::{
    ActionId, EnvId, HarnessLevel, TRAJECTORY_SCHEMA_VERSION, Task, Trajectory, TrajectoryStep,
};
use envdist_profiling::{LlmConfig, LlmSegmenter, MetaConfig, TagSegmenter, profile_log};

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator;

fn regressions(reader: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(reader)
}

fn trajectory(env: &str, seed: u64, tags: &[&[&str]]) -> Trajectory {
    Trajectory {
        schema_version: TRAJECTORY_SCHEMA_VERSION,
        task: Task {
            env: EnvId::new(env),
            seed,
            harness: HarnessLevel::H2,
            scale: 4,
        },
        policy: "solver".into(),
        steps: tags
            .iter()
            .enumerate()
            .map(|(i, t)| TrajectoryStep {
                action: [ActionId::RIGHT, ActionId::INTERACT, ActionId::WAIT][i % 3],
                reward: if i + 1 == tags.len() { 1.0 } else { -0.01 },
                abilities: t.iter().map(|s| s.to_string()).collect(),
            })
            .collect(),
        success: true,
        episode_return: 0.98,
    }
}

/// The three line formats of the crate README, each as its own log and all mixed in one.
fn log_seeds() -> Vec<(&'static str, String)> {
    let whole: Vec<String> = [
        trajectory(
            "maze/classic",
            1,
            &[&["navigate"], &["navigate"], &["reach-goal"]],
        ),
        trajectory(
            "key-door/classic",
            2,
            &[&["navigate"], &["pick-key", "plan"], &["open-door"]],
        ),
        trajectory("count/shapes", 3, &[&["count"]]),
    ]
    .iter()
    .map(|t| serde_json::to_string(t).unwrap())
    .collect();
    let steps = [
        r#"{"schema_version":1,"env":"maze/classic","episode":"a","t":1,"action":"left","abilities":["reach-goal"],"reward":1.0,"success":true,"policy":"me"}"#,
        r#"{"schema_version":1,"env":"maze/classic","episode":7,"action":"wait","abilities":["wait"]}"#,
        r#"{"schema_version":1,"env":"maze/classic","episode":"a","t":0,"action":"up","abilities":["navigate"],"scale":5,"seed":3,"harness":"H1"}"#,
    ]
    .join("\n");
    let chat = |env: &str, episode: u32, turns: &[&str]| {
        let mut messages =
            vec![serde_json::json!({"role": "system", "content": "You play a grid game."})];
        for t in turns {
            messages.push(serde_json::json!({"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "text", "text": "What do you do?"}
            ]}));
            messages.push(serde_json::json!({"role": "assistant", "content": t, "abilities": ["navigate"], "reward": 0.5}));
        }
        serde_json::json!({"env_id": env, "episode": episode, "messages": messages, "seed": 4, "scale": 3, "model": "vlm", "success": true})
            .to_string()
    };
    let chats = [
        chat("maze/classic", 0, &["<answer>right</answer>", "Action: up"]),
        chat("sokoban/classic", 3, &["no idea", "left"]),
        chat("maze/classic", 0, &["interact"]),
    ]
    .join("\n");
    let mixed = format!("{}\n\n{}\n{}\n", whole[0], steps, chats);
    vec![
        ("trajectories", whole.join("\n") + "\n"),
        ("steps", steps),
        ("chat", chats),
        ("mixed", mixed),
    ]
}

#[test]
fn fuzz_trajectory_log() {
    let dir = scratch_dir("trajectory-log");
    let mut fuzz = Fuzz::new("trajectory-log");
    for (name, text) in log_seeds() {
        fuzz = fuzz.seed(name, text.into_bytes());
    }
    let segmenter = TagSegmenter::default();
    let meta = MetaConfig::default();
    let summary = fuzz
        .regressions(regressions("trajectory-log"))
        .default_inputs(400)
        .run_on_file(&dir.join("log.jsonl"), |path| {
            // Reading, segmenting, profiling and the usability check, as `profile_log` does
            // for a log from elsewhere (replay needs an environment suite: xtask's tests).
            profile_log(path, &segmenter, &meta, None)
                .map(drop)
                .map_err(|e| e.to_string())
        });
    summary.assert_clean();
}

#[test]
fn fuzz_llm_answer() {
    let mut config = LlmConfig::new("http://127.0.0.1:9/v1", "stub");
    config.vocabulary = vec!["navigate".into(), "plan".into(), "count".into()];
    let segmenter = LlmSegmenter::new(config).unwrap();
    let summary = Fuzz::new("llm-answer")
        .seed("plain", br#"["navigate", "plan"]"#.to_vec())
        .seed(
            "chatty",
            b"Sure! The abilities are:\n```json\n[\"Navigate\", \"count\"]\n```\nHope this helps."
                .to_vec(),
        )
        .regressions(regressions("llm-answer"))
        .default_inputs(400)
        .run(|bytes| {
            // An HTTP body is text: the segmenter reads it lossily, as ureq hands it over.
            segmenter
                .parse_answer(&String::from_utf8_lossy(bytes))
                .map(drop)
        });
    summary.assert_clean();
}
