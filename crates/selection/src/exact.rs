//! The exact optimum for small pools (up to [`EXACT_MAX_ENVS`] environments): depth-first
//! branch and bound, our own code, no dependency.
//!
//! Why not an ILP crate: max coverage with a budget is a small ILP, but the AES objective
//! with max or mean conflict aggregation is a function of the pick *order*, not of a set,
//! and even the sum aggregation is quadratic; an ILP would need a linearisation per
//! aggregation and clamping mode. On crates.io (checked 2026-12: `cargo info`), `good_lp` 1.15
//! defaults to the C++ CBC solver (HiGHS, SCIP, lpsolve are C/C++ too, needing a C++
//! toolchain in CI; `clarabel`, pure Rust, solves continuous problems only). Its pure-Rust
//! MILP backend, `microlp` 0.7, would do for max coverage (whose LP relaxation can bound more
//! tightly than the top-`r` gains used here), but not for the order-dependent AES objectives
//! without a sequence model on top. One search over pick sequences handles every objective
//! the greedy optimizers do, with their exact arithmetic, and adds no dependency.
//!
//! The search. Every term's marginal gain depends only on the *set* picked so far (covered
//! abilities; the max, sum or mean of penalties over the picks), so a selection is a path in
//! the subset lattice and its objective the sum of the step gains. Children are tried in
//! greedy order (highest step gain, lowest index on ties), so the first leaf is the naive
//! greedy selection (without the full-coverage constraint) and the optimum is never below it.
//! A node is pruned when its value plus a bound on what `r` more picks can add cannot beat the
//! best leaf: the smaller of the `r` largest optimistic gains and (all the uncovered weight
//! plus the `r` largest non-coverage parts). A candidate's optimistic gain is its current
//! coverage-and-redundancy gain (which only falls as the set grows) minus a lower bound on
//! the conflict it will pay later (the clamped max or sum over the current picks, which only
//! grows; the current sum over `k − 1` for mean; `−1` per pair where penalties can be
//! negative). When the objective is a set function (conflict off, or sum aggregation), each
//! set is enumerated once (later siblings never re-add an earlier sibling); otherwise a map
//! from visited sets to the best value they were reached with skips orderings that cannot
//! win. Values match the greedy optimizers' `f32` step gains bit for bit; pruning compares
//! `f64` bounds, so "optimal" holds up to float rounding (relative ~1e-6).

use std::collections::HashMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::config::{Aggregation, CheckedSelectConfig, EXACT_MAX_ENVS, ExactLimits, SelectConfig};
use crate::error::SelectError;
use crate::problem::Problem;

/// Words of an environment set.
const MASK_WORDS: usize = EXACT_MAX_ENVS / 64;

/// A set of environments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Mask([u64; MASK_WORDS]);

impl Mask {
    #[inline]
    fn has(&self, e: usize) -> bool {
        self.0[e / 64] >> (e % 64) & 1 == 1
    }

    #[inline]
    fn with(mut self, e: usize) -> Self {
        self.0[e / 64] |= 1 << (e % 64);
        self
    }

    #[inline]
    fn union(mut self, o: Self) -> Self {
        self.0.iter_mut().zip(o.0).for_each(|(a, b)| *a |= b);
        self
    }

    #[inline]
    fn minus(mut self, o: Self) -> Self {
        self.0.iter_mut().zip(o.0).for_each(|(a, b)| *a &= !b);
        self
    }

    #[inline]
    fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// Pairwise penalties are `−cos ≥ −1`; the slack covers `f32` rounding of unit rows.
const PEN_FLOOR: f64 = -1.001;

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExactStatus {
    /// The search finished: the returned selection is optimal.
    Optimal,
    /// The search finished and no selection meets the constraints (full coverage).
    Infeasible,
    /// Stopped at the node limit: the returned selection is only the best found.
    NodeLimit,
    /// Stopped at the time limit: the returned selection is only the best found.
    TimeLimit,
}

/// The result of [`solve_exact`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactSolution {
    /// Whether the search finished; only [`ExactStatus::Optimal`] proves optimality.
    pub status: ExactStatus,
    /// The best selection found, in pick order (must-includes first); empty if none.
    pub ranking: Vec<usize>,
    /// Its objective (the sum of its step gains, as [`Selection`](crate::Selection) has it);
    /// `None` if no feasible selection was found.
    pub objective: Option<f32>,
    /// Nodes visited.
    pub nodes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl ExactSolution {
    /// The optimum, if the search finished with one.
    pub fn optimum(&self) -> Option<f32> {
        match self.status {
            ExactStatus::Optimal => self.objective,
            _ => None,
        }
    }

    /// The outcome beside a greedy selection's objective, as one line: the optimum and the
    /// share of it greedy reached, or that no selection is feasible, or (stopped at a limit)
    /// that the best found is only a lower bound.
    pub fn versus_greedy(&self, greedy_objective: f32) -> String {
        let stats = format!("{} nodes, {:.3} s", self.nodes, self.seconds);
        match (self.status, self.objective) {
            (ExactStatus::Optimal, Some(opt)) => format!(
                "optimum {opt:.3} ({stats}); greedy {greedy_objective:.3} is {} of it",
                if opt > 0.0 {
                    format!("{:.2}%", 100.0 * greedy_objective / opt)
                } else {
                    "n/a".into()
                }
            ),
            (ExactStatus::Infeasible, _) | (_, None) => {
                format!("no selection meets the constraints ({stats})")
            }
            (status, Some(best)) => format!(
                "did not finish ({} after {stats}); best found {best:.3} is only a lower bound on the optimum",
                match status {
                    ExactStatus::TimeLimit => "time limit",
                    _ => "node limit",
                }
            ),
        }
    }
}

/// `-0.0` and `0.0` differ in bits; the greedy engine normalises every share the same way.
#[inline]
fn canon(x: f32) -> f32 {
    if x == 0.0 { 0.0 } else { x }
}

struct Search<'a> {
    p: &'a Problem,
    k: usize,
    n: usize,
    words: usize,
    env_bits: Vec<u64>,
    coverable: Vec<u64>,
    allowed: Mask,
    weights: &'a [f32],
    total: Vec<f64>,
    pen: Vec<f32>,
    aggregation: Aggregation,
    clamp: bool,
    w: (f32, f32, f32),
    set_function: bool,
    full: bool,
    memo: HashMap<Mask, f64>,
    best: f64,
    best_path: Vec<usize>,
    path: Vec<usize>,
    nodes: u64,
    limits: ExactLimits,
    start: Instant,
    stopped: Option<ExactStatus>,
}

/// Per-candidate evaluation at one node.
#[derive(Clone, Copy)]
struct Cand {
    e: usize,
    gain: f32,
    /// Weight of e's still uncovered abilities.
    new_w: f64,
    /// Optimistic gain of any later pick of e: `(w_c + w_r)·new_w + base`.
    optimistic: f64,
    /// The part of it that does not come from new coverage: `−w_r·W(e) − w_x·floor`.
    base: f64,
}

impl Search<'_> {
    #[inline]
    fn is_covered(covered: &[u64], a: usize) -> bool {
        covered[a / 64] >> (a % 64) & 1 == 1
    }

    /// The step gain the greedy engine would compute, and the optimistic gain of any later
    /// pick of `e` (`remaining` picks left, this one included).
    fn evaluate(
        &self,
        e: usize,
        covered: &[u64],
        acc: &[f32],
        seen: usize,
        remaining: usize,
    ) -> Cand {
        let (w_c, w_r, w_x) = self.w;
        let (mut cov, mut red) = (0f32, 0f32);
        let mut new_w = 0f64;
        for &a in self.p.env_abilities(e) {
            let a = a as usize;
            if Self::is_covered(covered, a) {
                red += self.weights[a];
            } else {
                cov += self.weights[a];
                new_w += f64::from(self.weights[a]);
            }
        }
        let c = canon(w_c * cov);
        let r = canon(-(w_r * red));
        let (x, floor) = if self.pen.is_empty() {
            (0.0, 0.0)
        } else {
            let a = f64::from(acc[e]);
            let x = if seen == 0 {
                0.0
            } else {
                let conf = match self.aggregation {
                    Aggregation::Mean => acc[e] / seen as f32,
                    Aggregation::Max | Aggregation::Sum => acc[e],
                };
                canon(-(w_x * conf))
            };
            // A lower bound on the penalty e pays at any later step (predecessors ⊇ picks).
            let floor = match (self.aggregation, self.clamp, seen) {
                (_, true, 0) => 0.0,
                (Aggregation::Max | Aggregation::Sum, true, _) => a,
                (Aggregation::Mean, true, _) => a / (self.k - 1) as f64,
                (Aggregation::Max, false, 0) => PEN_FLOOR,
                (Aggregation::Max, false, _) => a,
                // Each of the up to `remaining − 1` picks still to come can lower it by 1.
                (Aggregation::Sum, false, _) => a + PEN_FLOOR * (remaining - 1) as f64,
                (Aggregation::Mean, false, _) => PEN_FLOOR,
            };
            (x, floor)
        };
        let base = -f64::from(w_r) * self.total[e] - f64::from(w_x) * floor;
        Cand {
            e,
            gain: canon(c + r + x),
            new_w,
            optimistic: (f64::from(w_c) + f64::from(w_r)) * new_w + base,
            base,
        }
    }

    /// Weight of the coverable abilities not covered yet.
    fn uncovered_weight(&self, covered: &[u64]) -> f64 {
        let mut sum = 0.0;
        for (i, (c, m)) in covered.iter().zip(&self.coverable).enumerate() {
            let mut bits = m & !c;
            while bits != 0 {
                sum += f64::from(self.weights[i * 64 + bits.trailing_zeros() as usize]);
                bits &= bits - 1;
            }
        }
        sum
    }

    fn limit_hit(&mut self) -> bool {
        if self.stopped.is_some() {
            return true;
        }
        if self.nodes >= self.limits.max_nodes {
            self.stopped = Some(ExactStatus::NodeLimit);
        } else if self.nodes.is_multiple_of(1024) && self.start.elapsed() >= self.limits.max_time {
            self.stopped = Some(ExactStatus::TimeLimit);
        }
        self.stopped.is_some()
    }

    /// Covered bits and conflict accumulators after picking `c` on top of `seen` picks.
    fn push(&self, c: usize, covered: &[u64], acc: &[f32], seen: usize) -> (Vec<u64>, Vec<f32>) {
        let mut cov = covered.to_vec();
        for (w, b) in cov.iter_mut().zip(&self.env_bits[c * self.words..]) {
            *w |= b;
        }
        let mut next = acc.to_vec();
        if !self.pen.is_empty() {
            for (e, a) in next.iter_mut().enumerate() {
                let p = self.pen[e * self.n + c];
                *a = if seen == 0 {
                    p
                } else {
                    match self.aggregation {
                        Aggregation::Max => a.max(p),
                        Aggregation::Sum | Aggregation::Mean => *a + p,
                    }
                };
            }
        }
        (cov, next)
    }

    fn covers_all(&self, covered: &[u64]) -> bool {
        covered
            .iter()
            .zip(&self.coverable)
            .all(|(c, m)| m & !c == 0)
    }

    fn node(&mut self, set: Mask, banned: Mask, covered: &[u64], acc: &[f32], value: f64) {
        self.nodes += 1;
        if self.limit_hit() {
            return;
        }
        let depth = self.path.len();
        let r = self.k - depth;
        if r == 0 {
            if (!self.full || self.covers_all(covered)) && value > self.best {
                self.best = value;
                self.best_path = self.path.clone();
            }
            return;
        }
        if !self.set_function {
            // Future gains depend on the set only: reaching it again with no more value
            // cannot lead anywhere better.
            match self.memo.get(&set) {
                Some(v) if *v >= value => return,
                _ => {
                    self.memo.insert(set, value);
                }
            }
        }
        let avail = self.allowed.minus(set).minus(banned);
        if avail.count() < r {
            return;
        }
        let candidates = (0..self.n).filter(|e| avail.has(*e));
        if self.full && !self.covers_all(covered) {
            let mut union = covered.to_vec();
            for e in candidates.clone() {
                for (u, b) in union.iter_mut().zip(&self.env_bits[e * self.words..]) {
                    *u |= b;
                }
            }
            if !self.covers_all(&union) {
                return;
            }
        }
        let mut cands: Vec<Cand> = candidates
            .map(|e| self.evaluate(e, covered, acc, depth, r))
            .collect();
        // Two bounds on what the `r` remaining picks add; both hold, so the smaller does:
        // the `r` largest optimistic gains, and all the uncovered weight plus the `r` largest
        // non-coverage parts (new coverage over the picks adds up to at most what is left).
        let alpha = f64::from(self.w.0) + f64::from(self.w.1);
        let uncovered = self.uncovered_weight(covered);
        let sorted = |key: fn(&Cand) -> f64| {
            let mut v: Vec<(f64, usize)> = cands.iter().map(|c| (key(c), c.e)).collect();
            v.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
            v
        };
        let by_opt = sorted(|c| c.optimistic);
        let by_base = sorted(|c| c.base);
        let top = |v: &[(f64, usize)], skip: Mask, r: usize| -> f64 {
            v.iter()
                .filter(|(_, e)| !skip.has(*e))
                .take(r)
                .map(|x| x.0)
                .sum()
        };
        let none = Mask::default();
        let bound = value + top(&by_opt, none, r).min(alpha * uncovered + top(&by_base, none, r));
        if bound <= self.best {
            return;
        }
        cands.sort_unstable_by(|a, b| b.gain.total_cmp(&a.gain).then(a.e.cmp(&b.e)));
        let mut done = Mask::default();
        for cand in cands {
            let c = cand.e;
            let skip = if self.set_function {
                done.with(c)
            } else {
                none.with(c)
            };
            let child_value = value + f64::from(cand.gain);
            if child_value + top(&by_opt, skip, r - 1) <= self.best {
                if self.set_function {
                    // Gains fall along `cands` and the pool shrinks: no later sibling wins.
                    break;
                }
                continue;
            }
            let capped = alpha * (uncovered - cand.new_w).max(0.0) + top(&by_base, skip, r - 1);
            if child_value + capped <= self.best {
                continue;
            }
            let (cov, next) = self.push(c, covered, acc, depth);
            self.path.push(c);
            let child_banned = if self.set_function {
                banned.union(done)
            } else {
                Mask::default()
            };
            self.node(set.with(c), child_banned, &cov, &next, child_value);
            self.path.pop();
            if self.stopped.is_some() {
                return;
            }
            done = done.with(c);
        }
    }
}

/// Find the best selection of exactly `config.k` environments (honouring must-include,
/// must-exclude and full coverage) under `config`'s objective, for pools of at most
/// [`EXACT_MAX_ENVS`] environments. The optimizer setting is ignored.
///
/// Cost grows fast with `k` and the pool; `limits` bounds it, and a stopped search says so in
/// its status ([`ExactStatus::NodeLimit`], [`ExactStatus::TimeLimit`]).
pub fn solve_exact(
    problem: &Problem,
    config: &SelectConfig,
    limits: &ExactLimits,
) -> Result<ExactSolution, SelectError> {
    let n = problem.n_envs();
    if n > EXACT_MAX_ENVS {
        return Err(SelectError::invalid(
            "exact",
            "n_envs",
            format!("at most {EXACT_MAX_ENVS} environments (the exact solver is for small pools)"),
            n.to_string(),
        ));
    }
    let checked = config.validate(problem)?;
    Ok(solve_checked(problem, &checked, limits))
}

pub(crate) fn solve_checked(
    problem: &Problem,
    checked: &CheckedSelectConfig,
    limits: &ExactLimits,
) -> ExactSolution {
    let start = Instant::now();
    let n = problem.n_envs();
    let words = problem.n_abilities().div_ceil(64).max(1);
    let mut env_bits = vec![0u64; n * words];
    for e in 0..n {
        for &a in problem.env_abilities(e) {
            env_bits[e * words + a as usize / 64] |= 1 << (a % 64);
        }
    }
    let mut allowed = Mask::default();
    let mut coverable = vec![0u64; words];
    for e in (0..n).filter(|e| !checked.excluded[*e]) {
        allowed = allowed.with(e);
        for (c, b) in coverable.iter_mut().zip(&env_bits[e * words..]) {
            *c |= b;
        }
    }
    let weights = checked.ability_weights();
    let total = (0..n)
        .map(|e| {
            problem
                .env_abilities(e)
                .iter()
                .map(|a| f64::from(weights[*a as usize]))
                .sum()
        })
        .collect();
    let w = checked.effective_weights();
    let cfg = checked.config();
    let pen = match problem.gradients() {
        Some(g) if w.2 != 0.0 => {
            let mut pen = vec![0f32; n * n];
            for e in 0..n {
                for s in 0..n {
                    let p = -g.cosine(e, s);
                    pen[e * n + s] = if cfg.clamp_conflict { p.max(0.0) } else { p };
                }
            }
            pen
        }
        _ => Vec::new(),
    };
    let mut search = Search {
        p: problem,
        k: cfg.k,
        n,
        words,
        env_bits,
        coverable,
        allowed,
        weights,
        total,
        set_function: pen.is_empty() || cfg.aggregation == Aggregation::Sum,
        pen,
        aggregation: cfg.aggregation,
        clamp: cfg.clamp_conflict,
        w,
        full: cfg.require_full_coverage,
        memo: HashMap::new(),
        best: f64::NEG_INFINITY,
        best_path: Vec::new(),
        path: Vec::new(),
        nodes: 0,
        limits: *limits,
        start,
        stopped: None,
    };
    // Must-includes come first, in pool order, as in the greedy optimizers.
    let mut covered = vec![0u64; words];
    let mut acc = vec![0f32; n];
    let mut set = Mask::default();
    let mut value = 0f64;
    for &e in &checked.include {
        let depth = search.path.len();
        let cand = search.evaluate(e, &covered, &acc, depth, cfg.k - depth);
        (covered, acc) = search.push(e, &covered, &acc, depth);
        search.path.push(e);
        set = set.with(e);
        value += f64::from(cand.gain);
    }
    search.node(set, Mask::default(), &covered, &acc, value);
    let found = search.best.is_finite();
    ExactSolution {
        status: search.stopped.unwrap_or(if found {
            ExactStatus::Optimal
        } else {
            ExactStatus::Infeasible
        }),
        ranking: search.best_path,
        objective: found.then_some(search.best as f32),
        nodes: search.nodes,
        seconds: start.elapsed().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::npy::SparseCounts;
    use crate::select;

    /// Greedy takes the big set first and misses the optimum {1, 2}.
    /// A synthetic pool of `n` envs with coverage only (no gradients).
    fn coverage_pool(n: usize) -> crate::synthetic::SyntheticPool {
        crate::synthetic::generate(&crate::synthetic::SyntheticConfig {
            n,
            dim: 0,
            conflict_clusters: 0,
            ..Default::default()
        })
        .unwrap()
    }

    fn trap() -> Problem {
        let rows: [&[u32]; 3] = [&[0, 1, 2, 3], &[0, 1, 4], &[2, 3, 5]];
        let mut indptr = vec![0];
        let mut indices = Vec::new();
        for r in rows {
            indices.extend_from_slice(r);
            indptr.push(indices.len());
        }
        let values = vec![1.0; indices.len()];
        Problem::from_counts(
            SparseCounts {
                rows: 3,
                cols: 6,
                indptr,
                indices,
                values,
            },
            None,
            None,
        )
        .unwrap()
    }

    #[test]
    fn beats_greedy_on_the_classic_trap_and_the_bound_is_tight() {
        let p = trap();
        let cfg = SelectConfig::aes(2).coverage_only();
        let greedy = select(&p, &cfg).unwrap();
        assert_eq!(greedy.objective, 5.0);
        let cert = greedy.certificate.clone().unwrap();
        assert_eq!(cert.upper_bound, Some(6.0));
        assert!((cert.gap_fraction.unwrap() - 1.0 / 6.0).abs() < 1e-6);
        let exact = solve_exact(&p, &cfg, &ExactLimits::default()).unwrap();
        assert_eq!(exact.status, ExactStatus::Optimal);
        assert_eq!(exact.optimum(), Some(6.0));
        let mut r = exact.ranking.clone();
        r.sort_unstable();
        assert_eq!(r, vec![1, 2]);
        let line = exact.versus_greedy(greedy.objective);
        assert!(line.starts_with("optimum 6.000 ("), "{line}");
        assert!(line.ends_with("; greedy 5.000 is 83.33% of it"), "{line}");
    }

    #[test]
    fn limits_and_pool_size_are_reported() {
        let p = trap();
        let cfg = SelectConfig::aes(2).coverage_only();
        let stopped = solve_exact(
            &p,
            &cfg,
            &ExactLimits {
                max_nodes: 2,
                ..ExactLimits::default()
            },
        )
        .unwrap();
        assert_eq!(stopped.status, ExactStatus::NodeLimit);
        assert_eq!(stopped.optimum(), None);
        let line = stopped.versus_greedy(5.0);
        let expected = match stopped.objective {
            Some(_) => "did not finish (node limit after ",
            None => "no selection meets the constraints (",
        };
        assert!(line.starts_with(expected), "{line}");
        let full = SelectConfig {
            require_full_coverage: true,
            ..SelectConfig::aes(1).coverage_only()
        };
        let none = solve_exact(&p, &full, &ExactLimits::default()).unwrap();
        assert_eq!(none.status, ExactStatus::Infeasible);
        assert!(
            none.versus_greedy(0.0)
                .starts_with("no selection meets the constraints (")
        );
        let big = coverage_pool(257);
        let e = solve_exact(&big.problem, &cfg, &ExactLimits::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("n_envs") && e.contains("257"), "{e}");
    }

    #[test]
    fn the_exact_optimizer_is_a_select_config_option() {
        use crate::{Optimizer, PickReason};
        let p = trap();
        let cfg = SelectConfig {
            optimizer: Optimizer::exact(),
            ..SelectConfig::aes(2).coverage_only()
        };
        let s = select(&p, &cfg).unwrap();
        assert_eq!((s.method.as_str(), s.objective), ("aes/exact", 6.0));
        let mut r = s.ranking.clone();
        r.sort_unstable();
        assert_eq!(r, vec![1, 2]);
        assert!(
            s.notes
                .iter()
                .any(|n| n.starts_with("exact search: optimal (")),
            "{:?}",
            s.notes
        );
        // Its certificate holds: the optimum is within the bound.
        assert!(s.certificate.unwrap().upper_bound.unwrap() >= 6.0);
        // Must-includes are marked as in the greedy optimizers.
        let with_include = SelectConfig {
            must_include: vec![p.env_ids()[0].clone()],
            ..cfg.clone()
        };
        let s = select(&p, &with_include).unwrap();
        assert_eq!(s.steps[0].reason, PickReason::MustInclude);
        assert_eq!(s.steps[0].env, 0);
        // A stopped search says so; limits and pool size are checked.
        let stopped = SelectConfig {
            optimizer: Optimizer::Exact {
                max_nodes: 2,
                max_seconds: 10.0,
            },
            ..cfg.clone()
        };
        // Stopped before its first leaf (the greedy selection, at depth k): nothing to return.
        let e = select(&p, &stopped).unwrap_err().to_string();
        assert!(
            e.contains("optimizer.max_nodes") && e.contains("stopped before any"),
            "{e}"
        );
        // Stopped after its first leaf: the best found, said not to be proven optimal.
        let pool = coverage_pool(60);
        let limited = SelectConfig {
            optimizer: Optimizer::Exact {
                max_nodes: 200,
                max_seconds: 10.0,
            },
            ..SelectConfig::aes(8).coverage_only()
        };
        let s = select(&pool.problem, &limited).unwrap();
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("node limit") && n.contains("not proven optimal")),
            "{:?}",
            s.notes
        );
        assert_eq!(s.ranking.len(), 8);
        for bad in [
            Optimizer::Exact {
                max_nodes: 0,
                max_seconds: 1.0,
            },
            Optimizer::Exact {
                max_nodes: 1,
                max_seconds: f64::NAN,
            },
            Optimizer::Exact {
                max_nodes: 1,
                max_seconds: -1.0,
            },
        ] {
            let c = SelectConfig {
                optimizer: bad,
                ..cfg.clone()
            };
            let e = select(&p, &c).unwrap_err().to_string();
            assert!(e.contains("optimizer.max_"), "{e}");
        }
        let big = coverage_pool(257);
        let e = select(&big.problem, &cfg).unwrap_err().to_string();
        assert!(e.contains("optimizer") && e.contains("257"), "{e}");
        // Serde: the limits have defaults.
        let parsed: SelectConfig =
            serde_json::from_str(r#"{"optimizer": {"kind": "exact"}}"#).unwrap();
        assert_eq!(parsed.optimizer, Optimizer::exact());
    }
}
