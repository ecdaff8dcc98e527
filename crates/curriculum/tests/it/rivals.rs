//! The rival samplers through the registry: resume identity, refusal of foreign states, and
//! each rule's invariants along random runs.

use std::collections::HashSet;

use envdist_core::{EnvSpec, HarnessLevel, Task, TaskSampler};
use envdist_curriculum::rivals::plr::BufferPriority;
use envdist_curriculum::{
    AdvantageEstimate, HdcConfig, LadderConfig, LadderSampler, LearnabilityConfig,
    LearnabilitySampler, LearnabilitySampling, LearningProgressConfig, LearningProgressSampler,
    PassRateConfig, PassRateSampler, PlrConfig, PlrSampler, PlrScore, ReplaySchedule,
    SamplerConfig, ScoreTransform, SecConfig, SecSampler,
};
use proptest::prelude::*;
use serde_json::json;

use crate::{built, continue_alike, play, play_rounds, specs, temp_dir};

/// A random run: one to four environments, a seed, how often an episode is solved ([`play`]),
/// and how many rounds to play (`min_steps..max_steps`).
#[derive(Debug, Clone)]
struct Run {
    envs: Vec<EnvSpec>,
    seed: u64,
    p_percent: u64,
    steps: usize,
}

prop_compose! {
    fn runs(min_steps: usize, max_steps: usize)(
        ranges in prop::collection::vec((0u32..6, 0u32..6).prop_map(|(a, len)| (a, a + len)), 1..5),
        seed in any::<u64>(),
        p_percent in 0u64..=100,
        steps in min_steps..max_steps,
    ) -> Run {
        Run { envs: specs(&ranges), seed, p_percent, steps }
    }
}

fn levels() -> impl Strategy<Value = Vec<HarnessLevel>> {
    prop::sample::subsequence(HarnessLevel::ALL.to_vec(), 1..=5)
}

// The configurations of the rivals, each field beside the values it takes.

prop_compose! {
    fn pass_rate()(
        harness_levels in levels(),
        per_scale in any::<bool>(),
        group_size in 1u32..6,
        low in -0.1f32..0.5,
        high in 0.5f32..1.1,
        max_easy_fraction in 0.0f32..0.5,
        max_hard_fraction in 0.0f32..0.45,
        reprobe_epochs in prop_oneof![Just(0.0f32), 0.01f32..3.0],
    ) -> PassRateConfig {
        PassRateConfig { harness_levels, per_scale, group_size, low, high, max_easy_fraction,
            max_hard_fraction, reprobe_epochs }
    }
}

prop_compose! {
    fn learnability()(
        harness_levels in levels(),
        per_scale in any::<bool>(),
        proportional in any::<bool>(),
        top_k in 1u32..12,
        learnable_prob in 0.0f32..=1.0,
        ema_rate in 0.01f32..=1.0,
        prior in 0.0f32..=1.0,
    ) -> LearnabilityConfig {
        let sampling = if proportional {
            LearnabilitySampling::Proportional
        } else {
            LearnabilitySampling::TopK
        };
        LearnabilityConfig { harness_levels, per_scale, sampling, top_k, learnable_prob, ema_rate,
            prior }
    }
}

prop_compose! {
    fn learning_progress()(
        harness_levels in levels(),
        per_scale in any::<bool>(),
        ema_alpha in 0.01f32..=1.0,
        p_theta in 0.01f32..0.99,
        update_interval in 1u32..40,
        uniform_prob in 0.0f32..=1.0,
    ) -> LearningProgressConfig {
        LearningProgressConfig { harness_levels, per_scale, ema_alpha, p_theta, update_interval,
            uniform_prob }
    }
}

prop_compose! {
    fn sec()(
        harness_levels in levels(),
        per_scale in any::<bool>(),
        alpha in 0.01f32..=1.0,
        temperature in 0.05f32..3.0,
        batch_episodes in 1u32..40,
        centred in any::<bool>(),
        group_size in 2u32..32,
        estimate_rate in 0.01f32..=1.0,
        prior in 0.0f32..=1.0,
    ) -> SecConfig {
        let advantage = if centred {
            AdvantageEstimate::Centered
        } else {
            AdvantageEstimate::GroupNormalized
        };
        SecConfig { harness_levels, per_scale, alpha, temperature, batch_episodes, advantage,
            group_size, estimate_rate, prior }
    }
}

prop_compose! {
    fn ladder()(
        harness_levels in levels(),
        window in 1u32..6,
        threshold in 0.1f32..=1.0,
        check_episodes in 1u32..20,
        initial_rung in 0u32..10,
    ) -> LadderConfig {
        LadderConfig { harness_levels, window, threshold, check_episodes, initial_rung }
    }
}

/// PLR's fifteen fields, in three groups (a strategy tuple holds at most twelve).
fn plr() -> impl Strategy<Value = PlrConfig> {
    (
        (
            levels(),
            1u32..40,
            0.0f32..=1.0,
            0.0f32..=1.0,
            any::<bool>(),
            0u8..3,
        ),
        (
            0.05f32..2.0,
            0.0f32..=1.0,
            0.5f32..2.0,
            0.01f32..=1.0,
            any::<bool>(),
        ),
        (any::<bool>(), 0.01f32..=1.0, 0.0f32..=1.0, any::<bool>()),
    )
        .prop_map(
            |(
                (harness_levels, buffer_size, replay_prob, rho, fixed, transform),
                (temperature, staleness_coef, staleness_temperature, alpha, by_score),
                (pvl, value_rate, value_prior, robust),
            )| PlrConfig {
                harness_levels,
                buffer_size,
                replay_prob,
                rho,
                schedule: if fixed {
                    ReplaySchedule::Fixed
                } else {
                    ReplaySchedule::Proportionate
                },
                score_transform: [
                    ScoreTransform::Rank,
                    ScoreTransform::Power,
                    ScoreTransform::Softmax,
                ][transform as usize],
                temperature,
                staleness_coef,
                staleness_temperature,
                alpha,
                buffer_priority: if by_score {
                    BufferPriority::Score
                } else {
                    BufferPriority::ReplaySupport
                },
                score: if pvl {
                    PlrScore::PositiveValueLoss
                } else {
                    PlrScore::ValueL1
                },
                value_rate,
                value_prior,
                robust,
            },
        )
}

fn any_config() -> impl Strategy<Value = SamplerConfig> {
    prop_oneof![
        Just(SamplerConfig::Hdc(HdcConfig {
            min_episodes: 3,
            ..Default::default()
        })),
        pass_rate().prop_map(SamplerConfig::PassRate),
        learnability().prop_map(SamplerConfig::Learnability),
        learning_progress().prop_map(SamplerConfig::LearningProgress),
        sec().prop_map(SamplerConfig::Sec),
        ladder().prop_map(SamplerConfig::Ladder),
        plr().prop_map(SamplerConfig::Plr),
    ]
}

/// A task is in an environment's range and at one of the configured levels.
fn task_ok(envs: &[EnvSpec], levels: &[HarnessLevel], t: &Task) -> bool {
    envs.iter()
        .any(|e| e.id == t.env && e.scale.contains(t.scale))
        && levels.contains(&t.harness)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Saving at a random point (with tasks still in flight) and restoring into a fresh
    /// sampler built with another seed continues with identical tasks and ends identical.
    #[test]
    fn every_sampler_resumes_bit_identically(
        config in any_config(),
        run in runs(0, 400),
        in_flight in 0usize..4,
        after in 1usize..200,
    ) {
        let mut a = config.build(&run.envs, run.seed).unwrap();
        play_rounds(a.as_mut(), run.steps, run.p_percent);
        let flying: Vec<Task> = (0..in_flight).map(|_| a.sample()).collect();
        let text = serde_json::to_string(&a.state()).unwrap();
        let mut b = config.build(&run.envs, run.seed.wrapping_add(1)).unwrap();
        b.restore(&serde_json::from_str(&text).unwrap()).unwrap();
        prop_assert_eq!(a.state(), b.state());
        for t in flying {
            prop_assert_eq!(a.trains_on(&t), b.trains_on(&t));
            a.update(&play(t.clone(), run.p_percent)).unwrap();
            b.update(&play(t, run.p_percent)).unwrap();
        }
        continue_alike(a.as_mut(), b.as_mut(), after, run.p_percent)?;
    }

    /// Retargeting to the same environments changes nothing; to another set, kept
    /// environments keep their counts, new ones start at zero, the counters carry on, tasks
    /// come from the new set only, and the state resumes in a sampler built over it.
    #[test]
    fn retargeting_keeps_what_stays_and_forgets_what_goes(
        config in any_config(),
        run in runs(0, 300),
        after in 1usize..100,
    ) {
        let mut s = config.build(&run.envs, run.seed).unwrap();
        play_rounds(s.as_mut(), run.steps, run.p_percent);
        let state = s.state();
        s.retarget(&run.envs).unwrap();
        prop_assert_eq!(s.state(), state, "{}: retarget to the same set", s.kind());
        // Keep the first env, move the last one's range (if there are two), add one.
        let mut next = vec![run.envs[0].clone()];
        if run.envs.len() > 1 {
            let mut moved = run.envs[run.envs.len() - 1].clone();
            moved.scale.max += 1;
            next.push(moved);
        }
        let mut added = specs(&[(1, 4)]).remove(0);
        added.id = envdist_core::EnvId::new("new/x");
        next.push(added);
        let old = s.snapshot();
        let (samples, updates) = (s.samples(), s.updates());
        s.retarget(&next).unwrap();
        prop_assert_eq!((s.samples(), s.updates()), (samples, updates));
        let snap = s.snapshot();
        prop_assert_eq!(snap.len(), next.len());
        prop_assert_eq!((snap[0].episodes, snap[0].successes), (old[0].episodes, old[0].successes));
        for e in &snap[1..] {
            prop_assert_eq!(e.episodes, 0, "{}: {} starts fresh", s.kind(), e.env);
        }
        let levels = HarnessLevel::ALL;
        for _ in 0..after {
            let t = s.sample();
            prop_assert!(task_ok(&next, &levels, &t), "{}: {:?}", s.kind(), t);
            s.update(&play(t, run.p_percent)).unwrap();
        }
        let mut resumed = config.build(&next, run.seed ^ 1).unwrap();
        resumed.restore(&s.state()).unwrap();
        prop_assert_eq!(resumed.sample(), s.sample());
        prop_assert!(config.build(&run.envs, run.seed).unwrap().restore(&s.state()).is_err());
    }

    /// Every sampler draws tasks in range at its levels, and its snapshot is a distribution
    /// whose windows hold the drawn scales.
    #[test]
    fn snapshots_are_distributions_and_tasks_are_in_range(
        config in any_config(),
        run in runs(1, 400),
    ) {
        // The rivals' levels are their config's; HDC (whose config has none) draws them all.
        let levels: Vec<HarnessLevel> = serde_json::to_value(&config)
            .ok()
            .and_then(|c| serde_json::from_value(c["harness_levels"].clone()).ok())
            .unwrap_or_else(|| HarnessLevel::ALL.to_vec());
        let mut s = config.build(&run.envs, run.seed).unwrap();
        for _ in 0..run.steps {
            let snap = s.snapshot();
            let total: f64 = snap.iter().map(|e| e.probability).sum();
            prop_assert!((total - 1.0).abs() < 1e-9, "{}: {}", s.kind(), total);
            let t = s.sample();
            prop_assert!(task_ok(&run.envs, &levels, &t), "{}: {:?}", s.kind(), t);
            let e = snap.iter().find(|e| e.env == t.env).unwrap();
            prop_assert!(e.probability > 0.0, "{}: drew {:?} at probability 0", s.kind(), t);
            prop_assert!(e.scale_lo <= t.scale && t.scale <= e.scale_hi,
                "{}: scale {} outside {}..={}", s.kind(), t.scale, e.scale_lo, e.scale_hi);
            s.update(&play(t, run.p_percent)).unwrap();
        }
        prop_assert_eq!(s.samples(), run.steps as u64);
    }

    /// Pass-rate filtering: a filtered arm is never drawn while filtered, and at least one
    /// arm is always drawable.
    #[test]
    fn filtered_arms_are_never_drawn(
        config in pass_rate(),
        run in runs(1, 600),
    ) {
        let mut s = PassRateSampler::new(&run.envs, config, run.seed).unwrap();
        for _ in 0..run.steps {
            let p = s.arm_probabilities();
            prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            prop_assert!(p.iter().any(|&x| x > 0.0));
            let t = s.sample();
            prop_assert!(!s.is_filtered(&t), "drew filtered {:?}", t);
            s.update(&play(t, run.p_percent)).unwrap();
        }
    }

    /// The ladder's top stays in range, never falls, rises by one at a time, and only right
    /// after `check_episodes` top-rung outcomes whose success rate reached the threshold.
    #[test]
    fn the_ladder_only_rises_on_success(
        config in ladder(),
        run in runs(1, 800),
    ) {
        let threshold = config.threshold as f64;
        let check = config.check_episodes as usize;
        let mut s = LadderSampler::new(&run.envs, config, run.seed).unwrap();
        // Outcomes at each env's top since its last check, as the test sees them.
        let mut at_top: Vec<Vec<bool>> = vec![Vec::new(); run.envs.len()];
        for _ in 0..run.steps {
            let t = s.sample();
            let e = s.arm_space().env_index(&t.env).unwrap();
            let before = s.rule().envs[e].top;
            let (lo, hi) = s.window(e);
            let rung = s.arm_space().arm_at(e, t.harness, t.scale).unwrap()
                - s.arm_space().arms_of(e).start;
            prop_assert!(lo as usize <= rung && rung <= hi as usize);
            let o = play(t, run.p_percent);
            if rung == before as usize {
                at_top[e].push(o.success);
            }
            let rose = s.record(&o).unwrap();
            let after = s.rule().envs[e].top;
            prop_assert!(after < s.rung_count(e));
            if at_top[e].len() == check {
                let acc = at_top[e].iter().filter(|&&x| x).count() as f64 / check as f64;
                prop_assert_eq!(rose, acc >= threshold && before + 1 < s.rung_count(e));
                at_top[e].clear();
            } else {
                prop_assert!(!rose);
            }
            prop_assert_eq!(after, before + rose as u32);
        }
    }

    /// SEC draws from softmax(Q / tau), Q stays within the bounds of the advantage.
    #[test]
    fn sec_probabilities_are_the_softmax_of_q(
        config in sec(),
        run in runs(1, 400),
    ) {
        let tau = config.temperature as f64;
        let bound = match config.advantage {
            AdvantageEstimate::Centered => 1.0,
            AdvantageEstimate::GroupNormalized => ((config.group_size - 1) as f64).sqrt(),
        };
        let mut s = SecSampler::new(&run.envs, config, run.seed).unwrap();
        play_rounds(&mut s, run.steps, run.p_percent);
        let p = s.arm_probabilities();
        let q: Vec<f64> = (0..p.len()).map(|a| s.rule().arms[a].q as f64).collect();
        for a in 0..p.len() {
            // Q is f32: allow its rounding.
            prop_assert!(q[a] >= 0.0 && q[a] <= bound * (1.0 + 1e-6), "Q {} > {}", q[a], bound);
            for b in 0..p.len() {
                let ratio = (p[a] / p[b]).ln();
                prop_assert!((ratio - (q[a] - q[b]) / tau).abs() < 1e-6);
            }
        }
        prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    /// Learnability and learning progress keep their mixing floors: every arm keeps at least
    /// the uniform share.
    #[test]
    fn uniform_shares_are_floors(
        lc in learnability(),
        pc in learning_progress(),
        run in runs(1, 400),
    ) {
        let mut l = LearnabilitySampler::new(&run.envs, lc.clone(), run.seed).unwrap();
        let mut g = LearningProgressSampler::new(&run.envs, pc.clone(), run.seed).unwrap();
        play_rounds(&mut l, run.steps, run.p_percent);
        play_rounds(&mut g, run.steps, run.p_percent);
        let p = l.arm_probabilities();
        let n = p.len() as f64;
        prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        if lc.sampling == LearnabilitySampling::TopK {
            let top: HashSet<usize> = l.top_arms().into_iter().collect();
            let k = top.len() as f64;
            for (a, &x) in p.iter().enumerate() {
                let want = (1.0 - lc.learnable_prob as f64) / n
                    + if top.contains(&a) { lc.learnable_prob as f64 / k } else { 0.0 };
                prop_assert!((x - want).abs() < 1e-9);
            }
        }
        let p = g.arm_probabilities();
        prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let floor = pc.uniform_prob as f64 / p.len() as f64;
        prop_assert!(p.iter().all(|&x| x >= floor - 1e-12));
    }

    /// Robust PLR: the buffer stays within capacity; new levels are not trained on, replays
    /// are, and a replay is always a level reported before.
    #[test]
    fn plr_replays_only_reported_levels(
        config in plr(),
        run in runs(1, 600),
    ) {
        let capacity = config.buffer_size as usize;
        let robust = config.robust;
        let mut s = PlrSampler::new(&run.envs, config, run.seed).unwrap();
        let mut reported: HashSet<Task> = HashSet::new();
        for _ in 0..run.steps {
            let (replays, news, _, _) = s.counts();
            let t = s.sample();
            let replay = s.counts().0 > replays;
            prop_assert_eq!(replay || s.counts().1 == news + 1, true);
            prop_assert_eq!(s.is_replay(&t), replay);
            prop_assert_eq!(s.trains_on(&t), !robust || replay);
            if replay {
                prop_assert!(reported.contains(&t));
            }
            let p = s.replay_probabilities();
            prop_assert!(p.is_empty() || (p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            reported.insert(t.clone());
            s.update(&play(t, run.p_percent)).unwrap();
            prop_assert!(s.levels().len() <= capacity);
        }
    }
}

/// A configuration's fields as its JSON text writes them (not widened to f64).
fn config_json(config: &SamplerConfig) -> serde_json::Value {
    serde_json::from_str(&serde_json::to_string(config).unwrap()).unwrap()
}

/// Each kind with one field changed: the state is refused, the error names the field, and
/// nothing changes.
#[test]
fn a_state_from_another_configuration_is_refused() {
    let envs = specs(&[(2, 6), (1, 3), (4, 9)]);
    let changed = json!({
        "pass_rate": {"group_size": 8}, "learnability": {"top_k": 3},
        "learning_progress": {"update_interval": 100}, "sec": {"temperature": 0.4},
        "ladder": {"window": 2}, "plr": {"staleness_coef": 0.1},
    });
    for (kind, fields) in changed.as_object().unwrap() {
        let (field, value) = fields.as_object().unwrap().iter().next().unwrap();
        // The saved value as the state's config writes it (an f32 in its shortest form).
        let saved = &config_json(&SamplerConfig::default_for(kind).unwrap())[field];
        let needle = format!("{field}: {saved} -> {value}");
        let mut a = built(kind, &envs, 1);
        play_rounds(a.as_mut(), 300, 60);
        let state = a.state();
        let current = SamplerConfig::from_fields(kind, fields).unwrap();
        let mut b = current.build(&envs, 2).unwrap();
        play_rounds(b.as_mut(), 10, 60);
        let before = b.state();
        let e = b.restore(&state).unwrap_err().to_string();
        assert!(e.contains("different configuration"), "{kind}: {e}");
        assert!(e.contains(&needle), "{kind}: {e}");
        assert_eq!(
            b.state(),
            before,
            "{kind}: a refused restore changes nothing"
        );
        // Other environments are refused too.
        let mut c = built(kind, &specs(&[(2, 6), (1, 3)]), 2);
        let e = c.restore(&state).unwrap_err().to_string();
        assert!(e.contains("envs"), "{kind}: {e}");
    }
}

/// A state of one sampler is refused by another, and edited or corrupt states are refused
/// with the field named.
#[test]
fn foreign_and_corrupt_states_are_refused() {
    let envs = specs(&[(2, 6), (1, 3)]);
    let kinds = SamplerConfig::KINDS;
    for from in kinds.iter().skip(1) {
        let mut a = built(from, &envs, 3);
        play_rounds(a.as_mut(), 200, 50);
        let state = a.state();
        for to in kinds.iter().skip(1).filter(|k| *k != from) {
            let mut b = built(to, &envs, 3);
            let e = b.restore(&state).unwrap_err().to_string();
            assert!(e.contains("another sampler"), "{from} -> {to}: {e}");
        }
        let mut edited = state.clone();
        edited["config_hash"] = json!("0000000000000000");
        let e = a.restore(&edited).unwrap_err().to_string();
        assert!(e.contains("config_hash"), "{from}: {e}");
        let mut old = state.clone();
        old["schema_version"] = json!(9);
        let e = a.restore(&old).unwrap_err().to_string();
        assert!(e.contains("schema_version"), "{from}: {e}");
        let mut bad = state.clone();
        bad["body"] = json!({});
        let e = a.restore(&bad).unwrap_err().to_string();
        assert!(e.contains("body"), "{from}: {e}");
        assert_eq!(a.state(), state, "{from}: refusals change nothing");
    }
}

/// A kept environment's arms keep their state through a retarget, whatever else changes.
#[test]
fn kept_arms_keep_their_state() {
    let envs = specs(&[(2, 4), (1, 3)]);
    for kind in SamplerConfig::KINDS.iter().skip(1) {
        let mut s = built(kind, &envs, 5);
        play_rounds(s.as_mut(), 700, 70);
        let before = s.state();
        // Drop fam/e0, keep fam/e1 (now first), add one.
        let next = specs(&[(5, 6), (1, 3)])
            .into_iter()
            .rev()
            .map(|mut e| {
                if e.id.as_str() == "fam/e0" {
                    e.id = envdist_core::EnvId::new("fam/new");
                }
                e
            })
            .collect::<Vec<_>>();
        assert_eq!(next[0].id.as_str(), "fam/e1");
        s.retarget(&next).unwrap();
        let after = s.state();
        let body = |v: &serde_json::Value, key: &str| v["body"][key].as_array().unwrap().clone();
        match *kind {
            // Per-arm bodies: fam/e1's arms are the old space's last ones, the new one's first.
            "pass_rate" | "learnability" | "learning_progress" | "sec" => {
                let (b, a) = (body(&before, "arms"), body(&after, "arms"));
                let n = if *kind == "sec" { 3 * 5 } else { 3 };
                assert_eq!(a[..n], b[b.len() - n..], "{kind}");
                assert_eq!(
                    a.len(),
                    n + if *kind == "sec" { 2 * 5 } else { 2 },
                    "{kind}"
                );
            }
            "ladder" => assert_eq!(body(&after, "envs")[0], body(&before, "envs")[1]),
            "plr" => {
                let kept = |v: &serde_json::Value| -> Vec<serde_json::Value> {
                    body(v, "levels")
                        .into_iter()
                        .filter(|l| l["task"]["env"] == "fam/e1")
                        .collect()
                };
                assert_eq!(kept(&after), kept(&before));
                assert_eq!(body(&after, "levels").len(), kept(&before).len());
                assert_eq!(after["body"]["clock"], before["body"]["clock"]);
            }
            other => panic!("{other}"),
        }
        assert_eq!(
            after["rng"], before["rng"],
            "{kind}: the random stream carries on"
        );
        assert_eq!(after["totals"][0], before["totals"][1], "{kind}");
    }
}

/// Trace lines of the rivals say where the played environment's next task can be: the
/// snapshot's most probable level and scale span.
#[test]
fn rival_trace_lines_follow_the_snapshot() {
    let envs = specs(&[(2, 6), (1, 3)]);
    for kind in SamplerConfig::KINDS.iter().skip(1) {
        let mut s = built(kind, &envs, 8);
        for step in 0..300 {
            let t = s.sample();
            let o = play(t, 60);
            s.update(&o).unwrap();
            let e = s.trace_event(step, &o).unwrap();
            let snap = s
                .snapshot()
                .into_iter()
                .find(|x| x.env == o.task.env)
                .unwrap();
            assert_eq!(
                (e.step, e.level, e.window_lo, e.window_hi),
                (step, snap.harness, snap.scale_lo, snap.scale_hi),
                "{kind}"
            );
            assert_eq!(
                (e.harness, e.scale, e.success),
                (o.task.harness, o.task.scale, o.success)
            );
        }
        let unknown = play(
            Task {
                env: envdist_core::EnvId::new("zz/q"),
                seed: 0,
                harness: HarnessLevel::H4,
                scale: 1,
            },
            50,
        );
        assert!(s.trace_event(0, &unknown).is_none(), "{kind}");
    }
}

/// The state file helpers of the trait name the file on refusal.
#[test]
fn state_files_round_trip_and_name_the_file() {
    let dir = temp_dir("rival-state-files");
    let envs = specs(&[(2, 6), (1, 3)]);
    let cfg = SamplerConfig::default_for("sec").unwrap();
    let mut a = cfg.build(&envs, 4).unwrap();
    play_rounds(a.as_mut(), 500, 40);
    let path = dir.join("sec.json");
    a.save_state_file(&path).unwrap();
    let mut b = cfg.build(&envs, 5).unwrap();
    b.load_state_file(&path).unwrap();
    for _ in 0..50 {
        assert_eq!(a.sample(), b.sample());
    }
    let mut c = built("plr", &envs, 4);
    let e = c.load_state_file(&path).unwrap_err().to_string();
    assert!(
        e.contains("sec.json") && e.contains("another sampler"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
