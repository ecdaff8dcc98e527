//! Selection configuration: serde, documented defaults, validated once against a problem.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use envdist_core::{EnvId, InvalidValue};

use crate::error::SelectError;
use crate::problem::Problem;

/// Weights of the three AES terms: `score = coverage·NewCoverage − redundancy·Redundancy −
/// conflict·Conflict`. The paper publishes no weights; these defaults are ours.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Weights {
    /// Weight of NewCoverage. Default 1.0 (units: newly covered abilities).
    pub coverage: f32,
    /// Weight of Redundancy. Default 0.25: repeating four covered abilities costs as much as
    /// covering one new one, so a big environment that adds new abilities still beats a
    /// tiny one that adds fewer.
    pub redundancy: f32,
    /// Weight of Conflict. Default 2.0: a fully opposed gradient (cosine −1) costs as much as
    /// two newly covered abilities, enough to override late, small coverage gains (where the
    /// paper says the term matters) without overriding the first broad picks.
    pub conflict: f32,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            coverage: 1.0,
            redundancy: 0.25,
            conflict: 2.0,
        }
    }
}

impl Weights {
    /// These weights with the terms `spec` names set: `name=value` parts separated by commas,
    /// any subset in any order (`conflict=1,redundancy=0.5`), as a command line gives them.
    /// A part that is not `name=value`, an unknown name or a value that is not a number is
    /// refused with the field it names.
    pub fn with_overrides(mut self, spec: &str) -> Result<Self, InvalidValue> {
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| InvalidValue::new("weights", "name=value", format!("{part:?}")))?;
            let weight = match name {
                "coverage" => &mut self.coverage,
                "redundancy" => &mut self.redundancy,
                "conflict" => &mut self.conflict,
                _ => {
                    return Err(InvalidValue::new(
                        "weights",
                        "a term: coverage, redundancy or conflict",
                        format!("{name:?}"),
                    ));
                }
            };
            *weight = value.parse().map_err(|_| {
                InvalidValue::new(format!("weights.{name}"), "a number", format!("{value:?}"))
            })?;
        }
        Ok(self)
    }
}

impl std::str::FromStr for Weights {
    type Err = InvalidValue;

    /// The default weights with the terms `spec` names set (see [`Weights::with_overrides`]).
    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        Weights::default().with_overrides(spec)
    }
}

/// Which terms are on (the paper's ablations switch one off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Terms {
    /// NewCoverage on (default true).
    pub coverage: bool,
    /// Redundancy on (default true).
    pub redundancy: bool,
    /// Conflict on (default true; needs gradients).
    pub conflict: bool,
}

impl Default for Terms {
    fn default() -> Self {
        Self {
            coverage: true,
            redundancy: true,
            conflict: true,
        }
    }
}

/// How much each ability is worth to NewCoverage and Redundancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum AbilityWeighting {
    /// Every ability counts 1 (default; plain max coverage).
    #[default]
    Uniform,
    /// An ability counts its share of the pool's total count mass, scaled so that the mean
    /// weight over covered abilities is 1: frequently exercised abilities count more.
    Frequency,
    /// An ability counts `1 + ln((1 + N) / (1 + envs covering it))`: rare abilities count more.
    Rarity,
}

/// How the pairwise conflict penalties of a candidate against the chosen set aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Aggregation {
    /// The worst conflict with any chosen environment (default). With clamping it can only
    /// grow as the set grows, so gains never increase and lazy greedy is exact.
    #[default]
    Max,
    /// The mean over the chosen set. A new pick with a small penalty lowers the mean, so a
    /// candidate's gain can increase: lazy greedy falls back to naive.
    Mean,
    /// The sum over the chosen set. Clamped, it only grows (lazy exact); unclamped, a
    /// positive similarity lowers it (lazy falls back to naive).
    Sum,
}

/// The optimizer: one of the greedy ones, or the exact search for small pools.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Optimizer {
    /// Evaluate every candidate at every step (parallel over candidates).
    Naive,
    /// Priority queue of stale upper bounds (default). Returns exactly the naive selection
    /// when gains cannot increase; otherwise it runs naive and says so in the output.
    #[default]
    Lazy,
    /// Stochastic greedy (Mirzasoleiman et al. 2015): each step evaluates a random sample of
    /// `ceil(n / k · ln(1 / epsilon))` candidates.
    Stochastic {
        /// Approximation slack in (0, 1); smaller means larger samples.
        epsilon: f32,
        /// Seed of the sampling stream.
        seed: u64,
    },
    /// The optimum itself, by branch and bound ([`solve_exact`](crate::solve_exact)), for
    /// pools of at most [`EXACT_MAX_ENVS`] environments. A search
    /// stopped at a limit returns the best selection found and says so in the notes (method
    /// `aes/exact`, not proven optimal).
    Exact {
        /// Nodes (partial selections) to visit at most. Default 2,000,000 (see
        /// [`ExactLimits`]).
        #[serde(default = "default_exact_max_nodes")]
        max_nodes: u64,
        /// Wall-clock limit in seconds. Default 10.
        #[serde(default = "default_exact_max_seconds")]
        max_seconds: f64,
    },
}

fn default_exact_max_nodes() -> u64 {
    ExactLimits::default().max_nodes
}

fn default_exact_max_seconds() -> f64 {
    ExactLimits::default().max_time.as_secs_f64()
}

impl Optimizer {
    /// [`Optimizer::Exact`] with the default limits.
    pub fn exact() -> Self {
        Self::Exact {
            max_nodes: default_exact_max_nodes(),
            max_seconds: default_exact_max_seconds(),
        }
    }
}

/// How ties between equally scoring environments are broken. The optimizers always prefer the
/// lowest environment index; a seeded tie-break runs them on the environments in a seeded
/// random order instead, so ties go to a random environment rather than to the first in pool
/// order (alphabetical for a suite), and maps the picks back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// The lowest environment index (default).
    #[default]
    LowestIndex,
    /// A seeded random order of the environments.
    Seeded(u64),
}

/// Everything a selection run needs besides the problem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelectConfig {
    /// Budget: environments to select. Default 30 (the paper picks 30 of 200).
    pub k: usize,
    /// Term weights.
    pub weights: Weights,
    /// Which terms are on.
    pub terms: Terms,
    /// Ability weights for NewCoverage and Redundancy. Default uniform.
    pub ability_weighting: AbilityWeighting,
    /// Aggregation of pairwise conflict penalties over the chosen set. Default max.
    pub aggregation: Aggregation,
    /// Clamp the pairwise penalty `−cos` at zero, so aligned gradients never earn a bonus.
    /// Default true.
    pub clamp_conflict: bool,
    /// Optimizer. Default lazy.
    pub optimizer: Optimizer,
    /// Hard constraint: the selection covers every ability some allowed environment covers.
    /// While abilities remain uncovered only candidates that add coverage are eligible, and
    /// when the budget gets tight the greedy set-cover pick is forced. Default false.
    pub require_full_coverage: bool,
    /// Environments that are always selected (first, in pool order).
    pub must_include: Vec<EnvId>,
    /// Environments that are never selected.
    pub must_exclude: Vec<EnvId>,
    /// Attach an optimality [`Certificate`](crate::Certificate) to the selection. Default
    /// true; it costs one replay of the ranking (see [`certificate`](crate::certificate)), so
    /// switch it off only to time the optimizer alone.
    pub certify: bool,
    /// How ties are broken. Default [`TieBreak::LowestIndex`].
    pub tie_break: TieBreak,
    /// Never select an environment whose gradient is exactly zero (the model never solved it
    /// in any sampled episode, so the conflict term cannot see it). Needs gradients. Default
    /// false (the paper's objective sees such an environment as conflict-free).
    pub exclude_zero_gradient: bool,
    /// When the constraints make the selection infeasible, relax them in order instead of
    /// failing: first give up `exclude_zero_gradient`, then `require_full_coverage`, then
    /// both; [`Selection::relaxation`](crate::Selection::relaxation) says what was given up.
    /// Default false.
    pub relax: bool,
}

impl Default for SelectConfig {
    fn default() -> Self {
        Self {
            k: 30,
            weights: Weights::default(),
            terms: Terms::default(),
            ability_weighting: AbilityWeighting::default(),
            aggregation: Aggregation::default(),
            clamp_conflict: true,
            optimizer: Optimizer::default(),
            require_full_coverage: false,
            must_include: Vec::new(),
            must_exclude: Vec::new(),
            certify: true,
            tie_break: TieBreak::LowestIndex,
            exclude_zero_gradient: false,
            relax: false,
        }
    }
}

impl SelectConfig {
    /// The default AES objective with budget `k`.
    pub fn aes(k: usize) -> Self {
        Self {
            k,
            ..Self::default()
        }
    }

    /// Baseline: NewCoverage only (plain greedy max coverage).
    pub fn coverage_only(mut self) -> Self {
        self.terms = Terms {
            coverage: true,
            redundancy: false,
            conflict: false,
        };
        self
    }

    /// Ablation: the conflict term off.
    pub fn without_conflict(mut self) -> Self {
        self.terms.conflict = false;
        self
    }

    /// Ablation: the redundancy term off.
    pub fn without_redundancy(mut self) -> Self {
        self.terms.redundancy = false;
        self
    }

    /// Whether a candidate's marginal gain can never increase as the chosen set grows. True
    /// for NewCoverage and Redundancy always, and for Conflict when it is off or clamped with
    /// max or sum aggregation. When true, lazy greedy is exact.
    pub fn gains_non_increasing(&self) -> bool {
        !self.conflict_active()
            || (self.clamp_conflict
                && matches!(self.aggregation, Aggregation::Max | Aggregation::Sum))
    }

    pub(crate) fn conflict_active(&self) -> bool {
        self.terms.conflict && self.weights.conflict != 0.0
    }

    /// The checks that need no problem (weights, budget, optimizer): what a configuration
    /// file can be refused for before any pool exists. [`SelectConfig::validate`] runs them
    /// first.
    pub fn validate_fields(&self) -> Result<(), InvalidValue> {
        for (name, w) in [
            ("weights.coverage", self.weights.coverage),
            ("weights.redundancy", self.weights.redundancy),
            ("weights.conflict", self.weights.conflict),
        ] {
            if !w.is_finite() || w < 0.0 {
                return Err(InvalidValue::new(name, "a finite non-negative weight", w));
            }
        }
        if self.k == 0 {
            return Err(InvalidValue::new("k", "at least 1", 0));
        }
        if let Optimizer::Stochastic { epsilon, .. } = self.optimizer
            && !(epsilon > 0.0 && epsilon < 1.0)
        {
            return Err(InvalidValue::new(
                "optimizer.epsilon",
                "a value in (0, 1), both ends excluded",
                epsilon,
            ));
        }
        if let Optimizer::Exact {
            max_nodes,
            max_seconds,
        } = self.optimizer
        {
            if max_nodes == 0 {
                return Err(InvalidValue::new(
                    "optimizer.max_nodes",
                    "at least 1",
                    max_nodes,
                ));
            }
            // Duration::from_secs_f64 panics on a negative, NaN or huge value.
            if !(max_seconds > 0.0 && max_seconds <= 1e9) {
                return Err(InvalidValue::new(
                    "optimizer.max_seconds",
                    "a number of seconds above 0, at most 1e9",
                    max_seconds,
                ));
            }
        }
        Ok(())
    }

    /// Check the config against a problem once; optimizers only ever see checked configs.
    pub fn validate(&self, problem: &Problem) -> Result<CheckedSelectConfig, SelectError> {
        let bad = |field: &str, expected: &str, found: String| {
            SelectError::invalid("config", field, expected, found)
        };
        let n = problem.n_envs();
        self.validate_fields()
            .map_err(|v| SelectError::invalid("config", v.field, v.expected, v.found))?;
        if matches!(self.optimizer, Optimizer::Exact { .. }) && n > EXACT_MAX_ENVS {
            return Err(bad(
                "optimizer",
                &format!(
                    "a greedy optimizer for a pool of more than {} environments (the exact search is for small pools)",
                    EXACT_MAX_ENVS
                ),
                format!("exact, on {n} environments"),
            ));
        }
        if self.k > n {
            return Err(bad(
                "k",
                &format!("a number of environments from 1 to {n} (the pool has {n})"),
                self.k.to_string(),
            ));
        }
        if self.conflict_active() && problem.gradients().is_none() {
            return Err(bad(
                "terms.conflict",
                "gradients for the conflict term (attach them, or switch the term off)",
                "a problem without gradients".into(),
            ));
        }
        let resolve = |field: &str, ids: &[EnvId]| -> Result<Vec<usize>, SelectError> {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let index: std::collections::HashMap<&EnvId, usize> = problem
                .env_ids()
                .iter()
                .enumerate()
                .map(|(i, e)| (e, i))
                .collect();
            let mut out = ids
                .iter()
                .map(|id| {
                    index.get(id).copied().ok_or_else(|| {
                        bad(field, "environment ids of the pool", format!("{:?}", id.0))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            out.sort_unstable();
            out.dedup();
            Ok(out)
        };
        let include = resolve("must_include", &self.must_include)?;
        let mut exclude_list = resolve("must_exclude", &self.must_exclude)?;
        if self.exclude_zero_gradient {
            let Some(g) = problem.gradients() else {
                return Err(bad(
                    "exclude_zero_gradient",
                    "gradients to find the zero rows in (attach them, or switch it off)",
                    "a problem without gradients".into(),
                ));
            };
            exclude_list.extend((0..n).filter(|&e| g.is_zero_row(e)));
            exclude_list.sort_unstable();
            exclude_list.dedup();
        }
        let mut excluded = vec![false; n];
        for &e in &exclude_list {
            excluded[e] = true;
        }
        if let Some(&both) = include.iter().find(|e| excluded[**e]) {
            return Err(bad(
                "must_include",
                "ids not also in must_exclude",
                format!("{:?}", problem.env_ids()[both].0),
            ));
        }
        if include.len() > self.k {
            return Err(bad(
                "must_include",
                &format!("at most k = {} environments", self.k),
                include.len().to_string(),
            ));
        }
        if n - exclude_list.len() < self.k {
            return Err(bad(
                "k",
                &format!(
                    "at most the {} environments left after must_exclude",
                    n - exclude_list.len()
                ),
                self.k.to_string(),
            ));
        }
        let ability_weights = ability_weights(problem, self.ability_weighting);
        let on = |flag: bool, w: f32| if flag { w } else { 0.0 };
        Ok(CheckedSelectConfig {
            config: self.clone(),
            n_envs: n,
            include,
            excluded,
            ability_weights,
            w_coverage: on(self.terms.coverage, self.weights.coverage),
            w_redundancy: on(self.terms.redundancy, self.weights.redundancy),
            w_conflict: on(self.terms.conflict, self.weights.conflict),
        })
    }
}

fn ability_weights(problem: &Problem, weighting: AbilityWeighting) -> Vec<f32> {
    if weighting == AbilityWeighting::Uniform {
        return vec![1.0; problem.n_abilities()];
    }
    let (envs, mass) = problem.ability_totals();
    match weighting {
        AbilityWeighting::Uniform => vec![1.0; problem.n_abilities()],
        AbilityWeighting::Frequency => {
            let present: Vec<f64> = mass.iter().copied().filter(|m| *m > 0.0).collect();
            let mean = present.iter().sum::<f64>() / present.len().max(1) as f64;
            mass.iter()
                .map(|m| if mean > 0.0 { (m / mean) as f32 } else { 0.0 })
                .collect()
        }
        AbilityWeighting::Rarity => {
            let n = problem.n_envs() as f64;
            envs.iter()
                .map(|c| (1.0 + ((1.0 + n) / (1.0 + f64::from(*c))).ln()) as f32)
                .collect()
        }
    }
}

/// A config checked against one problem: ids resolved to indices, term weights with
/// switched-off terms at zero, ability weights computed. Only [`SelectConfig::validate`]
/// makes one, so optimizers never see unchecked input.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedSelectConfig {
    pub(crate) config: SelectConfig,
    pub(crate) n_envs: usize,
    pub(crate) include: Vec<usize>,
    pub(crate) excluded: Vec<bool>,
    pub(crate) ability_weights: Vec<f32>,
    pub(crate) w_coverage: f32,
    pub(crate) w_redundancy: f32,
    pub(crate) w_conflict: f32,
}

impl CheckedSelectConfig {
    /// The config as given.
    pub fn config(&self) -> &SelectConfig {
        &self.config
    }

    /// Each ability's weight for NewCoverage and Redundancy.
    pub fn ability_weights(&self) -> &[f32] {
        &self.ability_weights
    }

    /// Effective (coverage, redundancy, conflict) weights, zero for switched-off terms.
    pub fn effective_weights(&self) -> (f32, f32, f32) {
        (self.w_coverage, self.w_redundancy, self.w_conflict)
    }

    /// Refuses a config validated against another problem (its env and ability counts
    /// differ), before its indices and weights are used on this one.
    pub(crate) fn check_made_for(&self, problem: &Problem) -> Result<(), SelectError> {
        if self.n_envs != problem.n_envs() || self.ability_weights.len() != problem.n_abilities() {
            return Err(SelectError::invalid(
                "config",
                "checked",
                "a config validated against this problem",
                "one validated against another",
            ));
        }
        Ok(())
    }
}

/// The largest pool the exact solver takes (its sets are fixed 256-bit masks, cheap to copy
/// and hash).
pub const EXACT_MAX_ENVS: usize = 256;

/// When the search gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExactLimits {
    /// Nodes (partial selections) to visit at most. Default 2,000,000. Order-dependent
    /// objectives (max, mean conflict) keep one map entry per visited set, about 60 bytes each,
    /// so this also bounds memory (~120 MB at the default).
    pub max_nodes: u64,
    /// Wall-clock limit. Default 10 s.
    pub max_time: Duration,
}

impl Default for ExactLimits {
    fn default() -> Self {
        Self {
            max_nodes: 2_000_000,
            max_time: Duration::from_secs(10),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_unknown_fields_are_refused() {
        let c = SelectConfig::default();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<SelectConfig>(&json).unwrap(), c);
        let partial: SelectConfig = serde_json::from_str(
            r#"{"k": 5, "optimizer": {"kind": "stochastic", "epsilon": 0.1, "seed": 3}}"#,
        )
        .unwrap();
        assert_eq!(partial.k, 5);
        assert_eq!(partial.weights, Weights::default());
        assert!(serde_json::from_str::<SelectConfig>(r#"{"kk": 5}"#).is_err());
    }

    #[test]
    fn weights_parse_from_a_flag_and_name_what_is_wrong() {
        let w: Weights = "conflict=1, redundancy=0.5".parse().unwrap();
        assert_eq!((w.coverage, w.redundancy, w.conflict), (1.0, 0.5, 1.0));
        let base = Weights {
            coverage: 3.0,
            ..Weights::default()
        };
        let w = base.with_overrides("conflict=0").unwrap();
        assert_eq!((w.coverage, w.conflict), (3.0, 0.0));
        assert_eq!("".parse::<Weights>().unwrap(), Weights::default());
        let e = "conflict".parse::<Weights>().unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.expected.as_str()),
            ("weights", "name=value")
        );
        let e = "bogus=1".parse::<Weights>().unwrap_err();
        assert!(
            e.expected.contains("redundancy") && e.found == "\"bogus\"",
            "{e}"
        );
        let e = "conflict=x".parse::<Weights>().unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.found.as_str()),
            ("weights.conflict", "\"x\"")
        );
    }

    #[test]
    fn monotonicity_classification() {
        let mut c = SelectConfig::default();
        assert!(c.gains_non_increasing());
        c.aggregation = Aggregation::Mean;
        assert!(!c.gains_non_increasing());
        c.aggregation = Aggregation::Sum;
        assert!(c.gains_non_increasing());
        c.clamp_conflict = false;
        assert!(!c.gains_non_increasing());
        assert!(c.without_conflict().gains_non_increasing());
    }
}
