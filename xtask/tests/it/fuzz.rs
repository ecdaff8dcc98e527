//! Trajectory logs replayed in the real environment suite under mutation fuzzing
//! (`envdist_core::fuzz`), as the Python binding's `profile_log` does: each input is profiled
//! (its untagged trajectories replayed for ability tags), or refused with an error naming the
//! file; never a panic, a huge allocation or a hang. The long run: `ENVDIST_FUZZ_INPUTS=100000
//! cargo test -p xtask --test it fuzz -- --nocapture` (docs/fuzzing.md).

use envdist_core::env::EnvFactory;
use envdist_core::fuzz::{Fuzz, scratch_dir};
use envdist_envs::Suite;
use envdist_profiling::{
    MetaConfig, NoisyOracle, PolicyMaker, RolloutConfig, TagSegmenter, profile_log, rollout_pool,
};

#[test]
fn fuzz_trajectory_log_replayed_in_the_suite() {
    let suite = Suite::with_canvas(16).unwrap();
    // A single-turn and a few multi-turn environments of the pool, played by the solver.
    let specs: Vec<_> = suite.pool_specs().into_iter().step_by(50).collect();
    let config = RolloutConfig {
        trajectories_per_env: 1,
        seed: 3,
        ..RolloutConfig::default()
    };
    let solver: Box<PolicyMaker> = Box::new(|| Box::new(NoisyOracle::new(0.0)));
    let mut trajectories =
        rollout_pool(&suite, &specs, &config, &*solver, &*solver, &|_| {}).unwrap();
    // Logs from elsewhere carry no tags: the replay fills them in.
    for t in &mut trajectories {
        for s in &mut t.steps {
            s.abilities.clear();
        }
    }
    let jsonl: String = trajectories
        .iter()
        .map(|t| serde_json::to_string(t).unwrap() + "\n")
        .collect();
    let chat: String = trajectories
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let turns: Vec<serde_json::Value> = t
                .steps
                .iter()
                .flat_map(|s| {
                    [
                        serde_json::json!({"role": "user", "content": [{"type": "text", "text": "Your move?"}]}),
                        serde_json::json!({"role": "assistant", "content": format!("Action: {}", s.action)}),
                    ]
                })
                .collect();
            serde_json::json!({
                "env_id": t.task.env, "episode": i, "seed": t.task.seed,
                "scale": t.task.scale, "harness": t.task.harness, "messages": turns,
            })
            .to_string()
                + "\n"
        })
        .collect();
    let dir = scratch_dir("replayed-log");
    let segmenter = TagSegmenter::new(true, vec![]);
    let meta = MetaConfig::default();
    let factory: &dyn EnvFactory = &suite;
    Fuzz::new("replayed-log")
        .seed("solver trajectories", jsonl.into_bytes())
        .seed("the same as a chat log", chat.into_bytes())
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(150)
        .run_on_file(&dir.join("log.jsonl"), |path| {
            profile_log(path, &segmenter, &meta, Some(factory))
                .map(drop)
                .map_err(|e| e.to_string())
        })
        .assert_clean();
}
