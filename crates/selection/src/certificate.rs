//! Optimality certificates: a data-dependent upper bound on the best objective any feasible
//! selection of `k` environments can reach, computed from the prefixes of a ranking.
//!
//! Notation. `C(S)` is the weighted coverage of a set (sum of the ability weights of the
//! abilities it covers), `W(e)` the weight of all of `e`'s abilities, `OPT_k` the best objective
//! over selections of exactly `k` environments that honour the config's constraints
//! (`must_include` first, `must_exclude`, full coverage); where the objective depends on the
//! pick order (max or mean conflict aggregation), over pick sequences. With the term weights `w_c, w_r, w_x`
//! the step gains of [`Selection`](crate::Selection) add up, for any pick order, to
//!
//! ```text
//! objective(σ) = (w_c + w_r)·C(S) − w_r·Σ_{e∈S} W(e) − w_x·Σ_t conflict_t(σ)
//! ```
//!
//! because NewCoverage sums to `C(S)` and Redundancy to `Σ W(e) − C(S)`. The first part,
//! `f(S) = g(S) − m(S)` with `g = (w_c + w_r)·C` monotone submodular and `m(e) = w_r·W(e) ≥ 0`
//! modular, is a set function; the conflict sum depends on the pick order unless it is
//! aggregated by sum.
//!
//! The bound. For any set `A` holding the must-include environments and any feasible `S`,
//! monotonicity and submodularity of `g` give
//! `f(S) ≤ g(A) − m(S∩A) + Σ_{e∈S\A} Δf(e | A)` with `Δf(e | A) = Δg(e | A) − m(e)`. Maximising
//! the right side over `j = |S∩A|` (the `j − |I|` smallest `m` in `A` besides the must-includes
//! `I`, the `k − j` largest `Δf` outside `A`) gives `UB(A)`, and the certificate reports the
//! minimum of `UB(A)` over the ranking's prefixes `A = S_i`. With `w_r = 0` this is the classic
//! bound for monotone submodular maximisation (Minoux 1978; the "online bound" of Leskovec et
//! al. 2007): `OPT_k ≤ f(S_i) + Σ(k largest marginal gains w.r.t. S_i)`. Both bounds are also
//! capped by what no selection can beat: `C(S)` is at most the weight of every coverable
//! ability, and `m(S)` at least that of the must-includes and the `k − |I|` cheapest others.
//!
//! Cost. One replay of the ranking keeps every environment's uncovered weight exact
//! incrementally (each newly covered ability walks its environment list once: `O(nnz)` in all).
//! With uniform ability weights the coverage bound reads the top gains off a histogram of the
//! integer gains at every prefix (`O(max abilities per env)` each). Otherwise the bound is
//! evaluated at every prefix when `n·(k + 1) ≤ 2^24` and at 64 evenly spaced prefixes (the
//! first and the last included) beyond that, `O(n)` each; the minimum over any subset of
//! prefixes is still a valid bound.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::config::Checked;
use crate::problem::Problem;

/// Evaluate the generic bound at every prefix while `n·(prefixes)` stays below this.
const EVERY_PREFIX_BUDGET: usize = 1 << 24;
/// Otherwise evaluate it at this many evenly spaced prefixes.
const SCHEDULED_PREFIXES: usize = 64;

/// Which upper bound a [`Certificate`] carries, and why it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundKind {
    /// NewCoverage alone (redundancy and conflict off or weighted 0): the objective
    /// `w_c·C(S)` is monotone submodular and the bound is the classic one,
    /// `OPT_k ≤ min_i f(S_i) + Σ(k largest gains w.r.t. S_i)`.
    Submodular,
    /// Coverage and redundancy, conflict off: `f(S) = (w_c + w_r)·C(S) − w_r·Σ W(e)` is
    /// submodular but not monotone (each pick pays for the abilities it repeats). The bound
    /// adds the modular correction described in the module docs.
    SubmodularMinusModular,
    /// Conflict on and clamped at zero: every pairwise penalty is `≥ 0`, so whatever the
    /// aggregation (max, mean, sum) the objective of any pick sequence is at most the
    /// coverage-and-redundancy part of its set, and that part's bound bounds `OPT_k`. It
    /// ignores the conflict any selection must pay, so it is looser the more the penalties
    /// weigh.
    ConflictDropped,
    /// Conflict on and not clamped: aligned gradients earn a bonus of up to `w_x` per pick
    /// (max or mean aggregation) or per pair (sum). The only bound we know adds that largest
    /// possible bonus, `w_x·(k − 1)` or `w_x·k(k − 1)/2`, to the coverage-and-redundancy bound,
    /// which says nothing about the selection, so no bound is reported
    /// (`upper_bound` is `None`); the coverage bound still is.
    Unclamped,
}

impl BoundKind {
    /// The bound that holds for a checked config.
    pub fn of(checked: &Checked) -> Self {
        let (_, w_r, w_x) = checked.effective_weights();
        if w_x != 0.0 {
            if checked.config.clamp_conflict {
                Self::ConflictDropped
            } else {
                Self::Unclamped
            }
        } else if w_r != 0.0 {
            Self::SubmodularMinusModular
        } else {
            Self::Submodular
        }
    }

    /// One line on what the bound bounds.
    pub fn explanation(self) -> &'static str {
        match self {
            Self::Submodular => {
                "monotone submodular coverage: online bound from the greedy prefixes"
            }
            Self::SubmodularMinusModular => {
                "coverage minus redundancy (submodular, not monotone): prefix bound with the \
                 redundancy of the k cheapest environments"
            }
            Self::ConflictDropped => {
                "clamped conflict penalties are >= 0: bound of the coverage and redundancy part \
                 (ignores the conflict any selection pays)"
            }
            Self::Unclamped => {
                "unclamped conflict can earn a bonus of up to w_x per pick or pair: no useful \
                 bound on the objective"
            }
        }
    }
}

/// How far a selection can be from the best one: its objective beside an upper bound on the
/// optimum `OPT_k` (see the module docs for the bound and [`BoundKind`] for when it holds).
/// Bounds are computed in `f64` and rounded up to `f32`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    /// Which bound, and why it is valid for this objective.
    pub kind: BoundKind,
    /// The selection's objective (the sum of its step gains).
    pub value: f32,
    /// Upper bound on `OPT_k` of the objective; `None` for [`BoundKind::Unclamped`].
    pub upper_bound: Option<f32>,
    /// `(upper_bound − value) / upper_bound` (at least 0) when the bound is positive: the
    /// selection is within this fraction of optimal.
    pub gap_fraction: Option<f32>,
    /// Weighted coverage `C(S)` of the selection (ability weights, before the term weight).
    pub coverage: f32,
    /// Upper bound on `C(S)` over every feasible selection of `k`: always valid, since coverage
    /// is monotone submodular whatever the other terms do.
    pub coverage_upper_bound: f32,
    /// The prefix length at which the objective bound was attained; `None` when the cap
    /// "every coverable ability, the redundancy of the `k` cheapest environments" was lower.
    pub best_prefix: Option<usize>,
    /// How many prefixes the objective bound was evaluated at.
    pub prefixes_evaluated: usize,
}

impl Certificate {
    /// `100·gap_fraction`: the selection is within this many percent of optimal.
    pub fn within_percent(&self) -> Option<f32> {
        self.gap_fraction.map(|g| 100.0 * g)
    }

    /// `coverage / coverage_upper_bound` as a gap, when the bound is positive.
    pub fn coverage_gap_fraction(&self) -> Option<f32> {
        gap(self.coverage, self.coverage_upper_bound)
    }
}

impl fmt::Display for Certificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.upper_bound, self.within_percent()) {
            (Some(ub), Some(pct)) => write!(
                f,
                "within {pct:.2}% of optimal (objective {:.3} <= OPT <= {ub:.3})",
                self.value
            )?,
            (Some(ub), None) => write!(
                f,
                "objective {:.3}, OPT <= {ub:.3} (no relative gap: the bound is not positive)",
                self.value
            )?,
            (None, _) => write!(f, "no bound on the objective ({:?})", self.kind)?,
        }
        write!(
            f,
            "; coverage {:.3} of at most {:.3}",
            self.coverage, self.coverage_upper_bound
        )
    }
}

fn gap(value: f32, bound: f32) -> Option<f32> {
    (bound > 0.0).then(|| ((bound - value) / bound).max(0.0))
}

/// Round an `f64` bound up to the next `f32`, so rounding never makes it invalid.
fn up(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) < x { f.next_up() } else { f }
}

/// Top-`r` gains from a histogram of integer gains (index = gain), in `O(len)`.
fn hist_top_sum(hist: &[u32], r: usize) -> u64 {
    let mut left = r as u64;
    let mut sum = 0u64;
    for (g, &c) in hist.iter().enumerate().skip(1).rev() {
        if left == 0 {
            break;
        }
        let take = left.min(u64::from(c));
        sum += take * g as u64;
        left -= take;
    }
    sum
}

/// Sort the `r` largest values of `v` first, descending (`v` is reordered).
fn top_desc(v: &mut [f64], r: usize) -> &[f64] {
    let r = r.min(v.len());
    if r == 0 {
        return &v[..0];
    }
    if r < v.len() {
        v.select_nth_unstable_by(r - 1, |a, b| b.total_cmp(a));
    }
    let top = &mut v[..r];
    top.sort_unstable_by(|a, b| b.total_cmp(a));
    top
}

/// Certify `ranking` (pick order, the must-includes first) under `checked`'s objective.
/// `value` is the ranking's objective. Cost: see the module docs.
pub(crate) fn certify(
    problem: &Problem,
    checked: &Checked,
    ranking: &[usize],
    value: f32,
) -> Certificate {
    certify_with_budget(problem, checked, ranking, value, EVERY_PREFIX_BUDGET)
}

fn certify_with_budget(
    problem: &Problem,
    checked: &Checked,
    ranking: &[usize],
    value: f32,
    every_prefix_budget: usize,
) -> Certificate {
    let n = problem.n_envs();
    let k = checked.config.k.max(ranking.len());
    let kind = BoundKind::of(checked);
    let w = &checked.ability_weights;
    let uniform = w.iter().all(|x| *x == 1.0);
    let (w_c, w_r, _) = checked.effective_weights();
    let (w_c, w_r) = (f64::from(w_c), f64::from(w_r));
    let alpha = w_c + w_r;
    let include = &checked.include;
    let n_inc = include.len();
    let allowed = |e: usize| !checked.excluded[e];
    let mut outside = (0..n).filter(|e| allowed(*e)).count();

    // The first prefix that holds every must-include environment; the bound needs `I ⊆ A`.
    let mut start = 0usize;
    for &e in include {
        match ranking.iter().position(|r| *r == e) {
            Some(p) => start = start.max(p + 1),
            None => start = usize::MAX,
        }
    }

    // Uniform weights keep integer counts only (they double as weights); otherwise f64 weights.
    let total: Vec<f64> = (0..n)
        .map(|e| {
            if uniform {
                problem.env_abilities(e).len() as f64
            } else {
                problem
                    .env_abilities(e)
                    .iter()
                    .map(|a| f64::from(w[*a as usize]))
                    .sum()
            }
        })
        .collect();
    let mut uncovered_w = if uniform { Vec::new() } else { total.clone() };
    let mut count: Vec<u32> = if uniform {
        (0..n)
            .map(|e| problem.env_abilities(e).len() as u32)
            .collect()
    } else {
        Vec::new()
    };
    let mut hist: Vec<u32> = Vec::new();
    if uniform {
        hist = vec![0; count.iter().copied().max().unwrap_or(0) as usize + 1];
        for e in (0..n).filter(|e| allowed(*e)) {
            hist[count[e] as usize] += 1;
        }
    }
    let mut in_a = vec![false; n];
    let mut covered = vec![false; problem.n_abilities()];
    let mut cov = 0f64;
    // m(e) of the picks in the prefix that are not must-include (for the j-scan).
    let mut m_free: Vec<f64> = Vec::new();
    let m_include: f64 = include.iter().map(|e| w_r * total[*e]).sum();

    let generic_objective = kind != BoundKind::Unclamped && w_r != 0.0;
    let every = n.saturating_mul(ranking.len() + 1) <= every_prefix_budget;
    let span = ranking.len().saturating_sub(start);
    let stride = if every {
        1
    } else {
        span.div_ceil(SCHEDULED_PREFIXES - 1).max(1)
    };
    let scheduled = |i: usize| i == ranking.len() || (i - start).is_multiple_of(stride);

    let mut best_cov = f64::INFINITY;
    let mut best_obj = f64::INFINITY;
    let mut best_obj_at = None;
    let mut evaluated = 0usize;
    let mut scratch: Vec<f64> = Vec::with_capacity(n);
    let r_max = k.saturating_sub(n_inc);

    for i in 0..=ranking.len() {
        if i > 0 {
            let e = ranking[i - 1];
            in_a[e] = true;
            if allowed(e) {
                outside -= 1;
                if uniform {
                    hist[count[e] as usize] -= 1;
                }
            }
            if include.binary_search(&e).is_err() {
                m_free.push(w_r * total[e]);
            }
            for &a in problem.env_abilities(e) {
                let a = a as usize;
                if covered[a] {
                    continue;
                }
                covered[a] = true;
                cov += f64::from(w[a]);
                let wa = f64::from(w[a]);
                for &o in problem.ability_envs(a) {
                    let o = o as usize;
                    if uniform {
                        if allowed(o) && !in_a[o] {
                            hist[count[o] as usize] -= 1;
                            hist[count[o] as usize - 1] += 1;
                        }
                        count[o] -= 1;
                    } else {
                        uncovered_w[o] -= wa;
                    }
                }
            }
        }
        if i < start {
            continue;
        }
        let sched = scheduled(i);

        // Coverage bound: monotone, so take as many of the largest gains as S \ A can hold.
        let cov_ub = if uniform {
            Some(cov + hist_top_sum(&hist, r_max) as f64)
        } else if sched {
            scratch.clear();
            scratch.extend(
                (0..n)
                    .filter(|e| allowed(*e) && !in_a[*e])
                    .map(|e| uncovered_w[e]),
            );
            let top = top_desc(&mut scratch, r_max);
            Some(cov + top.iter().map(|g| g.max(0.0)).sum::<f64>())
        } else {
            None
        };
        if let Some(ub) = cov_ub {
            best_cov = best_cov.min(ub);
        }

        if kind == BoundKind::Unclamped {
            continue;
        }
        if !generic_objective {
            // w_r = 0: the objective's coverage-and-redundancy part is w_c·C.
            if let Some(ub) = cov_ub {
                evaluated += 1;
                if w_c * ub < best_obj {
                    best_obj = w_c * ub;
                    best_obj_at = Some(i);
                }
            }
            continue;
        }
        if !sched {
            continue;
        }
        // Generic bound: g(A) + max_j [−M_j + T_{k−j}].
        scratch.clear();
        scratch.extend((0..n).filter(|e| allowed(*e) && !in_a[*e]).map(|e| {
            let unc = if uniform {
                f64::from(count[e])
            } else {
                uncovered_w[e]
            };
            alpha * unc - w_r * total[e]
        }));
        debug_assert_eq!(scratch.len(), outside);
        let top = top_desc(&mut scratch, r_max);
        let mut t_sum = vec![0f64; top.len() + 1];
        for (r, g) in top.iter().enumerate() {
            t_sum[r + 1] = t_sum[r] + g;
        }
        let mut m_sorted = m_free.clone();
        m_sorted.sort_unstable_by(f64::total_cmp);
        let mut m_sum = vec![0f64; m_sorted.len() + 1];
        for (r, m) in m_sorted.iter().enumerate() {
            m_sum[r + 1] = m_sum[r] + m;
        }
        let j_lo = n_inc.max(k.saturating_sub(outside));
        let j_hi = i.min(k);
        let best_j = (j_lo..=j_hi)
            .filter(|j| k - j <= top.len() && j - n_inc < m_sum.len())
            .map(|j| -(m_include + m_sum[j - n_inc]) + t_sum[k - j])
            .max_by(f64::total_cmp);
        if let Some(best_j) = best_j {
            evaluated += 1;
            let ub = alpha * cov + best_j;
            if ub < best_obj {
                best_obj = ub;
                best_obj_at = Some(i);
            }
        }
    }

    // Caps that hold whatever the prefixes say: no selection covers more than every coverable
    // ability, nor pays less redundancy than the k cheapest environments it may hold.
    let coverable: f64 = (0..problem.n_abilities())
        .filter(|a| {
            problem
                .ability_envs(*a)
                .iter()
                .any(|e| allowed(*e as usize))
        })
        .map(|a| f64::from(w[a]))
        .sum();
    let coverage_upper_bound = up(best_cov.min(coverable));
    if kind != BoundKind::Unclamped && start != usize::MAX {
        let cheapest: f64 = if w_r == 0.0 {
            0.0
        } else {
            scratch.clear();
            scratch.extend(
                (0..n)
                    .filter(|e| allowed(*e) && include.binary_search(e).is_err())
                    .map(|e| -(w_r * total[e])),
            );
            -top_desc(&mut scratch, r_max).iter().sum::<f64>()
        };
        let cap = alpha * coverable - m_include - cheapest;
        if cap < best_obj {
            best_obj = cap;
            best_obj_at = None;
        }
    }
    let coverage = cov as f32;
    let upper_bound = best_obj.is_finite().then(|| up(best_obj));
    Certificate {
        kind,
        value,
        upper_bound,
        gap_fraction: upper_bound.and_then(|ub| gap(value, ub)),
        coverage,
        coverage_upper_bound,
        best_prefix: best_obj_at,
        prefixes_evaluated: evaluated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AbilityWeighting, SelectConfig};
    use crate::select;
    use crate::synthetic::{SyntheticConfig, generate};

    #[test]
    fn scheduled_prefixes_give_a_valid_looser_bound() {
        let pool = generate(&SyntheticConfig {
            n: 400,
            abilities: 60,
            seed: 5,
            ..Default::default()
        })
        .unwrap();
        let p = &pool.problem;
        for cfg in [
            SelectConfig::aes(150).without_conflict(),
            SelectConfig {
                ability_weighting: AbilityWeighting::Rarity,
                ..SelectConfig::aes(150).coverage_only()
            },
            SelectConfig::aes(150),
        ] {
            let s = select(p, &cfg).unwrap();
            let checked = cfg.validate(p).unwrap();
            let every = certify_with_budget(p, &checked, &s.ranking, s.objective, usize::MAX);
            let sched = certify_with_budget(p, &checked, &s.ranking, s.objective, 0);
            assert_eq!(every.prefixes_evaluated, 151);
            assert!(sched.prefixes_evaluated <= SCHEDULED_PREFIXES + 1);
            assert!(sched.prefixes_evaluated >= SCHEDULED_PREFIXES / 2);
            let (a, b) = (every.upper_bound.unwrap(), sched.upper_bound.unwrap());
            assert!(b >= a && a >= s.objective, "{a} {b} {}", s.objective);
            assert!(sched.coverage_upper_bound >= every.coverage_upper_bound);
        }
    }

    #[test]
    fn unclamped_conflict_gets_no_bound_but_a_coverage_bound() {
        let pool = generate(&SyntheticConfig::default()).unwrap();
        let cfg = SelectConfig {
            clamp_conflict: false,
            ..SelectConfig::aes(30)
        };
        let c = select(&pool.problem, &cfg).unwrap().certificate.unwrap();
        assert_eq!(c.kind, BoundKind::Unclamped);
        assert_eq!((c.upper_bound, c.gap_fraction), (None, None));
        assert!(c.coverage_upper_bound >= c.coverage);
        assert!(c.to_string().contains("no bound"), "{c}");
    }
}
