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

mod context;
mod tables;
#[cfg(test)]
mod tests;
mod transfer;

use std::collections::BTreeMap;

use envdist_core::EnvId;

use crate::model::{
    Analysis, Arm, ArmSummary, CONTROL_PAIRS, Claim, ClaimId, Comparison, FLAGSHIP, HINT_PAIR,
    Interval, ONLINE_PAIR, Results, Verdict,
};
use crate::stats::{bootstrap, mean_of, paired_difference, paired_replicates};
use context::Ctx;
use tables::{PTS, matrix, set_level};
use transfer::transfer_analysis;

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
