//! The optimizers: naive, lazy and stochastic greedy over one incremental engine.
//!
//! Every candidate keeps a small cache: how many picks its conflict accumulator has seen and
//! the accumulated (max or sum of) penalties. Evaluating a candidate folds in only the picks
//! made since its last evaluation, `O(dim)` each, and recounts its handful of abilities
//! against the covered flags. Naive greedy refreshes every candidate each step (in parallel);
//! lazy greedy refreshes only those whose stale bound reaches the top of a priority queue.
//! Both call the same evaluation with the same fold order, so their gains are bit-identical,
//! and ties always go to the lowest environment index.

use std::collections::BinaryHeap;
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use envdist_core::{EnvId, FileError, Rng};

use crate::certificate::{Certificate, TrackedBound, certify, top_sum_at_least};
use crate::config::{Aggregation, Checked, Optimizer, SelectConfig};
use crate::error::SelectError;
use crate::objective::{PickReason, StepTrace};
use crate::problem::{Problem, UnitGradients, dot};

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
}

impl Selection {
    /// The per-step gains.
    pub fn gains(&self) -> Vec<f32> {
        self.steps.iter().map(|s| s.gain).collect()
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

/// Select environments: validate `config` against `problem` once, then run its optimizer.
pub fn select(problem: &Problem, config: &SelectConfig) -> Result<Selection, SelectError> {
    let checked = config.validate(problem)?;
    select_checked(problem, &checked)
}

/// [`select`] for an already checked config.
pub fn select_checked(problem: &Problem, checked: &Checked) -> Result<Selection, SelectError> {
    if checked.n_envs != problem.n_envs() || checked.ability_weights.len() != problem.n_abilities()
    {
        return Err(SelectError::invalid(
            "config",
            "checked",
            "a config validated against this problem",
            "one validated against another",
        ));
    }
    let cfg = &checked.config;
    let mut notes = Vec::new();
    let mut fell_back = false;
    let monotone = cfg.gains_non_increasing();
    let mode = match cfg.optimizer {
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
pub(crate) fn certified(
    mut selection: Selection,
    problem: &Problem,
    checked: &Checked,
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
    checked: &Checked,
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

fn coverable_mask(problem: &Problem, excluded: &[bool]) -> Vec<bool> {
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

#[derive(Debug, Clone, Copy)]
enum Mode {
    Naive,
    Lazy,
    Stochastic { epsilon: f32, seed: u64 },
}

enum RunError {
    Select(SelectError),
    GainIncreased {
        step: usize,
        env: usize,
        bound: f32,
        gain: f32,
    },
}

struct RunOut {
    steps: Vec<StepTrace>,
    tracked: Option<TrackedBound>,
    evaluations: u64,
    notes: Vec<String>,
}

/// A candidate's weighted term shares at one evaluation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Parts {
    pub gain: f32,
    pub coverage: f32,
    pub redundancy: f32,
    pub conflict: f32,
}

impl Parts {
    fn trace(self, env: usize, reason: PickReason) -> StepTrace {
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
fn canon(x: f32) -> f32 {
    if x == 0.0 { 0.0 } else { x }
}

/// Heap key: gain (order-preserving bits) high, inverted index low, so the max-heap pops the
/// highest gain and, among equal gains, the lowest index.
#[inline]
fn key(gain: f32, env: usize) -> u64 {
    let b = gain.to_bits();
    let ord = if b >> 31 == 1 { !b } else { b | 0x8000_0000 };
    (u64::from(ord) << 32) | u64::from(u32::MAX - env as u32)
}

#[inline]
fn key_env(k: u64) -> usize {
    (u32::MAX - k as u32) as usize
}

#[inline]
fn key_gain(k: u64) -> f32 {
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
struct Cache {
    acc: f32,
    seen: u32,
}

impl Cache {
    #[inline]
    fn load(word: u64) -> Self {
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
struct Shared<'a> {
    p: &'a Problem,
    c: &'a Checked,
    grads: Option<&'a UnitGradients>,
    covered: Vec<bool>,
    selected: Vec<bool>,
    picks: Vec<usize>,
    n_coverable: usize,
    n_covered: usize,
}

impl Shared<'_> {
    /// Weighted NewCoverage and Redundancy shares of `e` against the covered flags.
    #[inline]
    fn coverage_shares(&self, e: usize) -> (f32, f32) {
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
    fn conflict_share(&self, cache: &Cache) -> f32 {
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
    fn eval(&self, e: usize, word: &mut u64) -> Parts {
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
    fn adds_coverage(&self, e: usize) -> bool {
        self.p
            .env_abilities(e)
            .iter()
            .any(|a| !self.covered[*a as usize])
    }

    #[inline]
    fn allowed(&self, e: usize) -> bool {
        !self.selected[e] && !self.c.excluded[e]
    }

    #[inline]
    fn eligible(&self, e: usize, phase1: bool) -> bool {
        self.allowed(e) && (!phase1 || self.adds_coverage(e))
    }

    fn coverage_complete(&self) -> bool {
        self.n_covered == self.n_coverable
    }
}

/// The incremental evaluation engine shared by every optimizer and by the baselines.
pub(crate) struct Engine<'a> {
    s: Shared<'a>,
    caches: Vec<u64>,
    pub evaluations: u64,
}

impl<'a> Engine<'a> {
    pub(crate) fn new(p: &'a Problem, c: &'a Checked) -> Self {
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

    fn n_picks(&self) -> usize {
        self.s.picks.len()
    }

    /// Greedy set cover of the still-uncovered coverable abilities with allowed candidates:
    /// how many picks it needs (stopping once past `limit`) and its first pick.
    fn greedy_cover(&self, limit: usize) -> (usize, Option<usize>) {
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

fn run(problem: &Problem, checked: &Checked, mode: Mode) -> Result<RunOut, RunError> {
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
