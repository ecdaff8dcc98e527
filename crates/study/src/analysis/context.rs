//! The analysis's view of a record: each arm's score tables by seed, and the claims,
//! summaries and splits computed from them.

use envdist_core::EnvId;

use super::tables::{PTS, Table, by_seed, matrix, set_level};
use crate::model::{
    Arm, ArmRun, ArmSummary, Claim, ClaimId, ClaimSplit, Interval, Results, SCALING_ARMS,
    ScaleScore, TransferSplit, Verdict,
};
use crate::results::relative_gain;
use crate::stats::{bootstrap, mean_of, paired_difference, paired_replicates};

pub(super) struct Ctx<'a> {
    pub(super) results: &'a Results,
    pub(super) base: &'a ArmRun,
    pub(super) seeds: u32,
    pub(super) b: u32,
    pub(super) seed: u64,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(results: &'a Results, base: &'a ArmRun) -> Self {
        Self {
            results,
            base,
            seeds: results.config.seeds,
            b: results.config.analysis.bootstrap,
            seed: results.config.seed ^ 0x4241_4e41,
        }
    }

    pub(super) fn runs(&self, arm: Arm) -> Option<Vec<&'a ArmRun>> {
        let runs = self.results.arm_runs(arm);
        if arm.is_base() || runs.is_empty() {
            return None;
        }
        by_seed(&runs, self.seeds)
    }

    pub(super) fn base_matrix(&self, envs: &[EnvId]) -> Vec<Vec<f64>> {
        let row = matrix(&[self.base], envs).remove(0);
        vec![row; self.seeds as usize]
    }

    pub(super) fn score(&self, runs: &[&ArmRun], envs: &[EnvId]) -> Option<Interval> {
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

    pub(super) fn diff(&self, a: &[Vec<f64>], b: &[Vec<f64>]) -> Interval {
        paired_difference(a, b, self.b, self.seed).scaled(PTS)
    }

    pub(super) fn pooled_gain(&self, runs: &[&ArmRun], envs: &[EnvId]) -> Option<Interval> {
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
    pub(super) fn arms_tables(&self, a: Arm, b: Arm) -> Option<(Table, Table)> {
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
    pub(super) fn arms_diff(&self, a: Arm, b: Arm) -> Option<Interval> {
        let (x, y) = self.arms_tables(a, b)?;
        Some(self.diff(&x, &y))
    }

    /// A claim on the difference whose replicates are `reps` (success units) and, where it
    /// is a paired table, whose table `d[seed][env]` is `table`: its interval, equivalence
    /// p-value and variance components; verdict and detection limit as an exploratory claim
    /// (the primary ones are redone under Holm in [`analyse`]).
    pub(super) fn new_claim(
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

    pub(super) fn columns(&self, runs: &[&ArmRun]) -> [Option<Interval>; 4] {
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

    pub(super) fn summary(&self, arm: Arm) -> Option<ArmSummary> {
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
    pub(super) fn set_gain(&self, runs: &[&ArmRun], sets: &[Vec<EnvId>]) -> Option<Interval> {
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
    pub(super) fn set_mean(
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
    pub(super) fn claim_split(&self, a: Arm, b: Arm) -> Option<ClaimSplit> {
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
    pub(super) fn by_scale(&self, arm: Arm, runs: &[&ArmRun]) -> Vec<ScaleScore> {
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
    pub(super) fn transfer(&self, runs: &[&ArmRun]) -> TransferSplit {
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

    pub(super) fn claim(&self, id: ClaimId) -> Option<Claim> {
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
    pub(super) fn ood_smaller(&self, arm: Arm) -> Option<Claim> {
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

    pub(super) fn scaling(&self) -> Vec<(usize, Vec<Vec<f64>>)> {
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
