//! The optimizers: naive, lazy and stochastic greedy over one incremental engine.
//!
//! Every candidate keeps a small cache: how many picks its conflict accumulator has seen and
//! the accumulated (max or sum of) penalties. Evaluating a candidate folds in only the picks
//! made since its last evaluation, `O(dim)` each, and recounts its handful of abilities
//! against the covered flags. Naive greedy refreshes every candidate each step (in parallel);
//! lazy greedy refreshes only those whose stale bound reaches the top of a priority queue.
//! Both call the same evaluation with the same fold order, so their gains are bit-identical,
//! and ties always go to the lowest environment index.
//!
//! This file holds the entry points ([`select`], [`select_checked`]) and the [`Selection`]
//! they return; `engine` holds the incremental evaluation shared with the baselines, and
//! `optimizers` the greedy loop with its naive, lazy and stochastic choices.

mod engine;
mod optimizers;

use std::path::Path;

use serde::{Deserialize, Serialize};

use envdist_core::{EnvId, FileError, Rng};

use crate::certificate::{Certificate, TrackedBound, certify};
use crate::config::{Aggregation, CheckedSelectConfig, Optimizer, SelectConfig, TieBreak};
use crate::error::SelectError;
use crate::objective::StepTrace;
use crate::problem::Problem;

pub(crate) use engine::Engine;
use engine::coverable_mask;
use optimizers::{Mode, RunError, run};

/// Schema version of selection files.
pub const SELECTION_SCHEMA_VERSION: u32 = 1;

/// The result of a selection run (serialisable; written with a `schema_version`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Always [`SELECTION_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// What produced it: `aes/lazy`, `aes/naive`, `aes/stochastic`, `baseline/random`, ...
    pub method: String,
    /// The config it ran with.
    pub config: SelectConfig,
    /// Selected environment indices, in pick order.
    pub ranking: Vec<usize>,
    /// Selected environment ids, in pick order.
    pub env_ids: Vec<EnvId>,
    /// Per step: the pick, its gain and each term's share.
    pub steps: Vec<StepTrace>,
    /// Sum of the step gains: the objective of the selected sequence.
    pub objective: f32,
    /// Abilities the selection covers.
    pub covered: usize,
    /// Abilities some allowed (not excluded) environment covers.
    pub coverable: usize,
    /// Abilities in the problem.
    pub abilities: usize,
    /// Names of the abilities the selection leaves uncovered.
    pub uncovered: Vec<String>,
    /// Whether marginal gains can never increase under this objective (diminishing returns;
    /// lazy greedy is exact then).
    pub gains_non_increasing: bool,
    /// Whether the lazy optimizer was asked for but naive greedy ran instead.
    pub lazy_fell_back: bool,
    /// Candidate evaluations performed (a measure of work).
    pub evaluations: u64,
    /// Anything a reader should know about this run.
    pub notes: Vec<String>,
    /// How far the selection can be from the best one (an upper bound on the optimum, where
    /// one is valid). `None` when the config switched it off, or in files written before
    /// certificates existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<Certificate>,
    /// What a config with `relax` gave up to make the selection feasible (`None`: nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relaxation: Option<Relaxation>,
}

/// What [`select`] gave up, under [`SelectConfig::relax`], to make an infeasible selection
/// feasible; `reason` is why the stricter selection failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "gave_up", rename_all = "snake_case")]
pub enum Relaxation {
    /// The zero-gradient environments were kept.
    ZeroGradientKept {
        /// How many environments the exclusion had left out.
        excluded: usize,
        /// Why the stricter selection failed.
        reason: String,
    },
    /// Full ability coverage was not enforced (the exclusion held).
    FullCoverage {
        /// Why the stricter selection failed.
        reason: String,
    },
    /// Neither full coverage nor the zero-gradient exclusion.
    Both {
        /// Why the stricter selection failed.
        reason: String,
    },
}

impl std::fmt::Display for Relaxation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let partial = "full ability coverage was not enforced: it is out of reach within k";
        match self {
            Relaxation::ZeroGradientKept { excluded, reason } => write!(
                f,
                "the {excluded} zero-gradient environments were kept: excluding them made the \
                 selection infeasible ({reason})"
            ),
            Relaxation::FullCoverage { reason } => write!(f, "{partial} ({reason})"),
            Relaxation::Both { reason } => write!(
                f,
                "{partial} ({reason}); the zero-gradient environments were kept"
            ),
        }
    }
}

/// The stream [`TieBreak::Seeded`] shuffles the environments with.
const TIE_BREAK_STREAM: u64 = 0x5449_4542;

/// Run `f` on the environments in `tie_break`'s order and map its picks back to `problem`'s
/// indices.
pub(crate) fn in_tie_order(
    problem: &Problem,
    tie_break: TieBreak,
    f: impl FnOnce(&Problem) -> Result<Selection, SelectError>,
) -> Result<Selection, SelectError> {
    let TieBreak::Seeded(seed) = tie_break else {
        return f(problem);
    };
    let mut order: Vec<usize> = (0..problem.n_envs()).collect();
    Rng::derive(seed, TIE_BREAK_STREAM).shuffle(&mut order);
    let mut s = f(&problem.permuted(&order))?;
    for r in &mut s.ranking {
        *r = order[*r];
    }
    for step in &mut s.steps {
        step.env = order[step.env];
    }
    Ok(s)
}

/// Each AES term's part of a selection's objective: its shares summed over the steps (the
/// three add up to the objective).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TermTotals {
    /// NewCoverage (weighted, ≥ 0).
    pub coverage: f64,
    /// Redundancy (weighted, ≤ 0).
    pub redundancy: f64,
    /// Conflict (weighted; ≤ 0 when clamped).
    pub conflict: f64,
}

impl Selection {
    /// The per-step gains.
    pub fn gains(&self) -> Vec<f32> {
        self.steps.iter().map(|s| s.gain).collect()
    }

    /// Each term's shares summed over the steps.
    pub fn term_totals(&self) -> TermTotals {
        let total = |f: fn(&StepTrace) -> f32| self.steps.iter().map(|s| f64::from(f(s))).sum();
        TermTotals {
            coverage: total(|s| s.coverage),
            redundancy: total(|s| s.redundancy),
            conflict: total(|s| s.conflict),
        }
    }

    /// The share of environments two selections have in common, whatever their pick order:
    /// `|A ∩ B| / max(|A|, |B|)` (`|A ∩ B| / k` for two selections of `k`); 1 when both are
    /// empty.
    pub fn overlap(&self, other: &Selection) -> f32 {
        let mine: std::collections::HashSet<&EnvId> = self.env_ids.iter().collect();
        let theirs: std::collections::HashSet<&EnvId> = other.env_ids.iter().collect();
        let size = mine.len().max(theirs.len());
        if size == 0 {
            return 1.0;
        }
        mine.intersection(&theirs).count() as f32 / size as f32
    }

    /// Write atomically as JSON.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), FileError> {
        envdist_core::io::write_json_atomic(path, self)
    }

    /// Read a selection file (checks the schema version).
    pub fn read(path: impl AsRef<Path>) -> Result<Self, FileError> {
        envdist_core::io::read_json(path, Some(SELECTION_SCHEMA_VERSION))
    }
}

/// Select environments: validate `config` against `problem` once, then run its optimizer (in
/// the config's tie-break order; relaxing infeasible constraints when it says `relax`).
pub fn select(problem: &Problem, config: &SelectConfig) -> Result<Selection, SelectError> {
    if !config.relax {
        return select_checked(problem, &config.validate(problem)?);
    }
    let first = match config
        .validate(problem)
        .and_then(|checked| select_checked(problem, &checked))
    {
        Ok(s) => return Ok(s),
        Err(e) => e.to_string(),
    };
    let attempt = |exclude_zero_gradient: bool, require_full_coverage: bool| {
        let c = SelectConfig {
            exclude_zero_gradient,
            require_full_coverage,
            relax: false,
            ..config.clone()
        };
        select_checked(problem, &c.validate(problem)?)
    };
    let excluded = match (config.exclude_zero_gradient, problem.gradients()) {
        (true, Some(g)) => (0..problem.n_envs()).filter(|&e| g.is_zero_row(e)).count(),
        _ => 0,
    };
    let relaxed = |mut s: Selection, r: Relaxation| {
        s.relaxation = Some(r);
        s
    };
    if excluded > 0
        && let Ok(s) = attempt(false, config.require_full_coverage)
    {
        let r = Relaxation::ZeroGradientKept {
            excluded,
            reason: first,
        };
        return Ok(relaxed(s, r));
    }
    if let Ok(s) = attempt(config.exclude_zero_gradient, false) {
        return Ok(relaxed(s, Relaxation::FullCoverage { reason: first }));
    }
    let s = attempt(false, false)?;
    Ok(relaxed(s, Relaxation::Both { reason: first }))
}

/// [`select`] for an already checked config (no relaxation: the config was checked as it is).
pub fn select_checked(
    problem: &Problem,
    checked: &CheckedSelectConfig,
) -> Result<Selection, SelectError> {
    match checked.config.tie_break {
        TieBreak::LowestIndex => run_checked(problem, checked),
        seeded => in_tie_order(problem, seeded, |shuffled| {
            run_checked(shuffled, &checked.config.validate(shuffled)?)
        }),
    }
}

fn run_checked(problem: &Problem, checked: &CheckedSelectConfig) -> Result<Selection, SelectError> {
    checked.check_made_for(problem)?;
    let cfg = &checked.config;
    if let Optimizer::Exact {
        max_nodes,
        max_seconds,
    } = cfg.optimizer
    {
        let limits = crate::ExactLimits {
            max_nodes,
            max_time: std::time::Duration::from_secs_f64(max_seconds),
        };
        return run_exact(problem, checked, &limits);
    }
    let mut notes = Vec::new();
    let mut fell_back = false;
    let monotone = cfg.gains_non_increasing();
    let mode = match cfg.optimizer {
        Optimizer::Exact { .. } => unreachable!("the exact search returned above"),
        Optimizer::Naive => Mode::Naive,
        Optimizer::Stochastic { epsilon, seed } => Mode::Stochastic { epsilon, seed },
        Optimizer::Lazy if monotone => Mode::Lazy,
        Optimizer::Lazy => {
            fell_back = true;
            notes.push(format!(
                "lazy greedy fell back to naive: with {} conflict aggregation{} a candidate's gain can \
                 increase as the set grows, so stale bounds are not upper bounds",
                match cfg.aggregation {
                    Aggregation::Max => "max",
                    Aggregation::Mean => "mean",
                    Aggregation::Sum => "sum",
                },
                if cfg.clamp_conflict { "" } else { " and no clamping" }
            ));
            Mode::Naive
        }
    };
    let out = match run(problem, checked, mode) {
        Ok(out) => out,
        Err(RunError::Select(e)) => return Err(e),
        Err(RunError::GainIncreased {
            step,
            env,
            bound,
            gain,
        }) => {
            fell_back = true;
            notes.push(format!(
                "lazy greedy fell back to naive: at step {step} environment {env}'s gain rose from \
                 {bound} to {gain}"
            ));
            run(problem, checked, Mode::Naive).map_err(|e| match e {
                RunError::Select(e) => e,
                RunError::GainIncreased { .. } => {
                    SelectError::invalid("problem", "gains", "naive greedy", "a lazy check")
                }
            })?
        }
    };
    let method = match (cfg.optimizer, fell_back) {
        (Optimizer::Lazy, false) => "aes/lazy",
        (Optimizer::Lazy, true) | (Optimizer::Naive, _) => "aes/naive",
        (Optimizer::Stochastic { .. }, _) => "aes/stochastic",
        (Optimizer::Exact { .. }, _) => unreachable!("the exact search returned above"),
    };
    notes.extend(out.notes);
    let selection = finish(
        problem,
        checked,
        method,
        out.steps,
        out.evaluations,
        fell_back,
        notes,
    );
    Ok(certified(selection, problem, checked, out.tracked))
}

/// Attach the certificate, if the config asks for one. `tracked` is the coverage bound the
/// exact coverage greedy kept while it ran (it spares the certificate a second walk).
/// [`Optimizer::Exact`]: the branch-and-bound optimum as a [`Selection`], its steps scored by
/// the reference terms ([`evaluate_ranking`](crate::evaluate_ranking)); a search stopped at a
/// limit returns the best selection found, and the notes say it is not proven optimal.
fn run_exact(
    problem: &Problem,
    checked: &CheckedSelectConfig,
    limits: &crate::ExactLimits,
) -> Result<Selection, SelectError> {
    use crate::ExactStatus;
    let solution = crate::exact::solve_checked(problem, checked, limits);
    let stats = format!("{} nodes, {:.3} s", solution.nodes, solution.seconds);
    let note = match (solution.status, solution.objective) {
        (ExactStatus::Optimal, Some(_)) => format!("exact search: optimal ({stats})"),
        (ExactStatus::Infeasible, _) => {
            return Err(SelectError::invalid(
                "config",
                "require_full_coverage",
                "a selection of k environments that covers every coverable ability",
                format!("none exists (the exact search proved it: {stats})"),
            ));
        }
        (status, None) => {
            let (field, limit) = match status {
                ExactStatus::TimeLimit => ("optimizer.max_seconds", limits.max_time.as_secs_f64()),
                _ => ("optimizer.max_nodes", limits.max_nodes as f64),
            };
            return Err(SelectError::invalid(
                "config",
                field,
                "a limit that lets the exact search reach a first selection",
                format!("{limit} (stopped before any: {stats})"),
            ));
        }
        (status, Some(_)) => format!(
            "exact search stopped at its {} ({stats}): the selection is the best found, not proven optimal",
            if status == ExactStatus::TimeLimit {
                "time limit (optimizer.max_seconds)"
            } else {
                "node limit (optimizer.max_nodes)"
            }
        ),
    };
    let mut steps = crate::evaluate_ranking(problem, checked, &solution.ranking)?;
    // Must-includes come first in the exact ranking, as in the greedy ones.
    for step in steps.iter_mut().take(checked.include.len()) {
        step.reason = crate::PickReason::MustInclude;
    }
    let selection = finish(
        problem,
        checked,
        "aes/exact",
        steps,
        solution.nodes,
        false,
        vec![note],
    );
    Ok(certified(selection, problem, checked, None))
}

pub(crate) fn certified(
    mut selection: Selection,
    problem: &Problem,
    checked: &CheckedSelectConfig,
    tracked: Option<TrackedBound>,
) -> Selection {
    if checked.config.certify {
        selection.certificate = Some(certify(
            problem,
            checked,
            &selection.ranking,
            selection.objective,
            tracked,
        ));
    }
    selection
}

/// Assemble a [`Selection`] from a trace.
pub(crate) fn finish(
    problem: &Problem,
    checked: &CheckedSelectConfig,
    method: &str,
    steps: Vec<StepTrace>,
    evaluations: u64,
    lazy_fell_back: bool,
    mut notes: Vec<String>,
) -> Selection {
    let ranking: Vec<usize> = steps.iter().map(|s| s.env).collect();
    let mut covered = vec![false; problem.n_abilities()];
    for &e in &ranking {
        for &a in problem.env_abilities(e) {
            covered[a as usize] = true;
        }
    }
    let coverable = coverable_mask(problem, &checked.excluded);
    let never: Vec<&str> = (0..problem.n_abilities())
        .filter(|a| !coverable[*a])
        .map(|a| problem.abilities()[a].as_str())
        .collect();
    if !never.is_empty() {
        notes.push(format!(
            "{} abilities are covered by no allowed environment: {}",
            never.len(),
            preview(&never)
        ));
    }
    if let Some(g) = problem.gradients()
        && g.zero_rows() > 0
        && checked.w_conflict != 0.0
    {
        notes.push(format!(
            "{} environments have an all-zero gradient (cosine 0 with everything)",
            g.zero_rows()
        ));
    }
    let objective = steps.iter().map(|s| f64::from(s.gain)).sum::<f64>() as f32;
    Selection {
        schema_version: SELECTION_SCHEMA_VERSION,
        method: method.to_string(),
        config: checked.config.clone(),
        env_ids: ranking
            .iter()
            .map(|e| problem.env_ids()[*e].clone())
            .collect(),
        objective,
        certificate: None,
        relaxation: None,
        covered: covered.iter().filter(|c| **c).count(),
        coverable: coverable.iter().filter(|c| **c).count(),
        abilities: problem.n_abilities(),
        uncovered: (0..problem.n_abilities())
            .filter(|a| !covered[*a])
            .map(|a| problem.abilities()[a].clone())
            .collect(),
        gains_non_increasing: checked.config.gains_non_increasing(),
        lazy_fell_back,
        evaluations,
        notes,
        steps,
        ranking,
    }
}

fn preview(names: &[&str]) -> String {
    let mut s = names
        .iter()
        .take(10)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 10 {
        s.push_str(&format!(", ... ({} more)", names.len() - 10));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> crate::synthetic::SyntheticPool {
        crate::synthetic::generate(&crate::synthetic::SyntheticConfig {
            n: 80,
            seed: 3,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn overlap_is_shared_picks_over_k_in_any_order() {
        let pool = pool();
        let a = select(&pool.problem, &SelectConfig::aes(4)).unwrap();
        assert_eq!(a.overlap(&a), 1.0);
        let mut b = a.clone();
        b.env_ids.reverse();
        assert_eq!(a.overlap(&b), 1.0);
        b.env_ids[0] = EnvId::new("elsewhere/x");
        assert_eq!(a.overlap(&b), 0.75);
        b.env_ids.clear();
        assert_eq!(a.overlap(&b), 0.0);
        assert_eq!(b.overlap(&b), 1.0);
    }

    #[test]
    fn term_totals_add_up_to_the_objective() {
        let pool = pool();
        let s = select(&pool.problem, &SelectConfig::aes(6)).unwrap();
        let t = s.term_totals();
        assert!(t.coverage > 0.0 && t.redundancy <= 0.0 && t.conflict <= 0.0);
        let sum = t.coverage + t.redundancy + t.conflict;
        assert!(
            (sum - f64::from(s.objective)).abs() < 1e-3,
            "{t:?} vs {}",
            s.objective
        );
    }
}
