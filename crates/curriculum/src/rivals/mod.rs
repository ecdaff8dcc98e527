//! The task-ordering methods a user would pick instead of HDC, and the pieces they share.
//!
//! Each rival is a [`Rule`] (its own state, distribution over arms, reaction to an outcome,
//! state checks and scores) run by the one generic [`RuleSampler`], which implements
//! [`TaskSampler`] and [`CurriculumSampler`] for all of them: sampling, counting, the saved
//! state's envelope, snapshots, trace lines and retargeting are written once. The samplers
//! keep their names as aliases (`SecSampler = RuleSampler<SecRule>`), one row each of the table
//! of kinds ([`crate::SamplerConfig`]).
//!
//! Every rival sees the pool through an [`ArmSpace`]: its *arms* are (environment, harness
//! level) pairs, crossed with every scale of the environment's range when the sampler tells
//! scales apart (`per_scale`), or with the whole range drawn uniformly otherwise. A drawn task
//! is always fresh (a new episode seed) except for PLR, which replays exact tasks. Harness
//! levels come from each config's `harness_levels`: rivals that do not model the harness sample
//! at H4, the level evaluation uses; the SEC bandit defaults to all five levels.
//!
//! Shared rules, so that the rivals behave alike where the references leave a choice:
//! - Determinism: one [`Rng`] per sampler, drawn only in `sample`; `update` never draws.
//!   Ties are broken by arm order (documented per sampler), never by hash order.
//! - Outcome attribution: an outcome counts toward the arm its task belongs to (known
//!   environment, harness level in the config's list, scale in range). Outcomes of unknown
//!   environments are counted apart; outcomes at another level count only in the per-env
//!   totals.
//! - Numbers kept in a state are `f32` (as HDC's), which survive a JSON round trip exactly;
//!   distributions are computed from them in `f64` and never saved.
//! - State: [`TaskSampler::state`] writes one JSON envelope with `schema_version`, the
//!   sampler's name, the config and its hash, the environments, the random stream, counters
//!   and the rule's own `body`. A state from another sampler, another configuration or
//!   other environments is refused with an [`InvalidValue`] naming the field that differs;
//!   nothing changes on refusal.

use std::collections::HashMap;
use std::ops::Range;

use envdist_core::{EnvId, EnvSpec, HarnessLevel, InvalidValue, Rng, ScaleRange, Task};
use serde::{Deserialize, Serialize};

pub use crate::checks::{Retired, config_diff, config_hash};
pub(crate) use crate::checks::{
    bad, check_at_least, check_config, check_counters, check_envs, check_levels, check_nonneg,
    check_positive, check_rate, check_schema, check_unit, issued_range, parse_state, retire,
};
use crate::error::CurriculumError;
use crate::trace::EnvSnapshot;

pub mod ladder;
pub mod learnability;
pub mod learning_progress;
pub mod pass_rate;
pub mod plr;
mod rule;
pub mod sec;

#[cfg(doc)]
use crate::CurriculumSampler;
#[cfg(doc)]
use envdist_core::TaskSampler;
pub(crate) use rule::if_played;
pub use rule::{Carry, Clock, Draw, EnvScores, Pick, Rule, RuleConfig, RuleSampler, Saved, Seen};

/// Schema version of the rivals' saved states.
pub const RIVAL_STATE_SCHEMA_VERSION: u32 = 1;

/// Most arms a sampler may hold: a per-scale arm space over huge scale ranges would otherwise
/// allocate without bound.
pub const MAX_ARMS: usize = 1 << 20;

/// One environment as a rival sampler knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvRange {
    /// The environment.
    pub id: EnvId,
    /// Its declared scale range.
    pub scale: ScaleRange,
}

/// Outcome counts of one environment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvTotals {
    /// Outcomes reported.
    pub episodes: u64,
    /// Successes reported.
    pub successes: u64,
}

/// One arm: an environment (index), a harness level, and one scale or the whole range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arm {
    /// Index of the environment in sampler order.
    pub env: usize,
    /// Harness level of the arm's tasks.
    pub harness: HarnessLevel,
    /// The arm's scale; `None`: uniform over the environment's range.
    pub scale: Option<u32>,
}

/// Where an outcome's task falls in an [`ArmSpace`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Located {
    /// Unknown environment.
    Unknown,
    /// Known environment, but a harness level or scale no arm holds.
    OffArm(usize),
    /// Environment and arm.
    Arm(usize, usize),
}

/// The arms of a sampler: per environment, its harness levels (level-major) crossed with its
/// scales (ascending) or with its whole range. Arm indices are dense, environment by
/// environment, so an environment's arms are one contiguous range.
#[derive(Debug, Clone)]
pub struct ArmSpace {
    envs: Vec<EnvRange>,
    index: HashMap<EnvId, usize>,
    levels: Vec<HarnessLevel>,
    per_scale: bool,
    /// `offsets[i]..offsets[i + 1]` are environment `i`'s arms.
    offsets: Vec<usize>,
}

impl ArmSpace {
    /// Arms over `specs` at `levels` (already validated: non-empty, strictly increasing),
    /// one per scale when `per_scale`. Errors: no environment, duplicate ids, a reversed
    /// scale range, more than [`MAX_ARMS`] arms.
    pub fn new(
        specs: &[EnvSpec],
        levels: &[HarnessLevel],
        per_scale: bool,
    ) -> Result<Self, CurriculumError> {
        let index = check_envs(specs)?;
        let mut offsets = Vec::with_capacity(specs.len() + 1);
        offsets.push(0usize);
        for (i, e) in specs.iter().enumerate() {
            let span = if per_scale {
                (e.scale.max - e.scale.min) as usize + 1
            } else {
                1
            };
            let next = span
                .checked_mul(levels.len())
                .and_then(|n| n.checked_add(offsets[i]))
                .filter(|&n| n <= MAX_ARMS)
                .ok_or_else(|| {
                    CurriculumError::Envs(InvalidValue::new(
                        format!("envs[{i}] ({})", e.id),
                        format!(
                            "at most {MAX_ARMS} arms in all (use fewer harness levels or per_scale = false)"
                        ),
                        format!(
                            "more: scale range {}..={} x {} harness levels, one arm per scale",
                            e.scale.min,
                            e.scale.max,
                            levels.len()
                        ),
                    ))
                })?;
            offsets.push(next);
        }
        Ok(Self {
            envs: specs
                .iter()
                .map(|e| EnvRange {
                    id: e.id.clone(),
                    scale: e.scale,
                })
                .collect(),
            index,
            levels: levels.to_vec(),
            per_scale,
            offsets,
        })
    }

    /// Number of arms.
    pub fn len(&self) -> usize {
        self.offsets[self.envs.len()]
    }

    /// Always false: there is at least one environment and one level.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The environments, in sampler order.
    pub fn envs(&self) -> &[EnvRange] {
        &self.envs
    }

    /// The harness levels of the arms.
    pub fn levels(&self) -> &[HarnessLevel] {
        &self.levels
    }

    /// Whether each scale is its own arm.
    pub fn per_scale(&self) -> bool {
        self.per_scale
    }

    /// Position of `id` among the environments.
    pub fn env_index(&self, id: &EnvId) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The arms of environment `e`.
    pub fn arms_of(&self, e: usize) -> Range<usize> {
        self.offsets[e]..self.offsets[e + 1]
    }

    fn span(&self, e: usize) -> usize {
        if self.per_scale {
            let r = self.envs[e].scale;
            (r.max - r.min) as usize + 1
        } else {
            1
        }
    }

    /// The environment of arm `a`.
    pub fn env_of(&self, a: usize) -> usize {
        self.offsets.partition_point(|&o| o <= a) - 1
    }

    /// Arm `a` (panics if out of range: arm indices come from this space).
    pub fn arm(&self, a: usize) -> Arm {
        let env = self.env_of(a);
        let local = a - self.offsets[env];
        let span = self.span(env);
        Arm {
            env,
            harness: self.levels[local / span],
            scale: self
                .per_scale
                .then(|| self.envs[env].scale.min + (local % span) as u32),
        }
    }

    /// The arm of environment `e` at `level` and `scale`, if any.
    pub fn arm_at(&self, e: usize, level: HarnessLevel, scale: u32) -> Option<usize> {
        let r = self.envs[e].scale;
        if !r.contains(scale) {
            return None;
        }
        let li = self.levels.iter().position(|&l| l == level)?;
        let span = self.span(e);
        let si = if self.per_scale {
            (scale - r.min) as usize
        } else {
            0
        };
        Some(self.offsets[e] + li * span + si)
    }

    /// Where `task` falls: an unknown environment, a known one off every arm, or an arm.
    pub fn locate(&self, task: &Task) -> Located {
        match self.env_index(&task.env) {
            None => Located::Unknown,
            Some(e) => match self.arm_at(e, task.harness, task.scale) {
                Some(a) => Located::Arm(e, a),
                None => Located::OffArm(e),
            },
        }
    }

    /// A fresh task of arm `a`: its scale (or one uniform over the range) and a new seed.
    pub fn draw(&self, a: usize, rng: &mut Rng) -> Task {
        let arm = self.arm(a);
        let r = self.envs[arm.env].scale;
        let scale = match arm.scale {
            Some(s) => s,
            None => rng.range_inclusive(r.min, r.max),
        };
        Task {
            env: self.envs[arm.env].id.clone(),
            seed: rng.next_u64(),
            harness: arm.harness,
            scale,
        }
    }

    /// Snapshots from a distribution over arms (`arm_probs`, summing to 1) and per-env score
    /// and success.
    pub(crate) fn snapshot(
        &self,
        arm_probs: &[f64],
        scores: &EnvScores,
        totals: &[EnvTotals],
    ) -> Vec<EnvSnapshot> {
        (0..self.envs.len())
            .map(|e| {
                let r = self.reach(e, arm_probs);
                EnvSnapshot {
                    env: self.envs[e].id.clone(),
                    probability: r.probability,
                    score: scores.score[e],
                    success: scores.success[e],
                    harness: r.harness,
                    mean_harness: r.mean_harness,
                    scale_lo: r.scale_lo,
                    scale_hi: r.scale_hi,
                    mean_scale: r.mean_scale,
                    episodes: totals[e].episodes,
                    successes: totals[e].successes,
                }
            })
            .collect()
    }

    /// Where environment `e`'s next task can be, under a distribution over arms.
    pub(crate) fn reach(&self, e: usize, arm_probs: &[f64]) -> Reach {
        let arms = self.arms_of(e);
        let p_env: f64 = arm_probs[arms.clone()].iter().sum();
        let r = self.envs[e].scale;
        let (mut lo, mut hi) = (u32::MAX, 0u32);
        let (mut ms, mut mh) = (0.0, 0.0);
        let mut level_p = [0.0f64; 5];
        // Conditional on this env; an env that cannot be drawn shows its arms evenly.
        let n = arms.len() as f64;
        for a in arms {
            let w = if p_env > 0.0 {
                arm_probs[a] / p_env
            } else {
                1.0 / n
            };
            if w <= 0.0 {
                continue;
            }
            let arm = self.arm(a);
            let (alo, ahi) = arm.scale.map_or((r.min, r.max), |s| (s, s));
            lo = lo.min(alo);
            hi = hi.max(ahi);
            ms += w * (alo as f64 + ahi as f64) / 2.0;
            mh += w * arm.harness.index() as f64;
            level_p[arm.harness.index()] += w;
        }
        // Ties go to the weaker level (`max_by` keeps the last maximum).
        let harness = (0..5)
            .max_by(|&a, &b| level_p[a].total_cmp(&level_p[b]))
            .and_then(HarnessLevel::from_index)
            .unwrap_or(HarnessLevel::H4);
        Reach {
            probability: p_env,
            harness,
            mean_harness: mh,
            scale_lo: lo.min(hi),
            scale_hi: hi,
            mean_scale: ms,
        }
    }

    /// Per-env mean of `values` over each env's arms, weighted by `arm_probs` (plain mean for
    /// an env that cannot be drawn). Non-finite values (no estimate yet) are left out; an env
    /// with none gets NaN.
    pub(crate) fn env_mean(&self, arm_probs: &[f64], values: &[f64]) -> Vec<f64> {
        (0..self.envs.len())
            .map(|e| {
                let known: Vec<usize> =
                    self.arms_of(e).filter(|&a| values[a].is_finite()).collect();
                let p: f64 = known.iter().map(|&a| arm_probs[a]).sum();
                if known.is_empty() {
                    f64::NAN
                } else if p > 0.0 {
                    known.iter().map(|&a| arm_probs[a] * values[a]).sum::<f64>() / p
                } else {
                    known.iter().map(|&a| values[a]).sum::<f64>() / known.len() as f64
                }
            })
            .collect()
    }
}

/// Where one environment's next task can be (see [`ArmSpace::reach`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Reach {
    pub probability: f64,
    pub harness: HarnessLevel,
    pub mean_harness: f64,
    pub scale_lo: u32,
    pub scale_hi: u32,
    pub mean_scale: f64,
}

/// A saved list must have one entry per arm (or environment, category).
pub(crate) fn check_len(
    field: &str,
    what: &str,
    want: usize,
    found: usize,
) -> Result<(), InvalidValue> {
    if want == found {
        return Ok(());
    }
    Err(InvalidValue::new(
        field,
        format!("{want} entries ({what})"),
        found,
    ))
}

/// A saved count must not exceed what it is part of: `value <= bound`, `bound` said as
/// `what` (e.g. "episodes (12)").
pub(crate) fn check_at_most(
    field: &str,
    value: u64,
    bound: u64,
    what: &str,
) -> Result<(), InvalidValue> {
    if value <= bound {
        return Ok(());
    }
    Err(InvalidValue::new(field, format!("at most {what}"), value))
}

/// Per environment, a count summed over its arms (`count(arm)`) must not exceed the outcomes
/// counted for it (`saved.totals`): an arm counts only outcomes of its own environment.
pub(crate) fn check_arm_sums(
    saved: &Saved<'_>,
    name: &str,
    count: impl Fn(usize) -> u64,
) -> Result<(), InvalidValue> {
    let space = saved.space;
    for (e, t) in saved.totals.iter().enumerate() {
        let arms = space.arms_of(e);
        let sum = arms.clone().map(&count).fold(0u64, u64::saturating_add);
        check_at_most(
            &format!("body.arms[{}..{}].{name}", arms.start, arms.end),
            sum,
            t.episodes,
            &format!(
                "totals[{e}].episodes ({}) summed over the arms of {}",
                t.episodes,
                space.envs()[e].id
            ),
        )?;
    }
    Ok(())
}

/// A count kept beside the counts it sums (an interval's or a batch's outcomes, over the
/// arms): equal to their sum, or at least it once a retarget dropped arms with their counts.
pub(crate) fn check_sum(
    field: &str,
    value: u64,
    sum: u64,
    parts: &str,
    retargeted: bool,
) -> Result<(), InvalidValue> {
    if value == sum || (retargeted && value > sum) {
        return Ok(());
    }
    Err(InvalidValue::new(
        field,
        if retargeted {
            format!("at least the sum of {parts} ({sum})")
        } else {
            format!("the sum of {parts} ({sum})")
        },
        value,
    ))
}

/// Periods of a fixed number of outcomes (SEC's batches, learning progress's intervals): the
/// outcomes counted in the open one and the periods completed, each with its field's name.
pub(crate) struct Periods<'a> {
    /// Outcomes per period, and the config field that sets it.
    pub len: (u32, &'a str),
    /// Outcomes in the open period, and its field.
    pub count: (u32, &'a str),
    /// Periods completed, and their field.
    pub done: (u64, &'a str),
}

/// Count one outcome toward the open period of `len` outcomes (its count `count`, `done`
/// periods completed); at its end the count restarts and the period is completed. Returns
/// whether it ended.
pub(crate) fn period_ends(count: &mut u32, done: &mut u64, len: u32) -> bool {
    *count = count.saturating_add(1);
    if *count < len {
        return false;
    }
    *count = 0;
    *done = done.saturating_add(1);
    true
}

impl Periods<'_> {
    /// A saved open period is shorter than a period.
    pub fn check_open(&self) -> Result<(), InvalidValue> {
        let ((len, len_field), (count, count_field)) = (self.len, self.count);
        if count < len {
            return Ok(());
        }
        Err(InvalidValue::new(
            format!("body.{count_field}"),
            format!("below {len_field} ({len})"),
            count,
        ))
    }

    /// Every completed period's outcomes, and the open one's, were reported (`saved.updates`):
    /// `done x len + count` of them.
    pub fn check_done(&self, saved: &Saved<'_>) -> Result<(), InvalidValue> {
        let ((len, len_field), (count, count_field), (done, done_field)) =
            (self.len, self.count, self.done);
        let counted = done
            .saturating_mul(u64::from(len))
            .saturating_add(u64::from(count));
        check_at_most(
            &format!("body.{done_field}"),
            counted,
            saved.updates,
            &format!(
                "the outcomes reported ({}) as {done_field} x {len_field} + {count_field}",
                saved.updates
            ),
        )
    }
}

/// The evaluation level alone: the default of samplers that do not model the harness.
pub(crate) fn h4_only() -> Vec<HarnessLevel> {
    vec![HarnessLevel::H4]
}

/// Draw an index from probabilities that sum to 1 (or weights); falls back to uniform when
/// every weight is zero, which a caller's distribution never is.
pub(crate) fn draw_index(rng: &mut Rng, weights: &[f64]) -> usize {
    rng.weighted_index(weights)
        .unwrap_or_else(|| rng.index(weights.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::specs;

    #[test]
    fn arm_layout_is_level_major_then_scale() {
        let mut envs = specs(2, 2, 4);
        envs[1].scale = ScaleRange { min: 7, max: 7 };
        let levels = [HarnessLevel::H2, HarnessLevel::H4];
        let s = ArmSpace::new(&envs, &levels, true).unwrap();
        // env 0: 2 levels x 3 scales = 6 arms; env 1: 2 levels x 1 scale.
        assert_eq!(s.len(), 8);
        assert_eq!(s.arms_of(1), 6..8);
        assert_eq!(
            s.arm(4),
            Arm {
                env: 0,
                harness: HarnessLevel::H4,
                scale: Some(3)
            }
        );
        assert_eq!(s.arm_at(0, HarnessLevel::H4, 3), Some(4));
        assert_eq!(s.arm_at(0, HarnessLevel::H3, 3), None);
        assert_eq!(s.arm_at(0, HarnessLevel::H4, 5), None);
        for a in 0..s.len() {
            let arm = s.arm(a);
            assert_eq!(s.arm_at(arm.env, arm.harness, arm.scale.unwrap()), Some(a));
        }
        let whole = ArmSpace::new(&envs, &levels, false).unwrap();
        assert_eq!(whole.len(), 4);
        assert_eq!(whole.arm_at(0, HarnessLevel::H4, 3), Some(1));
        let mut rng = Rng::seed_from_u64(1);
        for _ in 0..50 {
            let t = whole.draw(1, &mut rng);
            assert!((2..=4).contains(&t.scale) && t.harness == HarnessLevel::H4);
        }
    }

    #[test]
    fn construction_errors_name_the_problem() {
        let e = ArmSpace::new(&[], &[HarnessLevel::H4], true).unwrap_err();
        assert!(e.to_string().contains("at least one environment"), "{e}");
        let mut dup = specs(2, 1, 3);
        dup[1].id = dup[0].id.clone();
        let e = ArmSpace::new(&dup, &[HarnessLevel::H4], true).unwrap_err();
        assert!(e.to_string().contains("duplicate"), "{e}");
        let huge = specs(1, 0, u32::MAX);
        let e = ArmSpace::new(&huge, &[HarnessLevel::H4], true).unwrap_err();
        assert!(e.to_string().contains("arms"), "{e}");
        // The whole range as one arm is fine.
        assert_eq!(
            ArmSpace::new(&huge, &[HarnessLevel::H4], false)
                .unwrap()
                .len(),
            1
        );
        let e = check_levels("harness_levels", &[HarnessLevel::H4, HarnessLevel::H0]).unwrap_err();
        assert!(e.to_string().contains("`harness_levels`"), "{e}");
        assert!(check_levels("harness_levels", &[]).is_err());
    }
}
