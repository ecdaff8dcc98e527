//! Baselines: all, random-k (seeded), and the objective ablations as config presets.

use serde::{Deserialize, Serialize};

use envdist_core::Rng;

use crate::config::SelectConfig;
use crate::error::SelectError;
use crate::greedy::{Engine, Selection, certified, finish, in_tie_order, select_checked};
use crate::objective::PickReason;
use crate::problem::Problem;

/// A baseline selection, scored with the given config's objective so traces compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Baseline {
    /// Every allowed environment, in pool order (`k` is ignored).
    All,
    /// Must-include environments, then a seeded uniform sample of the rest, `k` in all.
    Random {
        /// Seed of the sample.
        seed: u64,
    },
    /// Greedy with NewCoverage only.
    CoverageOnly,
    /// Greedy without the conflict term (the paper's key ablation).
    NoConflict,
    /// Greedy without the redundancy term.
    NoRedundancy,
}

impl Baseline {
    /// Short name, as used in method strings and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Baseline::All => "all",
            Baseline::Random { .. } => "random",
            Baseline::CoverageOnly => "coverage-only",
            Baseline::NoConflict => "no-conflict",
            Baseline::NoRedundancy => "no-redundancy",
        }
    }
}

/// Run a baseline. `All` and `Random` are scored step by step under `config`'s objective
/// (for `All` that costs O(n² · dim) with the conflict term on: meant for paper-size pools).
pub fn baseline(
    problem: &Problem,
    config: &SelectConfig,
    which: Baseline,
) -> Result<Selection, SelectError> {
    let ablated = match which {
        Baseline::CoverageOnly => Some(config.clone().coverage_only()),
        Baseline::NoConflict => Some(config.clone().without_conflict()),
        Baseline::NoRedundancy => Some(config.clone().without_redundancy()),
        Baseline::All | Baseline::Random { .. } => None,
    };
    if let Some(cfg) = ablated {
        let mut s = select_checked(problem, &cfg.validate(problem)?)?;
        s.method = format!(
            "baseline/{}/{}",
            which.name(),
            s.method.trim_start_matches("aes/")
        );
        return Ok(s);
    }
    in_tie_order(problem, config.tie_break, |p| forced(p, config, which))
}

/// `All` or `Random` on `problem` as it is ordered.
fn forced(
    problem: &Problem,
    config: &SelectConfig,
    which: Baseline,
) -> Result<Selection, SelectError> {
    let mut cfg = config.clone();
    let seed = match which {
        Baseline::Random { seed } => Some(seed),
        _ => None,
    };
    if seed.is_none() {
        // Every allowed environment: find how many the exclusions leave.
        let probe = SelectConfig {
            k: 1,
            must_include: Vec::new(),
            ..cfg.clone()
        }
        .validate(problem)?;
        cfg.k = probe.excluded.iter().filter(|x| !**x).count();
    }
    let checked = cfg.validate(problem)?;
    let mut order: Vec<usize> = (0..problem.n_envs())
        .filter(|e| !checked.excluded[*e] && checked.include.binary_search(e).is_err())
        .collect();
    if let Some(seed) = seed {
        Rng::seed_from_u64(seed).shuffle(&mut order);
        order.truncate(checked.config.k - checked.include.len());
    }
    let mut eng = Engine::new(problem, &checked);
    let mut steps = Vec::with_capacity(checked.config.k);
    for &e in &checked.include {
        steps.push(eng.force(e, PickReason::MustInclude));
    }
    for e in order {
        steps.push(eng.force(e, PickReason::Baseline));
    }
    let evaluations = eng.evaluations;
    let selection = finish(
        problem,
        &checked,
        &format!("baseline/{}", which.name()),
        steps,
        evaluations,
        false,
        Vec::new(),
    );
    Ok(certified(selection, problem, &checked, None))
}
