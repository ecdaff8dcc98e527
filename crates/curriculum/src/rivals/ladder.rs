//! A per-environment difficulty ladder: train just below the top difficulty reached, and
//! raise the top once it is mastered.
//!
//! Reference: RLVE (Zeng et al. 2025, arXiv 2511.07317), `slime/ray/rollout_data_source.py`
//! (`RLVEManager`) with the defaults of `slime/utils/arguments.py`: each environment keeps a
//! top difficulty, initially `--initial-difficulty 0`; a problem's difficulty is drawn
//! uniformly from the `--difficulty-sliding-window-size 4` difficulties ending at the top;
//! only outcomes at the top difficulty count toward its accuracy, and once
//! `--min-prompts-before-difficulty-check 8` prompts x `--n-samples-per-prompt 16` outcomes
//! are counted, the top rises by one if the accuracy is at least
//! `--min-metric-to-increase-difficulty 0.9`; the count restarts either way. The environment
//! is drawn uniformly.
//!
//! Here a difficulty (a *rung*) is a (harness level, scale) pair: the configured levels from
//! the strongest harness to the weakest, each crossed with the environment's scales in
//! ascending order. With the default levels `[H4]` the ladder is the state scale at the
//! evaluation level; with `[H0, .., H4]` it is HDC's staircase (every scale at H0, then at
//! H1, ...) driven by RLVE's rule. RLVE's difficulties are unbounded; ours end at the last
//! rung, where the top stays.

use envdist_core::{HarnessLevel, InvalidValue};
use serde::{Deserialize, Serialize};

use super::RuleSampler;
use super::{
    ArmSpace, Carry, Draw, EnvScores, Located, Pick, Rule, RuleConfig, Saved, Seen, check_at_least,
    check_at_most, check_len, check_levels, check_rate, h4_only,
};
#[cfg(test)]
use crate::LadderSampler;
use crate::error::CurriculumError;

/// Parameters of [`LadderSampler`](crate::LadderSampler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LadderConfig {
    /// Harness levels of the ladder, strictly increasing (the ladder climbs every scale at
    /// the first level, then at the next). Default `[H4]`: a scale ladder at the evaluation
    /// level.
    pub harness_levels: Vec<HarnessLevel>,
    /// Rungs drawn, ending at the top. Default 4: RLVE `--difficulty-sliding-window-size`.
    pub window: u32,
    /// Accuracy at the top rung that raises it. Default 0.9: RLVE
    /// `--min-metric-to-increase-difficulty`.
    pub threshold: f32,
    /// Outcomes at the top rung per check. Default 128: RLVE
    /// `--min-prompts-before-difficulty-check 8` x `--n-samples-per-prompt 16` (its training
    /// scripts).
    pub check_episodes: u32,
    /// Top rung at the start (0 = first level, smallest scale). Default 0: RLVE
    /// `--initial-difficulty`. Clipped to each environment's last rung.
    pub initial_rung: u32,
}

impl Default for LadderConfig {
    fn default() -> Self {
        Self {
            harness_levels: h4_only(),
            window: 4,
            threshold: 0.9,
            check_episodes: 128,
            initial_rung: 0,
        }
    }
}

impl RuleConfig for LadderConfig {
    fn validate(&self) -> Result<(), CurriculumError> {
        check_levels("harness_levels", &self.harness_levels)?;
        check_at_least("window", self.window, 1)?;
        check_rate("threshold", self.threshold, true)?;
        check_at_least("check_episodes", self.check_episodes, 1)?;
        Ok(())
    }

    /// A rung per scale of every level.
    fn arms(&self) -> (&[HarnessLevel], bool) {
        (&self.harness_levels, true)
    }
}

/// One environment's ladder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rungs {
    /// The top rung (index into the environment's rungs).
    pub top: u32,
    /// Outcomes counted at the top since the last check.
    pub top_n: u32,
    /// Successes among them.
    pub top_successes: u32,
    /// Times the top rose.
    pub promotions: u32,
    /// Checks made.
    pub checks: u64,
}

/// The rule of [`LadderSampler`](crate::LadderSampler), and its saved state: a top rung per environment. Its arms
/// are the rungs (level-major, then scale).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LadderRule {
    /// Every environment's ladder.
    pub envs: Vec<Rungs>,
}

impl LadderRule {
    /// The rungs drawn for environment `e`, inclusive.
    pub fn window(&self, c: &LadderConfig, e: usize) -> (u32, u32) {
        let top = self.envs[e].top;
        (top.saturating_sub(c.window - 1), top)
    }
}

impl LadderConfig {
    /// Environment `e`'s ladder before any outcome: its top at the initial rung.
    fn fresh(&self, space: &ArmSpace, e: usize) -> Rungs {
        Rungs {
            top: self.initial_rung.min(rung_count(space, e) - 1),
            ..Default::default()
        }
    }
}

fn rung_count(space: &ArmSpace, e: usize) -> u32 {
    space.arms_of(e).len() as u32
}

impl Rule for LadderRule {
    const KIND: &'static str = "ladder";
    type Config = LadderConfig;

    fn init(c: &LadderConfig, space: &ArmSpace) -> Self {
        Self {
            envs: (0..space.envs().len()).map(|e| c.fresh(space, e)).collect(),
        }
    }

    fn distribution(&self, c: &LadderConfig, space: &ArmSpace) -> Vec<f64> {
        let n = self.envs.len() as f64;
        let mut p = vec![0.0; space.len()];
        for e in 0..self.envs.len() {
            let (lo, hi) = self.window(c, e);
            let base = space.arms_of(e).start;
            for r in lo..=hi {
                p[base + r as usize] = 1.0 / n / (hi - lo + 1) as f64;
            }
        }
        p
    }

    /// An environment uniformly, a rung uniformly in its window.
    fn pick(&mut self, c: &LadderConfig, draw: Draw<'_>) -> Pick {
        let e = draw.rng.index(self.envs.len());
        let (lo, hi) = self.window(c, e);
        let r = draw.rng.range_inclusive(lo, hi);
        Pick::Arm(draw.space.arms_of(e).start + r as usize)
    }

    /// Counted only at its environment's top rung; every `check_episodes` of them the
    /// accuracy is checked and the top rises if it reaches the threshold. Changed: the top
    /// rose.
    fn observe(&mut self, c: &LadderConfig, seen: Seen<'_>) -> bool {
        let Located::Arm(e, a) = seen.at else {
            return false;
        };
        let rung = (a - seen.space.arms_of(e).start) as u32;
        let last = rung_count(seen.space, e) - 1;
        let st = &mut self.envs[e];
        if rung != st.top {
            return false;
        }
        st.top_n = st.top_n.saturating_add(1);
        st.top_successes = st.top_successes.saturating_add(seen.outcome.success as u32);
        if st.top_n < c.check_episodes {
            return false;
        }
        let accuracy = st.top_successes as f64 / st.top_n as f64;
        st.top_n = 0;
        st.top_successes = 0;
        st.checks = st.checks.saturating_add(1);
        if accuracy >= c.threshold as f64 && st.top < last {
            st.top = st.top.saturating_add(1);
            st.promotions = st.promotions.saturating_add(1);
            return true;
        }
        false
    }

    /// Score: how far up the ladder the top is, `(top + 1) / rungs`; success: the accuracy
    /// counted at the top since the last check (NaN right after one).
    fn scores(&self, _: &LadderConfig, space: &ArmSpace, _: &[f64]) -> EnvScores {
        EnvScores {
            score: (0..self.envs.len())
                .map(|e| (self.envs[e].top + 1) as f64 / rung_count(space, e) as f64)
                .collect(),
            success: self
                .envs
                .iter()
                .map(|s| {
                    if s.top_n > 0 {
                        s.top_successes as f64 / s.top_n as f64
                    } else {
                        f64::NAN
                    }
                })
                .collect(),
        }
    }

    fn check(&self, c: &LadderConfig, saved: &Saved<'_>) -> Result<(), InvalidValue> {
        let space = saved.space;
        let (want, found) = (space.envs().len(), self.envs.len());
        check_len("body.envs", "one per environment", want, found)?;
        let n = c.check_episodes;
        for (k, st) in self.envs.iter().enumerate() {
            let last = rung_count(space, k) - 1;
            if st.top > last {
                return Err(InvalidValue::new(
                    format!("body.envs[{k}].top"),
                    format!("0..={last}"),
                    st.top,
                ));
            }
            if st.top_n >= n || st.top_successes > st.top_n {
                return Err(InvalidValue::new(
                    format!("body.envs[{k}]"),
                    format!("top_successes <= top_n < check_episodes ({n})"),
                    format!("{} of {}", st.top_successes, st.top_n),
                ));
            }
            // The top starts at the initial rung and rises one rung per promotion.
            let start = c.fresh(space, k).top;
            if u64::from(st.top) != u64::from(start) + u64::from(st.promotions) {
                return Err(InvalidValue::new(
                    format!("body.envs[{k}].top"),
                    format!(
                        "the initial rung ({start}) + promotions ({})",
                        st.promotions
                    ),
                    st.top,
                ));
            }
            check_at_most(
                &format!("body.envs[{k}].promotions"),
                u64::from(st.promotions),
                st.checks,
                &format!("checks ({})", st.checks),
            )?;
            let episodes = saved.totals[k].episodes;
            check_at_most(
                &format!("body.envs[{k}].checks"),
                st.checks
                    .saturating_mul(u64::from(n))
                    .saturating_add(u64::from(st.top_n)),
                episodes,
                &format!(
                    "the outcomes of {} ({episodes}) as checks x check_episodes + top_n",
                    space.envs()[k].id
                ),
            )?;
        }
        Ok(())
    }

    /// Kept environments keep their ladder.
    fn carry(&mut self, _: &LadderConfig, from: &Self, carry: &Carry<'_>) {
        for (i, j) in carry.envs() {
            self.envs[i] = from.envs[j];
        }
    }
}

impl RuleSampler<LadderRule> {
    /// Number of rungs of environment `e`.
    pub fn rung_count(&self, e: usize) -> u32 {
        rung_count(self.arm_space(), e)
    }

    /// The rungs drawn for environment `e`, inclusive.
    pub fn window(&self, e: usize) -> (u32, u32) {
        self.rule.window(&self.config, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CurriculumSampler;
    use crate::test_support::{at_h4, specs};

    #[test]
    fn the_top_rises_only_after_a_check_at_the_threshold() {
        // One env, scales 1..=5 at H4: rungs 0..=4 = scales 1..=5. Window 2, threshold 0.75,
        // a check every 4 outcomes at the top.
        let cfg = LadderConfig {
            window: 2,
            threshold: 0.75,
            check_episodes: 4,
            ..Default::default()
        };
        let mut s = LadderSampler::new(&specs(1, 1, 5), cfg, 0).unwrap();
        assert_eq!(s.window(0), (0, 0));
        // 3 of 4 at the top (scale 1): accuracy 0.75 >= 0.75 -> top 1 (scale 2).
        let ups: Vec<bool> = [true, true, false, true]
            .iter()
            .map(|&x| s.record(&at_h4(1, x)).unwrap())
            .collect();
        assert_eq!(ups, [false, false, false, true]);
        assert_eq!(s.window(0), (0, 1));
        // Outcomes below the top do not count.
        s.record(&at_h4(1, true)).unwrap();
        assert_eq!(s.rule.envs[0].top_n, 0);
        // 2 of 4 at scale 2: 0.5 < 0.75 -> stays, and the count restarts.
        for x in [true, false, false, true] {
            assert!(!s.record(&at_h4(2, x)).unwrap());
        }
        assert_eq!(
            (
                s.rule.envs[0].top,
                s.rule.envs[0].top_n,
                s.rule.envs[0].checks
            ),
            (1, 0, 2)
        );
        // 4 of 4 -> top 2; window rungs 1..=2 = scales 2..=3, each 1/2.
        for _ in 0..4 {
            s.record(&at_h4(2, true)).unwrap();
        }
        assert_eq!(s.arm_probabilities(), vec![0.0, 0.5, 0.5, 0.0, 0.0]);
        let snap = &s.snapshot()[0];
        assert_eq!((snap.scale_lo, snap.scale_hi, snap.mean_scale), (2, 3, 2.5));
        // Climb to the last rung (scale 5); it stays there.
        for scale in 3..=5 {
            for _ in 0..4 {
                s.record(&at_h4(scale, true)).unwrap();
            }
        }
        assert_eq!((s.rule.envs[0].top, s.rule.envs[0].promotions), (4, 4));
        for t in 0..100 {
            let task = s.sample_task();
            assert!((4..=5).contains(&task.scale), "{t}: {task:?}");
        }
    }

    #[test]
    fn harness_levels_make_hdc_shaped_rungs() {
        let cfg = LadderConfig {
            harness_levels: vec![HarnessLevel::H0, HarnessLevel::H4],
            initial_rung: 3,
            ..Default::default()
        };
        let s = LadderSampler::new(&specs(1, 2, 4), cfg, 0).unwrap();
        // Rungs: H0 x 2..=4, then H4 x 2..=4; rung 3 is (H4, 2); window rungs 0..=3.
        let arm = s.arm_space().arm(3);
        assert_eq!((arm.harness, arm.scale), (HarnessLevel::H4, Some(2)));
        assert_eq!(s.window(0), (0, 3));
    }
}
