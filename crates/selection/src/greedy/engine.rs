//! The incremental evaluation engine shared by every optimizer and by the baselines: a
//! candidate's term shares ([`Parts`]), its packed conflict cache, the heap keys that order
//! candidates by gain then lowest index, and [`Engine`], which evaluates and commits picks.

use std::collections::BinaryHeap;

use rayon::prelude::*;

use crate::config::{Aggregation, CheckedSelectConfig};
use crate::objective::{PickReason, StepTrace};
use crate::problem::{Problem, UnitGradients, dot};

/// A candidate's weighted term shares at one evaluation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Parts {
    pub gain: f32,
    pub coverage: f32,
    pub redundancy: f32,
    pub conflict: f32,
}

impl Parts {
    pub(super) fn trace(self, env: usize, reason: PickReason) -> StepTrace {
        StepTrace {
            env,
            gain: self.gain,
            coverage: self.coverage,
            redundancy: self.redundancy,
            conflict: self.conflict,
            reason,
        }
    }
}

/// `-0.0` and `0.0` compare equal but have different bits; the heap keys use bits.
#[inline]
pub(super) fn canon(x: f32) -> f32 {
    if x == 0.0 { 0.0 } else { x }
}

/// Heap key: gain (order-preserving bits) high, inverted index low, so the max-heap pops the
/// highest gain and, among equal gains, the lowest index.
#[inline]
pub(super) fn key(gain: f32, env: usize) -> u64 {
    let b = gain.to_bits();
    let ord = if b >> 31 == 1 { !b } else { b | 0x8000_0000 };
    (u64::from(ord) << 32) | u64::from(u32::MAX - env as u32)
}

#[inline]
pub(super) fn key_env(k: u64) -> usize {
    (u32::MAX - k as u32) as usize
}

#[inline]
pub(super) fn key_gain(k: u64) -> f32 {
    let ord = (k >> 32) as u32;
    f32::from_bits(if ord >> 31 == 1 {
        ord & 0x7FFF_FFFF
    } else {
        !ord
    })
}

/// Folds at least this long compute their dot products in parallel.
const PARALLEL_FOLD: usize = 96;

/// A candidate's conflict accumulator: the picks folded so far and their max or sum.
/// Stored packed in one zero-initialised `u64` so pools without gradients never touch it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cache {
    acc: f32,
    seen: u32,
}

impl Cache {
    #[inline]
    pub(super) fn load(word: u64) -> Self {
        Self {
            acc: f32::from_bits((word >> 32) as u32),
            seen: word as u32,
        }
    }

    #[inline]
    fn store(self) -> u64 {
        (u64::from(self.acc.to_bits()) << 32) | u64::from(self.seen)
    }
}

/// State shared by all candidates (read-only during an evaluation sweep).
pub(super) struct Shared<'a> {
    pub(super) p: &'a Problem,
    pub(super) c: &'a CheckedSelectConfig,
    pub(super) grads: Option<&'a UnitGradients>,
    pub(super) covered: Vec<bool>,
    pub(super) selected: Vec<bool>,
    pub(super) picks: Vec<usize>,
    pub(super) n_coverable: usize,
    pub(super) n_covered: usize,
}

impl Shared<'_> {
    /// Weighted NewCoverage and Redundancy shares of `e` against the covered flags.
    #[inline]
    pub(super) fn coverage_shares(&self, e: usize) -> (f32, f32) {
        let w = &self.c.ability_weights;
        let (mut cov, mut red) = (0.0f32, 0.0f32);
        for &a in self.p.env_abilities(e) {
            let a = a as usize;
            if self.covered[a] {
                red += w[a];
            } else {
                cov += w[a];
            }
        }
        (
            canon(self.c.w_coverage * cov),
            canon(-(self.c.w_redundancy * red)),
        )
    }

    /// Weighted Conflict share from a cache as it stands (possibly stale).
    #[inline]
    pub(super) fn conflict_share(&self, cache: &Cache) -> f32 {
        if self.grads.is_none() || cache.seen == 0 {
            return 0.0;
        }
        let conf = match self.c.config.aggregation {
            Aggregation::Mean => cache.acc / cache.seen as f32,
            Aggregation::Max | Aggregation::Sum => cache.acc,
        };
        canon(-(self.c.w_conflict * conf))
    }

    /// Fold the picks `e`'s cache has not seen into it, in pick order.
    #[inline]
    fn fold_conflict(&self, e: usize, cache: &mut Cache) {
        let Some(g) = self.grads else { return };
        let agg = self.c.config.aggregation;
        let clamp = self.c.config.clamp_conflict;
        let row = g.row(e);
        let pen = |s: usize| {
            let p = -dot(row, g.row(s));
            if clamp { p.max(0.0) } else { p }
        };
        let new = &self.picks[cache.seen as usize..];
        if cache.seen == 0 && !new.is_empty() {
            cache.acc = match agg {
                Aggregation::Max => f32::NEG_INFINITY,
                Aggregation::Sum | Aggregation::Mean => 0.0,
            };
        }
        let mut fold = |p: f32| {
            cache.acc = match agg {
                Aggregation::Max => cache.acc.max(p),
                Aggregation::Sum | Aggregation::Mean => cache.acc + p,
            };
        };
        if new.len() >= PARALLEL_FOLD {
            // The dot products of a long fold run in parallel; the fold itself stays
            // sequential in pick order, so sums are bit-identical to naive greedy's.
            let pens: Vec<f32> = new.par_iter().with_min_len(16).map(|&s| pen(s)).collect();
            pens.into_iter().for_each(fold);
        } else {
            new.iter().for_each(|&s| fold(pen(s)));
        }
        cache.seen = self.picks.len() as u32;
    }

    #[inline]
    pub(super) fn eval(&self, e: usize, word: &mut u64) -> Parts {
        let (c, r) = self.coverage_shares(e);
        let x = if self.grads.is_some() {
            let mut cache = Cache::load(*word);
            self.fold_conflict(e, &mut cache);
            *word = cache.store();
            self.conflict_share(&cache)
        } else {
            0.0
        };
        Parts {
            gain: canon(c + r + x),
            coverage: c,
            redundancy: r,
            conflict: x,
        }
    }

    #[inline]
    pub(super) fn adds_coverage(&self, e: usize) -> bool {
        self.p
            .env_abilities(e)
            .iter()
            .any(|a| !self.covered[*a as usize])
    }

    #[inline]
    pub(super) fn allowed(&self, e: usize) -> bool {
        !self.selected[e] && !self.c.excluded[e]
    }

    #[inline]
    pub(super) fn eligible(&self, e: usize, phase1: bool) -> bool {
        self.allowed(e) && (!phase1 || self.adds_coverage(e))
    }

    pub(super) fn coverage_complete(&self) -> bool {
        self.n_covered == self.n_coverable
    }
}

/// The incremental evaluation engine shared by every optimizer and by the baselines.
pub(crate) struct Engine<'a> {
    pub(super) s: Shared<'a>,
    pub(super) caches: Vec<u64>,
    pub evaluations: u64,
}

impl<'a> Engine<'a> {
    pub(crate) fn new(p: &'a Problem, c: &'a CheckedSelectConfig) -> Self {
        let coverable = coverable_mask(p, &c.excluded);
        Self {
            s: Shared {
                p,
                c,
                grads: p.gradients().filter(|_| c.w_conflict != 0.0),
                covered: vec![false; p.n_abilities()],
                selected: vec![false; p.n_envs()],
                picks: Vec::new(),
                n_coverable: coverable.iter().filter(|x| **x).count(),
                n_covered: 0,
            },
            caches: vec![0; p.n_envs()],
            evaluations: 0,
        }
    }

    pub(crate) fn eval(&mut self, e: usize) -> Parts {
        self.evaluations += 1;
        self.s.eval(e, &mut self.caches[e])
    }

    pub(crate) fn commit(&mut self, e: usize) {
        self.s.selected[e] = true;
        self.s.picks.push(e);
        for &a in self.s.p.env_abilities(e) {
            let a = a as usize;
            if !self.s.covered[a] {
                self.s.covered[a] = true;
                // Picks are never excluded, so every ability they cover is coverable.
                self.s.n_covered += 1;
            }
        }
    }

    /// Evaluate `e` and pick it, returning its trace.
    pub(crate) fn force(&mut self, e: usize, reason: PickReason) -> StepTrace {
        let t = self.eval(e).trace(e, reason);
        self.commit(e);
        t
    }

    pub(super) fn n_picks(&self) -> usize {
        self.s.picks.len()
    }

    /// Greedy set cover of the still-uncovered coverable abilities with allowed candidates:
    /// how many picks it needs (stopping once past `limit`) and its first pick.
    pub(super) fn greedy_cover(&self, limit: usize) -> (usize, Option<usize>) {
        let p = self.s.p;
        let mut covered = self.s.covered.clone();
        let mut left = self.s.n_coverable - self.s.n_covered;
        let fresh = |covered: &[bool], e: usize| {
            p.env_abilities(e)
                .iter()
                .filter(|a| !covered[**a as usize])
                .count()
        };
        let mut heap: BinaryHeap<u64> = (0..p.n_envs())
            .filter(|e| self.s.allowed(*e))
            .map(|e| key(fresh(&covered, e) as f32, e))
            .filter(|k| key_gain(*k) > 0.0)
            .collect();
        let (mut need, mut first) = (0, None);
        while left > 0 && need <= limit {
            let Some(k) = heap.pop() else { break };
            let e = key_env(k);
            let g = fresh(&covered, e);
            if g as f32 == key_gain(k) {
                need += 1;
                first.get_or_insert(e);
                for &a in p.env_abilities(e) {
                    if !covered[a as usize] {
                        covered[a as usize] = true;
                        left -= 1;
                    }
                }
            } else if g > 0 {
                heap.push(key(g as f32, e));
            }
        }
        (need, first)
    }
}

pub(super) fn coverable_mask(problem: &Problem, excluded: &[bool]) -> Vec<bool> {
    if !excluded.iter().any(|x| *x) {
        return (0..problem.n_abilities())
            .map(|a| !problem.ability_envs(a).is_empty())
            .collect();
    }
    (0..problem.n_abilities())
        .map(|a| {
            problem
                .ability_envs(a)
                .iter()
                .any(|e| !excluded[*e as usize])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_by_gain_then_lowest_index() {
        let gains = [-3.5f32, -0.0, 0.0, 1e-30, 2.0, f32::INFINITY];
        for w in gains.windows(2) {
            assert!(key(canon(w[0]), 5) <= key(canon(w[1]), 5), "{w:?}");
        }
        assert!(key(1.0, 3) > key(1.0, 4));
        for g in gains {
            assert_eq!(key_gain(key(canon(g), 9)), canon(g));
            assert_eq!(key_env(key(g, 9)), 9);
        }
    }
}
