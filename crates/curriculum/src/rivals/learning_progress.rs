//! Learning progress: prefer tasks whose success rate is changing.
//!
//! Reference: Syllabus `syllabus/curricula/online_learning_progress.py` (and
//! `learning_progress.py`), after Kanitscheider et al. 2021 (arXiv 2106.14876). Every
//! `update_interval` episodes each task's success rate over the interval updates a fast EMA
//! (`fast += a (rate - fast)`), a slow EMA *of the fast one* (`slow += a (fast - slow)`, the
//! new fast value) and a plain EMA `p_true`; all start at 0. Learning progress is
//! `|r(fast) - r(slow)|` with the reweighting `r(p) = p (1 - theta) / (p + theta (1 - 2p))`,
//! which stretches small differences near 0 and 1. Tasks with progress > 0 or `p_true > 0`
//! get `sigmoid(z-score of progress)` normalised (the others 0; all uniform when none
//! qualifies), and the result is mixed with a uniform distribution:
//! `(1 - uniform_prob) dist + uniform_prob / n`.
//!
//! One deviation, for a sampler that draws few arms per interval: Syllabus counts a task not
//! played in the interval as a success rate of 0, which drags its EMAs down and so fakes
//! progress for every arm that happened not to be drawn. Here only arms played in the interval
//! are updated. (Syllabus's `normalize_success` uses a baseline measured at the first update,
//! which online happens before any episode and is therefore 0: it changes nothing, so it is
//! left out.)

use envdist_core::{HarnessLevel, InvalidValue};
use serde::{Deserialize, Serialize};

use super::RuleSampler;
use super::{
    ArmSpace, Carry, EnvScores, Located, Periods, Rule, RuleConfig, Saved, Seen, bad,
    check_arm_sums, check_at_least, check_at_most, check_levels, check_rate, check_sum, check_unit,
    h4_only, if_played, period_ends,
};
#[cfg(test)]
use crate::LearningProgressSampler;
use crate::error::CurriculumError;

/// Parameters of [`LearningProgressSampler`](crate::LearningProgressSampler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LearningProgressConfig {
    /// Harness levels of the arms, strictly increasing. Default `[H4]` (not modelled: the
    /// evaluation level).
    pub harness_levels: Vec<HarnessLevel>,
    /// One arm per scale (default true).
    pub per_scale: bool,
    /// EMA rate of the fast, slow and true estimates. Default 0.1: Syllabus `ema_alpha`.
    pub ema_alpha: f32,
    /// Reweighting parameter `theta` in (0, 1). Default 0.1: Syllabus `p_theta`.
    pub p_theta: f32,
    /// Outcomes (counted on arms) between two updates of the estimates. Default 256 (ours):
    /// Syllabus's Procgen example updates every 25 PPO batches of 64 x 256 steps; a batch of
    /// our trainer's CPU preset (32 x 32 steps) ends a few dozen episodes, so 256 episodes is
    /// several batches while keeping a few outcomes per arm in each interval.
    pub update_interval: u32,
    /// Share of the uniform distribution in the mix. Default 0.25: Syllabus online learning
    /// progress `uniform_prob`.
    pub uniform_prob: f32,
}

impl Default for LearningProgressConfig {
    fn default() -> Self {
        Self {
            harness_levels: h4_only(),
            per_scale: true,
            ema_alpha: 0.1,
            p_theta: 0.1,
            update_interval: 256,
            uniform_prob: 0.25,
        }
    }
}

impl LearningProgressConfig {
    /// The reweighting `r(p) = p (1 - theta) / (p + theta (1 - 2p))`.
    pub fn reweight(&self, p: f64) -> f64 {
        let t = self.p_theta as f64;
        p * (1.0 - t) / (p + t * (1.0 - 2.0 * p))
    }
}

impl RuleConfig for LearningProgressConfig {
    fn validate(&self) -> Result<(), CurriculumError> {
        check_levels("harness_levels", &self.harness_levels)?;
        check_rate("ema_alpha", self.ema_alpha, true)?;
        let t = self.p_theta;
        if !(t.is_finite() && t > 0.0 && t < 1.0) {
            return Err(bad("p_theta", "a value in (0, 1)", t));
        }
        check_at_least("update_interval", self.update_interval, 1)?;
        check_rate("uniform_prob", self.uniform_prob, false)?;
        Ok(())
    }

    fn arms(&self) -> (&[HarnessLevel], bool) {
        (&self.harness_levels, self.per_scale)
    }
}

/// One arm's estimates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgressArm {
    /// Fast EMA of the interval success rates.
    pub fast: f32,
    /// Slow EMA (of `fast`).
    pub slow: f32,
    /// EMA of the interval success rates (Syllabus `_p_true`).
    pub p_true: f32,
    /// Intervals in which the arm was played.
    pub measured: u64,
    /// Outcomes in the current interval.
    pub interval_n: u32,
    /// Successes in the current interval.
    pub interval_successes: u32,
}

/// The rule of [`LearningProgressSampler`](crate::LearningProgressSampler), and its saved state: fast and slow EMAs per arm,
/// updated per interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearningProgressRule {
    /// Every arm's estimates.
    pub arms: Vec<ProgressArm>,
    /// Outcomes counted in the current interval.
    pub interval_count: u32,
    /// Completed intervals.
    pub intervals: u64,
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

impl LearningProgressRule {
    /// Learning progress `|r(fast) - r(slow)|` of every arm.
    pub fn progress(&self, c: &LearningProgressConfig) -> Vec<f64> {
        self.arms
            .iter()
            .map(|s| (c.reweight(s.fast as f64) - c.reweight(s.slow as f64)).abs())
            .collect()
    }

    /// The interval counts, for their checks.
    fn intervals(&self, c: &LearningProgressConfig) -> Periods<'static> {
        Periods {
            len: (c.update_interval, "update_interval"),
            count: (self.interval_count, "interval_count"),
            done: (self.intervals, "intervals"),
        }
    }
}

impl Rule for LearningProgressRule {
    const KIND: &'static str = "learning_progress";
    type Config = LearningProgressConfig;

    fn init(_: &LearningProgressConfig, space: &ArmSpace) -> Self {
        Self {
            arms: vec![ProgressArm::default(); space.len()],
            interval_count: 0,
            intervals: 0,
        }
    }

    fn distribution(&self, c: &LearningProgressConfig, _: &ArmSpace) -> Vec<f64> {
        let lp = self.progress(c);
        let n = lp.len();
        let pos: Vec<usize> = (0..n)
            .filter(|&a| lp[a] > 0.0 || self.arms[a].p_true > 0.0)
            .collect();
        let idx: Vec<usize> = if pos.is_empty() {
            (0..n).collect()
        } else {
            pos
        };
        let m = idx.len() as f64;
        let mean = idx.iter().map(|&a| lp[a]).sum::<f64>() / m;
        let std = (idx.iter().map(|&a| (lp[a] - mean).powi(2)).sum::<f64>() / m).sqrt();
        let scale = if std > 0.0 { std } else { 1.0 };
        let sub: Vec<f64> = idx
            .iter()
            .map(|&a| sigmoid((lp[a] - mean) / scale))
            .collect();
        let z: f64 = sub.iter().sum();
        let u = c.uniform_prob as f64;
        let mut p = vec![u / n as f64; n];
        for (&a, s) in idx.iter().zip(&sub) {
            p[a] += (1.0 - u) * s / z;
        }
        p
    }

    /// The outcome counts in its arm's interval; the interval's end updates the estimates of
    /// every arm played in it (and so the distribution).
    fn observe(&mut self, c: &LearningProgressConfig, seen: Seen<'_>) -> bool {
        let Located::Arm(_, a) = seen.at else {
            return false;
        };
        let s = &mut self.arms[a];
        s.interval_n = s.interval_n.saturating_add(1);
        s.interval_successes = s
            .interval_successes
            .saturating_add(seen.outcome.success as u32);
        if !period_ends(
            &mut self.interval_count,
            &mut self.intervals,
            c.update_interval,
        ) {
            return false;
        }
        let al = c.ema_alpha;
        for s in self.arms.iter_mut().filter(|s| s.interval_n > 0) {
            let rate = s.interval_successes as f32 / s.interval_n as f32;
            s.fast = rate * al + s.fast * (1.0 - al);
            s.slow = s.fast * al + s.slow * (1.0 - al);
            s.p_true = rate * al + s.p_true * (1.0 - al);
            s.measured = s.measured.saturating_add(1);
            s.interval_n = 0;
            s.interval_successes = 0;
        }
        true
    }

    /// Score: learning progress; success: `p_true` of measured arms.
    fn scores(&self, c: &LearningProgressConfig, space: &ArmSpace, p: &[f64]) -> EnvScores {
        let measured = if_played(self.arms.iter().map(|s| (s.measured > 0, s.p_true)));
        EnvScores::of_arms(space, p, &self.progress(c), &measured)
    }

    fn check(&self, c: &LearningProgressConfig, saved: &Saved<'_>) -> Result<(), InvalidValue> {
        saved.check_arms(self.arms.len())?;
        let intervals = self.intervals(c);
        intervals.check_open()?;
        for (k, s) in self.arms.iter().enumerate() {
            for (name, v) in [("fast", s.fast), ("slow", s.slow), ("p_true", s.p_true)] {
                check_unit(&format!("body.arms[{k}].{name}"), v)?;
            }
            if s.interval_successes > s.interval_n {
                return Err(InvalidValue::new(
                    format!("body.arms[{k}].interval_successes"),
                    format!("at most interval_n ({})", s.interval_n),
                    s.interval_successes,
                ));
            }
            check_at_most(
                &format!("body.arms[{k}].measured"),
                s.measured,
                self.intervals,
                &format!("the intervals completed ({})", self.intervals),
            )?;
            if s.measured == 0 && (s.fast, s.slow, s.p_true) != (0.0, 0.0, 0.0) {
                return Err(InvalidValue::new(
                    format!("body.arms[{k}]"),
                    "fast = slow = p_true = 0 (never measured)",
                    format!("fast {}, slow {}, p_true {}", s.fast, s.slow, s.p_true),
                ));
            }
        }
        let in_interval = self
            .arms
            .iter()
            .map(|s| u64::from(s.interval_n))
            .fold(0, u64::saturating_add);
        check_sum(
            "body.interval_count",
            u64::from(self.interval_count),
            in_interval,
            "the arms' interval_n",
            saved.retargeted,
        )?;
        check_arm_sums(saved, "interval_n", |a| u64::from(self.arms[a].interval_n))?;
        // Every completed interval counted `update_interval` outcomes of known environments.
        intervals.check_done(saved)
    }

    /// Kept arms keep their estimates and interval counts; the interval carries on.
    fn carry(&mut self, _: &LearningProgressConfig, from: &Self, carry: &Carry<'_>) {
        self.arms = carry.per_arm(&from.arms, ProgressArm::default());
        self.interval_count = from.interval_count;
        self.intervals = from.intervals;
    }
}

impl RuleSampler<LearningProgressRule> {
    /// The reweighting `r(p) = p (1 - theta) / (p + theta (1 - 2p))`.
    pub fn reweight(&self, p: f64) -> f64 {
        self.config.reweight(p)
    }

    /// Learning progress `|r(fast) - r(slow)|` of every arm.
    pub fn progress(&self) -> Vec<f64> {
        self.rule.progress(&self.config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{at_h4, specs};

    #[test]
    fn fast_slow_emas_and_the_squashed_distribution_follow_syllabus() {
        // Two arms (scales 1, 2 at H4), interval of 2 outcomes, alpha 0.1, theta 0.1.
        let cfg = LearningProgressConfig {
            update_interval: 2,
            ..Default::default()
        };
        let mut s = LearningProgressSampler::new(&specs(1, 1, 2), cfg, 0).unwrap();
        // Before any interval: every estimate 0, no arm qualifies -> uniform.
        assert_eq!(s.arm_probabilities(), vec![0.5, 0.5]);
        // Interval 1: arm 0 wins twice (rate 1), arm 1 unplayed.
        // fast0 = 0.1 x 1 = 0.1; slow0 = 0.1 x 0.1 = 0.01; p_true0 = 0.1.
        s.record(&at_h4(1, true)).unwrap();
        s.record(&at_h4(1, true)).unwrap();
        let a0 = s.rule.arms[0];
        assert!((a0.fast - 0.1).abs() < 1e-6 && (a0.slow - 0.01).abs() < 1e-6);
        // r(0.1) = 0.09 / (0.1 + 0.1 x 0.8) = 0.5; r(0.01) = 0.009 / 0.108 = 0.083333;
        // LP0 = 0.416667. Arm 1 (LP 0, p_true 0) is left out: dist = [1, 0], mixed with a
        // quarter uniform: [0.75 + 0.125, 0.125].
        assert!((s.progress()[0] - (0.5 - 0.009 / 0.108)).abs() < 1e-6);
        let p = s.arm_probabilities();
        assert!((p[0] - 0.875).abs() < 1e-6 && (p[1] - 0.125).abs() < 1e-6);
        // Interval 2: arm 1 fails then wins (rate 0.5); arm 0 unplayed keeps its estimates.
        // fast1 = 0.05, slow1 = 0.005; r(0.05) = 0.045 / 0.14, r(0.005) = 0.0045 / 0.104;
        // LP1 = 0.278159. z-scores of [0.416667, 0.278159] are [+1, -1]: the squashed
        // distribution is [sigmoid(1), sigmoid(-1)] = [0.731059, 0.268941], mixed:
        // 0.75 x that + 0.125 = [0.673294, 0.326706].
        s.record(&at_h4(2, false)).unwrap();
        s.record(&at_h4(2, true)).unwrap();
        assert_eq!(s.rule.arms[0], a0);
        assert!((s.progress()[1] - (0.045 / 0.14 - 0.0045 / 0.104)).abs() < 1e-6);
        let p = s.arm_probabilities();
        let sig1 = 1.0 / (1.0 + (-1.0f64).exp());
        assert!((p[0] - (0.75 * sig1 + 0.125)).abs() < 1e-6, "{p:?}");
        assert!((p[1] - (0.75 * (1.0 - sig1) + 0.125)).abs() < 1e-6, "{p:?}");
        assert_eq!(s.rule.intervals, 2);
    }
}
