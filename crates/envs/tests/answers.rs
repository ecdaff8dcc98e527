//! Every single-turn environment reads its answers in words: the solver's answer, written the
//! ways a vision-language model writes it, parses back to the solver's action, on the pool and
//! the held-out sets (OOD and confirmatory) and the compositional sub-pool, at every scale.

use std::collections::BTreeSet;

use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, EnvSpec, HarnessLevel, Meaning, Task, Turn};
use envdist_envs::{Suite, SuiteConfig};

/// Episodes per environment and scale.
const SEEDS: u64 = 4;

/// Whether a meaning is of the kind a family answers in.
type IsKind = fn(&Meaning) -> bool;

/// What the words of each single-turn family's answers are, by the first meaning every answer
/// declares (a count is a number, "Is the goal reachable?" a yes or a no, ...).
const FAMILY_WORDS: &[(&str, IsKind)] = &[
    ("count-objects", |m| matches!(m, Meaning::Number(_))),
    ("reachability", |m| matches!(m, Meaning::Truth(_))),
    ("odd-one-out", |m| matches!(m, Meaning::Cell { .. })),
    ("relative-position", |m| matches!(m, Meaning::Direction(_))),
    ("pattern-next", |m| matches!(m, Meaning::Colour(_))),
    ("symmetry", |m| matches!(m, Meaning::Truth(_))),
    ("dice-sum", |m| matches!(m, Meaning::Number(_))),
    ("largest-region", |m| matches!(m, Meaning::Colour(_))),
    ("clock-direction", |m| matches!(m, Meaning::Direction(_))),
    ("shape-match", |m| matches!(m, Meaning::Shape(_))),
    ("shape-arithmetic", |m| matches!(m, Meaning::Number(_))),
    ("balance-scale", |m| {
        matches!(m, Meaning::Direction(_) | Meaning::Claim { .. })
    }),
    ("path-length", |m| matches!(m, Meaning::Number(_))),
];

/// The compositional sub-pool's families, by their operation (the family name's stem): one
/// kind of answer per operation, in the same slots in every family.
const OPERATION_WORDS: &[(&str, IsKind)] = &[
    ("count-", |m| matches!(m, Meaning::Number(_))),
    ("compare-sides-", |m| matches!(m, Meaning::Truth(_))),
    ("locate-", |m| matches!(m, Meaning::Cell { .. })),
    ("name-colour-", |m| matches!(m, Meaning::Colour(_))),
    ("same-colour-", |m| matches!(m, Meaning::Truth(_))),
];

/// The kind of answer of `family`, from either table.
fn words_of(family: &str) -> Option<IsKind> {
    FAMILY_WORDS
        .iter()
        .find(|(f, _)| *f == family)
        .or_else(|| {
            OPERATION_WORDS
                .iter()
                .find(|(op, _)| family.starts_with(op))
        })
        .map(|(_, w)| *w)
}

/// Every environment: the default suite's and the compositional sub-pool.
fn suite() -> Suite {
    Suite::new(SuiteConfig {
        compositional: true,
        ..SuiteConfig::with_canvas(16)
    })
    .unwrap()
}

/// The ways a reply carries the words `p` of an answer (`instruction` is the question).
fn replies(p: &str, instruction: &str) -> [String; 5] {
    [
        p.to_string(),
        format!("<answer>{p}</answer>"),
        format!("Answer: {p}."),
        format!("<think>I look at the image.</think> The answer is {p}."),
        format!("{instruction} {p}"),
    ]
}

fn single_turn(suite: &Suite) -> Vec<EnvSpec> {
    let specs: Vec<EnvSpec> = suite.specs();
    specs
        .into_iter()
        .filter(|s| s.turn == Turn::Single)
        .collect()
}

#[test]
fn the_table_names_every_single_turn_family() {
    let suite = Suite::with_canvas(16).unwrap();
    let families: BTreeSet<String> = single_turn(&suite).into_iter().map(|s| s.family).collect();
    let table: BTreeSet<String> = FAMILY_WORDS.iter().map(|(f, _)| f.to_string()).collect();
    assert_eq!(families, table);
    let composed = single_turn(&self::suite());
    let unnamed: Vec<&str> = composed
        .iter()
        .map(|s| s.family.as_str())
        .filter(|f| words_of(f).is_none())
        .collect();
    assert!(unnamed.is_empty(), "add to OPERATION_WORDS: {unnamed:?}");
    assert_eq!(
        composed.len(),
        single_turn(&suite).len() + 40,
        "20 families, 2 variants each"
    );
    assert!(
        suite.ood_specs().iter().any(|s| s.turn == Turn::Single),
        "the held-out set has a single-turn family"
    );
    assert!(
        suite.confirm_specs().iter().any(|s| s.turn == Turn::Single),
        "the confirmatory set has a single-turn family"
    );
}

#[test]
fn every_single_turn_answer_reads_back_in_words() {
    let suite = suite();
    let mut checked = 0usize;
    for spec in single_turn(&suite) {
        let words_of = words_of(&spec.family)
            .unwrap_or_else(|| panic!("{}: add its family to FAMILY_WORDS", spec.id));
        let mut env = suite.make(&spec.id).unwrap();
        for scale in spec.scale.min..=spec.scale.max {
            for seed in 0..SEEDS {
                let task = Task {
                    env: spec.id.clone(),
                    seed,
                    harness: HarnessLevel::H4,
                    scale,
                };
                let at = format!("{} scale {scale} seed {seed}", spec.id);
                env.reset(&task);
                let oracle = env.oracle_action().unwrap();
                let v = env.answer_vocabulary();
                for a in env.legal_actions().iter() {
                    let ms = v.meanings(a);
                    assert!(!ms.is_empty(), "{at}: the legal {a} has no meaning");
                    assert!(words_of(&ms[0]), "{at}: {a} means first {:?}", ms[0]);
                    // Every answer, right or wrong, reads back from its first words.
                    assert_eq!(v.parse(&ms[0].phrase()), Ok(a), "{at}: {:?}", ms[0]);
                }
                for m in v.meanings(oracle) {
                    let fits: Vec<ActionId> = v
                        .answers()
                        .iter()
                        .filter(|(_, ms)| ms.contains(m))
                        .map(|(a, _)| *a)
                        .collect();
                    for p in m.phrases() {
                        for reply in replies(&p, &spec.instruction) {
                            let read = v.parse(&reply);
                            if fits == [oracle] {
                                assert_eq!(read, Ok(oracle), "{at}: {reply:?}");
                            } else {
                                // A colour or shape several items share names none of them.
                                let e = read.expect_err(&reply).to_string();
                                assert!(e.contains("ambiguous"), "{at}: {reply:?}: {e}");
                            }
                            checked += 1;
                        }
                    }
                }
                assert_eq!(v.parse(&oracle.name()), Ok(oracle), "{at}: the slot form");
                let step = env.step(v.parse(&v.meanings(oracle)[0].phrase()).unwrap());
                assert!(
                    step.success,
                    "{at}: the solver's answer in words does not win"
                );
            }
        }
    }
    assert!(checked > 10_000, "{checked} replies checked");
}

#[test]
fn wrong_or_unknown_words_are_errors_that_list_the_answers() {
    let suite = Suite::with_canvas(16).unwrap();
    let cases = [
        ("count-objects/classic", "a dozen", "a number from 0 to 15"),
        (
            "reachability/classic",
            "maybe",
            "yes / reachable / connected (answer_1)",
        ),
        (
            "reachability/blocked",
            "yes, it is reachable",
            "several different answers",
        ),
        ("relative-position/classic", "up-right", "is not one of"),
        ("clock-direction/classic", "sideways", "up (answer_0)"),
        ("largest-region/classic", "purple", "`purple` is not one of"),
        ("odd-one-out/classic", "no idea", "top left / item 0"),
        ("balance-scale/classic", "not balanced", "ambiguous"),
        ("path-length/classic", "a long way", "a number from 0 to 15"),
    ];
    for (id, reply, says) in cases {
        let spec = suite.spec(&id.into()).unwrap().clone();
        let mut env = suite.make(&spec.id).unwrap();
        env.reset(&Task {
            env: spec.id.clone(),
            seed: 3,
            harness: HarnessLevel::H4,
            scale: spec.scale.min,
        });
        let e = env
            .answer_vocabulary()
            .parse(reply)
            .expect_err(reply)
            .to_string();
        assert!(e.contains(says), "{id}: {reply:?}: {e}");
    }
}

#[test]
fn words_read_against_each_question() {
    let suite = Suite::with_canvas(16).unwrap();
    let slot = |k| ActionId::answer(k).unwrap();
    let (yes, no) = (slot(1), slot(0));
    let cases = [
        ("reachability/classic", "blocked", no),
        ("reachability/blocked", "blocked", yes),
        ("reachability/blocked", "it can be reached: not blocked", no),
        ("symmetry/classic", "symmetric", yes),
        ("symmetry/asymmetric", "symmetric", no),
        ("symmetry/asymmetric", "It is not symmetrical.", yes),
        ("balance-scale/classic", "The left pan is heavier.", slot(0)),
        ("balance-scale/classic", "right, not balanced", slot(1)),
        ("balance-scale/classic", "They are equal.", slot(2)),
    ];
    for (id, reply, want) in cases {
        let env = suite.make(&id.into()).unwrap();
        assert_eq!(
            env.answer_vocabulary().parse(reply),
            Ok(want),
            "{id}: {reply:?}"
        );
    }
}

#[test]
fn multi_turn_envs_read_actions_as_before() {
    let suite = Suite::with_canvas(16).unwrap();
    for spec in suite.specs().into_iter().filter(|s| s.turn == Turn::Multi) {
        let env = suite.make(&spec.id).unwrap();
        let v = env.answer_vocabulary();
        assert!(v.is_empty(), "{}", spec.id);
        for text in ["left", "<answer>interact</answer>", "yes", "answer 3"] {
            assert_eq!(
                v.parse(text),
                ActionId::parse_text(text),
                "{}: {text}",
                spec.id
            );
        }
    }
}

/// The fragments of a rules text that say what a slot means: `answer_1 = yes`, `answer_0 up`,
/// `answer_2 above it` (up to the next `,` `.` `;`), with their slot.
fn rules_fragments(rules: &str) -> Vec<(ActionId, String)> {
    let mut out = Vec::new();
    for (i, _) in rules.match_indices("answer_") {
        let rest = &rules[i + "answer_".len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Some(a) = digits.parse().ok().and_then(ActionId::answer) else {
            continue;
        };
        let tail = &rest[digits.len()..];
        let end = tail.find([',', '.', ';']).unwrap_or(tail.len());
        out.push((a, tail[..end].to_string()));
    }
    out
}

#[test]
fn the_vocabulary_agrees_with_the_rules_and_the_hints() {
    // Families whose rules list their slots one by one, and those whose action-style hint
    // states the answer (after its last `:` or `=` where it has one).
    const RULES_LIST_SLOTS: &[&str] = &[
        "reachability",
        "symmetry",
        "relative-position",
        "largest-region",
        "clock-direction",
        "balance-scale",
        "compare-sides-",
        "locate-",
        "name-colour-",
        "same-colour-",
    ];
    const HINT_STATES_ANSWER: &[&str] = &[
        "count-objects",
        "dice-sum",
        "shape-arithmetic",
        "relative-position",
        "pattern-next",
        "odd-one-out",
        "shape-match",
        "clock-direction",
        "balance-scale",
        "path-length",
    ];
    let suite = suite();
    for spec in single_turn(&suite) {
        let mut env = suite.make(&spec.id).unwrap();
        for scale in spec.scale.min..=spec.scale.max {
            for seed in 0..SEEDS {
                let at = format!("{} scale {scale} seed {seed}", spec.id);
                let obs = env.reset(&Task {
                    env: spec.id.clone(),
                    seed,
                    harness: HarnessLevel::H0,
                    scale,
                });
                let v = env.answer_vocabulary();
                let rules = obs.harness.rules.expect("rules at H0");
                let mut agreed = 0;
                for (slot, fragment) in rules_fragments(&rules) {
                    if let Ok(a) = v.parse(&fragment) {
                        assert_eq!(a, slot, "{at}: the rules say {slot}{fragment}");
                        agreed += 1;
                    }
                }
                if RULES_LIST_SLOTS
                    .iter()
                    .any(|f| spec.family == *f || (f.ends_with('-') && spec.family.starts_with(f)))
                {
                    assert!(
                        agreed >= 2,
                        "{at}: {agreed} slots of the rules read: {rules}"
                    );
                }
                if HINT_STATES_ANSWER.contains(&spec.family.as_str()) {
                    let hint = obs.harness.hints.expect("hints at H0");
                    let tail = hint.rsplit([':', '=']).next().unwrap_or(&hint);
                    let oracle = env.oracle_action().unwrap();
                    assert_eq!(v.parse(tail), Ok(oracle), "{at}: the hint says {hint:?}");
                }
            }
        }
    }
}
