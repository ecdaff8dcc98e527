//! Suite-wide invariants: solvers, determinism, harness levels, masks, the catalogue.

use envdist_core::env::EnvFactory;
use envdist_core::{
    ActionId, Env, EnvId, EnvSpec, HarnessChannel, HarnessLevel, HarnessSchedule, ScaleRange,
    Split, Task, Turn,
};
use envdist_envs::{Suite, SuiteConfig, SuiteEnv, abilities};
use proptest::prelude::*;

fn suite() -> Suite {
    Suite::default()
}

fn task(spec: &EnvSpec, seed: u64, scale: u32, harness: HarnessLevel) -> Task {
    Task {
        env: spec.id.clone(),
        seed,
        harness,
        scale,
    }
}

/// One H4 task on `spec` and the same task on `other` (its twin, or the variant of which it is
/// the classic): seed `seed` at the smallest scale of `scale` for an even seed, the largest
/// for an odd one.
fn same_task(spec: &EnvSpec, other: &EnvId, seed: u64, scale: ScaleRange) -> (Task, Task) {
    let scale = if seed.is_multiple_of(2) {
        scale.min
    } else {
        scale.max
    };
    let t = task(spec, seed, scale, HarnessLevel::H4);
    let on_other = Task {
        env: other.clone(),
        ..t.clone()
    };
    (t, on_other)
}

/// A multi-turn env's horizon at its smallest scale stays short enough to learn from pixels.
fn assert_short_horizon(env: &mut SuiteEnv, spec: &EnvSpec) {
    env.reset(&task(spec, 0, spec.scale.min, HarnessLevel::H4));
    assert!(
        env.horizon() <= 35,
        "{}: horizon {} at min scale",
        spec.id,
        env.horizon()
    );
}

/// How many families of `specs` have `turn`.
fn families(specs: &[EnvSpec], turn: Turn) -> usize {
    specs
        .iter()
        .filter(|s| s.turn == turn)
        .map(|s| s.family.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// Play the solver; returns (success, steps, every ability tag seen).
fn solve(env: &mut dyn Env, t: &Task) -> (bool, u32, Vec<&'static str>) {
    env.reset(t);
    let mut tags = Vec::new();
    for n in 1..=10_000 {
        let a = env.oracle_action().expect("oracle while running");
        assert!(
            env.legal_actions().contains(a),
            "{}: oracle action {a} is not legal",
            t.env
        );
        let s = env.step(a);
        tags.extend(s.abilities);
        if s.done || s.truncated {
            return (s.success, n, tags);
        }
    }
    (false, 10_000, tags)
}

#[test]
fn solvers_meet_their_success_rates() {
    let suite = suite();
    let mut families: Vec<EnvSpec> = suite.specs();
    families.retain(|s| s.variant == "classic");
    for spec in &families {
        let mut env = suite.make(&spec.id).unwrap();
        for (scale, need) in [(spec.scale.min, 0.95f32), (spec.scale.max, 0.80)] {
            let need = if spec.turn == Turn::Single { 1.0 } else { need };
            let seeds = 40u64;
            let wins = (0..seeds)
                .filter(|s| solve(env.as_mut(), &task(spec, *s, scale, HarnessLevel::H4)).0)
                .count();
            let rate = wins as f32 / seeds as f32;
            assert!(
                rate >= need,
                "{} at scale {scale}: solver success {rate} < {need}",
                spec.id
            );
        }
    }
}

#[test]
fn twins_share_pixels_and_disagree_on_actions() {
    let suite = suite();
    let mut pairs = 0;
    for spec in suite.specs() {
        let Some(twin) = &spec.conflict_twin else {
            continue;
        };
        if spec.variant != "classic" {
            continue;
        }
        pairs += 1;
        let mut a = suite.make(&spec.id).unwrap();
        let mut b = suite.make(twin).unwrap();
        let mut differ = 0;
        for seed in 0..40 {
            let (t, tb) = same_task(&spec, twin, seed, spec.scale);
            let oa = a.reset(&t);
            let ob = b.reset(&tb);
            assert_eq!(
                oa.image, ob.image,
                "{} and {twin} must show the same pixels",
                spec.id
            );
            // Walk both with the classic solver's actions while the pixels stay identical;
            // count the seeds where the two solvers ask for different actions on one picture.
            for _ in 0..60 {
                let (xa, xb) = (a.oracle_action(), b.oracle_action());
                if xa != xb {
                    differ += 1;
                    break;
                }
                let Some(act) = xa else { break };
                let (sa, sb) = (a.step(act), b.step(act));
                if sa.done || sa.truncated || sb.done || sb.truncated {
                    break;
                }
                if sa.observation.image != sb.observation.image {
                    break;
                }
            }
        }
        assert!(
            differ >= 20,
            "{} vs {twin}: solvers disagree on the same picture in only {differ}/40 seeds",
            spec.id
        );
    }
    assert!(pairs >= 10, "{pairs} conflict pairs");
}

#[test]
fn every_tag_is_in_the_catalogue() {
    let suite = suite();
    for spec in suite.specs() {
        for a in &spec.abilities {
            assert!(
                abilities::is_known(a),
                "{}: ability {a} not in catalogue",
                spec.id
            );
        }
        let mut env = suite.make(&spec.id).unwrap();
        let (_, _, tags) = solve(
            env.as_mut(),
            &task(&spec, 3, spec.scale.mid(), HarnessLevel::H0),
        );
        for t in tags {
            assert!(
                spec.abilities.iter().any(|a| a == t),
                "{}: step tag {t} missing from spec abilities",
                spec.id
            );
        }
    }
}

#[test]
fn out_of_range_scale_is_clamped() {
    let suite = suite();
    let spec = &suite.pool_specs()[0];
    let mut env = suite.make_env(&spec.id).unwrap();
    env.reset(&task(spec, 1, spec.scale.max + 10, HarnessLevel::H4));
    assert_eq!(env.scale(), spec.scale.max);
    env.reset(&task(spec, 1, 0, HarnessLevel::H4));
    assert_eq!(env.scale(), spec.scale.min);
}

#[test]
fn unknown_env_is_an_error() {
    assert!(suite().make(&"nope/classic".into()).is_err());
}

#[test]
fn canvas_sizes_render() {
    for canvas in [16, 32, 50, 64, 100, 128] {
        let suite = Suite::with_canvas(canvas).unwrap();
        for spec in suite.specs().iter().filter(|s| s.variant == "classic") {
            let mut env = suite.make(&spec.id).unwrap();
            let obs = env.reset(&task(spec, 2, spec.scale.max, HarnessLevel::H4));
            assert_eq!((obs.image.width, obs.image.height), (canvas, canvas));
            // Something is drawn: more than one colour.
            let first = obs.image.get(canvas / 2, canvas / 2);
            let distinct = (0..canvas)
                .flat_map(|y| (0..canvas).map(move |x| (x, y)))
                .any(|(x, y)| obs.image.get(x, y) != first);
            assert!(
                distinct,
                "{} at canvas {canvas} renders one flat colour",
                spec.id
            );
        }
    }
}

/// A reset is a function of its task alone, not of what the env object played before: batched
/// consumers (the exact gradients, evaluation slots) reuse env objects across tasks in an order
/// rayon's work stealing decides, so any history would make their numbers run-dependent. Every
/// env, at the presets' canvases (16, 32, 64) and an odd one, after episodes at other scales.
#[test]
fn a_reset_does_not_depend_on_what_the_env_played_before() {
    for canvas in [16, 32, 50, 64] {
        let suite = Suite::with_canvas(canvas).unwrap();
        for spec in suite.specs() {
            let (lo, hi) = (spec.scale.min, spec.scale.max);
            let t = task(&spec, 11, lo + spec.scale.len() / 2, HarnessLevel::H2);
            let mut fresh = suite.make(&spec.id).unwrap();
            let mut used = suite.make(&spec.id).unwrap();
            for (seed, scale) in [(3, hi), (4, lo), (5, hi)] {
                used.reset(&task(&spec, seed, scale, HarnessLevel::H0));
                for _ in 0..5 {
                    let Some(a) = used.legal_actions().iter().last() else {
                        break;
                    };
                    let st = used.step(a);
                    if st.done || st.truncated {
                        break;
                    }
                }
            }
            let (mut a, mut b) = (fresh.reset(&t), used.reset(&t));
            for step in 0..4 {
                assert!(
                    a == b,
                    "{} at canvas {canvas}: step {step} of a task differs after other episodes",
                    spec.id
                );
                let Some(act) = fresh.oracle_action() else {
                    break;
                };
                let (sa, sb) = (fresh.step(act), used.step(act));
                if sa.done || sa.truncated {
                    break;
                }
                (a, b) = (sa.observation, sb.observation);
            }
        }
    }
}

fn any_spec() -> impl Strategy<Value = (usize, u64, u32)> {
    (0usize..10_000, any::<u64>(), 0u32..100)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn same_task_same_frames_and_text((i, seed, s) in any_spec(), level in 0usize..5) {
        let suite = suite();
        let specs = suite.specs();
        let spec = &specs[i % specs.len()];
        let scale = spec.scale.min + s % spec.scale.len();
        let t = task(spec, seed, scale, HarnessLevel::from_index(level).unwrap());
        let mut a = suite.make(&spec.id).unwrap();
        let mut b = suite.make(&spec.id).unwrap();
        let (mut oa, mut ob) = (a.reset(&t), b.reset(&t));
        for _ in 0..spec.max_steps.min(30) {
            prop_assert_eq!(&oa, &ob);
            let Some(act) = a.oracle_action() else { break };
            let (sa, sb) = (a.step(act), b.step(act));
            prop_assert_eq!(sa.abilities, sb.abilities);
            oa = sa.observation;
            ob = sb.observation;
        }
        prop_assert_eq!(oa, ob);
    }

    #[test]
    fn harness_levels_drop_exactly_their_channels((i, seed, s) in any_spec()) {
        let suite = suite();
        let specs = suite.specs();
        let spec = &specs[i % specs.len()];
        let sched = HarnessSchedule::default();
        let mut env = suite.make(&spec.id).unwrap();
        for level in HarnessLevel::ALL {
            let scale = spec.scale.min + s % spec.scale.len();
            let obs = env.reset(&task(spec, seed, scale, level));
            for c in HarnessChannel::ALL {
                prop_assert_eq!(obs.harness.get(c).is_some(), sched.keeps(level, c));
                if let Some(text) = obs.harness.get(c) {
                    prop_assert!(!text.is_empty());
                }
            }
            prop_assert_eq!(&obs.instruction, &spec.instruction);
        }
    }

    #[test]
    fn masked_actions_are_safe_and_names_round_trip((i, seed, s) in any_spec(), picks in proptest::collection::vec(0usize..64, 1..40)) {
        let suite = suite();
        let specs = suite.specs();
        let spec = &specs[i % specs.len()];
        let scale = spec.scale.min + s % spec.scale.len();
        let mut env = suite.make(&spec.id).unwrap();
        env.reset(&task(spec, seed, scale, HarnessLevel::H4));
        let mut legal = env.legal_actions();
        for p in picks {
            if legal.count() == 0 { break; }
            let acts: Vec<ActionId> = legal.iter().collect();
            let a = acts[p % acts.len()];
            prop_assert_eq!(a.name().parse::<ActionId>().unwrap(), a);
            let st = env.step(a);
            prop_assert!(st.reward == 0.0 || st.reward == 1.0);
            prop_assert!(!st.success || st.done);
            if st.done || st.truncated {
                prop_assert_eq!(st.legal.count(), 0);
                break;
            }
            prop_assert!(st.legal.count() > 0, "{}: no legal action in a running episode", spec.id);
            legal = st.legal;
        }
    }
}

#[test]
fn splits_are_disjoint_by_family() {
    let suite = suite();
    let families = |specs: Vec<EnvSpec>| -> std::collections::BTreeSet<String> {
        specs.into_iter().map(|s| s.family).collect()
    };
    let pool = families(suite.pool_specs());
    let ood = families(suite.ood_specs());
    for s in suite.ood_specs() {
        assert!(
            !pool.contains(&s.family),
            "{} is held out but its family is in the pool",
            s.id
        );
        assert_eq!(s.split, Split::Ood);
    }
    for s in suite.confirm_specs() {
        assert!(
            !pool.contains(&s.family) && !ood.contains(&s.family),
            "{} is held out for confirmation but its family is in the pool or the OOD set",
            s.id
        );
        assert_eq!(s.split, Split::Confirm);
    }
    // Every env is in exactly one split, and the registry lists the splits in order.
    let all = suite.specs();
    assert_eq!(
        all.len(),
        suite.pool_specs().len() + suite.ood_specs().len() + suite.confirm_specs().len()
    );
    let order: Vec<Split> = all.iter().map(|s| s.split).collect();
    assert!(order.is_sorted_by_key(|s| Split::ALL.iter().position(|x| x == s)));
}

/// The confirmatory set mirrors the OOD set's shape: about 20 envs of 4 families, single- and
/// multi-turn, each with a scale range that really changes the task: the text observation
/// holds more (a larger board, more objects, a longer path) at the top of the range, and
/// multi-turn solvers need more steps there.
#[test]
fn the_confirmatory_set_has_the_promised_shape() {
    let suite = suite();
    let confirm = suite.confirm_specs();
    assert!(
        confirm.len() >= 20,
        "{} confirmatory environments",
        confirm.len()
    );
    assert_eq!(
        (
            families(&confirm, Turn::Single),
            families(&confirm, Turn::Multi)
        ),
        (2, 2)
    );
    let unseen: Vec<&String> = confirm
        .iter()
        .flat_map(|s| &s.abilities)
        .filter(|a| {
            !suite
                .pool_specs()
                .iter()
                .chain(&suite.ood_specs())
                .any(|s| s.abilities.contains(a))
        })
        .collect();
    assert!(
        unseen.len() >= 4,
        "abilities new to the confirmatory set: {unseen:?}"
    );
    for spec in confirm.iter().filter(|s| s.variant == "classic") {
        assert!(spec.scale.len() >= 2, "{}", spec.id);
        let mut env = suite.make_env(&spec.id).unwrap();
        let mut at = |scale: u32| {
            let (mut marks, mut steps) = (0, 0);
            for seed in 0..20 {
                let obs = env.reset(&task(spec, seed, scale, HarnessLevel::H0));
                let text = obs.harness.observation.unwrap();
                marks += text.chars().filter(|c| !matches!(c, '.' | '\n')).count();
                steps += solve(&mut env, &task(spec, seed, scale, HarnessLevel::H4)).1;
            }
            (marks, steps)
        };
        let (lo, hi) = (at(spec.scale.min), at(spec.scale.max));
        assert!(
            hi.0 > lo.0,
            "{}: the observation holds no more at the top scale",
            spec.id
        );
        if spec.turn == Turn::Multi {
            assert!(
                hi.1 > lo.1,
                "{}: no longer to solve at the top scale",
                spec.id
            );
            assert_short_horizon(&mut env, spec);
        }
    }
}

/// Every confirmatory env at every scale, beyond the sampled proptests: the same task gives
/// the same episode on two env objects, every running step shows the canvas, the instruction
/// and all four harness channels (H0), the solver's action is legal and its tags are declared.
#[test]
fn every_confirmatory_env_meets_the_contract_at_every_scale() {
    let suite = Suite::with_canvas(32).unwrap();
    for spec in suite.confirm_specs() {
        let (mut a, mut b) = (suite.make(&spec.id).unwrap(), suite.make(&spec.id).unwrap());
        for scale in spec.scale.min..=spec.scale.max {
            for seed in 0..3 {
                let t = task(&spec, seed, scale, HarnessLevel::H0);
                let (mut oa, mut ob) = (a.reset(&t), b.reset(&t));
                for _ in 0..=spec.max_steps {
                    assert_eq!(oa, ob, "{} {t:?}", spec.id);
                    assert_eq!((oa.image.width, oa.image.height), (32, 32));
                    assert_eq!(oa.instruction, spec.instruction);
                    for c in HarnessChannel::ALL {
                        assert!(
                            oa.harness.get(c).is_some_and(|x| !x.is_empty()),
                            "{} {t:?}: channel {c:?} missing",
                            spec.id
                        );
                    }
                    let Some(act) = a.oracle_action() else { break };
                    assert!(
                        a.legal_actions().contains(act),
                        "{}: {act} illegal",
                        spec.id
                    );
                    let (sa, sb) = (a.step(act), b.step(act));
                    assert_eq!(sa.abilities, sb.abilities);
                    assert!(!sa.abilities.is_empty(), "{}: a step without tags", spec.id);
                    for tag in &sa.abilities {
                        assert!(
                            spec.abilities.iter().any(|x| x == tag),
                            "{}: {tag}",
                            spec.id
                        );
                    }
                    if sa.done || sa.truncated {
                        assert!(sa.success, "{} {t:?}: the solver failed", spec.id);
                        break;
                    }
                    (oa, ob) = (sa.observation, sb.observation);
                }
            }
        }
    }
}

#[test]
fn confirm_subset_takes_families_in_turn() {
    let suite = suite();
    let all = suite.confirm_subset(0);
    assert_eq!(all.len(), suite.confirm_specs().len());
    assert!(all.is_sorted());
    let four = suite.confirm_subset(4);
    let families: std::collections::BTreeSet<&str> = four
        .iter()
        .map(|id| id.as_str().split('/').next().unwrap())
        .collect();
    assert_eq!(families.len(), 4, "{four:?}");
    for id in &four {
        assert_eq!(suite.spec(id).unwrap().split, Split::Confirm);
    }
    assert_eq!(suite.confirm_subset(1000), all);
    // The OOD subset is untouched by the confirmatory set.
    assert!(
        suite
            .ood_subset(0)
            .iter()
            .all(|id| suite.spec(id).unwrap().split == Split::Ood)
    );
}

#[test]
fn the_pool_has_the_promised_shape() {
    let suite = suite();
    let pool = suite.pool_specs();
    let ood = suite.ood_specs();
    assert_eq!(pool.len(), 200);
    assert!(ood.len() >= 20, "{} OOD environments", ood.len());
    assert!(families(&pool, Turn::Single) >= 8);
    assert!(families(&pool, Turn::Multi) >= 12);
    assert!(families(&pool, Turn::Single) + families(&pool, Turn::Multi) >= 24);
    assert!(families(&ood, Turn::Single) + families(&ood, Turn::Multi) >= 4);
    let ids: std::collections::BTreeSet<_> = suite.specs().into_iter().map(|s| s.id).collect();
    let confirm = suite.confirm_specs();
    assert_eq!(
        ids.len(),
        pool.len() + ood.len() + confirm.len(),
        "ids are unique"
    );
    // Conflict pairs are symmetric and name existing envs.
    let mut pairs = 0;
    for s in &pool {
        if let Some(t) = &s.conflict_twin {
            let twin = suite.spec(t).expect("twin exists");
            assert_eq!(twin.conflict_twin.as_ref(), Some(&s.id));
            pairs += 1;
        }
    }
    assert!(pairs / 2 >= 10, "{} conflict pairs", pairs / 2);
    assert!(
        suite.abilities().len() >= 60,
        "{} abilities",
        suite.abilities().len()
    );
    // Multi-turn horizons at the smallest scale stay short enough to learn from pixels.
    for s in pool
        .iter()
        .filter(|s| s.turn == Turn::Multi && s.variant == "classic")
    {
        assert_short_horizon(&mut suite.make_env(&s.id).unwrap(), s);
        assert!(s.scale.len() >= 2);
    }
    for s in &ood {
        assert!(s.scale.len() >= 2);
    }
}

#[test]
fn filters_select_what_they_name() {
    let suite = suite();
    assert_eq!(
        suite.family_specs("maze").len(),
        suite
            .pool_specs()
            .iter()
            .filter(|s| s.family == "maze")
            .count()
    );
    assert!(
        suite
            .turn_specs(Turn::Single)
            .iter()
            .all(|s| s.turn == Turn::Single)
    );
    let push = suite.ability_specs("push");
    assert!(!push.is_empty() && push.iter().all(|s| s.family == "sokoban"));
}

#[test]
fn the_catalogue_has_no_dead_entries() {
    let used = suite().abilities();
    for (tag, _) in abilities::CATALOGUE {
        assert!(
            used.contains(*tag),
            "catalogue tag {tag} is emitted by no environment"
        );
    }
    assert!(abilities::CATALOGUE.len() >= 60);
}

#[test]
fn vec_env_matches_single_envs() {
    let suite = Suite::with_canvas(32).unwrap();
    let specs: Vec<EnvSpec> = suite
        .pool_specs()
        .into_iter()
        .filter(|s| s.variant == "classic" || s.variant == "noise")
        .take(12)
        .collect();
    let tasks: Vec<Task> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| task(s, i as u64, s.scale.mid(), HarnessLevel::H4))
        .collect();
    let mut singles: Vec<_> = specs.iter().map(|s| suite.make(&s.id).unwrap()).collect();
    let mut venv = envdist_envs::VecEnv::new(
        specs
            .iter()
            .map(|s| suite.make_env(&s.id).unwrap())
            .collect(),
    )
    .unwrap();
    venv.reset_all(&tasks).unwrap();
    assert!(
        venv.step(&[ActionId::WAIT]).is_err(),
        "one action for 12 envs"
    );
    let other = Suite::default();
    let mixed = vec![
        suite.make_env(&specs[0].id).unwrap(),
        other.make_env(&specs[0].id).unwrap(),
    ];
    assert!(
        envdist_envs::VecEnv::new(mixed).is_err(),
        "32 and 64 px frames"
    );
    for (i, e) in singles.iter_mut().enumerate() {
        let obs = e.reset(&tasks[i]);
        assert_eq!(venv.frame(i), &obs.image.data[..]);
    }
    for _ in 0..5 {
        let actions: Vec<ActionId> = singles
            .iter_mut()
            .map(|e| e.oracle_action().unwrap_or(ActionId::WAIT))
            .collect();
        let infos = venv.step(&actions).unwrap().to_vec();
        for (i, e) in singles.iter_mut().enumerate() {
            let s = e.step(actions[i]);
            assert_eq!(venv.frame(i), &s.observation.image.data[..]);
            assert_eq!((infos[i].reward, infos[i].done), (s.reward, s.done));
        }
    }
    assert_eq!(venv.frames().len(), 12 * 32 * 32 * 3);

    // Parallel auto-reset: the same frames as resetting one by one; bad indices are errors.
    let resets: Vec<(usize, Task)> = [3usize, 7, 0]
        .iter()
        .map(|&i| {
            (
                i,
                task(
                    &specs[i],
                    100 + i as u64,
                    specs[i].scale.min,
                    HarnessLevel::H0,
                ),
            )
        })
        .collect();
    venv.reset_many(&resets).unwrap();
    for (i, t) in &resets {
        let obs = singles[*i].reset(t);
        assert_eq!(venv.frame(*i), &obs.image.data[..], "env {i}");
    }
    assert!(
        venv.reset_many(&[(12, tasks[0].clone())]).is_err(),
        "out of range"
    );
    let twice = [(1, tasks[1].clone()), (1, tasks[1].clone())];
    assert!(venv.reset_many(&twice).is_err(), "one env twice");
}

/// Snapshot of the harness text of one maze state, so wording changes are deliberate.
#[test]
fn maze_harness_text_snapshot() {
    let suite = suite();
    let spec = suite.spec(&"maze/classic".into()).unwrap().clone();
    let mut env = suite.make(&spec.id).unwrap();
    let obs = env.reset(&task(&spec, 1, 1, HarnessLevel::H0));
    let h = obs.harness;
    assert_eq!(
        h.observation.as_deref(),
        Some("#####\n#..G#\n###.#\n#A..#\n#####")
    );
    assert_eq!(
        h.state.as_deref(),
        Some("agent at (1,3); goal at (3,1); step 0 of 22")
    );
    assert_eq!(
        h.hints.as_deref(),
        Some("next action: right; the goal is 4 steps away along the corridors")
    );
    assert!(h.rules.unwrap().starts_with("Move with up/down/left/right"));
    assert_eq!(obs.instruction, "Reach the green goal.");
}

/// Themes and observation changes keep the rules: the solver plays exactly as in `classic`,
/// while themes change the pixels.
#[test]
fn look_variants_keep_the_rules() {
    let suite = suite();
    for spec in suite.specs() {
        let look = spec.variant.starts_with("theme-")
            || ["noise", "occluded", "egocentric"].contains(&spec.variant.as_str());
        if !look {
            continue;
        }
        let classic = suite
            .spec(&format!("{}/classic", spec.family).as_str().into())
            .unwrap()
            .clone();
        let mut a = suite.make(&classic.id).unwrap();
        let mut b = suite.make(&spec.id).unwrap();
        for seed in 0..4 {
            let (ta, tb) = same_task(&classic, &spec.id, seed, spec.scale);
            let (oa, ob) = (a.reset(&ta), b.reset(&tb));
            if spec.variant.starts_with("theme-") {
                assert!(
                    oa.image != ob.image,
                    "{} looks exactly like classic",
                    spec.id
                );
            }
            for _ in 0..200 {
                let (xa, xb) = (a.oracle_action(), b.oracle_action());
                assert_eq!(xa, xb, "{} plays differently from classic", spec.id);
                let Some(act) = xa else { break };
                let (sa, sb) = (a.step(act), b.step(act));
                assert_eq!((sa.reward, sa.done), (sb.reward, sb.done));
                if sa.done || sa.truncated {
                    break;
                }
            }
        }
    }
}

#[test]
fn a_custom_harness_schedule_is_honoured() {
    let schedule = HarnessSchedule {
        drop_order: [
            HarnessChannel::Rules,
            HarnessChannel::State,
            HarnessChannel::Observation,
            HarnessChannel::Hints,
        ],
    };
    let suite = Suite::new(SuiteConfig {
        canvas: 32,
        harness_schedule: schedule.clone(),
        ..SuiteConfig::default()
    })
    .unwrap();
    let spec = suite.spec(&"collect/classic".into()).unwrap().clone();
    let mut env = suite.make(&spec.id).unwrap();
    let h1 = env.reset(&task(&spec, 1, 2, HarnessLevel::H1)).harness;
    assert!(h1.rules.is_none() && h1.hints.is_some() && h1.state.is_some());
    let h3 = env.reset(&task(&spec, 1, 2, HarnessLevel::H3)).harness;
    assert!(h3.hints.is_some() && h3.observation.is_none());
    let h4 = env.reset(&task(&spec, 1, 2, HarnessLevel::H4)).harness;
    assert!(h4.is_empty());
    let bad = SuiteConfig {
        canvas: 8,
        ..SuiteConfig::default()
    };
    let e = Suite::new(bad).err().unwrap();
    assert_eq!(e.field, "canvas", "{e}");
    assert!(
        Suite::default().pool_specs().len() == 200,
        "the default config is valid"
    );
}
