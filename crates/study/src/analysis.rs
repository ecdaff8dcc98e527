//! From runs to claims: every arm's scores with 95% intervals, gains over the base (pooled
//! relative gain, absolute points, and the paper's average of per-column gains), each claim of
//! the paper with its verdict and the smallest difference the run could detect, and the
//! comparisons of the rival methods, the control pool, the hint styles, online re-selection and
//! pool size.
//!
//! Units: a run's score on an environment is its success averaged over the evaluated scales;
//! arms are paired by training seed (the same seed index drew the same random-k set, played
//! the same PPO stream); the base is one model, compared with every seed of an arm. Intervals
//! come from [`crate::stats::bootstrap`] over seeds and environments.

use std::collections::BTreeMap;

use envdist_core::EnvId;

use crate::model::{
    Analysis, Arm, ArmRun, ArmSummary, CONTROL_PAIRS, Claim, ClaimId, ClaimSplit, Comparison,
    FLAGSHIP, HINT_PAIR, Interval, ONLINE_PAIR, Relation, Results, SCALING_ARMS, ScaleScore,
    TransferAnalysis, TransferSplit, Verdict,
};
use crate::results::relative_gain;
use crate::stats::{bootstrap, mean_of, paired_difference, paired_replicates};

/// Scores `[seed][env]`.
type Table = Vec<Vec<f64>>;

/// Points per unit of success rate.
const PTS: f64 = 100.0;

/// One (source, other target) pair of the measured-transfer stage.
struct TransferPair {
    probe: usize,
    cosine: f32,
    /// Points, rounded to 1e-6 so that equal transfers rank as ties.
    transfer: f32,
    /// The base never solves the target.
    at_floor: bool,
}

/// Spearman of the cosine with the transfer over `pairs`, with an interval that resamples
/// probes (every pair of a drawn probe comes along).
fn probe_level_spearman(
    pairs: &[&TransferPair],
    probes: usize,
    b: u32,
    seed: u64,
) -> Option<Interval> {
    let xy: Vec<(usize, f32, f32)> = pairs
        .iter()
        .map(|p| (p.probe, p.cosine, p.transfer))
        .collect();
    crate::stats::probe_level_spearman(&xy, probes, b, seed)
}

/// The transfer analysis of `t`.
fn transfer_analysis(t: &crate::model::TransferRuns, b: u32, seed: u64) -> TransferAnalysis {
    let n = t.runs.len();
    // transfer[probe][relation]
    let mut by: std::collections::BTreeMap<Relation, Vec<Option<f64>>> = Default::default();
    let mut pairs: Vec<TransferPair> = Vec::new();
    let mut unknown_cosine_pairs = 0;
    for (pi, r) in t.runs.iter().enumerate() {
        for ((target, rel), after) in r.probe.targets.iter().zip(&r.after) {
            let Some(base) = t.base.get(target) else {
                continue;
            };
            let d = PTS * (*after as f64 - *base as f64);
            by.entry(*rel).or_insert_with(|| vec![None; n])[pi] = Some(d);
            if *rel != Relation::Itself
                && let Some((_, _, c)) = t
                    .cosines
                    .iter()
                    .find(|(a, x, _)| *a == r.probe.source && x == target)
            {
                if *c == 0.0 {
                    unknown_cosine_pairs += 1;
                    continue;
                }
                pairs.push(TransferPair {
                    probe: pi,
                    cosine: *c,
                    transfer: ((d * 1e6).round() / 1e6) as f32,
                    at_floor: *base == 0.0,
                });
            }
        }
    }
    let mean_over =
        |v: &[f64], idx: &[usize]| idx.iter().map(|&i| v[i]).sum::<f64>() / idx.len().max(1) as f64;
    let by_relation = by
        .iter()
        .filter_map(|(rel, v)| {
            let v: Vec<f64> = v.iter().flatten().copied().collect();
            (!v.is_empty()).then(|| {
                let i = bootstrap(1, &[v.len()], b, seed, |_, u| mean_over(&v, &u[0]));
                (*rel, i)
            })
        })
        .collect();
    let twin_minus_same_family = match (by.get(&Relation::Twin), by.get(&Relation::SameFamily)) {
        (Some(tw), Some(sf)) => {
            let d: Vec<f64> = tw
                .iter()
                .zip(sf)
                .filter_map(|(a, b)| Some((*a)? - (*b)?))
                .collect();
            (!d.is_empty()).then(|| bootstrap(1, &[d.len()], b, seed, |_, u| mean_over(&d, &u[0])))
        }
        _ => None,
    };
    let all: Vec<&TransferPair> = pairs.iter().collect();
    let above: Vec<&TransferPair> = pairs.iter().filter(|p| !p.at_floor).collect();
    TransferAnalysis {
        probes: n,
        by_relation,
        twin_minus_same_family,
        rank_correlation: probe_level_spearman(&all, n, b, seed),
        pairs: pairs.len(),
        unknown_cosine_pairs,
        floor_pairs: pairs.len() - above.len(),
        rank_correlation_above_floor: probe_level_spearman(&above, n, b, seed),
    }
}

/// Set `c`'s detection limit (and what its variance components say it would take to reach
/// the target) at `z` standard errors: the level its verdict uses.
fn set_level(c: &mut Claim, z: f64) {
    c.mde_z = z;
    c.mde = z * c.difference.se;
    if let Some(v) = &mut c.variance {
        let parts = (v.seed, v.env, v.residual);
        let (target, seeds, envs) = (v.target, v.seeds, v.envs);
        let se = |s: usize, e: usize| crate::stats::se_of(parts, s, e);
        v.seeds_needed = crate::stats::needed(10_000, target, z, |n| se(n, envs));
        v.envs_needed = crate::stats::needed(1_000_000, target, z, |n| se(seeds, n));
    }
}

/// The score matrix `[seed][env]` of `runs` on `envs` (success averaged over scales).
fn matrix(runs: &[&ArmRun], envs: &[EnvId]) -> Vec<Vec<f64>> {
    runs.iter()
        .map(|r| {
            envs.iter()
                .map(|e| r.success(e).unwrap_or(0.0) as f64)
                .collect()
        })
        .collect()
}

/// `runs` by seed index, or `None` when a seed is missing.
fn by_seed<'a>(runs: &[&'a ArmRun], seeds: u32) -> Option<Vec<&'a ArmRun>> {
    (0..seeds)
        .map(|s| runs.iter().find(|r| r.seed == s).copied())
        .collect()
}

struct Ctx<'a> {
    results: &'a Results,
    base: &'a ArmRun,
    seeds: u32,
    b: u32,
    seed: u64,
}

impl<'a> Ctx<'a> {
    fn new(results: &'a Results, base: &'a ArmRun) -> Self {
        Self {
            results,
            base,
            seeds: results.config.seeds,
            b: results.config.analysis.bootstrap,
            seed: results.config.seed ^ 0x4241_4e41,
        }
    }

    fn runs(&self, arm: Arm) -> Option<Vec<&'a ArmRun>> {
        let runs = self.results.arm_runs(arm);
        if arm.is_base() || runs.is_empty() {
            return None;
        }
        by_seed(&runs, self.seeds)
    }

    fn base_matrix(&self, envs: &[EnvId]) -> Vec<Vec<f64>> {
        let row = matrix(&[self.base], envs).remove(0);
        vec![row; self.seeds as usize]
    }

    fn score(&self, runs: &[&ArmRun], envs: &[EnvId]) -> Option<Interval> {
        if envs.is_empty() {
            return None;
        }
        let x = matrix(runs, envs);
        Some(
            bootstrap(runs.len(), &[envs.len()], self.b, self.seed, |s, u| {
                mean_of(&x, s, &u[0])
            })
            .scaled(PTS),
        )
    }

    fn diff(&self, a: &[Vec<f64>], b: &[Vec<f64>]) -> Interval {
        paired_difference(a, b, self.b, self.seed).scaled(PTS)
    }

    fn pooled_gain(&self, runs: &[&ArmRun], envs: &[EnvId]) -> Option<Interval> {
        if envs.is_empty() {
            return None;
        }
        let a = matrix(runs, envs);
        let b = self.base_matrix(envs);
        let i = bootstrap(runs.len(), &[envs.len()], self.b, self.seed, |s, u| {
            let base = mean_of(&b, s, &u[0]);
            if base > 0.0 {
                mean_of(&a, s, &u[0]) / base - 1.0
            } else {
                f64::NAN
            }
        });
        i.estimate.is_finite().then(|| i.scaled(PTS))
    }

    /// The score tables `[seed][pool env]` of `a` and `b`, paired by seed (the base stands in
    /// for every seed).
    fn arms_tables(&self, a: Arm, b: Arm) -> Option<(Table, Table)> {
        let pool = &self.results.envs.pool;
        let x = matrix(&self.runs(a)?, pool);
        let y = if b.is_base() {
            self.base_matrix(pool)
        } else {
            matrix(&self.runs(b)?, pool)
        };
        Some((x, y))
    }

    /// `a − b` on the pool, paired by seed (the base stands in for every seed).
    fn arms_diff(&self, a: Arm, b: Arm) -> Option<Interval> {
        let (x, y) = self.arms_tables(a, b)?;
        Some(self.diff(&x, &y))
    }

    /// A claim on the difference whose replicates are `reps` (success units) and, where it
    /// is a paired table, whose table `d[seed][env]` is `table`: its interval, equivalence
    /// p-value and variance components; verdict and detection limit as an exploratory claim
    /// (the primary ones are redone under Holm in [`analyse`]).
    fn new_claim(
        &self,
        id: ClaimId,
        comparison: String,
        reps: crate::stats::Replicates,
        table: Option<Vec<Vec<f64>>>,
    ) -> Claim {
        let margin = self.results.config.analysis.equivalence_margin;
        let difference = reps.interval().scaled(PTS);
        let p_equivalence = Some(reps.equivalence_p(margin / PTS));
        let variance = table.as_deref().and_then(|d| {
            let points: Vec<Vec<f64>> = d
                .iter()
                .map(|r| r.iter().map(|v| v * PTS).collect())
                .collect();
            let (seed, env, residual) = crate::stats::variance_components(&points)?;
            let (seeds, envs) = (points.len(), points[0].len());
            Some(crate::model::VarianceComponents {
                seeds,
                envs,
                seed,
                env,
                residual,
                se: crate::stats::se_of((seed, env, residual), seeds, envs),
                target: self.results.config.analysis.detect_points,
                seeds_needed: None,
                envs_needed: None,
            })
        });
        let mut claim = Claim {
            id,
            primary: false,
            p_holm: None,
            statement: id.statement().0.into(),
            comparison,
            verdict: Verdict::of_tests(difference.estimate, difference.p, p_equivalence),
            mde: 0.0,
            mde_z: 0.0,
            difference,
            p_equivalence,
            p_equivalence_holm: None,
            variance,
            split: None,
        };
        set_level(&mut claim, crate::stats::detection_z(0.05, 0.8));
        claim
    }

    fn columns(&self, runs: &[&ArmRun]) -> [Option<Interval>; 4] {
        let sets = &self.results.envs;
        let st = |e: &EnvId| sets.single_turn.contains(e);
        let pick = |from: &[EnvId], single: bool| -> Vec<EnvId> {
            from.iter().filter(|e| st(e) == single).cloned().collect()
        };
        [
            self.score(runs, &pick(&sets.pool, true)),
            self.score(runs, &pick(&sets.pool, false)),
            self.score(runs, &pick(&sets.ood, true)),
            self.score(runs, &pick(&sets.ood, false)),
        ]
    }

    fn summary(&self, arm: Arm) -> Option<ArmSummary> {
        let sets = &self.results.envs;
        let runs = if arm.is_base() {
            vec![self.base]
        } else {
            self.runs(arm)?
        };
        let trained = (!arm.is_base()).then(|| {
            let per_seed: Vec<f64> = runs
                .iter()
                .map(|r| {
                    let v: Vec<f64> = r
                        .train_envs
                        .iter()
                        .filter_map(|e| r.success(e))
                        .map(f64::from)
                        .collect();
                    v.iter().sum::<f64>() / v.len().max(1) as f64
                })
                .collect();
            PTS * per_seed.iter().sum::<f64>() / per_seed.len().max(1) as f64
        });
        let delta = |envs: &[EnvId]| -> Option<Interval> {
            (!arm.is_base() && !envs.is_empty())
                .then(|| self.diff(&matrix(&runs, envs), &self.base_matrix(envs)))
        };
        let paper: Vec<f32> = runs
            .iter()
            .filter_map(|r| relative_gain(&r.scores, &self.base.scores))
            .collect();
        let pool_scores = matrix(&runs, &sets.pool);
        let iqm = (!sets.pool.is_empty()).then(|| {
            crate::stats::stratified_bootstrap(&[&pool_scores], self.b, self.seed, |t| {
                crate::stats::iqm(&t[0].concat())
            })
            .scaled(PTS)
        });
        Some(ArmSummary {
            arm,
            seeds: runs.len(),
            iqm,
            columns: self.columns(&runs),
            id: self.score(&runs, &sets.pool)?,
            ood: self.score(&runs, &sets.ood),
            trained_id: trained,
            transfer: (!arm.is_base()).then(|| self.transfer(&runs)),
            by_scale: self.by_scale(arm, &runs),
            delta_id: delta(&sets.pool),
            delta_ood: delta(&sets.ood),
            pooled_gain_id: (!arm.is_base())
                .then(|| self.pooled_gain(&runs, &sets.pool))
                .flatten(),
            pooled_gain_ood: (!arm.is_base())
                .then(|| self.pooled_gain(&runs, &sets.ood))
                .flatten(),
            paper_gain: (!arm.is_base() && !paper.is_empty())
                .then(|| PTS * paper.iter().map(|g| *g as f64).sum::<f64>() / paper.len() as f64),
        })
    }

    /// The mean gain over the base of `runs` on each run's own environment set (`sets[i]` for
    /// `runs[i]`); see [`Ctx::set_mean`].
    fn set_gain(&self, runs: &[&ArmRun], sets: &[Vec<EnvId>]) -> Option<Interval> {
        let gain = |i: usize, e: &EnvId| {
            runs[i].success(e).unwrap_or(0.0) as f64 - self.base.success(e).unwrap_or(0.0) as f64
        };
        if runs.is_empty() {
            return None;
        }
        self.set_mean(gain, sets)
    }

    /// The mean over seeds of `value(seed, env)` averaged over seed i's own environment set
    /// `sets[i]`, with a crossed bootstrap: each replicate draws seeds, and one environment
    /// draw applied to every drawn seed. Where every seed has the same set (AES, the whole
    /// pool, OOD) that draw is from the set itself, exactly [`Ctx::diff`]'s bootstrap; where the
    /// sets differ (random-k's draws), it is from their union, each seed averaging the drawn
    /// environments of its own set.
    fn set_mean(
        &self,
        value: impl Fn(usize, &EnvId) -> f64,
        sets: &[Vec<EnvId>],
    ) -> Option<Interval> {
        if sets.is_empty() || sets.iter().any(Vec::is_empty) {
            return None;
        }
        let sorted = |s: &Vec<EnvId>| {
            let mut s = s.clone();
            s.sort();
            s
        };
        let shared = sets.iter().all(|s| sorted(s) == sorted(&sets[0]));
        let universe: Vec<EnvId> = if shared {
            sets[0].clone()
        } else {
            let mut u: Vec<EnvId> = sets.iter().flatten().cloned().collect();
            u.sort();
            u.dedup();
            u
        };
        let values: Vec<Vec<f64>> = (0..sets.len())
            .map(|i| universe.iter().map(|e| value(i, e)).collect())
            .collect();
        let member: Vec<Vec<bool>> = sets
            .iter()
            .map(|set| universe.iter().map(|e| set.contains(e)).collect())
            .collect();
        let i = bootstrap(sets.len(), &[universe.len()], self.b, self.seed, |s, u| {
            let mut total = 0.0;
            for &si in s {
                let (mut sum, mut n) = (0.0, 0usize);
                for &e in &u[0] {
                    if member[si][e] {
                        sum += values[si][e];
                        n += 1;
                    }
                }
                if n == 0 {
                    return f64::NAN;
                }
                total += sum / n as f64;
            }
            total / s.len().max(1) as f64
        });
        Some(i.scaled(PTS))
    }

    /// `a − b` split by where the two arms trained (seed by seed): on the pool envs either
    /// trained on, on those neither trained on, and on the held-out envs.
    fn claim_split(&self, a: Arm, b: Arm) -> Option<ClaimSplit> {
        let ra = self.runs(a)?;
        let rb: Vec<&ArmRun> = if b.is_base() {
            vec![self.base; ra.len()]
        } else {
            self.runs(b)?
        };
        let sets = &self.results.envs;
        let (mut either, mut neither) = (Vec::new(), Vec::new());
        for (x, y) in ra.iter().zip(&rb) {
            let (e, n): (Vec<EnvId>, Vec<EnvId>) = sets
                .pool
                .iter()
                .cloned()
                .partition(|env| x.train_envs.contains(env) || y.train_envs.contains(env));
            either.push(e);
            neither.push(n);
        }
        let d = |i: usize, e: &EnvId| {
            ra[i].success(e).unwrap_or(0.0) as f64 - rb[i].success(e).unwrap_or(0.0) as f64
        };
        Some(ClaimSplit {
            either_trained: self.set_mean(d, &either),
            neither_trained: self.set_mean(d, &neither),
            ood: self.set_mean(d, &vec![sets.ood.clone(); ra.len()]),
        })
    }

    /// The whole-pool score of `runs` at each evaluated scale alone, and its gain over the
    /// base there (seeds and environments resampled as everywhere).
    fn by_scale(&self, arm: Arm, runs: &[&ArmRun]) -> Vec<ScaleScore> {
        let pool = &self.results.envs.pool;
        let at = |rs: &[&ArmRun], k: usize| -> Table {
            rs.iter()
                .map(|r| {
                    pool.iter()
                        .map(|e| {
                            r.per_env
                                .get(e)
                                .and_then(|v| v.get(k))
                                .copied()
                                .unwrap_or(0.0) as f64
                        })
                        .collect()
                })
                .collect()
        };
        if pool.is_empty() {
            return vec![];
        }
        let scales = &self.results.config.eval.scales;
        scales
            .iter()
            .enumerate()
            .map(|(k, &scale)| {
                let x = at(runs, k);
                let id = bootstrap(x.len(), &[pool.len()], self.b, self.seed, |s, u| {
                    mean_of(&x, s, &u[0])
                })
                .scaled(PTS);
                let delta_id = (!arm.is_base()).then(|| {
                    let base = vec![at(&[self.base], k).remove(0); runs.len()];
                    self.diff(&x, &base)
                });
                ScaleScore {
                    scale,
                    id,
                    delta_id,
                }
            })
            .collect()
    }

    /// Split the gain of `runs` by distance from what each run trained on.
    fn transfer(&self, runs: &[&ArmRun]) -> TransferSplit {
        let sets = &self.results.envs;
        let family = |e: &EnvId| sets.family.get(e).cloned().unwrap_or_default();
        let mut trained = Vec::new();
        let mut same = Vec::new();
        let mut other = Vec::new();
        for r in runs {
            let own: std::collections::BTreeSet<&EnvId> = r.train_envs.iter().collect();
            let families: std::collections::BTreeSet<String> =
                r.train_envs.iter().map(family).collect();
            let rest = sets.pool.iter().filter(|e| !own.contains(e));
            let (s, o): (Vec<EnvId>, Vec<EnvId>) =
                rest.cloned().partition(|e| families.contains(&family(e)));
            trained.push(r.train_envs.clone());
            same.push(s);
            other.push(o);
        }
        let ood = vec![sets.ood.clone(); runs.len()];
        TransferSplit {
            trained: self.set_gain(runs, &trained),
            same_family: self.set_gain(runs, &same),
            other_families: self.set_gain(runs, &other),
            ood: self.set_gain(runs, &ood),
        }
    }

    fn claim(&self, id: ClaimId) -> Option<Claim> {
        let (a, b) = id.statement().1?;
        let (x, y) = self.arms_tables(a, b)?;
        let reps = paired_replicates(&x, &y, self.b, self.seed);
        let d: Vec<Vec<f64>> = x
            .iter()
            .zip(&y)
            .map(|(r, q)| r.iter().zip(q).map(|(u, v)| u - v).collect())
            .collect();
        let comparison = format!("{} − {}", a.name(), b.name());
        let mut claim = self.new_claim(id, comparison, reps, Some(d));
        claim.split = self.claim_split(a, b);
        Some(claim)
    }

    /// ID gain minus OOD gain of `arm` over the base (envs of each split resampled apart).
    fn ood_smaller(&self, arm: Arm) -> Option<Claim> {
        let sets = &self.results.envs;
        if sets.ood.is_empty() {
            return None;
        }
        let runs = self.runs(arm)?;
        let (ai, bi) = (matrix(&runs, &sets.pool), self.base_matrix(&sets.pool));
        let (ao, bo) = (matrix(&runs, &sets.ood), self.base_matrix(&sets.ood));
        let reps = crate::stats::bootstrap_replicates(
            runs.len(),
            &[sets.pool.len(), sets.ood.len()],
            self.b,
            self.seed,
            |s, u| {
                (mean_of(&ai, s, &u[0]) - mean_of(&bi, s, &u[0]))
                    - (mean_of(&ao, s, &u[1]) - mean_of(&bo, s, &u[1]))
            },
        );
        let comparison = format!("({0} − base on ID) − ({0} − base on OOD)", arm.name());
        Some(self.new_claim(ClaimId::OodSmaller, comparison, reps, None))
    }

    fn scaling(&self) -> Vec<(usize, Vec<Vec<f64>>)> {
        let pool = &self.results.envs.pool;
        let mut sizes: Vec<usize> = self.results.scaling.iter().map(|p| p.pool_size).collect();
        sizes.sort();
        sizes.dedup();
        let mut out: Vec<(usize, Vec<Vec<f64>>)> = Vec::new();
        for size in sizes {
            let runs: Vec<&ArmRun> = self
                .results
                .scaling
                .iter()
                .filter(|p| p.pool_size == size)
                .map(|p| &p.run)
                .collect();
            if let Some(runs) = by_seed(&runs, self.seeds) {
                out.push((size, matrix(&runs, pool)));
            }
        }
        // The arms give the points at k random envs and at the whole pool.
        let [at_k, whole] = SCALING_ARMS;
        let k = self.results.config.selection.k;
        for (n, arm) in [(k, at_k), (pool.len(), whole)] {
            if let Some(r) = self.runs(arm) {
                out.push((n, matrix(&r, pool)));
            }
        }
        out.sort_by_key(|(n, _)| *n);
        out.dedup_by_key(|(n, _)| *n);
        out
    }
}

/// The primary claims, named before the run: Holm's adjustment over those of `claims` this
/// run could test, of the difference's p-values and apart of the equivalence p-values; their
/// verdicts come from the adjusted p-values and their detection limits from Holm's first
/// step. The others keep their own tests and are exploratory.
fn adjust_primary(claims: &mut [Claim], primary: &[ClaimId]) {
    let tested: Vec<usize> = (0..claims.len())
        .filter(|&i| primary.contains(&claims[i].id))
        .collect();
    let holm = |p: &dyn Fn(&Claim) -> f64| {
        crate::stats::holm(&tested.iter().map(|&i| p(&claims[i])).collect::<Vec<_>>())
    };
    let adjusted = holm(&|c| c.difference.p);
    let adjusted_equivalence = holm(&|c| c.p_equivalence.unwrap_or(1.0));
    // A primary claim is detected for sure when it passes Holm's first step, α / m.
    let z = crate::stats::detection_z(crate::stats::holm_first_step(0.05, tested.len()), 0.8);
    for ((&i, p), q) in tested.iter().zip(adjusted).zip(adjusted_equivalence) {
        let c = &mut claims[i];
        c.primary = true;
        c.p_holm = Some(p);
        c.p_equivalence_holm = Some(q);
        c.verdict = Verdict::of_tests(c.difference.estimate, p, Some(q));
        set_level(c, z);
    }
}

/// The claims of two arms alone, the primary ones adjusted as in [`analyse`] (the simulation
/// tests of the analysis run thousands of these).
#[cfg(test)]
pub(crate) fn pair_claims(results: &Results) -> Vec<Claim> {
    let Some(base) = results.base() else {
        return vec![];
    };
    let ctx = Ctx::new(results, base);
    let mut claims: Vec<Claim> = ClaimId::ALL
        .iter()
        .filter_map(|id| ctx.claim(*id))
        .collect();
    adjust_primary(&mut claims, &results.config.analysis.primary);
    claims
}

/// Compute the analysis of `results` (needs the base run).
pub fn analyse(results: &Results) -> Option<Analysis> {
    let base = results.base()?;
    let ctx = Ctx::new(results, base);
    let arms: Vec<ArmSummary> = results
        .config
        .arms
        .iter()
        .filter_map(|&a| ctx.summary(a))
        .collect();
    // The claims of two arms, then the two that are not a pair of arms.
    let mut claims: Vec<Claim> = ClaimId::ALL
        .iter()
        .filter_map(|id| ctx.claim(*id))
        .collect();
    claims.extend(ctx.ood_smaller(ClaimId::OOD_ARM));
    // "More environments can hurt": some larger pool scores below a smaller one.
    let scaling_data = ctx.scaling();
    let scaling: Vec<(usize, Interval)> = scaling_data
        .iter()
        .map(|(n, x)| {
            let i = bootstrap(x.len(), &[x[0].len()], ctx.b, ctx.seed, |s, u| {
                mean_of(x, s, &u[0])
            })
            .scaled(PTS);
            (*n, i)
        })
        .collect();
    if scaling_data.len() >= 2 {
        // The pair where the larger pool fares worst against a smaller one.
        let mut worst: Option<(String, Interval, usize, usize)> = None;
        for (i, (n_small, small)) in scaling_data.iter().enumerate() {
            for (j, (n_large, large)) in scaling_data.iter().enumerate().skip(i + 1) {
                let d = ctx.diff(small, large);
                if worst
                    .as_ref()
                    .is_none_or(|(_, w, ..)| d.estimate > w.estimate)
                {
                    worst = Some((format!("{n_small} envs − {n_large} envs"), d, i, j));
                }
            }
        }
        if let Some((comparison, _, i, j)) = worst {
            let (small, large) = (&scaling_data[i].1, &scaling_data[j].1);
            let reps = paired_replicates(small, large, ctx.b, ctx.seed);
            let comparison =
                format!("{comparison} (the least favourable pair of sizes for the larger pool)");
            claims.push(ctx.new_claim(ClaimId::MoreEnvsHurt, comparison, reps, None));
        }
    }
    adjust_primary(&mut claims, &results.config.analysis.primary);
    let mut ranking: Vec<(Arm, Interval)> = arms
        .iter()
        .filter_map(|s| s.delta_id.map(|d| (s.arm, d)))
        .collect();
    ranking.sort_by(|a, b| b.1.estimate.total_cmp(&a.1.estimate));
    let versus_aes_hdc = Arm::versus_flagship()
        .into_iter()
        .filter_map(|a| {
            let d = ctx.arms_diff(FLAGSHIP, a)?;
            Some(Comparison {
                label: format!("{} − {}", FLAGSHIP.name(), a.name()),
                verdict: Verdict::of(&d),
                difference: d,
            })
        })
        .collect();
    let mut control = Vec::new();
    let [(main_a, main_b), (ctrl_a, ctrl_b)] = CONTROL_PAIRS;
    for (where_, (a, b)) in [
        ("main pool", (main_a, main_b)),
        ("control pool", (ctrl_a, ctrl_b)),
    ] {
        if let Some(d) = ctx.arms_diff(a, b) {
            control.push(Comparison {
                label: format!("{where_}: {} − {}", a.name(), b.name()),
                verdict: Verdict::of(&d),
                difference: d,
            });
        }
    }
    if let (Some(a), Some(r), Some(ca), Some(cr)) = (
        ctx.runs(main_a),
        ctx.runs(main_b),
        ctx.runs(ctrl_a),
        ctx.runs(ctrl_b),
    ) {
        let pool = &results.envs.pool;
        let (a, r, ca, cr) = (
            matrix(&a, pool),
            matrix(&r, pool),
            matrix(&ca, pool),
            matrix(&cr, pool),
        );
        let d = bootstrap(a.len(), &[pool.len()], ctx.b, ctx.seed, |s, u| {
            (mean_of(&a, s, &u[0]) - mean_of(&r, s, &u[0]))
                - (mean_of(&ca, s, &u[0]) - mean_of(&cr, s, &u[0]))
        })
        .scaled(PTS);
        control.push(Comparison {
            label: "AES's advantage on the main pool minus on the control pool".into(),
            verdict: Verdict::of(&d),
            difference: d,
        });
    }
    let hints = ctx.arms_diff(HINT_PAIR.0, HINT_PAIR.1).map(|d| Comparison {
        label: format!(
            "{} ({} hints) − {} ({} hints)",
            HINT_PAIR.0.name(),
            results.config.suite.hint_style,
            HINT_PAIR.0.name(),
            results.config.other_hint_style()
        ),
        verdict: Verdict::of(&d),
        difference: d,
    });
    let online = ctx
        .arms_diff(ONLINE_PAIR.0, ONLINE_PAIR.1)
        .map(|d| Comparison {
            label: format!(
                "{} − {} (one-shot)",
                ONLINE_PAIR.0.name(),
                ONLINE_PAIR.1.name()
            ),
            verdict: Verdict::of(&d),
            difference: d,
        });
    let st_pool: Vec<EnvId> = results
        .envs
        .pool
        .iter()
        .filter(|e| results.constant_baseline.contains_key(*e))
        .cloned()
        .collect();
    let base_over_constant = (!st_pool.is_empty()).then(|| {
        let b = matrix(&[base], &st_pool);
        let c: Vec<Vec<f64>> = vec![
            st_pool
                .iter()
                .map(|e| results.constant_baseline[e] as f64)
                .collect(),
        ];
        paired_difference(&b, &c, ctx.b, ctx.seed).scaled(PTS)
    });
    let transfer = results
        .transfer
        .as_ref()
        .filter(|t| !t.runs.is_empty())
        .map(|t| transfer_analysis(t, ctx.b, ctx.seed));
    // rliable's aggregates beside the means: the probability of improvement of every claim of
    // two trained arms, and every arm's performance profile, on the pool.
    let pool = &results.envs.pool;
    let probability_of_improvement = ClaimId::ALL
        .iter()
        .filter_map(|&claim| {
            let (a, b) = claim.statement().1?;
            if a.is_base() || b.is_base() {
                return None;
            }
            let (x, y) = ctx.arms_tables(a, b)?;
            let probability = crate::stats::stratified_bootstrap(&[&x, &y], ctx.b, ctx.seed, |t| {
                crate::stats::probability_of_improvement(&t[0], &t[1]) - 0.5
            });
            // The p-value is of "no difference" (0.5); the interval is of the probability.
            let shift = |v: f64| v + 0.5;
            let probability = Interval {
                estimate: shift(probability.estimate),
                lo: shift(probability.lo),
                hi: shift(probability.hi),
                ..probability
            };
            Some(crate::model::Improvement {
                claim,
                a,
                b,
                probability,
            })
        })
        .collect();
    let performance_profiles = results
        .config
        .arms
        .iter()
        .filter_map(|&arm| {
            let runs = if arm.is_base() {
                vec![base]
            } else {
                ctx.runs(arm)?
            };
            let scores = matrix(&runs, pool).concat();
            (!scores.is_empty()).then(|| crate::model::PerformanceProfile {
                arm,
                points: (0..=20)
                    .map(|k| {
                        let tau = k as f64 * 5.0;
                        let above = scores.iter().filter(|s| **s * PTS > tau).count();
                        (tau, above as f64 / scores.len() as f64)
                    })
                    .collect(),
            })
        })
        .collect();
    Some(Analysis {
        probability_of_improvement,
        performance_profiles,
        transfer,
        arms,
        claims,
        ranking,
        versus_aes_hdc,
        control,
        hints,
        online,
        scaling,
        base_over_constant,
    })
}

/// Per single-turn family of the pool: base success and constant-answer baseline, points.
pub fn base_vs_constant_by_family(results: &Results) -> BTreeMap<String, (f64, f64)> {
    let mut acc: BTreeMap<String, (f64, f64, usize)> = BTreeMap::new();
    let Some(base) = results.base() else {
        return BTreeMap::new();
    };
    for e in &results.envs.pool {
        let (Some(c), Some(b)) = (results.constant_baseline.get(e), base.success(e)) else {
            continue;
        };
        let fam = results.envs.family.get(e).cloned().unwrap_or_default();
        let a = acc.entry(fam).or_default();
        a.0 += b as f64;
        a.1 += *c as f64;
        a.2 += 1;
    }
    acc.into_iter()
        .map(|(f, (b, c, n))| (f, (PTS * b / n as f64, PTS * c / n as f64)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ExperimentConfig, Preset};
    use crate::model::{CodeInfo, EnvSets};

    fn run(arm: Arm, seed: u32, envs: &[EnvId], score: impl Fn(usize) -> f32) -> ArmRun {
        let per_env = envs
            .iter()
            .enumerate()
            .map(|(i, e)| (e.clone(), vec![score(i)]))
            .collect();
        ArmRun {
            train_envs: envs.to_vec(),
            ..ArmRun::evaluated(arm, seed, per_env)
        }
    }

    fn results(base: impl Fn(usize) -> f32, arm: impl Fn(u32, usize) -> f32) -> Results {
        let mut cfg = ExperimentConfig::preset(Preset::Smoke);
        cfg.seeds = 3;
        cfg.arms = vec![Arm::Base, Arm::Aes, Arm::RandomK];
        cfg.analysis.bootstrap = 500;
        let envs: Vec<EnvId> = (0..20)
            .map(|i| EnvId::new(format!("f{}/v{i}", i % 4)))
            .collect();
        let mut r = Results::new(cfg, CodeInfo::default());
        r.envs = EnvSets {
            pool: envs.clone(),
            ood: vec![],
            single_turn: vec![],
            family: Default::default(),
        };
        r.runs.push(run(Arm::Base, 0, &envs, &base));
        for s in 0..3 {
            r.runs.push(run(Arm::Aes, s, &envs, |i| arm(s, i)));
            r.runs
                .push(run(Arm::RandomK, s, &envs, |i| arm(s, i) * 0.5));
        }
        r
    }

    #[test]
    fn a_zero_base_has_point_gains_but_no_relative_gain() {
        let r = results(|_| 0.0, |s, i| ((s as usize + i) % 3) as f32 * 0.2);
        let a = analyse(&r).unwrap();
        let aes = a.arms.iter().find(|s| s.arm == Arm::Aes).unwrap();
        // Points are defined: the mean of 0, .2, .4 over envs and seeds is 0.2 = 20 points.
        let d = aes.delta_id.unwrap();
        assert!((d.estimate - 20.0).abs() < 1e-4, "{d:?}");
        assert_eq!(Verdict::of(&d), Verdict::Supported);
        // A relative gain over a zero base is undefined, in both statistics.
        assert!(aes.pooled_gain_id.is_none());
        assert!(aes.paper_gain.is_none());
        let claim = a
            .claims
            .iter()
            .find(|c| c.comparison == format!("{} − {}", Arm::Aes.name(), Arm::RandomK.name()))
            .unwrap();
        assert!((claim.difference.estimate - 10.0).abs() < 1e-4);
    }

    #[test]
    fn pooled_gain_is_the_ratio_of_means() {
        // Base 0.5 everywhere, the arm 0.6: +20% pooled, +10 points.
        let r = results(|_| 0.5, |_, _| 0.6);
        let a = analyse(&r).unwrap();
        let aes = a.arms.iter().find(|s| s.arm == Arm::Aes).unwrap();
        assert!((aes.pooled_gain_id.unwrap().estimate - 20.0).abs() < 1e-4);
        assert!((aes.delta_id.unwrap().estimate - 10.0).abs() < 1e-4);
        // Without any variation the interval collapses on the estimate.
        let d = aes.delta_id.unwrap();
        assert!((d.hi - d.lo).abs() < 1e-9);
    }
}
