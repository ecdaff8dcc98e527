//! The task-ordering methods a user would pick instead of HDC, each behind the same
//! [`TaskSampler`] interface, and the pieces they share.
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
//!   and the sampler's own `body`. A state from another sampler, another configuration or
//!   other environments is refused with what differs; nothing changes on refusal.

use envdist_core::InvalidValue;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;

use envdist_core::io::{read_json, write_json_atomic};
use envdist_core::{
    EnvId, EnvSpec, EpisodeOutcome, HarnessLevel, Rng, ScaleRange, Task, TaskSampler,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::CurriculumError;

pub mod ladder;
pub mod learnability;
pub mod learning_progress;
pub mod pass_rate;
pub mod plr;
pub mod sec;

/// Schema version of the rivals' saved states.
pub const RIVAL_STATE_SCHEMA_VERSION: u32 = 1;

/// Most arms a sampler may hold: a per-scale arm space over huge scale ranges would otherwise
/// allocate without bound.
pub const MAX_ARMS: usize = 1 << 20;

/// What every sampler of this crate offers beyond [`TaskSampler`]: its name, a per-environment
/// snapshot for plots and reports, and the one flag a trainer must honour (robust PLR).
pub trait CurriculumSampler: TaskSampler {
    /// The sampler's name as written in configs (`hdc`, `pass_rate`, `sec`, ...).
    fn kind(&self) -> &'static str;
    /// One snapshot per environment, in sampler order; the probabilities sum to 1.
    fn snapshot(&self) -> Vec<EnvSnapshot>;
    /// Tasks drawn so far.
    fn samples(&self) -> u64;
    /// Outcomes of known environments reported so far.
    fn updates(&self) -> u64;
    /// Write [`TaskSampler::state`] to `path` atomically (pretty JSON).
    fn save_state_file(&self, path: &Path) -> Result<(), CurriculumError> {
        write_json_atomic(path, &self.state())?;
        Ok(())
    }
    /// Restore the state saved at `path`; the error names the file and what differs.
    fn load_state_file(&mut self, path: &Path) -> Result<(), CurriculumError> {
        let v: serde_json::Value = read_json(path, None)?;
        self.restore(&v).map_err(|e| CurriculumError::State {
            path: Some(path.to_path_buf()),
            message: e.0,
        })
    }
}

/// Where one environment stands in a sampler, for plots: how likely it is drawn next, the
/// sampler's score for it, and which scales and harness levels its next task can take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvSnapshot {
    /// The environment.
    pub env: EnvId,
    /// Probability that the next task is in this environment.
    pub probability: f64,
    /// The sampler's priority statistic for this environment (documented per sampler: pass
    /// rate, learnability, learning progress, Q value, top-rung accuracy, replay score),
    /// averaged over its arms with the sampler's own weights.
    pub score: f64,
    /// The sampler's success estimate for this environment (NaN when it keeps none).
    pub success: f64,
    /// Most probable harness level of this environment's next task (ties: the weaker).
    pub harness: HarnessLevel,
    /// Expected harness level index (0 = H0 .. 4 = H4) of this environment's next task.
    pub mean_harness: f64,
    /// Smallest scale this environment's next task can have.
    pub scale_lo: u32,
    /// Largest scale this environment's next task can have.
    pub scale_hi: u32,
    /// Expected scale of this environment's next task.
    pub mean_scale: f64,
    /// Outcomes reported for this environment.
    pub episodes: u64,
    /// Successes reported for this environment.
    pub successes: u64,
}

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
pub(crate) enum Located {
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
        if specs.is_empty() {
            return Err(CurriculumError::Envs(InvalidValue::new(
                "envs",
                "at least one environment",
                "none",
            )));
        }
        let mut index = HashMap::with_capacity(specs.len());
        let mut offsets = Vec::with_capacity(specs.len() + 1);
        offsets.push(0usize);
        for (i, e) in specs.iter().enumerate() {
            if e.scale.min > e.scale.max {
                return Err(CurriculumError::Envs(InvalidValue::new(
                    format!("envs[{i}] ({}).scale", e.id),
                    "min <= max",
                    format!("{}..={}", e.scale.min, e.scale.max),
                )));
            }
            if index.insert(e.id.clone(), i).is_some() {
                return Err(CurriculumError::Envs(InvalidValue::new(
                    format!("envs[{i}]"),
                    "distinct environment ids",
                    format!("a duplicate {:?}", e.id.as_str()),
                )));
            }
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

    pub(crate) fn locate(&self, task: &Task) -> Located {
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
        score: &[f64],
        success: &[f64],
        totals: &[EnvTotals],
    ) -> Vec<EnvSnapshot> {
        (0..self.envs.len())
            .map(|e| {
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
                EnvSnapshot {
                    env: self.envs[e].id.clone(),
                    probability: p_env,
                    score: score[e],
                    success: success[e],
                    harness,
                    mean_harness: mh,
                    scale_lo: lo.min(hi),
                    scale_hi: hi,
                    mean_scale: ms,
                    episodes: totals[e].episodes,
                    successes: totals[e].successes,
                }
            })
            .collect()
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

/// What all rivals keep besides their own state: the arms, the random stream, counters.
#[derive(Debug, Clone)]
pub(crate) struct Core {
    pub space: ArmSpace,
    pub config_hash: String,
    pub rng: Rng,
    pub samples: u64,
    pub updates: u64,
    pub unknown: u64,
    pub totals: Vec<EnvTotals>,
}

impl Core {
    pub fn new(space: ArmSpace, config_hash: String, seed: u64) -> Self {
        let n = space.envs().len();
        Self {
            space,
            config_hash,
            rng: Rng::seed_from_u64(seed),
            samples: 0,
            updates: 0,
            unknown: 0,
            totals: vec![EnvTotals::default(); n],
        }
    }

    /// Count `outcome` in the totals and say where it falls.
    pub fn record(&mut self, outcome: &EpisodeOutcome) -> Located {
        let at = self.space.locate(&outcome.task);
        match at {
            Located::Unknown => self.unknown = self.unknown.saturating_add(1),
            Located::OffArm(e) | Located::Arm(e, _) => {
                self.updates = self.updates.saturating_add(1);
                self.totals[e].episodes = self.totals[e].episodes.saturating_add(1);
                self.totals[e].successes = self.totals[e]
                    .successes
                    .saturating_add(outcome.success as u64);
            }
        }
        at
    }

    /// The state envelope around `body`.
    pub fn encode<C: Serialize, B: Serialize>(
        &self,
        kind: &str,
        config: &C,
        body: &B,
    ) -> serde_json::Value {
        #[derive(Serialize)]
        struct Out<'a, C, B> {
            schema_version: u32,
            sampler: &'a str,
            config_hash: &'a str,
            config: &'a C,
            envs: &'a [EnvRange],
            rng: &'a Rng,
            samples: u64,
            updates: u64,
            unknown: u64,
            totals: &'a [EnvTotals],
            body: &'a B,
        }
        serde_json::to_value(Out {
            schema_version: RIVAL_STATE_SCHEMA_VERSION,
            sampler: kind,
            config_hash: &self.config_hash,
            config,
            envs: self.space.envs(),
            rng: &self.rng,
            samples: self.samples,
            updates: self.updates,
            unknown: self.unknown,
            totals: &self.totals,
            body,
        })
        .unwrap_or(serde_json::Value::Null)
    }

    /// Check a state envelope against this sampler (kind, schema, config, environments) and
    /// return its body; [`Core::apply`] then takes the shared parts. Nothing changes here.
    pub fn decode<C, B>(
        &self,
        kind: &str,
        config: &C,
        v: &serde_json::Value,
    ) -> Result<Decoded<B>, String>
    where
        C: Serialize + DeserializeOwned,
        B: DeserializeOwned,
    {
        let found = v.get("schema_version");
        if found.and_then(|x| x.as_u64()) != Some(RIVAL_STATE_SCHEMA_VERSION as u64) {
            return Err(format!(
                "schema_version: expected {RIVAL_STATE_SCHEMA_VERSION}, found {}",
                found.map_or_else(|| "nothing".into(), |x| x.to_string())
            ));
        }
        let found = v.get("sampler").and_then(|x| x.as_str());
        if found != Some(kind) {
            return Err(format!(
                "sampler: expected {kind:?}, found {}: the state belongs to another sampler",
                found.map_or_else(|| "nothing".into(), |x| format!("{x:?}"))
            ));
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct In<C, B> {
            #[allow(dead_code)]
            schema_version: u32,
            #[allow(dead_code)]
            sampler: String,
            config_hash: String,
            config: C,
            envs: Vec<EnvRange>,
            rng: Rng,
            samples: u64,
            updates: u64,
            unknown: u64,
            totals: Vec<EnvTotals>,
            body: B,
        }
        let s: In<C, B> = serde_path_to_error::deserialize(v)
            .map_err(|e| format!("field `{}`: {}", e.path(), e.inner()))?;
        let saved_hash = config_hash(&s.config);
        if saved_hash != s.config_hash {
            return Err(format!(
                "config_hash: expected {saved_hash} (the hash of the saved config), found {}: the state was edited or is corrupt",
                s.config_hash
            ));
        }
        if s.config_hash != self.config_hash {
            return Err(format!(
                "it was saved under a different configuration (hash {} vs {}); differing fields (saved -> current): {}",
                s.config_hash,
                self.config_hash,
                config_diff(&s.config, config).join("; ")
            ));
        }
        let mine = self.space.envs();
        if s.envs.len() != mine.len() {
            return Err(format!(
                "envs: the state has {} environments, this sampler {}",
                s.envs.len(),
                mine.len()
            ));
        }
        for (k, (a, b)) in s.envs.iter().zip(mine).enumerate() {
            if a != b {
                return Err(format!(
                    "envs[{k}]: saved {} (scale {}..={}), current {} (scale {}..={})",
                    a.id, a.scale.min, a.scale.max, b.id, b.scale.min, b.scale.max
                ));
            }
        }
        if s.totals.len() != mine.len() {
            return Err(format!(
                "totals: expected {} entries (one per environment), found {}",
                mine.len(),
                s.totals.len()
            ));
        }
        if let Some((k, t)) = s
            .totals
            .iter()
            .enumerate()
            .find(|(_, t)| t.successes > t.episodes)
        {
            return Err(format!(
                "totals[{k}].successes: expected at most episodes ({}), found {}",
                t.episodes, t.successes
            ));
        }
        Ok(Decoded {
            rng: s.rng,
            samples: s.samples,
            updates: s.updates,
            unknown: s.unknown,
            totals: s.totals,
            body: s.body,
        })
    }

    /// Take the shared parts of a checked state; returns its body.
    pub fn apply<B>(&mut self, d: Decoded<B>) -> B {
        self.rng = d.rng;
        self.samples = d.samples;
        self.updates = d.updates;
        self.unknown = d.unknown;
        self.totals = d.totals;
        d.body
    }
}

/// A checked state envelope, not yet applied.
pub(crate) struct Decoded<B> {
    rng: Rng,
    samples: u64,
    updates: u64,
    unknown: u64,
    totals: Vec<EnvTotals>,
    pub body: B,
}

/// A stable 64-bit FNV-1a hash of a configuration's JSON, as 16 hex digits (the scheme of
/// [`crate::HdcConfig::hash_hex`]).
pub fn config_hash<T: Serialize>(config: &T) -> String {
    let bytes = serde_json::to_vec(config).unwrap_or_default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The top-level fields whose values differ, as `field: a -> b` lines.
pub fn config_diff<T: Serialize>(a: &T, b: &T) -> Vec<String> {
    // Through text, not `to_value`: a value tree widens f32 fields to f64 (0.3 would read
    // 0.30000001192092896), the text keeps their shortest form.
    let tree = |x: &T| {
        serde_json::to_string(x).and_then(|t| serde_json::from_str::<serde_json::Value>(&t))
    };
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) = (tree(a), tree(b))
    else {
        return vec!["(configurations could not be compared)".into()];
    };
    a.iter()
        .filter_map(|(k, va)| {
            let vb = b.get(k).unwrap_or(&serde_json::Value::Null);
            (va != vb).then(|| format!("{k}: {va} -> {vb}"))
        })
        .collect()
}

pub(crate) fn bad(field: &str, expected: &str, found: impl fmt::Display) -> CurriculumError {
    CurriculumError::Config(InvalidValue::new(field, expected, found.to_string()))
}

/// `value` in the open/closed unit interval checks used by every config.
pub(crate) fn check_rate(field: &str, v: f32, lo_open: bool) -> Result<(), CurriculumError> {
    let ok = v.is_finite() && v <= 1.0 && if lo_open { v > 0.0 } else { v >= 0.0 };
    if ok {
        Ok(())
    } else if lo_open {
        Err(bad(field, "a value in (0, 1]", v))
    } else {
        Err(bad(field, "a value in [0, 1]", v))
    }
}

/// Harness levels of a config: non-empty and strictly increasing (H0 before H4), so that a
/// list names each level once and ladders read from the strongest harness to the weakest.
pub(crate) fn check_levels(field: &str, levels: &[HarnessLevel]) -> Result<(), CurriculumError> {
    if levels.is_empty() {
        return Err(bad(field, "at least one harness level", "[]"));
    }
    if levels.windows(2).any(|w| w[0] >= w[1]) {
        let list: Vec<String> = levels.iter().map(|l| l.to_string()).collect();
        return Err(bad(
            field,
            "strictly increasing levels (e.g. [\"H0\", \"H4\"])",
            format!("[{}]", list.join(", ")),
        ));
    }
    Ok(())
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
