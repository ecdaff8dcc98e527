//! The trajectory-log reader (envdist's trajectory and step lines, trainers' chat logs) and the
//! LLM segmenter's answer parser under mutation fuzzing (`envdist_core::fuzz`): each input is
//! profiled, or refused with an error naming the file (and the line); never a panic, a huge
//! allocation or a hang. The long run: `ENVDIST_FUZZ_INPUTS=100000 cargo test -p
//! envdist-profiling --lib fuzz -- --nocapture` (docs/fuzzing.md).

use envdist_core::fuzz::{Fuzz, TrackingAllocator, scratch_dir};

use crate::test_support::{chat_line, traj};
use crate::{LlmConfig, LlmSegmenter, MetaConfig, TagSegmenter, profile_log};

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator;

/// The three line formats of the crate README: trajectory and step logs, and all three mixed
/// in one (chat lines carry no tags: alone they need a replay, which xtask's fuzz test does).
fn log_seeds() -> Vec<(&'static str, String)> {
    let whole: Vec<String> = [
        traj(
            "maze/classic",
            &[&["navigate"], &["navigate"], &["reach-goal"]],
        ),
        traj(
            "key-door/classic",
            &[&["navigate"], &["pick-key", "plan"], &["open-door"]],
        ),
        traj("count/shapes", &[&["count"]]),
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
    let chats = [
        chat_line(
            "maze/classic",
            0,
            &["<answer>right</answer>", "Action: up"],
            r#","seed":4,"scale":3,"model":"vlm","success":true"#,
        ),
        chat_line("sokoban/classic", 3, &["no idea", "left"], ""),
        chat_line("maze/classic", 0, &["interact"], ""),
    ]
    .join("\n");
    let mixed = format!("{}\n\n{}\n{}\n", whole[0], steps, chats);
    vec![
        ("trajectories", whole.join("\n") + "\n"),
        ("steps", steps),
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
        .regressions(env!("CARGO_MANIFEST_DIR"))
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
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(400)
        .run(|bytes| {
            // An HTTP body is text: the segmenter reads it lossily, as ureq hands it over.
            segmenter
                .parse_answer(&String::from_utf8_lossy(bytes))
                .map(drop)
        });
    summary.assert_clean();
}
