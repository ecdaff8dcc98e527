//! Online pass-rate filtering over the whole pool: draw only tasks that are neither solved
//! every time nor failed every time.
//!
//! References: DAPO's dynamic sampling keeps a prompt's group of `n` responses only when the
//! group's accuracies are not all equal, i.e. `0 < mean < 1` (verl-recipe
//! `dapo/dapo_ray_trainer.py`, `filter_groups`; `n_resp_per_prompt=16` in
//! `dapo/run_dapo_qwen2.5_32b.sh`). prime-rl turns that into a sampler: each example's latest
//! group mean classifies it as easy (`>= easy_threshold`), hard (`<= hard_threshold`) or
//! normal, only normal examples are drawn, and when the easy (hard) pool holds more than
//! `max_easy_fraction` (`max_hard_fraction`) of the tasks its oldest member is recycled back to
//! normal (prime-rl's `src/prime_rl/orchestrator/buffer.py` and `BufferConfig`, at the commit
//! docs/curriculum-rivals/README.md names; `easy_threshold = 1.0`, `hard_threshold = 0.0` in its
//! `configs/*/rl.toml`).
//!
//! Here: an *arm* (environment x harness level x scale by default, see [`PassRateConfig`])
//! plays the role of an example. Its outcomes are cut into consecutive groups of
//! `group_size`; each completed group's mean is the arm's pass rate and classifies it. A
//! filtered arm is not drawn until it is recycled, by either of two re-probing rules, after
//! which its next group classifies it afresh:
//! - prime-rl's: the oldest filtered arm comes back whenever its pool exceeds its cap;
//! - DAPO's: DAPO filters per batch and meets every prompt again the next epoch, so here a
//!   filtered arm comes back once `reprobe_epochs` epochs have passed since it was filed,
//!   an epoch being one group per arm (`arms x group_size` reported outcomes). Without it,
//!   an arm filed as hard while the learner was weak would stay filed for as long as the hard
//!   pool stays under its cap (prime-rl alone), however much the learner improves.
//!
//! Caps are over all arms of the pool, not per environment as in prime-rl,
//! because one environment holds only a handful of arms (a cap of `floor(0.5 x 1)` would
//! forbid filtering a one-scale environment at all). The two caps sum below 1, so at least one
//! arm is always drawable. An environment is drawn uniformly among those with a drawable arm
//! (prime-rl with equal environment ratios), then an arm uniformly among its drawable arms.

use envdist_core::{HarnessLevel, InvalidValue, Task};
use serde::{Deserialize, Serialize};

use std::collections::HashSet;

use super::{
    ArmSpace, Carry, Draw, EnvScores, Located, Pick, Rule, RuleConfig, Saved, Seen, bad,
    check_arm_sums, check_at_most, check_levels, h4_only,
};
use crate::PassRateSampler;
use crate::error::CurriculumError;

/// Parameters of [`PassRateSampler`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PassRateConfig {
    /// Harness levels of the arms, strictly increasing. Default `[H4]`: this sampler does
    /// not model the harness, so it trains at the evaluation level.
    pub harness_levels: Vec<HarnessLevel>,
    /// One arm per scale (default true), the finest replayable category short of a seed, as
    /// DAPO and prime-rl filter per prompt. False: one arm per (env, level), scale uniform.
    pub per_scale: bool,
    /// Outcomes per group; a completed group's mean is the arm's pass rate. Default 16:
    /// DAPO's `n_resp_per_prompt=16` (verl-recipe `dapo/run_dapo_qwen2.5_32b.sh`).
    pub group_size: u32,
    /// A group mean `<= low` files the arm as too hard. Default 0.0: prime-rl's
    /// `hard_threshold = 0.0` (its `configs/*/rl.toml`), DAPO's "all failed". A value below
    /// 0 turns this side off.
    pub low: f32,
    /// A group mean `>= high` files the arm as too easy. Default 1.0: prime-rl's
    /// `easy_threshold = 1.0`, DAPO's "all solved". A value above 1 turns this side off.
    pub high: f32,
    /// Largest share of arms filed as easy; beyond it the oldest easy arm is recycled.
    /// Default 0.5: prime-rl `BufferConfig.max_easy_fraction`.
    pub max_easy_fraction: f32,
    /// Largest share of arms filed as hard; beyond it the oldest hard arm is recycled.
    /// Default 0.4: prime-rl `BufferConfig.max_hard_fraction`.
    pub max_hard_fraction: f32,
    /// Epochs (one group per arm: `arms x group_size` reported outcomes) after which a
    /// filtered arm returns to the pool. Default 1.0: DAPO meets every prompt again each
    /// epoch. 0 turns it off (prime-rl: only the caps recycle).
    pub reprobe_epochs: f32,
}

impl Default for PassRateConfig {
    fn default() -> Self {
        Self {
            harness_levels: h4_only(),
            per_scale: true,
            group_size: 16,
            low: 0.0,
            high: 1.0,
            max_easy_fraction: 0.5,
            max_hard_fraction: 0.4,
            reprobe_epochs: 1.0,
        }
    }
}

impl RuleConfig for PassRateConfig {
    fn validate(&self) -> Result<(), CurriculumError> {
        check_levels("harness_levels", &self.harness_levels)?;
        if self.group_size == 0 {
            return Err(bad("group_size", "at least 1", self.group_size));
        }
        if !self.low.is_finite() {
            return Err(bad("low", "a finite value", self.low));
        }
        if !(self.high.is_finite() && self.high > self.low) {
            return Err(bad(
                "high",
                &format!("a finite value above low ({})", self.low),
                self.high,
            ));
        }
        for (field, v) in [
            ("max_easy_fraction", self.max_easy_fraction),
            ("max_hard_fraction", self.max_hard_fraction),
        ] {
            if !(v.is_finite() && (0.0..1.0).contains(&v)) {
                return Err(bad(field, "a value in [0, 1)", v));
            }
        }
        if !(self.reprobe_epochs.is_finite() && self.reprobe_epochs >= 0.0) {
            return Err(bad(
                "reprobe_epochs",
                "a finite value >= 0",
                self.reprobe_epochs,
            ));
        }
        let sum = self.max_easy_fraction + self.max_hard_fraction;
        if sum >= 1.0 {
            return Err(bad(
                "max_hard_fraction",
                "max_easy_fraction + max_hard_fraction < 1, so one arm always stays drawable",
                format!("a sum of {sum}"),
            ));
        }
        Ok(())
    }

    fn arms(&self) -> (&[HarnessLevel], bool) {
        (&self.harness_levels, self.per_scale)
    }
}

/// The pool an arm is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Pool {
    /// Drawable.
    #[default]
    Normal,
    /// Filtered: its latest group was solved (mean `>= high`).
    Easy,
    /// Filtered: its latest group failed (mean `<= low`).
    Hard,
}

/// The state of one arm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassArm {
    /// Its pool.
    pub pool: Pool,
    /// Mean of its latest completed group (the pass-rate estimate), if any.
    pub pass_rate: Option<f32>,
    /// Outcomes in the group being filled.
    pub group_n: u32,
    /// Successes in the group being filled.
    pub group_successes: u32,
    /// When it was filed: the sampler's count of reported outcomes then (smaller is older;
    /// one filing per outcome, so unique). Meaningless in `Normal`.
    pub filed_at: u64,
    /// Completed groups.
    pub groups: u64,
}

/// The rule of [`PassRateSampler`], and its saved state: per arm, its pool and current group.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassRateRule {
    /// Every arm's state.
    pub arms: Vec<PassArm>,
    /// Filtered arms recycled by the caps.
    pub recycled: u64,
    /// Filtered arms returned by `reprobe_epochs`.
    pub reprobed: u64,
}

impl PassRateRule {
    /// Reported outcomes after which a filtered arm returns (`None`: never).
    pub fn reprobe_period(&self, c: &PassRateConfig) -> Option<u64> {
        let e = c.reprobe_epochs as f64;
        (e > 0.0).then(|| {
            (e * self.arms.len() as f64 * c.group_size as f64)
                .ceil()
                .max(1.0) as u64
        })
    }

    /// Per env, its drawable arms (possibly none).
    fn drawable(&self, space: &ArmSpace) -> Vec<Vec<usize>> {
        (0..space.envs().len())
            .map(|e| {
                space
                    .arms_of(e)
                    .filter(|&a| self.arms[a].pool == Pool::Normal)
                    .collect()
            })
            .collect()
    }

    fn count(&self, pool: Pool) -> usize {
        self.arms.iter().filter(|s| s.pool == pool).count()
    }

    /// Return the oldest members of `pool` to the drawable pool until it fits its cap.
    /// Returns whether any was returned.
    fn recycle(&mut self, c: &PassRateConfig, pool: Pool) -> bool {
        let frac = match pool {
            Pool::Easy => c.max_easy_fraction,
            Pool::Hard => c.max_hard_fraction,
            Pool::Normal => return false,
        };
        // floor, as prime-rl: with the two fractions summing below 1 one arm stays drawable.
        let cap = (self.arms.len() as f64 * frac as f64).floor() as usize;
        let mut any = false;
        while self.count(pool) > cap {
            let Some(oldest) = self
                .arms
                .iter()
                .enumerate()
                .filter(|(_, s)| s.pool == pool)
                .min_by_key(|(i, s)| (s.filed_at, *i))
                .map(|(i, _)| i)
            else {
                break;
            };
            Self::unfile(&mut self.arms[oldest]);
            self.recycled = self.recycled.saturating_add(1);
            any = true;
        }
        any
    }

    /// Back to the drawable pool; a fresh group re-probes it.
    fn unfile(s: &mut PassArm) {
        s.pool = Pool::Normal;
        s.group_n = 0;
        s.group_successes = 0;
    }

    /// Return every arm filtered for a full re-probe period (`now`: outcomes reported).
    fn reprobe(&mut self, c: &PassRateConfig, now: u64) -> bool {
        let Some(period) = self.reprobe_period(c) else {
            return false;
        };
        let mut any = false;
        for s in &mut self.arms {
            if s.pool != Pool::Normal && s.filed_at + period <= now {
                Self::unfile(s);
                self.reprobed = self.reprobed.saturating_add(1);
                any = true;
            }
        }
        any
    }
}

impl Rule for PassRateRule {
    const KIND: &'static str = "pass_rate";
    type Config = PassRateConfig;

    fn init(_: &PassRateConfig, space: &ArmSpace) -> Self {
        Self {
            arms: vec![PassArm::default(); space.len()],
            recycled: 0,
            reprobed: 0,
        }
    }

    /// An environment with a drawable arm uniformly, then one of its drawable arms
    /// uniformly; 0 for filtered arms.
    fn distribution(&self, _: &PassRateConfig, space: &ArmSpace) -> Vec<f64> {
        let mut p = vec![0.0; self.arms.len()];
        let drawable = self.drawable(space);
        let envs = drawable.iter().filter(|d| !d.is_empty()).count();
        if envs == 0 {
            // Unreachable with valid caps; stay a distribution regardless.
            return vec![1.0 / p.len() as f64; p.len()];
        }
        for d in drawable.iter().filter(|d| !d.is_empty()) {
            for &a in d {
                p[a] = 1.0 / envs as f64 / d.len() as f64;
            }
        }
        p
    }

    /// An environment with a drawable arm, uniformly; one of its drawable arms, uniformly.
    fn pick(&mut self, _: &PassRateConfig, draw: Draw<'_>) -> Pick {
        let drawable = self.drawable(draw.space);
        let envs: Vec<&Vec<usize>> = drawable.iter().filter(|d| !d.is_empty()).collect();
        let rng = draw.rng;
        Pick::Arm(if envs.is_empty() {
            rng.index(self.arms.len())
        } else {
            let d = envs[rng.index(envs.len())];
            d[rng.index(d.len())]
        })
    }

    /// The outcome joins its arm's current group; a completed group classifies the arm (easy
    /// first, then hard, else normal, as prime-rl's `_classify`). A filtered arm whose
    /// straggling outcomes complete a mixed group returns to the pool. Every outcome first
    /// returns the arms filtered for a full re-probe period. Changed: an arm changed pool.
    fn observe(&mut self, c: &PassRateConfig, seen: Seen<'_>) -> bool {
        let now = seen.clock.updates;
        let reprobed = self.reprobe(c, now);
        let Located::Arm(_, a) = seen.at else {
            return reprobed;
        };
        let g = c.group_size;
        let s = &mut self.arms[a];
        s.group_n = s.group_n.saturating_add(1);
        s.group_successes = s
            .group_successes
            .saturating_add(seen.outcome.success as u32);
        if s.group_n < g {
            return reprobed;
        }
        let mean = s.group_successes as f32 / s.group_n as f32;
        s.pass_rate = Some(mean);
        s.groups = s.groups.saturating_add(1);
        s.group_n = 0;
        s.group_successes = 0;
        let class = if mean >= c.high {
            Pool::Easy
        } else if mean <= c.low {
            Pool::Hard
        } else {
            Pool::Normal
        };
        if class == s.pool {
            return reprobed;
        }
        s.pool = class;
        if class != Pool::Normal {
            s.filed_at = now;
            self.recycle(c, class);
        }
        true
    }

    /// Score: the share of the environment's arms that are drawable. Success: the mean pass
    /// rate of its arms that completed a group.
    fn scores(&self, _: &PassRateConfig, space: &ArmSpace, arm_probs: &[f64]) -> EnvScores {
        let score = (0..space.envs().len())
            .map(|e| {
                let arms = space.arms_of(e);
                let n = arms.len() as f64;
                arms.filter(|&a| self.arms[a].pool == Pool::Normal).count() as f64 / n
            })
            .collect();
        let rates: Vec<f64> = self
            .arms
            .iter()
            .map(|s| s.pass_rate.map_or(f64::NAN, f64::from))
            .collect();
        let uniform = vec![1.0; arm_probs.len()];
        EnvScores {
            score,
            success: space.env_mean(&uniform, &rates),
        }
    }

    fn check(&self, cfg: &PassRateConfig, saved: &Saved<'_>) -> Result<(), InvalidValue> {
        saved.check_arms(self.arms.len())?;
        let g = cfg.group_size;
        let mut filed_at = HashSet::new();
        for (k, s) in self.arms.iter().enumerate() {
            let field = |f: &str| format!("body.arms[{k}].{f}");
            if s.group_n >= g || s.group_successes > s.group_n {
                return Err(InvalidValue::new(
                    format!("body.arms[{k}]"),
                    format!("group_successes <= group_n < group_size ({g})"),
                    format!("{} of {}", s.group_successes, s.group_n),
                ));
            }
            // A pass rate is the mean of a completed group: some k / group_size.
            match s.pass_rate {
                None if s.groups > 0 => {
                    return Err(InvalidValue::new(
                        field("pass_rate"),
                        format!("a group mean ({} groups completed)", s.groups),
                        "none",
                    ));
                }
                Some(rate) if s.groups == 0 => {
                    return Err(InvalidValue::new(
                        field("pass_rate"),
                        "none (no group completed)",
                        rate,
                    ));
                }
                Some(rate) => {
                    let hits = (f64::from(rate) * f64::from(g)).round();
                    let mean = hits as u32 as f32 / g as f32;
                    if !(0.0..=f64::from(g)).contains(&hits) || mean != rate {
                        return Err(InvalidValue::new(
                            field("pass_rate"),
                            format!("a mean of {g} outcomes (successes / {g})"),
                            rate,
                        ));
                    }
                }
                None => {}
            }
            let rate = s.pass_rate.unwrap_or(f32::NAN);
            let pool_ok = match s.pool {
                Pool::Normal => true,
                Pool::Easy => rate >= cfg.high,
                Pool::Hard => rate < cfg.high && rate <= cfg.low,
            };
            if !pool_ok {
                return Err(InvalidValue::new(
                    field("pool"),
                    format!(
                        "the pool its pass rate files it in (easy: >= high ({}), hard: <= low ({})), or normal",
                        cfg.high, cfg.low
                    ),
                    format!("{:?} with pass rate {:?}", s.pool, s.pass_rate),
                ));
            }
            if s.pool != Pool::Normal {
                // Filed at the outcome that completed its group: one filing per outcome.
                if s.filed_at == 0 || s.filed_at > saved.updates || !filed_at.insert(s.filed_at) {
                    return Err(InvalidValue::new(
                        field("filed_at"),
                        format!(
                            "an outcome number in 1..={} no other filed arm holds",
                            saved.updates
                        ),
                        s.filed_at,
                    ));
                }
                if let Some(period) = self.reprobe_period(cfg)
                    && !saved.retargeted
                    && s.filed_at.saturating_add(period) <= saved.updates
                {
                    return Err(InvalidValue::new(
                        field("filed_at"),
                        format!(
                            "after outcome {} (a filed arm returns after {period} outcomes)",
                            saved.updates.saturating_sub(period)
                        ),
                        s.filed_at,
                    ));
                }
            }
        }
        for (pool, frac, name) in [
            (Pool::Easy, cfg.max_easy_fraction, "max_easy_fraction"),
            (Pool::Hard, cfg.max_hard_fraction, "max_hard_fraction"),
        ] {
            let cap = (self.arms.len() as f64 * frac as f64).floor() as u64;
            let n = self.arms.iter().filter(|s| s.pool == pool).count() as u64;
            check_at_most(
                "body.arms",
                n,
                cap,
                &format!(
                    "{cap} arms filed as {pool:?} ({name} of {})",
                    self.arms.len()
                ),
            )?;
        }
        check_arm_sums(saved, "groups x group_size + group_n", |a| {
            let s = &self.arms[a];
            s.groups
                .saturating_mul(u64::from(g))
                .saturating_add(u64::from(s.group_n))
        })?;
        if !saved.retargeted {
            // Every return to the pool undoes a filing, and every filing ends a group.
            let groups = self
                .arms
                .iter()
                .map(|s| s.groups)
                .fold(0, u64::saturating_add);
            check_at_most(
                "body.recycled + body.reprobed",
                self.recycled.saturating_add(self.reprobed),
                groups,
                &format!("the groups completed ({groups})"),
            )?;
        }
        Ok(())
    }

    /// Kept arms keep their pool and group; the caps then hold over the new arms.
    fn carry(&mut self, c: &PassRateConfig, from: &Self, carry: &Carry<'_>) {
        self.arms = carry.per_arm(&from.arms, PassArm::default());
        self.recycled = from.recycled;
        self.reprobed = from.reprobed;
        self.recycle(c, Pool::Easy);
        self.recycle(c, Pool::Hard);
    }
}

impl PassRateSampler {
    /// Filtered arms returned to the pool so far: by the caps, and by `reprobe_epochs`.
    pub fn recycled(&self) -> (u64, u64) {
        (self.rule.recycled, self.rule.reprobed)
    }

    /// Reported outcomes after which a filtered arm returns (`None`: never).
    pub fn reprobe_period(&self) -> Option<u64> {
        self.rule.reprobe_period(&self.config)
    }

    /// Whether `task`'s arm is filtered now (false for tasks no arm holds).
    pub fn is_filtered(&self, task: &Task) -> bool {
        match self.arm_space().locate(task) {
            Located::Arm(_, a) => self.rule.arms[a].pool != Pool::Normal,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CurriculumSampler;
    use crate::test_support::{config, outcome, specs};
    use envdist_core::{EnvId, TaskSampler};
    use serde_json::json;

    /// Four arms (2 envs x scales 1..=2 at H4), groups of 4, caps 0.25 easy / 0.5 hard.
    fn small() -> PassRateSampler {
        let cfg =
            config(json!({"group_size": 4, "max_easy_fraction": 0.25, "max_hard_fraction": 0.5}));
        PassRateSampler::new(&specs(2, 1, 2), cfg, 3).unwrap()
    }

    #[test]
    fn groups_classify_and_the_oldest_filtered_arm_is_recycled() {
        let mut s = small();
        let (a, b) = (EnvId::new("fam/e0"), EnvId::new("fam/e1"));
        let h4 = HarnessLevel::H4;
        // Arm 0 (fam/v0, scale 1): 4 successes -> mean 1.0 >= high -> easy.
        for _ in 0..4 {
            s.record(&outcome(&a, h4, 1, true)).unwrap();
        }
        assert_eq!(s.rule.arms[0].pool, Pool::Easy);
        assert_eq!(s.rule.arms[0].pass_rate, Some(1.0));
        // Arm 1 (fam/v0, scale 2): 1 of 4 -> mean 0.25, strictly inside (0, 1): stays normal.
        for k in 0..4 {
            s.record(&outcome(&a, h4, 2, k == 0)).unwrap();
        }
        assert_eq!(
            (s.rule.arms[1].pool, s.rule.arms[1].pass_rate),
            (Pool::Normal, Some(0.25))
        );
        // The only drawable arm of fam/v0 is arm 1: P = 1/2 (env) x 1/1; fam/v1's arms 1/2 x 1/2.
        assert_eq!(s.arm_probabilities(), vec![0.0, 0.5, 0.25, 0.25]);
        // Arm 2 (fam/v1, scale 1): easy too. Easy cap = floor(4 x 0.25) = 1, so the oldest easy
        // arm, arm 0 (filed at outcome 4, arm 2 at 12), is recycled with an empty group.
        for _ in 0..4 {
            s.record(&outcome(&b, h4, 1, true)).unwrap();
        }
        assert_eq!(
            (s.rule.arms[0].pool, s.rule.arms[2].pool, s.recycled()),
            (Pool::Normal, Pool::Easy, (1, 0))
        );
        // Hard: 0 of 4 -> mean 0 <= low. Cap floor(4 x 0.5) = 2 holds one.
        for _ in 0..4 {
            s.record(&outcome(&b, h4, 2, false)).unwrap();
        }
        assert_eq!(s.rule.arms[3].pool, Pool::Hard);
        assert!(s.is_filtered(&outcome(&b, h4, 2, false).task));
        // Every filtered arm of fam/v1 -> fam/v1 cannot be drawn; fam/v0 takes all the mass.
        assert_eq!(s.arm_probabilities(), vec![0.5, 0.5, 0.0, 0.0]);
        for _ in 0..200 {
            assert_eq!(s.sample_task().env, a);
        }
        // Outcomes at a level no arm holds or of unknown envs are refused and change nothing.
        let before = s.state();
        let e = s
            .record(&outcome(&a, HarnessLevel::H0, 1, true))
            .unwrap_err();
        assert_eq!(e.problem.field, "harness", "{e}");
        let e = s
            .record(&outcome(&EnvId::new("x/y"), h4, 1, true))
            .unwrap_err();
        assert_eq!(e.problem.field, "env", "{e}");
        assert_eq!(s.state(), before);
        // Filler from here on: arm 1 (fam/v0, scale 2), half solved, so its groups stay mixed
        // (normal) and the other arms are left alone.
        let filler = |k: u64| outcome(&a, h4, 2, k.is_multiple_of(2));
        s.record(&filler(16)).unwrap();
        assert_eq!(s.rule.arms[0].group_n, 0);
        let snap = s.snapshot();
        assert_eq!((snap[0].episodes, snap[1].episodes), (9, 8));
        assert_eq!(snap[1].score, 0.0);
        assert!((snap.iter().map(|e| e.probability).sum::<f64>() - 1.0).abs() < 1e-12);
        // Re-probing: one epoch = 4 arms x 4 = 16 outcomes. Arm 2 (filed at 12) returns at
        // outcome 28, arm 3 (filed at 16) at 32; 17 outcomes are reported so far.
        assert_eq!(s.reprobe_period(), Some(16));
        for k in 17..27 {
            s.record(&filler(k)).unwrap();
        }
        assert_eq!(s.rule.arms[2].pool, Pool::Easy);
        s.record(&filler(27)).unwrap();
        assert_eq!(
            (s.rule.arms[2].pool, s.rule.arms[3].pool),
            (Pool::Normal, Pool::Hard)
        );
        for k in 28..32 {
            s.record(&filler(k)).unwrap();
        }
        assert_eq!(s.rule.arms[1].pool, Pool::Normal);
        assert_eq!((s.rule.arms[3].pool, s.recycled()), (Pool::Normal, (1, 2)));
    }
}
