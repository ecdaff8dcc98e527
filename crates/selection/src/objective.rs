//! The AES terms behind one small trait, with their reference (from-scratch) semantics.
//!
//! The optimizers do not call these: they keep incremental per-candidate state for speed
//! (see `greedy`). These definitions are what that state must reproduce, and the tests check
//! that it does; [`evaluate_ranking`] scores any ranking with them.

use serde::{Deserialize, Serialize};

use crate::config::{Aggregation, CheckedSelectConfig};
use crate::error::SelectError;
use crate::problem::Problem;

/// One term of the AES score: its unweighted marginal value for adding `candidate` after
/// `chosen`. Rewards are positive values, penalties are positive values the objective
/// subtracts.
pub trait Term {
    /// The value of adding `candidate` to `chosen` (in pick order; `candidate` not in it).
    fn marginal(&self, problem: &Problem, chosen: &[usize], candidate: usize) -> f32;
}

fn covered_by(problem: &Problem, chosen: &[usize]) -> Vec<bool> {
    let mut covered = vec![false; problem.n_abilities()];
    for &s in chosen {
        for &a in problem.env_abilities(s) {
            covered[a as usize] = true;
        }
    }
    covered
}

/// NewCoverage: the weight of the candidate's abilities no chosen environment covers yet.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCoverage {
    /// Weight per ability.
    pub ability_weights: Vec<f32>,
}

impl Term for NewCoverage {
    fn marginal(&self, problem: &Problem, chosen: &[usize], candidate: usize) -> f32 {
        let covered = covered_by(problem, chosen);
        problem
            .env_abilities(candidate)
            .iter()
            .filter(|a| !covered[**a as usize])
            .map(|a| self.ability_weights[*a as usize])
            .sum()
    }
}

/// Redundancy: the weight of the candidate's abilities the chosen set already covers (what
/// it repeats). In the same units as NewCoverage, so the two add up to the candidate's total.
#[derive(Debug, Clone, PartialEq)]
pub struct Redundancy {
    /// Weight per ability.
    pub ability_weights: Vec<f32>,
}

impl Term for Redundancy {
    fn marginal(&self, problem: &Problem, chosen: &[usize], candidate: usize) -> f32 {
        let covered = covered_by(problem, chosen);
        problem
            .env_abilities(candidate)
            .iter()
            .filter(|a| covered[**a as usize])
            .map(|a| self.ability_weights[*a as usize])
            .sum()
    }
}

/// Conflict: pairwise penalty `−cos(g_candidate, g_chosen)` (optionally clamped at zero),
/// aggregated over the chosen set; zero for an empty set or without gradients.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conflict {
    /// How pairwise penalties aggregate.
    pub aggregation: Aggregation,
    /// Clamp each pairwise penalty at zero.
    pub clamp: bool,
}

impl Term for Conflict {
    fn marginal(&self, problem: &Problem, chosen: &[usize], candidate: usize) -> f32 {
        let Some(g) = problem.gradients() else {
            return 0.0;
        };
        if chosen.is_empty() {
            return 0.0;
        }
        let pens = chosen.iter().map(|&s| {
            let p = -g.cosine(candidate, s);
            if self.clamp { p.max(0.0) } else { p }
        });
        match self.aggregation {
            Aggregation::Max => pens.fold(f32::NEG_INFINITY, f32::max),
            Aggregation::Sum => pens.sum(),
            Aggregation::Mean => pens.sum::<f32>() / chosen.len() as f32,
        }
    }
}

/// Why an environment entered the selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PickReason {
    /// The optimizer chose it.
    Greedy,
    /// It was in `must_include`.
    MustInclude,
    /// Forced by the full-coverage constraint (the greedy set-cover pick, budget was tight).
    CoverageConstraint,
    /// Placed by a baseline (all, random) rather than by the objective.
    Baseline,
}

/// One step of a selection: the pick, its gain and each term's signed share of that gain.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepTrace {
    /// Environment index.
    pub env: usize,
    /// Marginal gain = coverage + redundancy + conflict (the shares below).
    pub gain: f32,
    /// NewCoverage share (weighted, ≥ 0).
    pub coverage: f32,
    /// Redundancy share (weighted, ≤ 0).
    pub redundancy: f32,
    /// Conflict share (weighted; ≤ 0 when clamped).
    pub conflict: f32,
    /// Why it was picked.
    pub reason: PickReason,
}

/// Score `ranking` step by step from scratch with the reference term definitions (cost
/// O(k² · dim)); the optimizers' traces must agree with it. `checked` must come from
/// validating against this `problem`; indices must be in range and distinct.
pub fn evaluate_ranking(
    problem: &Problem,
    checked: &CheckedSelectConfig,
    ranking: &[usize],
) -> Result<Vec<StepTrace>, SelectError> {
    checked.check_made_for(problem)?;
    let mut seen = vec![false; problem.n_envs()];
    for (i, &e) in ranking.iter().enumerate() {
        if e >= problem.n_envs() || std::mem::replace(&mut seen[e], true) {
            return Err(SelectError::invalid(
                "ranking",
                format!("[{i}]"),
                format!("distinct environment indices below {}", problem.n_envs()),
                e.to_string(),
            ));
        }
    }
    let cov = NewCoverage {
        ability_weights: checked.ability_weights.clone(),
    };
    let red = Redundancy {
        ability_weights: checked.ability_weights.clone(),
    };
    let con = Conflict {
        aggregation: checked.config.aggregation,
        clamp: checked.config.clamp_conflict,
    };
    Ok(ranking
        .iter()
        .enumerate()
        .map(|(t, &e)| {
            let chosen = &ranking[..t];
            let c = if checked.w_coverage != 0.0 {
                checked.w_coverage * cov.marginal(problem, chosen, e)
            } else {
                0.0
            };
            let r = if checked.w_redundancy != 0.0 {
                -(checked.w_redundancy * red.marginal(problem, chosen, e))
            } else {
                0.0
            };
            let x = if checked.w_conflict != 0.0 {
                -(checked.w_conflict * con.marginal(problem, chosen, e))
            } else {
                0.0
            };
            StepTrace {
                env: e,
                gain: c + r + x,
                coverage: c,
                redundancy: r,
                conflict: x,
                reason: PickReason::Greedy,
            }
        })
        .collect())
}
