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
    Analysis, Arm, ArmRun, ArmSummary, CONTROL_PAIRS, Claim, ClaimId, Comparison, FLAGSHIP,
    HINT_PAIR, Interval, ONLINE_PAIR, Relation, Results, SCALING_ARMS, TransferAnalysis,
    TransferSplit, Verdict,
};
use crate::results::relative_gain;
use crate::stats::{bootstrap, mean_of, paired_difference};

/// Points per unit of success rate.
const PTS: f64 = 100.0;

/// The transfer analysis of `t`.
fn transfer_analysis(t: &crate::model::TransferRuns, b: u32, seed: u64) -> TransferAnalysis {
    let n = t.runs.len();
    // transfer[probe][relation]
    let mut by: std::collections::BTreeMap<Relation, Vec<Option<f64>>> = Default::default();
    let mut pairs: Vec<(f32, f32)> = Vec::new();
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
                pairs.push((*c, d as f32));
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
    let rank_correlation = (pairs.len() >= 4).then(|| {
        let (c, d): (Vec<f32>, Vec<f32>) = pairs.iter().copied().unzip();
        bootstrap(1, &[pairs.len()], b, seed, |_, u| {
            let cs: Vec<f32> = u[0].iter().map(|&i| c[i]).collect();
            let ds: Vec<f32> = u[0].iter().map(|&i| d[i]).collect();
            envdist_core::rank::spearman(&cs, &ds).unwrap_or(f64::NAN)
        })
    });
    TransferAnalysis {
        probes: n,
        by_relation,
        twin_minus_same_family,
        rank_correlation,
        pairs: pairs.len(),
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

    /// `a − b` on the pool, paired by seed (the base stands in for every seed).
    fn arms_diff(&self, a: Arm, b: Arm) -> Option<Interval> {
        let pool = &self.results.envs.pool;
        let x = matrix(&self.runs(a)?, pool);
        let y = if b.is_base() {
            self.base_matrix(pool)
        } else {
            matrix(&self.runs(b)?, pool)
        };
        Some(self.diff(&x, &y))
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
        Some(ArmSummary {
            arm,
            seeds: runs.len(),
            columns: self.columns(&runs),
            id: self.score(&runs, &sets.pool)?,
            ood: self.score(&runs, &sets.ood),
            trained_id: trained,
            transfer: (!arm.is_base()).then(|| self.transfer(&runs)),
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
    /// `runs[i]`): a two-level bootstrap that draws seeds, then environments within each drawn
    /// seed's set.
    fn set_gain(&self, runs: &[&ArmRun], sets: &[Vec<EnvId>]) -> Option<Interval> {
        if sets.iter().any(Vec::is_empty) || runs.is_empty() {
            return None;
        }
        let gains: Vec<Vec<f64>> = runs
            .iter()
            .zip(sets)
            .map(|(r, set)| {
                set.iter()
                    .map(|e| {
                        r.success(e).unwrap_or(0.0) as f64
                            - self.base.success(e).unwrap_or(0.0) as f64
                    })
                    .collect()
            })
            .collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let estimate = gains.iter().map(|g| mean(g)).sum::<f64>() / gains.len() as f64;
        let rng = envdist_core::Rng::derive(self.seed, 0x5452_414e);
        let interval = crate::stats::resample(estimate, self.b, rng, |rng| {
            let mut total = 0.0;
            for _ in 0..gains.len() {
                let g = &gains[rng.index(gains.len())];
                total += (0..g.len()).map(|_| g[rng.index(g.len())]).sum::<f64>() / g.len() as f64;
            }
            total / gains.len() as f64
        });
        Some(interval.scaled(PTS))
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
        let (statement, arms) = id.statement();
        let (a, b) = arms?;
        let d = self.arms_diff(a, b)?;
        Some(Claim {
            id,
            primary: false,
            p_holm: None,
            statement: statement.into(),
            comparison: format!("{} − {}", a.name(), b.name()),
            verdict: Verdict::of(&d),
            mde: d.mde(),
            difference: d,
        })
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
        let d = bootstrap(
            runs.len(),
            &[sets.pool.len(), sets.ood.len()],
            self.b,
            self.seed,
            |s, u| {
                (mean_of(&ai, s, &u[0]) - mean_of(&bi, s, &u[0]))
                    - (mean_of(&ao, s, &u[1]) - mean_of(&bo, s, &u[1]))
            },
        )
        .scaled(PTS);
        Some(Claim {
            id: ClaimId::OodSmaller,
            primary: false,
            p_holm: None,
            statement: ClaimId::OodSmaller.statement().0.into(),
            comparison: format!("({0} − base on ID) − ({0} − base on OOD)", arm.name()),
            verdict: Verdict::of(&d),
            mde: d.mde(),
            difference: d,
        })
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

/// Compute the analysis of `results` (needs the base run).
pub fn analyse(results: &Results) -> Option<Analysis> {
    let base = results.base()?;
    let ctx = Ctx {
        results,
        base,
        seeds: results.config.seeds,
        b: results.config.analysis.bootstrap,
        seed: results.config.seed ^ 0x4241_4e41,
    };
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
        let mut worst: Option<(String, Interval)> = None;
        for (i, (n_small, small)) in scaling_data.iter().enumerate() {
            for (n_large, large) in &scaling_data[i + 1..] {
                let d = ctx.diff(small, large);
                if worst.as_ref().is_none_or(|(_, w)| d.estimate > w.estimate) {
                    worst = Some((format!("{n_small} envs − {n_large} envs"), d));
                }
            }
        }
        if let Some((comparison, d)) = worst {
            claims.push(Claim {
                id: ClaimId::MoreEnvsHurt,
                primary: false,
                p_holm: None,
                statement: ClaimId::MoreEnvsHurt.statement().0.into(),
                comparison: format!(
                    "{comparison} (the least favourable pair of sizes for the larger pool)"
                ),
                verdict: Verdict::of(&d),
                mde: d.mde(),
                difference: d,
            });
        }
    }
    // The primary claims, named before the run: Holm's adjustment over those this run could
    // test; their verdicts come from the adjusted p-values. The others keep their own 95%
    // interval and are exploratory.
    let primary = &results.config.analysis.primary;
    let tested: Vec<usize> = (0..claims.len())
        .filter(|&i| primary.contains(&claims[i].id))
        .collect();
    let adjusted = crate::stats::holm(
        &tested
            .iter()
            .map(|&i| claims[i].difference.p)
            .collect::<Vec<_>>(),
    );
    for (&i, p) in tested.iter().zip(adjusted) {
        let c = &mut claims[i];
        c.primary = true;
        c.p_holm = Some(p);
        c.verdict = Verdict::of_p(c.difference.estimate, p);
    }
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
    Some(Analysis {
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
    use crate::model::{CodeInfo, EnvSets, SplitScores};

    fn run(arm: Arm, seed: u32, envs: &[EnvId], score: impl Fn(usize) -> f32) -> ArmRun {
        ArmRun {
            arm,
            seed,
            train_envs: envs.to_vec(),
            per_env: envs
                .iter()
                .enumerate()
                .map(|(i, e)| (e.clone(), vec![score(i)]))
                .collect(),
            scores: SplitScores::default(),
            env_steps: 0,
            wall_seconds: 0.0,
            curve: vec![],
            diagnostics: vec![],
            curriculum: None,
            reselections: vec![],
            env_steps_per_s: 0.0,
            eval_seconds: 0.0,
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
