//! SEC, the Self-Evolving Curriculum: a non-stationary bandit over task categories whose
//! reward is the learning signal the category just produced.
//!
//! Reference: Chen et al. 2025, "Self-Evolving Curriculum for LLM Reasoning" (arXiv
//! 2505.14970) and its released scripts (`trainer.sec.bandit.lr=0.5`, temperature 1.0 for
//! Countdown, 0.4 for math, 0.2 for the 2-D runs). Each arm (category) keeps a value `Q`,
//! initially 0. At every training step the categories are drawn from `softmax(Q / tau)`; after
//! the step each category drawn gets the reward `r` = the mean absolute advantage of its
//! samples, and `Q <- alpha r + (1 - alpha) Q` (TD(0) with learning rate alpha).
//!
//! Here the arms are (environment, harness level, scale), all five levels by default, so the
//! bandit also decides how much harness text to give. A "training step" is `batch_episodes`
//! reported outcomes. [`envdist_core::EpisodeOutcome`] carries success, not advantages, so the
//! absolute advantage of an outcome is derived from it against the arm's current success
//! estimate `p` (an EMA of its earlier outcomes, taken before the outcome joins it):
//! - `group_normalized` (default): `|x - p| / sqrt(p (1 - p))`, `p` clamped to
//!   `[1/G, 1 - 1/G]`. For binary rewards this is GRPO's group-normalised advantage with the
//!   group mean replaced by `p`: its mean over outcomes is `2 sqrt(p (1 - p))`, GRPO's mean
//!   `|A|` of a group with success rate `p`, largest (1) at `p = 1/2`; the clamp bounds it by
//!   `sqrt(G - 1)` as a group of `G` bounds GRPO's.
//! - `centered`: `|x - p|`, the unnormalised (Dr. GRPO) advantage, mean `2 p (1 - p)`: the
//!   same ranking of arms on half the scale, so it needs about half the temperature.

use envdist_core::{HarnessLevel, InvalidValue};
use serde::{Deserialize, Serialize};

use super::RuleSampler;
use super::{
    ArmSpace, Carry, EnvScores, Located, Periods, Rule, RuleConfig, Saved, Seen, check_arm_sums,
    check_at_least, check_at_most, check_levels, check_nonneg, check_positive, check_rate,
    check_sum, check_unit, if_played, period_ends,
};
#[cfg(test)]
use crate::SecSampler;
use crate::error::CurriculumError;

/// How an outcome's absolute advantage is derived (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AdvantageEstimate {
    /// `|x - p| / sqrt(p (1 - p))`, GRPO's normalisation.
    #[default]
    GroupNormalized,
    /// `|x - p|`.
    Centered,
}

/// Parameters of [`SecSampler`](crate::SecSampler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SecConfig {
    /// Harness levels of the arms, strictly increasing. Default all five: the bandit picks
    /// the harness as HDC does (its arms are environment x level x scale).
    pub harness_levels: Vec<HarnessLevel>,
    /// One arm per scale (default true).
    pub per_scale: bool,
    /// TD(0) learning rate of `Q`. Default 0.5: SEC's `trainer.sec.bandit.lr=0.5`.
    pub alpha: f32,
    /// Softmax temperature. Default 1.0: SEC's Countdown runs (0.4 for math, 0.2 for 2-D).
    pub temperature: f32,
    /// Outcomes per bandit update (SEC updates once per training step). Default 256 (ours):
    /// several batches of episodes of our trainer's CPU preset, so most drawn arms have a
    /// few outcomes to average.
    pub batch_episodes: u32,
    /// Advantage derivation. Default `group_normalized` (GRPO, as in SEC's runs).
    pub advantage: AdvantageEstimate,
    /// Group size `G` whose resolution bounds the success estimate in the normalisation,
    /// `p in [1/G, 1 - 1/G]`. Default 16: DAPO's and RLVE's responses per prompt.
    pub group_size: u32,
    /// EMA rate of each arm's success estimate `p`. Default 0.1 (ours, as the learnability
    /// and learning-progress samplers).
    pub estimate_rate: f32,
    /// Success estimate of an unplayed arm. Default 0.5 (ours).
    pub prior: f32,
}

impl Default for SecConfig {
    fn default() -> Self {
        Self {
            harness_levels: HarnessLevel::ALL.to_vec(),
            per_scale: true,
            alpha: 0.5,
            temperature: 1.0,
            batch_episodes: 256,
            advantage: AdvantageEstimate::GroupNormalized,
            group_size: 16,
            estimate_rate: 0.1,
            prior: 0.5,
        }
    }
}

impl SecConfig {
    /// An unplayed arm.
    fn fresh(&self) -> SecArm {
        SecArm {
            q: 0.0,
            p: self.prior,
            batch_n: 0,
            batch_abs_adv: 0.0,
            updates: 0,
            episodes: 0,
        }
    }

    /// The absolute advantage of an outcome `success` on an arm whose estimate is `p`.
    pub fn abs_advantage(&self, p: f32, success: bool) -> f32 {
        let x = if success { 1.0 } else { 0.0 };
        match self.advantage {
            AdvantageEstimate::Centered => (x - p).abs(),
            AdvantageEstimate::GroupNormalized => {
                let g = 1.0 / self.group_size as f32;
                let p = p.clamp(g, 1.0 - g);
                (x - p).abs() / (p * (1.0 - p)).sqrt()
            }
        }
    }
}

impl RuleConfig for SecConfig {
    fn validate(&self) -> Result<(), CurriculumError> {
        check_levels("harness_levels", &self.harness_levels)?;
        check_rate("alpha", self.alpha, true)?;
        check_positive("temperature", self.temperature)?;
        check_at_least("batch_episodes", self.batch_episodes, 1)?;
        check_at_least("group_size", self.group_size, 2)?;
        check_rate("estimate_rate", self.estimate_rate, true)?;
        check_rate("prior", self.prior, false)?;
        Ok(())
    }

    fn arms(&self) -> (&[HarnessLevel], bool) {
        (&self.harness_levels, self.per_scale)
    }
}

/// One arm of the bandit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecArm {
    /// The bandit value.
    pub q: f32,
    /// Success estimate (EMA, from the prior).
    pub p: f32,
    /// Outcomes in the current batch.
    pub batch_n: u32,
    /// Sum of their absolute advantages.
    pub batch_abs_adv: f32,
    /// Updates of `q` so far.
    pub updates: u64,
    /// Outcomes counted.
    pub episodes: u64,
}

/// The rule of [`SecSampler`](crate::SecSampler), and its saved state: a value `Q` and a success estimate per
/// arm, `Q` updated per batch.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecRule {
    /// Every arm of the bandit.
    pub arms: Vec<SecArm>,
    /// Outcomes counted in the current batch.
    pub batch_count: u32,
    /// Completed batches.
    pub batches: u64,
}

impl SecRule {
    /// The batch counts, for their checks.
    fn batches(&self, c: &SecConfig) -> Periods<'static> {
        Periods {
            len: (c.batch_episodes, "batch_episodes"),
            count: (self.batch_count, "batch_count"),
            done: (self.batches, "batches"),
        }
    }
}

impl Rule for SecRule {
    const KIND: &'static str = "sec";
    type Config = SecConfig;

    fn init(c: &SecConfig, space: &ArmSpace) -> Self {
        Self {
            arms: vec![c.fresh(); space.len()],
            batch_count: 0,
            batches: 0,
        }
    }

    /// `softmax(Q / tau)` over the arms.
    fn distribution(&self, c: &SecConfig, _: &ArmSpace) -> Vec<f64> {
        let t = c.temperature as f64;
        let max = self
            .arms
            .iter()
            .map(|s| s.q as f64)
            .fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = self
            .arms
            .iter()
            .map(|s| ((s.q as f64 - max) / t).exp())
            .collect();
        let z: f64 = w.iter().sum();
        w.into_iter().map(|x| x / z).collect()
    }

    /// The outcome's absolute advantage joins its arm's batch and its success the arm's
    /// estimate; the batch's end updates `Q` of every arm drawn in it (and so the
    /// distribution).
    fn observe(&mut self, c: &SecConfig, seen: Seen<'_>) -> bool {
        let Located::Arm(_, a) = seen.at else {
            return false;
        };
        let success = seen.outcome.success;
        let adv = c.abs_advantage(self.arms[a].p, success);
        let x = if success { 1.0 } else { 0.0 };
        let s = &mut self.arms[a];
        s.batch_n = s.batch_n.saturating_add(1);
        s.batch_abs_adv += adv;
        s.p += c.estimate_rate * (x - s.p);
        s.episodes = s.episodes.saturating_add(1);
        if !period_ends(&mut self.batch_count, &mut self.batches, c.batch_episodes) {
            return false;
        }
        let al = c.alpha;
        for s in self.arms.iter_mut().filter(|s| s.batch_n > 0) {
            let r = s.batch_abs_adv / s.batch_n as f32;
            s.q = al * r + (1.0 - al) * s.q;
            s.updates = s.updates.saturating_add(1);
            s.batch_n = 0;
            s.batch_abs_adv = 0.0;
        }
        true
    }

    /// Score: `Q`; success: the estimate `p` of played arms.
    fn scores(&self, _: &SecConfig, space: &ArmSpace, p: &[f64]) -> EnvScores {
        let q: Vec<f64> = self.arms.iter().map(|s| s.q as f64).collect();
        let played = if_played(self.arms.iter().map(|s| (s.episodes > 0, s.p)));
        EnvScores::of_arms(space, p, &q, &played)
    }

    fn check(&self, c: &SecConfig, saved: &Saved<'_>) -> Result<(), InvalidValue> {
        saved.check_arms(self.arms.len())?;
        let batches = self.batches(c);
        batches.check_open()?;
        // The largest absolute advantage an outcome can have (a success against the
        // smallest estimate), with room for the rounding of the running means.
        let most = c.abs_advantage(0.0, true) * (1.0 + 1e-3);
        for (k, s) in self.arms.iter().enumerate() {
            let field = |f: &str| format!("body.arms[{k}].{f}");
            check_nonneg(&field("q"), s.q)?;
            check_unit(&field("p"), s.p)?;
            check_nonneg(&field("batch_abs_adv"), s.batch_abs_adv)?;
            if s.q > most {
                return Err(InvalidValue::new(
                    field("q"),
                    format!("at most {most} (the largest absolute advantage)"),
                    s.q,
                ));
            }
            // A sum of batch_n advantages, each rounded once.
            let sum_most = most * s.batch_n as f32 * (1.0 + s.batch_n as f32 * f32::EPSILON);
            if s.batch_abs_adv > sum_most {
                return Err(InvalidValue::new(
                    field("batch_abs_adv"),
                    format!(
                        "at most batch_n ({}) x the largest absolute advantage ({most})",
                        s.batch_n
                    ),
                    s.batch_abs_adv,
                ));
            }
            check_at_most(
                &field("batch_n"),
                u64::from(s.batch_n),
                s.episodes,
                &format!("episodes ({})", s.episodes),
            )?;
            check_at_most(
                &field("updates"),
                s.updates,
                self.batches,
                &format!("the batches completed ({})", self.batches),
            )?;
            if s.episodes == 0 && (s.q != 0.0 || s.p != c.prior || s.updates != 0) {
                return Err(InvalidValue::new(
                    format!("body.arms[{k}]"),
                    format!(
                        "q = 0, p = prior ({}), updates = 0: the arm was never played",
                        c.prior
                    ),
                    format!("q {}, p {}, updates {}", s.q, s.p, s.updates),
                ));
            }
        }
        let in_batch = self
            .arms
            .iter()
            .map(|s| u64::from(s.batch_n))
            .fold(0, u64::saturating_add);
        check_sum(
            "body.batch_count",
            u64::from(self.batch_count),
            in_batch,
            "the arms' batch_n",
            saved.retargeted,
        )?;
        check_arm_sums(saved, "episodes", |a| self.arms[a].episodes)?;
        batches.check_done(saved)
    }

    /// Kept arms keep `Q`, their estimate and their batch; the batch carries on.
    fn carry(&mut self, c: &SecConfig, from: &Self, carry: &Carry<'_>) {
        self.arms = carry.per_arm(&from.arms, c.fresh());
        self.batch_count = from.batch_count;
        self.batches = from.batches;
    }
}

impl RuleSampler<SecRule> {
    /// The absolute advantage of an outcome `success` on an arm whose estimate is `p`.
    pub fn abs_advantage(&self, p: f32, success: bool) -> f32 {
        self.config.abs_advantage(p, success)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{at_h4, specs};

    #[test]
    fn q_follows_td0_on_the_mean_absolute_advantage() {
        // Two arms (scales 1, 2 at H4), batches of 3, alpha 0.5, tau 1, centred advantage,
        // estimate EMA 0.1 from 0.5.
        let cfg = SecConfig {
            harness_levels: vec![HarnessLevel::H4],
            batch_episodes: 3,
            advantage: AdvantageEstimate::Centered,
            ..Default::default()
        };
        let mut s = SecSampler::new(&specs(1, 1, 2), cfg, 0).unwrap();
        assert_eq!(s.arm_probabilities(), vec![0.5, 0.5]);
        // arm 0 wins:  |1 - 0.5| = 0.5,   p0 = 0.55.
        // arm 0 loses: |0 - 0.55| = 0.55, p0 = 0.55 - 0.055 = 0.495.
        // arm 1 loses: |0 - 0.5| = 0.5,   p1 = 0.45.   (batch complete)
        s.record(&at_h4(1, true)).unwrap();
        s.record(&at_h4(1, false)).unwrap();
        assert_eq!(s.rule.arms[0].q, 0.0, "Q moves only at the batch's end");
        s.record(&at_h4(2, false)).unwrap();
        // r0 = (0.5 + 0.55) / 2 = 0.525 -> Q0 = 0.5 x 0.525 + 0.5 x 0 = 0.2625; Q1 = 0.25.
        assert!((s.rule.arms[0].q - 0.2625).abs() < 1e-6 && (s.rule.arms[1].q - 0.25).abs() < 1e-6);
        assert!((s.rule.arms[0].p - 0.495).abs() < 1e-6 && (s.rule.arms[1].p - 0.45).abs() < 1e-6);
        // softmax([0.2625, 0.25] / 1): P0 = 1 / (1 + e^-0.0125).
        let p = s.arm_probabilities();
        assert!((p[0] - 1.0 / (1.0 + (-0.0125f64).exp())).abs() < 1e-6);
        // Next batch: arm 1 wins three times: |1 - 0.45| = 0.55, then p = 0.505 -> 0.495,
        // then p = 0.5545 -> 0.4455. r1 = (0.55 + 0.495 + 0.4455) / 3 = 0.4968333;
        // Q1 = 0.5 x 0.4968333 + 0.5 x 0.25 = 0.3734167. Arm 0 was not drawn: Q0 stays.
        for _ in 0..3 {
            s.record(&at_h4(2, true)).unwrap();
        }
        let r1: f32 = (0.55 + 0.495 + 0.4455) / 3.0;
        assert!((s.rule.arms[1].q - (0.5 * r1 + 0.125)).abs() < 1e-6);
        assert!((s.rule.arms[0].q - 0.2625).abs() < 1e-6);
        assert_eq!(s.rule.batches, 2);
        // The GRPO-normalised advantage: at p = 0.5 a win is 0.5 / 0.5 = 1; at p = 0.55 a
        // loss is 0.55 / sqrt(0.2475); p is clamped to [1/16, 15/16] (max sqrt(15)).
        let mut g = s.clone();
        g.config.advantage = AdvantageEstimate::GroupNormalized;
        assert!((g.abs_advantage(0.5, true) - 1.0).abs() < 1e-6);
        assert!((g.abs_advantage(0.55, false) - 0.55 / 0.2475f32.sqrt()).abs() < 1e-6);
        assert!((g.abs_advantage(0.0, true) - 15f32.sqrt()).abs() < 1e-6);
    }
}
