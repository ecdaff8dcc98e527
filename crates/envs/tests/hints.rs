//! The two hint styles. `Subgoal` hints never give the action away (nor, single-turn, the
//! answer); `Action` hints keep their shape; the style changes the hints channel and nothing
//! else; a few subgoal hints are pinned as snapshots.
//!
//! # The leak check (`leaks`)
//!
//! A hint *leaks* when one of its words (maximal runs of ASCII letters, digits and `_`,
//! lowercased, so `up-right` is the two words `up` and `right`) is
//!
//! 1. the name of any action of the shared space (`up`, `down`, `left`, `right`, `interact`,
//!    `wait`, `answer_0` .. `answer_15`): stricter than "the oracle's action", so a hint cannot
//!    pass by luck on the states the test happens to visit;
//!
//! and, when the solver answers `answer_k` (single-turn families):
//!
//! 2. the number `k` in digits, or as an English number word (`zero` .. `sixteen`), once every
//!    coordinate pair `(x,y)` has been removed: coordinates name cells, not answers, so
//!    `(3,1)` never counts as a `3` or a `1`, while `3 in all`, `item 3`, `= 3` and `three` do;
//! 3. a word of the answer's label: the rules text after `answer_k` up to the next `;`, `.` or
//!    `answer_` (`answer_3 below it` gives `below`; `answer_1 = yes, reachable` gives `yes`
//!    and `reachable`; `answer_0 red` gives `red`), less the filler words `it` and `of`; and
//!    the `k`-th entry of a candidate list in the state text (`candidates 0..3: orange,
//!    purple, blue, pink` gives `pink` for `answer_3`) or the entry `k: ...` of an item list
//!    (`1: cyan square` gives `cyan` and `square`).
//!
//! Rule 2 is applied to single-turn answers only: a board game's cell number is not an
//! answer, and `one more mark` must stay possible in tic-tac-toe.

use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, EnvSpec, HarnessLevel, Rng, Task, Turn};
use envdist_envs::{HintStyle, Suite, SuiteConfig};
use proptest::prelude::*;

const NUMBER_WORDS: [&str; 17] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
];

fn suite(style: HintStyle) -> Suite {
    // A small canvas: this test is about text, and frames are still compared across styles.
    Suite::new(SuiteConfig {
        canvas: 16,
        hint_style: style,
        compositional: true,
        ..SuiteConfig::default()
    })
    .unwrap()
}

fn task(spec: &EnvSpec, seed: u64, scale: u32) -> Task {
    Task {
        env: spec.id.clone(),
        seed,
        harness: HarnessLevel::H0,
        scale,
    }
}

/// The words of `text` (see the module docs).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// `text` with every coordinate pair `(x,y)` (integers, optionally signed) replaced by a
/// space.
fn strip_coordinates(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let pair = after.find(')').filter(|&close| {
            let inner: Vec<&str> = after[..close].split(',').collect();
            inner.len() == 2
                && inner.iter().all(|n| {
                    let n = n.trim().trim_start_matches('-');
                    !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())
                })
        });
        match pair {
            Some(close) => {
                out.push(' ');
                rest = &after[close + 1..];
            }
            None => {
                out.push('(');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The words that name answer `k`: its label in the rules text and its entry in a candidate
/// or item list of the state text (see the module docs).
fn answer_labels(rules: &str, state: &str, k: usize) -> Vec<String> {
    let mut out = Vec::new();
    let key = format!("answer_{k}");
    let mut rest = rules;
    while let Some(at) = rest.find(&key) {
        let after = &rest[at + key.len()..];
        rest = after;
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            continue; // answer_1 inside answer_10
        }
        let end = after.find([';', '.']).unwrap_or(after.len());
        let seg = &after[..end];
        let seg = &seg[..seg.find("answer_").unwrap_or(seg.len())];
        out.extend(words(seg).into_iter().filter(|w| w != "it" && w != "of"));
    }
    if let Some(at) = state.find("candidates") {
        let seg = &state[at..];
        let seg = &seg[..seg.find(';').unwrap_or(seg.len())];
        if let Some(colon) = seg.find(':')
            && let Some(entry) = seg[colon + 1..].split(',').nth(k)
        {
            out.extend(words(entry));
        }
    }
    let prefix = format!("{k}: ");
    for entry in state.split("; ") {
        if let Some(item) = entry.strip_prefix(&prefix) {
            out.extend(words(item));
        }
    }
    out
}

/// Why `hint` gives the action (or the answer) away, if it does (see the module docs).
fn leaks(
    hint: &str,
    single_turn_answer: Option<usize>,
    rules: &str,
    state: &str,
) -> Option<String> {
    let ws = words(hint);
    if let Some(a) = ActionId::all().find(|a| ws.contains(&a.name())) {
        return Some(format!("names the action `{a}`"));
    }
    let k = single_turn_answer?;
    let bare = words(&strip_coordinates(hint));
    if let Some(w) = bare
        .iter()
        .find(|w| **w == k.to_string() || NUMBER_WORDS.get(k) == Some(&w.as_str()))
    {
        return Some(format!("states the answer {k} as `{w}`"));
    }
    let labels = answer_labels(rules, state, k);
    if let Some(w) = ws.iter().find(|w| labels.contains(w)) {
        return Some(format!(
            "names the answer's label `{w}` (labels {labels:?})"
        ));
    }
    None
}

#[test]
fn the_leak_check_reads_as_documented() {
    assert_eq!(
        words("next action: up-right; answer_3"),
        ["next", "action", "up", "right", "answer_3"]
    );
    assert_eq!(
        strip_coordinates("at (3,1) (-1,0): 3 in all (k)"),
        "at    : 3 in all (k)"
    );
    let no = |h| leaks(h, Some(3), "", "");
    assert!(no("the red objects are at (3,1) (2,3)").is_none());
    assert!(no("3 in all").is_some());
    assert!(no("three in all").is_some());
    assert!(no("item 3 differs").is_some());
    assert!(leaks("go left", None, "", "").is_some());
    assert!(leaks("wait here", None, "", "").is_some());
    let rules =
        "answer_0 left of it, answer_1 right of it, answer_2 above it, answer_3 below it. Text";
    assert_eq!(answer_labels(rules, "", 3), ["below"]);
    assert_eq!(answer_labels(rules, "", 0), ["left"]);
    let rules = "answer_1 = yes, reachable; answer_0 = no. Text";
    assert_eq!(answer_labels(rules, "", 1), ["yes", "reachable"]);
    assert_eq!(answer_labels(rules, "", 0), ["no"]);
    let state = "sequence: pink, red; candidates 0..3: orange, purple, blue, pink";
    assert_eq!(answer_labels("", state, 3), ["pink"]);
    assert_eq!(
        answer_labels("", "0: cyan ring; 1: cyan square", 1),
        ["cyan", "square"]
    );
    assert!(answer_labels("answer_10 ten", "", 1).is_empty());
}

/// The environments whose rules differ: every family's classic variant and its conflict
/// twin (themes and observation changes only change pixels; the proptest below covers them).
fn rule_variants(s: &Suite) -> Vec<EnvSpec> {
    s.specs()
        .into_iter()
        .filter(|sp| sp.variant == "classic" || sp.conflict_twin.is_some())
        .collect()
}

/// Play one task in both styles side by side (the solver's action, now and then a random
/// legal one to reach states the solver avoids) and check every hint. Returns the number of
/// hints checked.
fn check_episode(
    action: &Suite,
    subgoal: &Suite,
    spec: &EnvSpec,
    t: &Task,
    explore: &mut Rng,
) -> usize {
    let mut a = action.make(&spec.id).unwrap();
    let mut s = subgoal.make(&spec.id).unwrap();
    let (mut oa, mut os) = (a.reset(t), s.reset(t));
    let mut checked = 0;
    for _ in 0..=spec.max_steps {
        // The style changes the hints channel and nothing else.
        assert_eq!(
            oa.image, os.image,
            "{}: frames differ across styles",
            spec.id
        );
        assert_eq!(oa.harness.state, os.harness.state, "{}", spec.id);
        assert_eq!(oa.harness.rules, os.harness.rules, "{}", spec.id);
        assert_eq!(
            oa.harness.observation, os.harness.observation,
            "{}",
            spec.id
        );
        let Some(oracle) = s.oracle_action() else {
            break;
        };
        assert_eq!(a.oracle_action(), Some(oracle), "{}", spec.id);
        let hint = os.harness.hints.clone().unwrap();
        let ahint = oa.harness.hints.clone().unwrap();
        assert!(
            !hint.trim().is_empty(),
            "{} {t:?}: empty subgoal hint",
            spec.id
        );
        let single = (spec.turn == Turn::Single)
            .then(|| oracle.answer_value())
            .flatten();
        let rules = os.harness.rules.clone().unwrap();
        let state = os.harness.state.clone().unwrap();
        if let Some(why) = leaks(&hint, single, &rules, &state) {
            panic!(
                "{} seed {} scale {}: subgoal hint {hint:?} {why} (solver: {oracle})",
                spec.id, t.seed, t.scale
            );
        }
        if spec.turn == Turn::Multi {
            let want = format!("next action: {oracle}");
            assert!(
                ahint == want || ahint.starts_with(&format!("{want}; ")),
                "{}: action hint {ahint:?} does not start with {want:?}",
                spec.id
            );
        }
        checked += 1;
        let legal: Vec<ActionId> = s.legal_actions().iter().collect();
        let act = if explore.chance(0.2) && !legal.is_empty() {
            legal[explore.index(legal.len())]
        } else {
            oracle
        };
        let (sa, ss) = (a.step(act), s.step(act));
        assert_eq!(
            (sa.reward, sa.done, sa.truncated, &sa.abilities),
            (ss.reward, ss.done, ss.truncated, &ss.abilities),
            "{}",
            spec.id
        );
        if ss.done || ss.truncated {
            assert_eq!(
                ss.observation.harness.hints.as_deref(),
                Some("the episode is over")
            );
            assert_eq!(
                sa.observation.harness.hints.as_deref(),
                Some("the episode is over")
            );
            break;
        }
        (oa, os) = (sa.observation, ss.observation);
    }
    checked
}

#[test]
fn subgoal_hints_never_give_the_action_away() {
    let (action, subgoal) = (suite(HintStyle::Action), suite(HintStyle::Subgoal));
    let mut explore = Rng::seed_from_u64(12);
    let mut families = std::collections::BTreeSet::new();
    let mut total = 0;
    for spec in rule_variants(&subgoal) {
        families.insert(spec.family.clone());
        // Single-turn tasks are one step, so they get many more seeds.
        let seeds = if spec.turn == Turn::Single { 200 } else { 20 };
        for scale in spec.scale.min..=spec.scale.max {
            for seed in 0..seeds {
                let t = task(&spec, seed, scale);
                total += check_episode(&action, &subgoal, &spec, &t, &mut explore);
            }
        }
    }
    assert_eq!(
        families.len(),
        52,
        "every family: pool, held-out (OOD), confirmatory and the compositional sub-pool"
    );
    assert!(total > 5_000, "{total} hints checked");
}

/// The check is not vacuous: the action-style hints of single-turn families that state the
/// answer's evidence do leak under it (reachability, symmetry and the sub-pool's same-colour
/// questions describe the evidence without a number or a label, so the check cannot see that
/// they settle the answer).
#[test]
fn the_leak_check_catches_action_style_single_turn_hints() {
    let action = suite(HintStyle::Action);
    for spec in rule_variants(&action) {
        if spec.turn != Turn::Single
            || ["reachability", "symmetry"].contains(&spec.family.as_str())
            || spec.family.starts_with("same-colour-")
        {
            continue;
        }
        let mut env = action.make(&spec.id).unwrap();
        let mut caught = 0;
        for seed in 0..20 {
            let obs = env.reset(&task(&spec, seed, spec.scale.mid()));
            let k = env.oracle_action().and_then(ActionId::answer_value);
            let h = obs.harness;
            let (hint, rules, state) = (h.hints.unwrap(), h.rules.unwrap(), h.state.unwrap());
            caught += leaks(&hint, k, &rules, &state).is_some() as usize;
        }
        assert!(
            caught >= 10,
            "{}: only {caught}/20 action hints caught",
            spec.id
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every environment (themes, noise, occlusion, egocentric, mirrored controls included),
    /// any seed and scale: subgoal hints are deterministic and do not leak.
    #[test]
    fn subgoal_hints_hold_on_every_variant(i in 0usize..10_000, seed in any::<u64>(), s in 0u32..100) {
        let (action, subgoal) = (suite(HintStyle::Action), suite(HintStyle::Subgoal));
        let specs = subgoal.specs();
        let spec = &specs[i % specs.len()];
        let t = task(spec, seed, spec.scale.min + s % spec.scale.len());
        let mut explore = Rng::seed_from_u64(seed);
        check_episode(&action, &subgoal, spec, &t, &mut explore);
        let mut a = subgoal.make(&spec.id).unwrap();
        let mut b = subgoal.make(&spec.id).unwrap();
        prop_assert_eq!(a.reset(&t).harness.hints, b.reset(&t).harness.hints);
    }
}

#[test]
fn the_default_style_is_action_and_configs_name_it() {
    assert_eq!(SuiteConfig::default().hint_style, HintStyle::Action);
    // Configs written before the field existed still read, as the action style.
    let old: SuiteConfig = serde_json::from_str(r#"{"canvas": 32}"#).unwrap();
    assert_eq!(old.hint_style, HintStyle::Action);
    let cfg: SuiteConfig = serde_json::from_str(r#"{"hint_style": "subgoal"}"#).unwrap();
    assert_eq!(cfg.hint_style, HintStyle::Subgoal);
    let text = serde_json::to_string(&cfg).unwrap();
    assert!(text.contains(r#""hint_style":"subgoal""#), "{text}");
    assert!(serde_json::from_str::<SuiteConfig>(r#"{"hint_style": "answer"}"#).is_err());
    for h in HintStyle::ALL {
        assert_eq!(h.name().parse::<HintStyle>().unwrap(), h);
        assert_eq!(h.to_string(), h.name());
    }
    let e = "hints".parse::<HintStyle>().unwrap_err();
    assert_eq!(e.field, "hint_style", "{e}");
    let env = suite(HintStyle::Subgoal)
        .make_env(&"maze/classic".into())
        .unwrap();
    assert_eq!(env.hint_style(), HintStyle::Subgoal);
}

/// The subgoal hint of one state of `id` (seed 1, smallest scale, step 0, H0: the states of
/// the README's harness-text section).
fn subgoal_at_start(id: &str) -> String {
    let s = suite(HintStyle::Subgoal);
    let spec = s.spec(&id.into()).unwrap().clone();
    let mut env = s.make(&spec.id).unwrap();
    env.reset(&task(&spec, 1, spec.scale.min))
        .harness
        .hints
        .unwrap()
}

/// Snapshots of subgoal hints, so wording changes are deliberate (the action-style ones are
/// pinned in `suite.rs`).
#[test]
fn subgoal_hint_snapshots() {
    assert_eq!(
        subgoal_at_start("maze/classic"),
        "the goal is 4 steps away along the corridors"
    );
    assert_eq!(
        subgoal_at_start("sokoban/classic"),
        "1 box still off target; 5 moves to solve"
    );
    assert_eq!(
        subgoal_at_start("count-objects/classic"),
        "count the red objects; shapes do not matter"
    );
    assert_eq!(
        subgoal_at_start("count-objects/count-blue"),
        "count the blue objects; shapes do not matter"
    );
}
