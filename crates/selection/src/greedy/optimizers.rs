//! The greedy loop ([`run`]: must-includes, the coverage constraint, the zero-gain shortcut)
//! and the ways it picks the next environment: naive, lazy and stochastic greedy, and the
//! exact integer-gain path for plain max coverage.

use std::collections::BinaryHeap;

use rayon::prelude::*;

use envdist_core::Rng;

use crate::certificate::{TrackedBound, top_sum_at_least};
use crate::config::CheckedSelectConfig;
use crate::error::SelectError;
use crate::objective::{PickReason, StepTrace};
use crate::problem::Problem;

use super::engine::{Cache, Engine, Parts, canon, key, key_env, key_gain};

#[derive(Debug, Clone, Copy)]
pub(super) enum Mode {
    Naive,
    Lazy,
    Stochastic { epsilon: f32, seed: u64 },
}

pub(super) enum RunError {
    Select(SelectError),
    GainIncreased {
        step: usize,
        env: usize,
        bound: f32,
        gain: f32,
    },
}

pub(super) struct RunOut {
    pub(super) steps: Vec<StepTrace>,
    pub(super) tracked: Option<TrackedBound>,
    pub(super) evaluations: u64,
    pub(super) notes: Vec<String>,
}

fn better(a: (usize, Parts), b: (usize, Parts)) -> (usize, Parts) {
    if a.1.gain > b.1.gain || (a.1.gain == b.1.gain && a.0 < b.0) {
        a
    } else {
        b
    }
}

fn naive_choose(eng: &mut Engine<'_>, phase1: bool) -> Option<(usize, Parts)> {
    let s = &eng.s;
    let (best, count) = eng
        .caches
        .par_iter_mut()
        .enumerate()
        .with_min_len(512)
        .filter(|(e, _)| s.eligible(*e, phase1))
        .map(|(e, cache)| (Some((e, s.eval(e, cache))), 1u64))
        .reduce(
            || (None, 0),
            |(a, na), (b, nb)| {
                let best = match (a, b) {
                    (Some(a), Some(b)) => Some(better(a, b)),
                    (a, None) => a,
                    (None, b) => b,
                };
                (best, na + nb)
            },
        );
    eng.evaluations += count;
    best
}

struct Lazy {
    heap: BinaryHeap<u64>,
    eval_at: Vec<u32>,
    parts: Vec<Parts>,
    deferred: Vec<u64>,
    started: bool,
}

impl Lazy {
    fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            eval_at: Vec::new(),
            parts: Vec::new(),
            deferred: Vec::new(),
            started: false,
        }
    }

    fn start(&mut self, eng: &mut Engine<'_>) {
        let n = eng.s.p.n_envs();
        self.eval_at = vec![0; n];
        self.parts = vec![Parts::default(); n];
        let s = &eng.s;
        let t = s.picks.len() as u32;
        let evaluated: Vec<(usize, Parts)> = eng
            .caches
            .par_iter_mut()
            .enumerate()
            .with_min_len(512)
            .filter(|(e, _)| s.allowed(*e))
            .map(|(e, cache)| (e, s.eval(e, cache)))
            .collect();
        eng.evaluations += evaluated.len() as u64;
        let mut keys = Vec::with_capacity(evaluated.len());
        for (e, parts) in evaluated {
            self.eval_at[e] = t;
            self.parts[e] = parts;
            keys.push(key(parts.gain, e));
        }
        self.heap = BinaryHeap::from(keys);
        self.started = true;
    }

    fn choose(
        &mut self,
        eng: &mut Engine<'_>,
        phase1: bool,
    ) -> Result<Option<(usize, Parts)>, RunError> {
        if !self.started {
            self.start(eng);
        }
        if !phase1 && !self.deferred.is_empty() {
            self.heap.extend(self.deferred.drain(..));
        }
        let t = eng.n_picks() as u32;
        while let Some(k) = self.heap.pop() {
            let e = key_env(k);
            if eng.s.selected[e] {
                continue; // picked by force (must-include or coverage constraint)
            }
            if phase1 && !eng.s.adds_coverage(e) {
                // Coverage only shrinks, so it stays ineligible until phase 1 ends.
                self.deferred.push(k);
                continue;
            }
            if self.eval_at[e] == t {
                return Ok(Some((e, self.parts[e])));
            }
            let bound = key_gain(k);
            if eng.s.grads.is_some() {
                // Cheap stage: fresh coverage shares with the stale conflict share. Penalties
                // only grow here (lazy runs only then), so this is still an upper bound; if it
                // no longer tops the queue, skip the O(dim) fold for now.
                let (c, r) = eng.s.coverage_shares(e);
                let ub = canon(c + r + eng.s.conflict_share(&Cache::load(eng.caches[e])));
                if ub > bound {
                    return Err(RunError::GainIncreased {
                        step: t as usize,
                        env: e,
                        bound,
                        gain: ub,
                    });
                }
                let tightened = key(ub, e);
                if self.heap.peek().is_some_and(|top| tightened < *top) {
                    self.heap.push(tightened);
                    continue;
                }
            }
            let parts = eng.eval(e);
            if parts.gain > bound {
                return Err(RunError::GainIncreased {
                    step: t as usize,
                    env: e,
                    bound,
                    gain: parts.gain,
                });
            }
            self.eval_at[e] = t;
            self.parts[e] = parts;
            self.heap.push(key(parts.gain, e));
        }
        Ok(None)
    }
}

fn stochastic_choose(
    eng: &mut Engine<'_>,
    phase1: bool,
    rng: &mut Rng,
    sample: usize,
) -> Option<(usize, Parts)> {
    let mut cand: Vec<usize> = (0..eng.s.p.n_envs())
        .filter(|e| eng.s.eligible(*e, phase1))
        .collect();
    let s = sample.min(cand.len());
    for i in 0..s {
        let j = i + rng.index(cand.len() - i);
        cand.swap(i, j);
    }
    cand[..s].iter().map(|&e| (e, eng.eval(e))).reduce(better)
}

/// Exact greedy max coverage with integer gains: each environment's count of uncovered
/// abilities is kept exact by walking the newly covered abilities' environment lists, and the
/// argmax (lowest index on ties) comes from lazily refreshed per-block maxima. Runs until full
/// coverage or `k` picks; the result is the naive argmax sequence.
///
/// With `track`, it also keeps `at_least[g]` (candidates gaining `≥ g`) so that the
/// certificate's prefix bound `C(S_i) + Σ(k − |I| largest gains)` costs `O(max gain)` per
/// pick and one extra update per walked environment, instead of a second walk afterwards.
fn coverage_greedy(
    eng: &mut Engine<'_>,
    k: usize,
    steps: &mut Vec<StepTrace>,
    track: bool,
) -> Option<TrackedBound> {
    const BLOCK: usize = 1024;
    const OUT: i16 = i16::MIN / 2;
    let p = eng.s.p;
    let n = p.n_envs();
    let fresh = eng.s.picks.is_empty();
    let mut gains: Vec<i16> = (0..n)
        .map(|e| {
            if !eng.s.allowed(e) {
                OUT
            } else if fresh {
                p.env_abilities(e).len() as i16
            } else {
                p.env_abilities(e)
                    .iter()
                    .filter(|a| !eng.s.covered[**a as usize])
                    .count() as i16
            }
        })
        .collect();
    let mut bound: Vec<i16> = gains
        .chunks(BLOCK)
        .map(|b| b.iter().copied().max().unwrap_or(OUT))
        .collect();
    let r_max = k.saturating_sub(eng.s.c.include.len());
    let mut at_least: Vec<u32> = Vec::new();
    let mut tracked = TrackedBound {
        bound: f64::INFINITY,
        prefix: 0,
        prefixes: 0,
    };
    if track {
        let top = gains.iter().copied().max().unwrap_or(0).max(0) as usize;
        at_least = vec![0; top + 1];
        for &g in gains.iter().filter(|g| **g > 0) {
            at_least[g as usize] += 1;
        }
        for g in (1..=top).rev() {
            at_least[g - 1] += at_least[g];
        }
    }
    let mut record = |at_least: &[u32], picks: usize, covered: usize| {
        let b = covered as f64 + top_sum_at_least(at_least, r_max) as f64;
        tracked.prefixes += 1;
        if b < tracked.bound {
            tracked.bound = b;
            tracked.prefix = picks;
        }
    };
    if track {
        record(&at_least, eng.n_picks(), eng.s.n_covered);
    }
    while eng.n_picks() < k && !eng.s.coverage_complete() {
        let e = loop {
            let mut b = 0;
            for (i, &m) in bound.iter().enumerate() {
                if m > bound[b] {
                    b = i;
                }
            }
            let m = bound[b];
            if m <= 0 {
                return track.then_some(tracked);
            }
            let block = &gains[b * BLOCK..((b + 1) * BLOCK).min(n)];
            let top = block.iter().copied().max().unwrap_or(OUT);
            if top == m {
                break b * BLOCK + block.iter().position(|g| *g == m).unwrap_or(0);
            }
            bound[b] = top;
        };
        if track {
            at_least[1..=gains[e] as usize]
                .iter_mut()
                .for_each(|c| *c -= 1);
        }
        gains[e] = OUT;
        for &a in p.env_abilities(e) {
            if !eng.s.covered[a as usize] {
                if track {
                    for &other in p.ability_envs(a as usize) {
                        let g = gains[other as usize];
                        if g > 0 {
                            at_least[g as usize] -= 1;
                        }
                        gains[other as usize] = g - 1;
                    }
                } else {
                    for &other in p.ability_envs(a as usize) {
                        gains[other as usize] -= 1;
                    }
                }
            }
        }
        steps.push(eng.force(e, PickReason::Greedy));
        if track {
            record(&at_least, eng.n_picks(), eng.s.n_covered);
        }
    }
    track.then_some(tracked)
}

pub(super) fn run(
    problem: &Problem,
    checked: &CheckedSelectConfig,
    mode: Mode,
) -> Result<RunOut, RunError> {
    let k = checked.config.k;
    let mut eng = Engine::new(problem, checked);
    let mut steps = Vec::with_capacity(k);
    let mut notes = Vec::new();
    for &e in &checked.include {
        steps.push(eng.force(e, PickReason::MustInclude));
    }
    let full = checked.config.require_full_coverage;
    if full && !eng.s.coverage_complete() {
        let budget = k - eng.n_picks();
        let (needed, _) = eng.greedy_cover(usize::MAX);
        if needed > budget {
            let uncovered = eng.s.n_coverable - eng.s.n_covered;
            let widest = (0..problem.n_envs())
                .filter(|e| eng.s.allowed(*e))
                .map(|e| problem.env_abilities(e).len())
                .max()
                .unwrap_or(1)
                .max(1);
            return Err(RunError::Select(SelectError::CoverageInfeasible {
                k,
                budget,
                uncovered,
                needed,
                lower_bound: uncovered.div_ceil(widest),
                suggested_k: k - budget + needed,
            }));
        }
    }
    let coverage_only = checked.w_redundancy == 0.0 && checked.w_conflict == 0.0;
    let allowed_n = checked.excluded.iter().filter(|x| !**x).count();
    let mut lazy = Lazy::new();
    let (mut rng, sample) = match mode {
        Mode::Stochastic { epsilon, seed } => (
            Rng::seed_from_u64(seed),
            ((allowed_n as f64 / k as f64) * (1.0 / f64::from(epsilon)).ln())
                .ceil()
                .max(1.0) as usize,
        ),
        _ => (Rng::seed_from_u64(0), 0),
    };
    if let Mode::Stochastic { .. } = mode {
        notes.push(format!(
            "stochastic greedy: {sample} candidates sampled per step"
        ));
    }
    let mut cursor = 0usize;
    let mut shortcut_noted = false;
    let mut tracked = None;
    // Plain max coverage (integer gains) takes the exact incremental path below.
    let mut fast_coverage = matches!(mode, Mode::Lazy)
        && coverage_only
        && checked.w_coverage > 0.0
        && checked.ability_weights.iter().all(|w| *w == 1.0)
        && (0..problem.n_envs()).all(|e| problem.env_abilities(e).len() < 1 << 14);
    while eng.n_picks() < k {
        let phase1 = full && !eng.s.coverage_complete();
        if phase1 {
            let remaining = k - eng.n_picks();
            // A greedy cover never needs more picks than there are uncovered abilities.
            if remaining <= eng.s.n_coverable - eng.s.n_covered {
                let (need, first) = eng.greedy_cover(remaining);
                if need >= remaining
                    && let Some(first) = first
                {
                    steps.push(eng.force(first, PickReason::CoverageConstraint));
                    continue;
                }
            }
        }
        if coverage_only && !matches!(mode, Mode::Stochastic { .. }) && eng.s.coverage_complete() {
            // Every allowed candidate now gains exactly 0, so the greedy argmax is the lowest
            // allowed index: skip the evaluations.
            if !shortcut_noted {
                notes.push(format!(
                    "full coverage after {} picks; the remaining gains are all 0, so the rest are \
                     the lowest unselected indices (as the argmax would pick)",
                    eng.n_picks()
                ));
                shortcut_noted = true;
            }
            while cursor < problem.n_envs() && !eng.s.allowed(cursor) {
                cursor += 1;
            }
            if cursor == problem.n_envs() {
                break;
            }
            steps.push(eng.force(cursor, PickReason::Greedy));
            continue;
        }
        if fast_coverage {
            fast_coverage = false;
            tracked = coverage_greedy(&mut eng, k, &mut steps, checked.config.certify);
            continue;
        }
        let chosen = match mode {
            Mode::Naive => naive_choose(&mut eng, phase1),
            Mode::Lazy => lazy.choose(&mut eng, phase1)?,
            Mode::Stochastic { .. } => stochastic_choose(&mut eng, phase1, &mut rng, sample),
        };
        let Some((e, parts)) = chosen else { break };
        eng.commit(e);
        steps.push(parts.trace(e, PickReason::Greedy));
    }
    Ok(RunOut {
        steps,
        tracked,
        evaluations: eng.evaluations,
        notes,
    })
}
