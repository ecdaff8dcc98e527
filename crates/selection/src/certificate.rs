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
//! Cost. When the selection covers every coverable ability and the caps already meet its
//! value (coverage at the anchor pools' budgets), nothing else is computed. The exact coverage
//! greedy (lazy, coverage only, uniform weights) keeps `at_least[g]`, the number of candidates
//! gaining at least `g`, while it runs: one extra update per environment it walks, and
//! `Σ_g min(r, at_least[g])` gives the top-`r` gains at every prefix in `O(max gain)`.
//! Otherwise one replay of the ranking keeps every environment's uncovered weight exact
//! incrementally (each newly covered ability walks its environment list once: `O(nnz)` in
//! all), and reads the top gains at a prefix from an integer histogram with uniform weights
//! (of uncovered counts, or of (uncovered count, degree) cells when redundancy enters the
//! gain) or from an `O(n)` selection over `f64` gains. Prefixes are all evaluated while that
//! costs at most 2^20 steps in all, else 32 evenly spaced ones (the first and the last
//! included): a minimum over fewer prefixes is still a bound, only possibly a looser one.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::config::CheckedSelectConfig;
use crate::problem::Problem;

/// Evaluate the bound at every prefix while (cost of one prefix)·(prefixes) stays below this.
const EVERY_PREFIX_BUDGET: usize = 1 << 20;
/// Otherwise evaluate it at this many evenly spaced prefixes.
const SCHEDULED_PREFIXES: usize = 32;

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
    pub fn of(checked: &CheckedSelectConfig) -> Self {
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
    /// "every coverable ability, the redundancy of the `k` cheapest environments" was lower
    /// (or no prefix was evaluated: the caps alone proved the selection optimal).
    pub best_prefix: Option<usize>,
    /// How many prefixes the objective bound was evaluated at.
    pub prefixes_evaluated: usize,
}

impl Certificate {
    /// `100·gap_fraction`: the selection is within this many percent of optimal.
    pub fn within_percent(&self) -> Option<f32> {
        self.gap_fraction.map(|g| 100.0 * g)
    }

    /// `(coverage_upper_bound − coverage) / coverage_upper_bound` (at least 0), when the bound
    /// is positive.
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
                "objective {:.3} <= OPT <= {ub:.3} (gap {:.3}; no relative gap: the bound is not \
                 positive)",
                self.value,
                (ub - self.value).max(0.0)
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

/// Sum of the `r` largest integer gains, from `at_least[g]` = how many gains are `≥ g`:
/// `Σ_g min(r, at_least[g])`, in `O(len)`.
pub(crate) fn top_sum_at_least(at_least: &[u32], r: usize) -> u64 {
    at_least
        .iter()
        .skip(1)
        .map(|n| u64::from(*n).min(r as u64))
        .sum()
}

/// The coverage prefix bound the exact coverage greedy kept while it ran: the minimum of
/// `C(S_i) + Σ(k − |I| largest gains w.r.t. S_i)` over the prefixes it made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TrackedBound {
    /// The minimum.
    pub bound: f64,
    /// The prefix length where it was attained.
    pub prefix: usize,
    /// How many prefixes it covers.
    pub prefixes: usize,
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
    checked: &CheckedSelectConfig,
    ranking: &[usize],
    value: f32,
    tracked: Option<TrackedBound>,
) -> Certificate {
    certify_with_budget(
        problem,
        checked,
        ranking,
        value,
        EVERY_PREFIX_BUDGET,
        false,
        tracked,
    )
}

fn certify_with_budget(
    problem: &Problem,
    checked: &CheckedSelectConfig,
    ranking: &[usize],
    value: f32,
    every_prefix_budget: usize,
    force_float: bool,
    tracked: Option<TrackedBound>,
) -> Certificate {
    let n = problem.n_envs();
    let k = checked.config.k.max(ranking.len());
    let kind = BoundKind::of(checked);
    let w = &checked.ability_weights;
    let (w_c, w_r, _) = checked.effective_weights();
    let (w_c, w_r) = (f64::from(w_c), f64::from(w_r));
    let alpha = w_c + w_r;
    let include = &checked.include;
    let n_inc = include.len();
    let r_max = k.saturating_sub(n_inc);
    let allowed = |e: usize| !checked.excluded[e];
    let bounded = kind != BoundKind::Unclamped;
    // With w_r = 0 the coverage-and-redundancy part is w_c·C: its bound is w_c times C's.
    let generic = bounded && w_r != 0.0;
    let uniform = w.iter().all(|x| *x == 1.0);
    let degree = |e: usize| problem.env_abilities(e).len();
    let total: Vec<f64> = (0..n)
        .map(|e| {
            if uniform {
                degree(e) as f64
            } else {
                problem
                    .env_abilities(e)
                    .iter()
                    .map(|a| f64::from(w[*a as usize]))
                    .sum()
            }
        })
        .collect();

    // The first prefix that holds every must-include environment; the bound needs `I ⊆ A`.
    let start = include.iter().try_fold(0usize, |s, e| {
        ranking.iter().position(|r| r == e).map(|p| s.max(p + 1))
    });

    // Caps that hold whatever the prefixes say: no selection covers more than every coverable
    // ability, nor pays less redundancy than the must-includes and the k − |I| cheapest others.
    let coverable_mask: Vec<bool> = (0..problem.n_abilities())
        .map(|a| problem.ability_envs(a).iter().any(|e| allowed(*e as usize)))
        .collect();
    let coverable: f64 = (0..problem.n_abilities())
        .filter(|a| coverable_mask[*a])
        .map(|a| f64::from(w[a]))
        .sum();
    let m_include: f64 = include.iter().map(|e| w_r * total[*e]).sum();
    let mut scratch: Vec<f64> = Vec::with_capacity(n);
    let cheapest: f64 = if generic {
        scratch.extend(
            (0..n)
                .filter(|e| allowed(*e) && include.binary_search(e).is_err())
                .map(|e| -(w_r * total[e])),
        );
        -top_desc(&mut scratch, r_max).iter().sum::<f64>()
    } else {
        0.0
    };
    let cap = alpha * coverable - m_include - cheapest;

    let mut covered = vec![false; problem.n_abilities()];
    let mut sel_cov = 0f64;
    let (mut n_cov, n_coverable) = (0usize, coverable_mask.iter().filter(|c| **c).count());
    for &e in ranking {
        for &a in problem.env_abilities(e) {
            if !std::mem::replace(&mut covered[a as usize], true) {
                sel_cov += f64::from(w[a as usize]);
                n_cov += 1;
            }
        }
    }
    let certificate = |upper: Option<f64>, cov_upper: f64, best_prefix, evaluated| {
        let upper_bound = upper.map(up);
        Certificate {
            kind,
            value,
            upper_bound,
            gap_fraction: upper_bound.and_then(|ub| gap(value, ub)),
            coverage: sel_cov as f32,
            coverage_upper_bound: up(cov_upper),
            best_prefix,
            prefixes_evaluated: evaluated,
        }
    };
    let Some(start) = start else {
        // Not a selection from this crate (a must-include is missing): the caps alone.
        return certificate(bounded.then_some(cap), coverable, None, 0);
    };
    // Full coverage and a cap at the selection's own value: the caps already prove it
    // optimal and no prefix can do better, so skip the replay (e.g. coverage at the anchors'
    // budgets).
    if n_cov == n_coverable && (!bounded || cap - f64::from(value) <= 1e-6 * cap.abs().max(1.0)) {
        return certificate(bounded.then_some(cap), coverable, None, 0);
    }

    // How the top gains are read at a prefix: integer histograms with uniform weights (of
    // uncovered counts, or of (uncovered count, degree) cells when redundancy enters the
    // gain), or an O(n) selection over f64 gains.
    let d_max = (0..n).map(degree).max().unwrap_or(0);
    let cells = d_max + 1;
    #[derive(PartialEq)]
    enum Mode {
        Counts,
        Cells,
        Float,
    }
    let mode = if force_float {
        Mode::Float
    } else if uniform && !generic && cells <= 1 << 16 {
        Mode::Counts
    } else if uniform && generic && cells * cells <= 1 << 16 {
        Mode::Cells
    } else {
        Mode::Float
    };
    if let Some(t) = tracked
        && mode == Mode::Counts
    {
        // The exact coverage greedy already took the minimum over its prefixes (those after
        // the must-includes and any forced picks: a subset, so still a bound).
        let cov_ub = t.bound.min(coverable);
        let obj = (w_c * t.bound).min(cap);
        let at = (w_c * t.bound <= cap).then_some(t.prefix);
        return certificate(bounded.then_some(obj), cov_ub, at, t.prefixes);
    }
    let per_prefix = match mode {
        Mode::Counts => cells,
        Mode::Cells => cells * cells + k,
        Mode::Float => n + k,
    };
    let every = per_prefix.saturating_mul(ranking.len() + 1) <= every_prefix_budget;
    let span = ranking.len().saturating_sub(start);
    let stride = if every {
        1
    } else {
        span.div_ceil(SCHEDULED_PREFIXES - 1).max(1)
    };
    // Per environment, its histogram slot (`count`, or `count·cells + degree`), `DEAD` once it
    // is picked or excluded; one decrement of its count moves it down by `step` slots.
    const DEAD: u32 = u32::MAX;
    let step = if mode == Mode::Cells { cells as u32 } else { 1 };
    let mut live: Vec<bool> = (0..n).map(allowed).collect();
    let mut n_live = live.iter().filter(|x| **x).count();
    let mut slot: Vec<u32> = Vec::new();
    let mut uncovered_w: Vec<f64> = Vec::new();
    let mut hist: Vec<u32> = Vec::new();
    if mode == Mode::Float {
        uncovered_w = total.clone();
    } else {
        slot = (0..n)
            .map(|e| {
                let d = degree(e) as u32;
                match (live[e], &mode) {
                    (false, _) => DEAD,
                    (true, Mode::Cells) => d * step + d,
                    (true, _) => d,
                }
            })
            .collect();
        hist = vec![
            0;
            if mode == Mode::Cells {
                cells * cells
            } else {
                cells
            }
        ];
        for &sl in slot.iter().filter(|s| **s != DEAD) {
            hist[sl as usize] += 1;
        }
        if mode == Mode::Counts {
            // Counts keep `at_least[g]` (live environments with count ≥ g) instead: a
            // decrement from c then touches one entry (`at_least[c]`), not two, which halves
            // the chain of dependent updates in the hot loop.
            for g in (1..cells).rev() {
                hist[g - 1] += hist[g];
            }
        }
    }
    // Cells in the order of their gain α·c − w_r·d, and of their coverage c.
    let mut by_gain: Vec<(usize, usize)> = Vec::new();
    let mut by_count: Vec<(usize, usize)> = Vec::new();
    if mode == Mode::Cells {
        let all: Vec<(usize, usize)> = (0..cells)
            .flat_map(|c| (c..cells).map(move |d| (c, d)))
            .collect();
        by_gain = all.clone();
        let v = |(c, d): (usize, usize)| alpha * c as f64 - w_r * d as f64;
        by_gain.sort_unstable_by(|a, b| v(*b).total_cmp(&v(*a)));
        by_count = all;
        by_count.sort_unstable_by_key(|cell| std::cmp::Reverse(cell.0));
    }
    // Redundancy weights m(e) of the prefix's picks that are not must-includes.
    let mut m_free: Vec<f64> = Vec::new();
    let mut m_hist: Vec<u32> = vec![0; if mode == Mode::Cells { cells } else { 0 }];

    covered.iter_mut().for_each(|c| *c = false);
    let mut cov = 0f64;
    let mut best_cov = coverable;
    let mut best_obj = if bounded { cap } else { f64::INFINITY };
    let mut best_obj_at = None;
    let mut evaluated = 0usize;
    let mut t_sum: Vec<f64> = Vec::with_capacity(r_max + 1);
    let mut m_sum: Vec<f64> = Vec::with_capacity(k + 1);
    for i in 0..=ranking.len() {
        if i > 0 {
            let e = ranking[i - 1];
            if std::mem::replace(&mut live[e], false) {
                n_live -= 1;
                match mode {
                    Mode::Counts => hist[1..=slot[e] as usize].iter_mut().for_each(|h| *h -= 1),
                    Mode::Cells => hist[slot[e] as usize] -= 1,
                    Mode::Float => {}
                }
                if mode != Mode::Float {
                    slot[e] = DEAD;
                }
            }
            if include.binary_search(&e).is_err() {
                match mode {
                    Mode::Cells => m_hist[degree(e)] += 1,
                    _ => m_free.push(w_r * total[e]),
                }
            }
            for &a in problem.env_abilities(e) {
                let a = a as usize;
                if std::mem::replace(&mut covered[a], true) {
                    continue;
                }
                let wa = f64::from(w[a]);
                cov += wa;
                // The hot loop (O(nnz) over the whole replay): one slot move per environment.
                if mode == Mode::Float {
                    for &o in problem.ability_envs(a) {
                        uncovered_w[o as usize] -= wa;
                    }
                } else if mode == Mode::Counts {
                    for &o in problem.ability_envs(a) {
                        let sl = slot[o as usize];
                        if sl != DEAD {
                            hist[sl as usize] -= 1;
                            slot[o as usize] = sl - 1;
                        }
                    }
                } else {
                    for &o in problem.ability_envs(a) {
                        let sl = slot[o as usize];
                        if sl != DEAD {
                            hist[sl as usize] -= 1;
                            hist[(sl - step) as usize] += 1;
                            slot[o as usize] = sl - step;
                        }
                    }
                }
            }
        }
        if i < start {
            continue;
        }
        let sched = i == ranking.len() || (i - start).is_multiple_of(stride);

        // Coverage bound: monotone, so as many of the largest gains as S \ A can hold.
        let top_cov = match mode {
            Mode::Counts => Some(top_sum_at_least(&hist, r_max) as f64),
            Mode::Cells => {
                let (mut left, mut sum) = (r_max, 0f64);
                for &(c, d) in &by_count {
                    if left == 0 || c == 0 {
                        break;
                    }
                    let take = left.min(hist[c * cells + d] as usize);
                    sum += (take * c) as f64;
                    left -= take;
                }
                Some(sum)
            }
            Mode::Float if sched => {
                scratch.clear();
                scratch.extend((0..n).filter(|e| live[*e]).map(|e| uncovered_w[e]));
                Some(
                    top_desc(&mut scratch, r_max)
                        .iter()
                        .map(|g| g.max(0.0))
                        .sum(),
                )
            }
            Mode::Float => None,
        };
        if let Some(t) = top_cov {
            best_cov = best_cov.min(cov + t);
        }
        if !bounded {
            continue;
        }
        if !generic {
            if let Some(t) = top_cov {
                evaluated += 1;
                let ub = w_c * (cov + t);
                if ub < best_obj {
                    best_obj = ub;
                    best_obj_at = Some(i);
                }
            }
            continue;
        }
        if !sched {
            continue;
        }
        // g(A) + max_j [−M_j + T_{k−j}]: T from the largest gains outside A, M from the
        // cheapest redundancy inside it.
        t_sum.clear();
        t_sum.push(0.0);
        if mode == Mode::Cells {
            'fill: for &(c, d) in &by_gain {
                let g = alpha * c as f64 - w_r * d as f64;
                for _ in 0..hist[c * cells + d] {
                    if t_sum.len() > r_max {
                        break 'fill;
                    }
                    t_sum.push(t_sum[t_sum.len() - 1] + g);
                }
            }
        } else {
            scratch.clear();
            scratch.extend(
                (0..n)
                    .filter(|e| live[*e])
                    .map(|e| alpha * uncovered_w[e] - w_r * total[e]),
            );
            for g in top_desc(&mut scratch, r_max) {
                t_sum.push(t_sum[t_sum.len() - 1] + g);
            }
        }
        m_sum.clear();
        m_sum.push(0.0);
        if mode == Mode::Cells {
            for (d, &c) in m_hist.iter().enumerate() {
                for _ in 0..c {
                    m_sum.push(m_sum[m_sum.len() - 1] + w_r * d as f64);
                }
            }
        } else {
            let mut sorted = m_free.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            for m in sorted {
                m_sum.push(m_sum[m_sum.len() - 1] + m);
            }
        }
        let j_lo = n_inc.max(k.saturating_sub(n_live));
        let j_hi = i.min(k);
        let best_j = (j_lo..=j_hi)
            .filter(|j| k - j < t_sum.len() && j - n_inc < m_sum.len())
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
    certificate(
        bounded.then_some(best_obj),
        best_cov,
        best_obj_at,
        evaluated,
    )
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
            abilities: 1000,
            seed: 5,
            ..Default::default()
        })
        .unwrap();
        let p = &pool.problem;
        for cfg in [
            SelectConfig::aes(40).without_conflict(),
            SelectConfig {
                ability_weighting: AbilityWeighting::Rarity,
                ..SelectConfig::aes(40).coverage_only()
            },
            SelectConfig::aes(40),
        ] {
            let s = select(p, &cfg).unwrap();
            let checked = cfg.validate(p).unwrap();
            let every = certify_with_budget(
                p,
                &checked,
                &s.ranking,
                s.objective,
                usize::MAX,
                false,
                None,
            );
            let sched = certify_with_budget(p, &checked, &s.ranking, s.objective, 0, false, None);
            // The integer histograms and the f64 selection read the same gains.
            let float =
                certify_with_budget(p, &checked, &s.ranking, s.objective, usize::MAX, true, None);
            assert_eq!(float.upper_bound, every.upper_bound);
            assert_eq!(float.coverage_upper_bound, every.coverage_upper_bound);
            assert_eq!(every.prefixes_evaluated, 41);
            assert!(s.covered < s.coverable);
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
