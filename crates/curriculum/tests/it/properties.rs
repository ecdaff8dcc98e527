//! Property tests of the HDC state machine's invariants.

use envdist_core::{HarnessLevel, TaskSampler};
use envdist_curriculum::{FixedScale, HdcConfig, HdcSampler, Mode, UpdateEffect};
use proptest::prelude::*;

use crate::{continue_alike, play, play_rounds, specs};

fn ranges() -> impl Strategy<Value = Vec<(u32, u32)>> {
    prop::collection::vec((0u32..6, 0u32..8).prop_map(|(a, len)| (a, a + len)), 1..5)
}

fn any_mode() -> impl Strategy<Value = Mode> {
    prop::sample::select(Mode::ALL.to_vec())
}

fn any_level() -> impl Strategy<Value = HarnessLevel> {
    prop::sample::select(HarnessLevel::ALL.to_vec())
}

prop_compose! {
    fn configs()(
        mode in any_mode(),
        window_width in 1u32..5,
        competence_threshold in 0.3f32..0.95,
        ema_rate in 0.05f32..1.0,
        min_episodes in 1u32..8,
        lambda in 0.0f32..3.0,
        decay_span in 0u32..5,
        harness_start in any_level(),
        global_fraction in 0.2f32..1.0,
        mid in any::<bool>(),
        fixed_harness in any_level(),
    ) -> HdcConfig {
        HdcConfig {
            mode, window_width, competence_threshold, ema_rate, min_episodes, lambda,
            decay_span, harness_start, global_fraction, fixed_harness,
            harness_only_scale: if mid { FixedScale::Mid } else { FixedScale::Uniform },
            ..Default::default()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The window stays in the scale range, sampled scales stay in the window, the current
    /// level never skips a level nor moves back, the probabilities sum to 1, and each
    /// ablation mode holds fixed what it must.
    #[test]
    fn invariants_hold_along_any_run(
        ranges in ranges(),
        weights_seed in any::<u64>(),
        config in configs(),
        seed in any::<u64>(),
        p_percent in 0u64..=100,
        steps in 1usize..1500,
    ) {
        let envs = specs(&ranges);
        let weights: Vec<f32> = (0..envs.len())
            .map(|i| ((weights_seed >> (8 * i)) & 0xff) as f32 + 1.0)
            .collect();
        let mut s = HdcSampler::new(&envs, Some(&weights), config.clone(), seed).unwrap();
        let mode = config.mode;
        let n = envs.len();
        let mut levels: Vec<HarnessLevel> = (0..n).map(|i| s.current_level(i)).collect();
        let env_sum: f64 = s.env_probabilities().iter().sum();
        prop_assert!((env_sum - 1.0).abs() < 1e-9);
        for _ in 0..steps {
            let t = s.sample();
            let i = s.env_index(&t.env).unwrap();
            let (lo, hi) = s.window(i);
            prop_assert!(lo <= t.scale && t.scale <= hi, "scale {} outside window {lo}..={hi}", t.scale);
            prop_assert!(s.level_probabilities(i)[t.harness.index()] > 0.0);
            match mode {
                Mode::ScaleOnly | Mode::BaselineH4 => prop_assert_eq!(t.harness, HarnessLevel::H4),
                Mode::None => prop_assert_eq!(t.harness, config.fixed_harness),
                Mode::Full | Mode::HarnessOnly | Mode::Global => {
                    prop_assert!(t.harness >= config.harness_start && t.harness <= s.current_level(i));
                }
                Mode::BaselineUniform => {}
            }
            let effect = s.record(&play(t, p_percent)).unwrap();
            for (k, e) in envs.iter().enumerate() {
                let (lo, hi) = s.window(k);
                prop_assert!(e.scale.min <= lo && lo <= hi && hi <= e.scale.max,
                    "env {k}: window {lo}..={hi} outside {}..={}", e.scale.min, e.scale.max);
                let now = s.current_level(k);
                prop_assert!(now == levels[k] || Some(now) == levels[k].weaker(),
                    "env {k}: level {} -> {now}", levels[k]);
                if now != levels[k] {
                    prop_assert!(matches!(effect, UpdateEffect::LevelUp | UpdateEffect::GlobalLevelUp));
                    if mode != Mode::HarnessOnly {
                        prop_assert_eq!(lo, e.scale.min, "window restarts at the bottom");
                    }
                }
                levels[k] = now;
                let p = s.level_probabilities(k);
                prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{p:?}");
                let full = (e.scale.min, e.scale.max);
                match mode {
                    Mode::ScaleOnly | Mode::BaselineH4 => prop_assert_eq!(now, HarnessLevel::H4),
                    Mode::None => {
                        prop_assert_eq!(now, config.fixed_harness);
                        prop_assert_eq!((lo, hi), full);
                    }
                    Mode::BaselineUniform => {
                        prop_assert_eq!(p, [0.2; 5]);
                        prop_assert_eq!((lo, hi), full);
                    }
                    Mode::HarnessOnly => {
                        let want = match config.harness_only_scale {
                            FixedScale::Mid => (e.scale.mid(), e.scale.mid()),
                            FixedScale::Uniform => full,
                        };
                        prop_assert_eq!((lo, hi), want);
                    }
                    Mode::Global => prop_assert_eq!(now, s.global_level()),
                    Mode::Full => {}
                }
                if mode.slides_scale() {
                    let w = config.window_width.min(e.scale.len());
                    prop_assert_eq!(hi - lo + 1, w, "window width");
                }
                if !mode.weakens_harness() {
                    prop_assert!(!matches!(effect, UpdateEffect::LevelUp | UpdateEffect::GlobalLevelUp));
                }
            }
        }
    }

    /// Saving at a random point and restoring into a fresh sampler (built with another seed)
    /// continues with bit-identical tasks and ends in an identical state.
    #[test]
    fn save_restore_continues_bit_identically(
        ranges in ranges(),
        config in configs(),
        seed in any::<u64>(),
        p_percent in 0u64..=100,
        before in 0usize..600,
        after in 1usize..300,
    ) {
        let envs = specs(&ranges);
        let mut a = HdcSampler::new(&envs, None, config.clone(), seed).unwrap();
        play_rounds(&mut a, before, p_percent);
        let text = serde_json::to_string(&a.state()).unwrap();
        let mut b = HdcSampler::new(&envs, None, config, seed.wrapping_add(1)).unwrap();
        b.restore(&serde_json::from_str(&text).unwrap()).unwrap();
        continue_alike(&mut a, &mut b, after, p_percent)?;
    }

}

proptest! {
    // A statistical test: the cases (lambda, level, sampler seed) come from a fixed seed so
    // the run is reproducible, as the issue asks ("with lambda and a fixed seed").
    #![proptest_config(ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_deca1),
        ..ProptestConfig::default()
    })]

    /// With review active at level L, the observed frequency of level j matches
    /// exp(-lambda (L - j)) / Z within 5 standard errors (plus 0.002) over 20,000 draws.
    #[test]
    fn review_frequencies_follow_the_decay_law(
        lambda in 0.0f32..3.0,
        target in 1usize..=4,
        seed in any::<u64>(),
    ) {
        let envs = specs(&[(1, 4)]);
        let config = HdcConfig {
            lambda,
            decay_span: 4,
            min_episodes: 1,
            window_width: 4,
            ..Default::default()
        };
        let mut s = HdcSampler::new(&envs, None, config, seed).unwrap();
        let id = envs[0].id.clone();
        // Each success at the current stage advances it (min_episodes 1, one window).
        for _ in 0..target {
            let t = envdist_core::Task { env: id.clone(), seed: 0, harness: s.current_level(0), scale: s.window(0).0 };
            s.record(&envdist_core::EpisodeOutcome { task: t, success: true, episode_return: 1.0, steps: 1 }).unwrap();
        }
        prop_assert_eq!(s.current_level(0).index(), target);
        let draws = 20_000usize;
        let mut counts = [0usize; 5];
        for _ in 0..draws {
            counts[s.sample().harness.index()] += 1;
        }
        let z: f64 = (0..=target).map(|d| (-(lambda as f64) * d as f64).exp()).sum();
        for (j, &c) in counts.iter().enumerate() {
            let p = if j <= target { (-(lambda as f64) * (target - j) as f64).exp() / z } else { 0.0 };
            let f = c as f64 / draws as f64;
            let tol = 5.0 * (p * (1.0 - p) / draws as f64).sqrt() + 0.002;
            prop_assert!((f - p).abs() <= tol, "level H{j}: observed {f:.4}, law {p:.4}, tol {tol:.4}, counts {counts:?}");
        }
    }
}
