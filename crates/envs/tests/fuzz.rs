//! The answer reader (`AnswerVocabulary::parse`, what a VLM's reply goes through in the CLI,
//! the Python envs and the verl reward) under mutation fuzzing (`envdist_core::fuzz`): every
//! reply, against every single-turn family's vocabulary and a multi-turn env's, reads as an
//! action or is refused with an error that says what was expected; never a panic, a huge
//! allocation or a hang. The long run: `ENVDIST_FUZZ_INPUTS=100000 cargo test -p envdist-envs
//! --test fuzz -- --nocapture` (docs/fuzzing.md).

use envdist_core::env::EnvFactory;
use envdist_core::fuzz::{Fuzz, TrackingAllocator};
use envdist_core::{AnswerVocabulary, HarnessLevel, Task};
use envdist_envs::Suite;

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator;

/// The vocabulary of the classic variant of every family (one episode each, at the top scale),
/// and of a multi-turn env (empty: the action names alone).
fn vocabularies() -> Vec<(String, AnswerVocabulary)> {
    let suite = Suite::with_canvas(16).expect("canvas 16");
    suite
        .specs()
        .into_iter()
        .filter(|s| s.variant == "classic")
        .map(|spec| {
            let mut env = suite.make(&spec.id).expect("a suite id");
            env.reset(&Task {
                env: spec.id.clone(),
                seed: 5,
                harness: HarnessLevel::H4,
                scale: spec.scale.max,
            });
            (spec.id.to_string(), env.answer_vocabulary())
        })
        .collect()
}

#[test]
fn fuzz_answer_text() {
    let vocabularies = vocabularies();
    let seeds = [
        "3",
        "<answer>three</answer>",
        "Yes, the goal is reachable.",
        "Can the white agent reach the green goal? No, it is blocked off.",
        "Answer: up-right",
        "The red object is to the left of the blue one.",
        "<think>The cycle is red, blue, green.</think><answer>red</answer>",
        "the blue disc in the top right",
        "\\boxed{answer_3}",
        "candidate 2, the third one",
        "It isn't symmetric.",
        "wait",
    ];
    let mut fuzz = Fuzz::new("answer-text");
    for (i, s) in seeds.iter().enumerate() {
        fuzz = fuzz.seed(format!("reply-{i}"), s.as_bytes().to_vec());
    }
    let summary = fuzz
        .regressions(env!("CARGO_MANIFEST_DIR"))
        .default_inputs(400)
        .run(|bytes| {
            let text = String::from_utf8_lossy(bytes);
            let mut refused = None;
            let mut read = 0;
            for (id, v) in &vocabularies {
                match v.parse(&text) {
                    Ok(_) => read += 1,
                    Err(e) => {
                        let e = e.to_string();
                        // Every refusal says what this env accepts.
                        assert!(e.contains("; expected "), "{id}: {e}");
                        refused = Some(e);
                    }
                }
            }
            match refused {
                Some(e) if read == 0 => Err(e),
                _ => Ok(()),
            }
        });
    summary.assert_clean();
}
