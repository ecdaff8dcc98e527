//! Learnability sampling: prefer tasks the agent solves about half the time.
//!
//! Reference: Syllabus `syllabus/curricula/learnability.py` (after Rutherford et al. 2024,
//! "No Regrets", and Tzannetos et al.): a task's learnability is `p (1 - p)` for its success
//! rate `p`; with `sampling = "topk"` the `k` most learnable tasks share `learnable_prob` of the
//! mass uniformly and every task shares the rest uniformly; with `sampling = "dist"` tasks are
//! drawn in proportion to learnability (uniformly when all are 0).
//!
//! Syllabus reads `p` from a periodic evaluation of every task. A sampler has no evaluator, so
//! here `p` is an online estimate per arm: an exponential moving average of its outcomes,
//! starting from a prior of 0.5, so an unplayed arm looks maximally learnable (0.25) and is
//! tried early. Ties in the top-k ranking go to the arm with fewer episodes, then to the lower
//! arm index. Without an evaluator an arm outside the top-k is only re-measured through the
//! uniform share, so `learnable_prob` defaults below Syllabus's 1.0 (see the field).

use envdist_core::{HarnessLevel, InvalidValue};
use serde::{Deserialize, Serialize};

use super::RuleSampler;
use super::{
    ArmSpace, Carry, EnvScores, Located, Rule, RuleConfig, Saved, Seen, check_arm_sums,
    check_at_least, check_levels, check_rate, check_unit, h4_only, if_played,
};
#[cfg(test)]
use crate::LearnabilitySampler;
use crate::error::CurriculumError;

/// How learnability turns into a distribution (Syllabus `sampling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LearnabilitySampling {
    /// The `top_k` most learnable arms share `learnable_prob` uniformly (Syllabus `"topk"`).
    #[default]
    TopK,
    /// In proportion to learnability (Syllabus `"dist"`).
    Proportional,
}

/// Parameters of [`LearnabilitySampler`](crate::LearnabilitySampler).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LearnabilityConfig {
    /// Harness levels of the arms, strictly increasing. Default `[H4]` (not modelled: the
    /// evaluation level).
    pub harness_levels: Vec<HarnessLevel>,
    /// One arm per scale (default true), so that learnability picks the scales too.
    pub per_scale: bool,
    /// Top-k or proportional. Default top-k (Syllabus `sampling="topk"`).
    pub sampling: LearnabilitySampling,
    /// Arms in the top set. Default 10: Syllabus's `learnability_top10` run in
    /// `examples/training_scripts/cleanrl_procgen.py` (its class default, 1000, exceeds our
    /// arm counts and would make top-k uniform).
    pub top_k: u32,
    /// Mass of the top set; the rest is uniform over all arms. Default 0.75: Syllabus's
    /// default is 1.0 with an evaluator re-measuring every task; online, the uniform quarter
    /// (Syllabus online learning progress's `uniform_prob = 0.25`) keeps other arms measured.
    pub learnable_prob: f32,
    /// Rate of the per-arm success EMA, `p += rate (x - p)`. Default 0.1: Syllabus learning
    /// progress's `ema_alpha` (learnability itself uses raw evaluation rates).
    pub ema_rate: f32,
    /// Success estimate of an unplayed arm. Default 0.5 (ours): maximal learnability, so
    /// unplayed arms are tried first, as an initial evaluation pass would measure them.
    pub prior: f32,
}

impl Default for LearnabilityConfig {
    fn default() -> Self {
        Self {
            harness_levels: h4_only(),
            per_scale: true,
            sampling: LearnabilitySampling::TopK,
            top_k: 10,
            learnable_prob: 0.75,
            ema_rate: 0.1,
            prior: 0.5,
        }
    }
}

impl LearnabilityConfig {
    /// An unplayed arm: the prior, no episode.
    fn fresh(&self) -> LearnArm {
        LearnArm {
            p: self.prior,
            episodes: 0,
        }
    }
}

impl RuleConfig for LearnabilityConfig {
    fn validate(&self) -> Result<(), CurriculumError> {
        check_levels("harness_levels", &self.harness_levels)?;
        check_at_least("top_k", self.top_k, 1)?;
        check_rate("learnable_prob", self.learnable_prob, false)?;
        check_rate("ema_rate", self.ema_rate, true)?;
        check_rate("prior", self.prior, false)?;
        Ok(())
    }

    fn arms(&self) -> (&[HarnessLevel], bool) {
        (&self.harness_levels, self.per_scale)
    }
}

/// One arm's success estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearnArm {
    /// Success EMA (the prior until played).
    pub p: f32,
    /// Outcomes counted.
    pub episodes: u64,
}

/// The rule of [`LearnabilitySampler`](crate::LearnabilitySampler), and its saved state: a success EMA per arm.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearnabilityRule {
    /// Every arm's estimate.
    pub arms: Vec<LearnArm>,
}

impl LearnabilityRule {
    /// Learnability `p (1 - p)` of every arm.
    pub fn learnability(&self) -> Vec<f64> {
        self.arms
            .iter()
            .map(|s| {
                let p = s.p as f64;
                p * (1.0 - p)
            })
            .collect()
    }

    /// The arms of the top set, best first (ties: fewer episodes, then lower index).
    pub fn top_arms(&self, c: &LearnabilityConfig) -> Vec<usize> {
        let l = self.learnability();
        let mut order: Vec<usize> = (0..l.len()).collect();
        order.sort_by(|&a, &b| {
            l[b].total_cmp(&l[a])
                .then(self.arms[a].episodes.cmp(&self.arms[b].episodes))
                .then(a.cmp(&b))
        });
        order.truncate(c.top_k as usize);
        order
    }
}

impl Rule for LearnabilityRule {
    const KIND: &'static str = "learnability";
    type Config = LearnabilityConfig;

    fn init(c: &LearnabilityConfig, space: &ArmSpace) -> Self {
        Self {
            arms: vec![c.fresh(); space.len()],
        }
    }

    fn distribution(&self, c: &LearnabilityConfig, _space: &ArmSpace) -> Vec<f64> {
        let n = self.arms.len();
        let uniform = 1.0 / n as f64;
        match c.sampling {
            LearnabilitySampling::TopK => {
                let lp = c.learnable_prob as f64;
                let top = self.top_arms(c);
                let mut p = vec![(1.0 - lp) * uniform; n];
                for &a in &top {
                    p[a] += lp / top.len() as f64;
                }
                p
            }
            LearnabilitySampling::Proportional => {
                let l = self.learnability();
                let z: f64 = l.iter().sum();
                if z > 0.0 {
                    l.iter().map(|x| x / z).collect()
                } else {
                    vec![uniform; n]
                }
            }
        }
    }

    /// The arm's EMA moves toward the outcome.
    fn observe(&mut self, c: &LearnabilityConfig, seen: Seen<'_>) -> bool {
        let Located::Arm(_, a) = seen.at else {
            return false;
        };
        let x = if seen.outcome.success { 1.0 } else { 0.0 };
        let s = &mut self.arms[a];
        s.p += c.ema_rate * (x - s.p);
        s.episodes = s.episodes.saturating_add(1);
        true
    }

    /// Score: learnability `p (1 - p)`; success: the EMA of played arms.
    fn scores(&self, _: &LearnabilityConfig, space: &ArmSpace, p: &[f64]) -> EnvScores {
        let played = if_played(self.arms.iter().map(|s| (s.episodes > 0, s.p)));
        EnvScores::of_arms(space, p, &self.learnability(), &played)
    }

    fn check(&self, c: &LearnabilityConfig, saved: &Saved<'_>) -> Result<(), InvalidValue> {
        saved.check_arms(self.arms.len())?;
        for (k, s) in self.arms.iter().enumerate() {
            check_unit(&format!("body.arms[{k}].p"), s.p)?;
            if s.episodes == 0 && s.p != c.prior {
                return Err(InvalidValue::new(
                    format!("body.arms[{k}].p"),
                    format!("the prior ({}): the arm was never played", c.prior),
                    s.p,
                ));
            }
        }
        check_arm_sums(saved, "episodes", |a| self.arms[a].episodes)
    }

    fn carry(&mut self, c: &LearnabilityConfig, from: &Self, carry: &Carry<'_>) {
        self.arms = carry.per_arm(&from.arms, c.fresh());
    }
}

impl RuleSampler<LearnabilityRule> {
    /// Learnability `p (1 - p)` of every arm.
    pub fn learnability(&self) -> Vec<f64> {
        self.rule.learnability()
    }

    /// The arms of the top set, best first (ties: fewer episodes, then lower index).
    pub fn top_arms(&self) -> Vec<usize> {
        self.rule.top_arms(&self.config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{at_h4, specs};

    #[test]
    fn learnability_top_k_follows_the_syllabus_rule() {
        // Three arms: one env, scales 1..=3 at H4. k = 1, learnable_prob 0.75, EMA 0.1.
        let cfg = LearnabilityConfig {
            top_k: 1,
            ..Default::default()
        };
        let mut s = LearnabilitySampler::new(&specs(1, 1, 3), cfg, 0).unwrap();
        // All at the prior 0.5: learnability 0.25 each, equal episodes -> arm 0 on top.
        // P = 0.75 x [1, 0, 0] + 0.25 / 3 = [0.8333, 0.0833, 0.0833].
        let p = s.arm_probabilities();
        assert!((p[0] - (0.75 + 0.25 / 3.0)).abs() < 1e-6 && (p[1] - 0.25 / 3.0).abs() < 1e-6);
        // arm 0 succeeds: p0 = 0.5 + 0.1 (1 - 0.5) = 0.55, L0 = 0.55 x 0.45 = 0.2475.
        // arm 1 fails:    p1 = 0.5 + 0.1 (0 - 0.5) = 0.45, L1 = 0.2475.
        s.record(&at_h4(1, true)).unwrap();
        s.record(&at_h4(2, false)).unwrap();
        assert!((s.rule.arms[0].p - 0.55).abs() < 1e-6 && (s.rule.arms[1].p - 0.45).abs() < 1e-6);
        // arm 2 unplayed keeps 0.25 > 0.2475: it is the top arm.
        assert_eq!(s.top_arms(), vec![2]);
        // arm 2 succeeds (L2 = 0.2475): a three-way tie with one episode each -> lowest index.
        s.record(&at_h4(3, true)).unwrap();
        assert_eq!(s.top_arms(), vec![0]);
        // arm 0 succeeds again: p0 = 0.55 + 0.1 x 0.45 = 0.595, L0 = 0.595 x 0.405 = 0.240975.
        s.record(&at_h4(1, true)).unwrap();
        assert!((s.learnability()[0] - 0.240975).abs() < 1e-6);
        assert_eq!(s.top_arms(), vec![1]);
        let p = s.arm_probabilities();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-6);
        assert!((p[1] - (0.75 + 0.25 / 3.0)).abs() < 1e-6);
        // Proportional: L / sum L = [0.240975, 0.2475, 0.2475] / 0.735975.
        let mut q = s.clone();
        q.config.sampling = LearnabilitySampling::Proportional;
        let p = q.arm_probabilities();
        assert!((p[0] - 0.240975 / 0.735975).abs() < 1e-6);
    }
}
