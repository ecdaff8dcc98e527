//! References a selection is measured against: the oracle k-subset under the world's true
//! dynamics, and a pick from measured lookahead affinity (TAG-style).
//!
//! The oracle values a subset by the pool's score after the base practises a uniform mixture
//! of it at H4 for the training budget ([`Learner::practise`], the expected run without its
//! sampling noise): what training on that subset gives in this world. It enumerates every
//! subset where there are at most [`OracleSearch::exact_limit`] of them, and otherwise takes
//! the best of the candidates it is given (the arms' own picks), random subsets, a greedy
//! build and swaps from the best until none improves: not proven optimal, and said so.

use envdist_core::{HarnessLevel, Rng};
use serde::{Deserialize, Serialize};

use crate::learner::{Learner, Practice};
use crate::world::World;

/// How the oracle searches.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OracleSearch {
    /// Enumerate every subset when there are at most this many. Default 20,000.
    pub exact_limit: u64,
    /// Random subsets tried before the local search. Default 16.
    pub random_draws: u32,
    /// Subset evaluations at most (the search stops there). Default 1,500: a greedy build
    /// and about two passes of swaps at the default map's size.
    pub max_evaluations: u32,
    /// Rounds of the deterministic practice per evaluation. Default 16.
    pub steps: u32,
}

impl Default for OracleSearch {
    fn default() -> Self {
        Self {
            exact_limit: 20_000,
            random_draws: 16,
            max_evaluations: 1_500,
            steps: 16,
        }
    }
}

/// The oracle's subset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OracleChoice {
    /// The subset (pool indices, ascending).
    pub envs: Vec<usize>,
    /// Its value: the pool's expected score after training on it, in [0, 1].
    pub value: f32,
    /// Whether every subset was enumerated (the optimum), or the search stopped short.
    pub exact: bool,
    /// Subsets evaluated.
    pub evaluations: u32,
}

/// The pool's expected score after `base` practises a uniform mixture of `subset` at H4 for
/// `episodes` episodes in `steps` rounds.
pub fn subset_value(
    world: &World,
    base: &Learner,
    subset: &[usize],
    episodes: f32,
    steps: u32,
) -> f32 {
    let mix: Vec<Practice> = subset
        .iter()
        .map(|&env| Practice {
            env,
            level: HarnessLevel::H4,
            weight: 1.0,
        })
        .collect();
    let mut l = base.clone();
    l.practise(world, &mix, episodes, steps);
    l.score(world)
}

/// `n` choose `k` for `k <= n`, saturating at `u64::MAX`.
fn binomial(n: u64, k: u64) -> u64 {
    let k = k.min(n - k);
    let mut c: u64 = 1;
    for i in 0..k {
        c = c.saturating_mul(n - i) / (i + 1);
    }
    c
}

struct Search<'a> {
    world: &'a World,
    k: usize,
    base: &'a Learner,
    episodes: f32,
    steps: u32,
    evaluations: u32,
    best: (Vec<usize>, f32),
}

impl Search<'_> {
    fn value(&mut self, subset: &[usize]) -> f32 {
        self.evaluations += 1;
        let v = subset_value(self.world, self.base, subset, self.episodes, self.steps);
        // The greedy build values smaller sets on its way: they are not candidates.
        if subset.len() != self.k {
            return v;
        }
        let mut sorted = subset.to_vec();
        sorted.sort_unstable();
        if v > self.best.1 || (v == self.best.1 && sorted < self.best.0) {
            self.best = (sorted, v);
        }
        v
    }
}

/// The best `k`-subset of the pool under the world's true dynamics (see the module docs);
/// `candidates` are tried first (subsets of another size are ignored), `seed` draws the
/// random subsets.
pub fn oracle(
    world: &World,
    base: &Learner,
    k: usize,
    episodes: f32,
    candidates: &[Vec<usize>],
    search: &OracleSearch,
    seed: u64,
) -> OracleChoice {
    let n = world.len();
    let k = k.clamp(1, n);
    let mut s = Search {
        world,
        k,
        base,
        episodes,
        steps: search.steps,
        evaluations: 0,
        best: (Vec::new(), f32::NEG_INFINITY),
    };
    if binomial(n as u64, k as u64) <= search.exact_limit {
        let mut idx: Vec<usize> = (0..k).collect();
        loop {
            s.value(&idx);
            // The next combination in lexicographic order.
            let Some(i) = (0..k).rev().find(|&i| idx[i] < n - k + i) else {
                break;
            };
            idx[i] += 1;
            for j in i + 1..k {
                idx[j] = idx[j - 1] + 1;
            }
        }
        return OracleChoice {
            envs: s.best.0,
            value: s.best.1,
            exact: true,
            evaluations: s.evaluations,
        };
    }
    for c in candidates.iter().filter(|c| c.len() == k) {
        s.value(c);
    }
    let mut rng = Rng::derive(seed, 0x4f52_4143);
    let mut all: Vec<usize> = (0..n).collect();
    for _ in 0..search.random_draws {
        rng.shuffle(&mut all);
        s.value(&all[..k]);
    }
    // Greedy build: add the environment whose set scores best, k times.
    let mut built: Vec<usize> = Vec::with_capacity(k);
    while built.len() < k && s.evaluations < search.max_evaluations {
        let mut pick = (usize::MAX, f32::NEG_INFINITY);
        for e in 0..n {
            if built.contains(&e) {
                continue;
            }
            if s.evaluations >= search.max_evaluations {
                break;
            }
            built.push(e);
            let v = s.value(&built);
            built.pop();
            if v > pick.1 {
                pick = (e, v);
            }
        }
        if pick.0 == usize::MAX {
            break;
        }
        built.push(pick.0);
    }
    // Swaps from the best subset found, first improvement, until a pass improves nothing.
    let mut current = s.best.clone();
    'passes: loop {
        let mut improved = false;
        for pos in 0..k {
            for e in 0..n {
                if current.0.contains(&e) {
                    continue;
                }
                if s.evaluations >= search.max_evaluations {
                    break 'passes;
                }
                let mut next = current.0.clone();
                next[pos] = e;
                let v = s.value(&next);
                if v > current.1 {
                    next.sort_unstable();
                    current = (next, v);
                    improved = true;
                }
            }
        }
        if !improved {
            break;
        }
    }
    OracleChoice {
        envs: s.best.0,
        value: s.best.1,
        exact: false,
        evaluations: s.evaluations,
    }
}

/// The `k` sources whose measured lookahead transfer to the whole pool is largest (row sums
/// of `affinity`, one row per source environment, one column per target; ties to the lower
/// index): TAG's first-order prediction of what training on a set gives every task, where the
/// set's gain is the sum of its members'.
pub fn lookahead_pick(affinity: &[Vec<f32>], k: usize) -> Vec<usize> {
    let mut rows: Vec<(usize, f64)> = affinity
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r.iter().map(|v| *v as f64).sum()))
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut pick: Vec<usize> = rows.iter().take(k).map(|r| r.0).collect();
    pick.sort_unstable();
    pick
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WorldConfig;
    use envdist_core::Validate;

    #[test]
    fn with_transfer_off_the_oracle_picks_the_largest_own_gains() {
        let c = WorldConfig {
            families: 4,
            variants: 2,
            transfer: 0.0,
            family_share: 0.0,
            trunk: 0.0,
            interference: 0.0,
            ..Default::default()
        };
        let world = World::generate(&c.checked().unwrap(), 11);
        let base = Learner::base(&world);
        let (k, episodes) = (3, 900.0);
        let choice = oracle(&world, &base, k, episodes, &[], &OracleSearch::default(), 1);
        assert!(choice.exact);
        assert_eq!(choice.evaluations, 56);
        // Own gain of each environment with its share of the budget, alone.
        let before = base.successes(&world);
        let gains: Vec<f32> = (0..world.len())
            .map(|e| {
                let mut l = base.clone();
                l.practise(
                    &world,
                    &[Practice {
                        env: e,
                        level: HarnessLevel::H4,
                        weight: 1.0,
                    }],
                    episodes / k as f32,
                    16,
                );
                l.h4_success(&world, e) - before[e]
            })
            .collect();
        let mut order: Vec<usize> = (0..world.len()).collect();
        order.sort_by(|a, b| gains[*b].total_cmp(&gains[*a]));
        let mut top = order[..k].to_vec();
        top.sort_unstable();
        assert_eq!(choice.envs, top, "gains {gains:?}");
    }

    #[test]
    fn the_search_keeps_the_best_candidate_and_lookahead_takes_row_sums() {
        let world = World::generate(&WorldConfig::default().checked().unwrap(), 4);
        let base = Learner::base(&world);
        let search = OracleSearch {
            max_evaluations: 200,
            random_draws: 4,
            ..Default::default()
        };
        let good: Vec<usize> = (0..6).collect();
        let v = subset_value(&world, &base, &good, 3000.0, 16);
        let choice = oracle(&world, &base, 6, 3000.0, &[good], &search, 2);
        assert!(!choice.exact && choice.value >= v && choice.evaluations <= 200);
        let a = vec![vec![1.0, 0.0], vec![3.0, -1.0], vec![0.5, 0.6]];
        assert_eq!(lookahead_pick(&a, 2), vec![1, 2]);
        assert_eq!(binomial(8, 3), 56);
    }
}
