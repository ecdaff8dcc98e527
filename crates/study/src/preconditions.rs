//! The testbed's preconditions, from what the precondition stages measured
//! ([`crate::stages::preconditions`]) and the arms' transfer split: can each of the paper's
//! mechanisms act here? A comparison whose mechanism cannot act tests the testbed, not the
//! method; [`Preconditions::testable`] says which primary claims that leaves.
//!
//! Units: success points (100 × rate). Intervals resample probes (a probe's targets share its
//! fine-tune) crossed with the targets' families (a family's targets share their rules), by
//! [`crate::stats::bootstrap`] with the analysis's replicates; a rank correlation reports the
//! largest value its predictor's ties allow beside it.

use envdist_core::{EnvId, GradientSet, HarnessLevel};

use crate::model::{
    Analysis, Arm, ClaimId, CurriculumTotals, HDC_CLAIM_ARMS, HdcReach, HdcRegime, Preconditions,
    ProbeEstimate, RETENTION_ARMS, Results, Testability, TransferSplit, TurnScores,
};
use crate::stats::bootstrap;
use crate::stats::precision::spearman_cap;

/// Points per unit of success rate.
const PTS: f64 = 100.0;

/// The targets of the preconditions (points or Spearman's rho), named before the run
/// (docs/experiments/PROTOCOL.md).
pub mod targets {
    /// H4 points a scaffolded fine-tune must gain on its source (with lo > 0).
    pub const HARNESS_GAIN: f64 = 3.0;
    /// Rank correlation of similarity with transfer (with lo > 0).
    pub const RANK: f64 = 0.3;
    /// Points an AES arm must gain on its trained envs (with lo > 0).
    pub const TRAINED_GAIN: f64 = 10.0;
    /// Points an AES arm may lose on what it did not train (untrained pool envs, OOD).
    pub const KEEP: f64 = -1.0;
    /// An environment is at the H4 floor below this base success at H4, points.
    pub const FLOOR_H4: f64 = 5.0;
    /// ... and unlocked by the scaffold at this base success at H0, points, or more.
    pub const UNLOCK_H0: f64 = 10.0;
    /// The share of each HDC arm's trained environments (every seed) that must be floor
    /// environments for HDC's regime to be present.
    pub const FLOOR_SHARE: f64 = 0.2;
    /// Harness probes on floor sources the scaffold's advantage is measured over, at least.
    pub const REGIME_PROBES: usize = 3;
}

/// The mean over probes of `per_probe` (one value per probe; `None` drops the probe), probes
/// resampled.
fn probe_mean(per_probe: &[Option<f64>], b: u32, seed: u64) -> Option<ProbeEstimate> {
    let v: Vec<f64> = per_probe.iter().flatten().copied().collect();
    if v.is_empty() {
        return None;
    }
    let i = bootstrap(1, &[v.len()], b, seed, |_, u| {
        u[0].iter().map(|&k| v[k]).sum::<f64>() / u[0].len().max(1) as f64
    });
    Some(ProbeEstimate {
        estimate: i.estimate,
        lo: i.lo,
        hi: i.hi,
        probes: v.len(),
        pairs: None,
        crossed: false,
        max: None,
    })
}

/// A probe's transfer to one target, with what the predictors say of the pair.
#[derive(Debug, Clone, Copy)]
struct Pair {
    probe: usize,
    /// The target's family, as an index into the targets' families.
    family: usize,
    /// Points; rounded to 1e-6 so that equal transfers rank as ties whatever the float noise.
    transfer: f64,
    /// Predictor values (`None` where unknown).
    x: Option<f32>,
}

/// `pairs` grouped by probe, then by target family.
fn cells(pairs: &[Pair], probes: usize, families: usize) -> Vec<Vec<Vec<(f32, f64)>>> {
    let mut c = vec![vec![Vec::new(); families]; probes];
    for p in pairs {
        c[p.probe][p.family].push((p.x.unwrap_or(0.0), p.transfer));
    }
    c
}

/// The probes that have pairs, and the families.
fn drawn(pairs: &[Pair]) -> (Vec<usize>, usize) {
    let mut probes: Vec<usize> = pairs.iter().map(|p| p.probe).collect();
    probes.sort_unstable();
    probes.dedup();
    let families = pairs.iter().map(|p| p.family + 1).max().unwrap_or(0);
    (probes, families)
}

/// The mean over probes of each probe's mean transfer over its pairs, with an interval that
/// resamples probes crossed with target families.
fn crossed_mean(pairs: &[Pair], b: u32, seed: u64) -> Option<ProbeEstimate> {
    let (probes, families) = drawn(pairs);
    if probes.is_empty() {
        return None;
    }
    let cells = cells(pairs, probes.iter().max().map_or(0, |m| m + 1), families);
    let stat = |ps: &[usize], fs: &[usize]| {
        let (mut total, mut n) = (0.0, 0usize);
        for &k in ps {
            let (mut sum, mut count) = (0.0, 0usize);
            for &f in fs {
                for &(_, y) in &cells[probes[k]][f] {
                    sum += y;
                    count += 1;
                }
            }
            if count > 0 {
                total += sum / count as f64;
                n += 1;
            }
        }
        if n == 0 { f64::NAN } else { total / n as f64 }
    };
    let i = bootstrap(1, &[probes.len(), families], b, seed, |_, u| {
        stat(&u[0], &u[1])
    });
    Some(ProbeEstimate {
        estimate: i.estimate,
        lo: i.lo,
        hi: i.hi,
        probes: probes.len(),
        pairs: Some(pairs.len()),
        crossed: true,
        max: None,
    })
}

/// Spearman of the predictor with the transfer over `pairs` (those with a known predictor),
/// with an interval that resamples probes crossed with target families (every pair of a
/// drawn probe and a drawn family comes along), and the largest value the predictor's ties
/// allow.
fn crossed_rank(pairs: &[Pair], b: u32, seed: u64) -> Option<ProbeEstimate> {
    let known: Vec<Pair> = pairs.iter().filter(|p| p.x.is_some()).copied().collect();
    if known.len() < 4 {
        return None;
    }
    let (probes, families) = drawn(&known);
    let cells = cells(&known, probes.iter().max().map_or(0, |m| m + 1), families);
    let stat = |ps: &[usize], fs: &[usize]| {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for &k in ps {
            for &f in fs {
                for &(a, t) in &cells[probes[k]][f] {
                    x.push(a);
                    y.push(t as f32);
                }
            }
        }
        envdist_core::rank::spearman(&x, &y).unwrap_or(f64::NAN)
    };
    let i = bootstrap(1, &[probes.len(), families], b, seed, |_, u| {
        stat(&u[0], &u[1])
    });
    let x: Vec<f32> = known.iter().filter_map(|p| p.x).collect();
    Some(ProbeEstimate {
        estimate: i.estimate,
        lo: i.lo,
        hi: i.hi,
        probes: probes.len(),
        pairs: Some(known.len()),
        crossed: true,
        max: spearman_cap(&x),
    })
}

/// Whether `e` meets `target` with its interval above zero.
fn meets(e: Option<&ProbeEstimate>, target: f64) -> Option<bool> {
    e.map(|e| e.estimate >= target && e.lo > 0.0)
}

/// The preconditions of `results` (needs its precondition runs; the arms' part needs its
/// analysis). `response`: the transfer responses `aes-transfer` selects with (one row per
/// pool environment), for its own precondition.
pub fn analyse(
    results: &Results,
    analysis: Option<&Analysis>,
    response: Option<&GradientSet>,
) -> Option<Preconditions> {
    let runs = results.precondition_runs.as_ref()?;
    let b = results.config.analysis.bootstrap;
    let seed = results.config.seed ^ 0x5052_4543;
    let sets = &results.envs;
    let single: Vec<&EnvId> = sets.single_turn.iter().collect();
    let base_by_harness = runs
        .base_by_harness
        .iter()
        .map(|(h, scores)| {
            let mean = |st: bool| {
                let v: Vec<f64> = scores
                    .iter()
                    .filter(|(e, _)| single.contains(e) == st)
                    .map(|(_, x)| PTS * *x as f64)
                    .collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            (
                *h,
                TurnScores {
                    st: mean(true),
                    mt: mean(false),
                },
            )
        })
        .collect();
    let at = |e: &EnvId| runs.targets.iter().position(|t| t == e);
    let base = |i: usize| runs.base[i] as f64;
    // The harness probes and the same sources' H4 probes, paired.
    let (mut scaffolded, mut bare) = (Vec::new(), Vec::new());
    for h in &runs.harness {
        let Some(i) = at(&h.source) else { continue };
        scaffolded.push(Some(PTS * (h.after as f64 - base(i))));
        let m = runs.matrix.iter().find(|m| m.source == h.source);
        bare.push(m.map(|m| PTS * (m.after[i] as f64 - base(i))));
    }
    // Every (probe, other target) pair, by relation, with the targets' families indexed.
    let family = |e: &EnvId| sets.family.get(e).cloned().unwrap_or_default();
    let mut family_names: Vec<String> = runs.targets.iter().map(family).collect();
    family_names.sort();
    family_names.dedup();
    let family_of = |e: &EnvId| family_names.binary_search(&family(e)).unwrap_or_default();
    let (mut same, mut other, mut ood) = (Vec::new(), Vec::new(), Vec::new());
    let (mut profile, mut gradient, mut by_family) = (Vec::new(), Vec::new(), Vec::new());
    for (p, m) in runs.matrix.iter().enumerate() {
        for (i, t) in runs.targets.iter().enumerate() {
            if *t == m.source {
                continue;
            }
            let transfer = PTS * (m.after[i] as f64 - base(i));
            let pair = |x: Option<f32>| Pair {
                probe: p,
                family: family_of(t),
                transfer: (transfer * 1e6).round() / 1e6,
                x,
            };
            if sets.ood.contains(t) {
                ood.push(pair(None));
                continue;
            }
            let in_family = family(t) == family(&m.source);
            if in_family {
                same.push(pair(None));
            } else {
                other.push(pair(None));
            }
            if let Some(x) = m.profile_overlap[i] {
                profile.push(pair(Some(x)));
                by_family.push(pair(Some(if in_family { 1.0 } else { 0.0 })));
            }
            gradient.push(pair(m.gradient_cosine[i]));
        }
    }
    let rl_keeps: Vec<(Arm, TransferSplit)> = analysis
        .map(|a| {
            a.arms
                .iter()
                .filter(|s| RETENTION_ARMS.contains(&s.arm))
                .filter_map(|s| Some((s.arm, s.transfer.clone()?)))
                .collect()
        })
        .unwrap_or_default();
    let mut p = Preconditions {
        base_by_harness,
        harness_transfer: probe_mean(&scaffolded, b, seed),
        harness_transfer_h4: probe_mean(&bare, b, seed),
        transfer_vs_profile: crossed_rank(&profile, b, seed),
        transfer_vs_gradient: crossed_rank(&gradient, b, seed),
        transfer_vs_family: crossed_rank(&by_family, b, seed),
        probe_same_family: crossed_mean(&same, b, seed),
        probe_other_families: crossed_mean(&other, b, seed),
        probe_ood: crossed_mean(&ood, b, seed),
        rl_keeps,
        hdc_reach: hdc_reach(results),
        hdc_regime: hdc_regime(results, b, seed),
        transfer_vs_response: response.and_then(|r| {
            let held_out = results.config.transfer.aes_transfer_probes;
            crossed_rank(&response_pairs(results, r, held_out, &family_of), b, seed)
        }),
        testable: vec![],
    };
    p.testable = testability(&p);
    Some(p)
}

/// The pairs (probe, pool target) of the probes after the first `skip` (those the responses
/// were not computed from), each with the cosine of its source's and target's responses.
fn response_pairs(
    results: &Results,
    response: &GradientSet,
    skip: usize,
    family_of: &dyn Fn(&EnvId) -> usize,
) -> Vec<Pair> {
    let Some(runs) = results.precondition_runs.as_ref() else {
        return Vec::new();
    };
    let row = |e: &EnvId| {
        let i = response.env_ids.iter().position(|x| x == e)?;
        let r = response.row(i);
        r.iter().any(|v| *v != 0.0).then_some(r)
    };
    let mut pairs = Vec::new();
    for (p, m) in runs.matrix.iter().enumerate().skip(skip) {
        let Some(source) = row(&m.source) else {
            continue;
        };
        for (i, t) in runs.targets.iter().enumerate() {
            if *t == m.source || results.envs.ood.contains(t) {
                continue;
            }
            let transfer = PTS * (m.after[i] as f64 - runs.base[i] as f64);
            pairs.push(Pair {
                probe: p - skip,
                family: family_of(t),
                transfer: (transfer * 1e6).round() / 1e6,
                x: row(t).map(|r| envdist_core::cosine(source, r)),
            });
        }
    }
    pairs
}

/// HDC's regime: the pool envs at the H4 floor with H0 above it, each HDC arm's share of them
/// among its trained envs (its worst seed), and the scaffold against the same steps at H4 on
/// the harness probes of those sources.
fn hdc_regime(results: &Results, b: u32, seed: u64) -> Option<HdcRegime> {
    let runs = results.precondition_runs.as_ref()?;
    let at = |h: HarnessLevel, e: &EnvId| runs.base_by_harness.get(&h)?.get(e).copied();
    let floor_envs: Vec<EnvId> = results
        .envs
        .pool
        .iter()
        .filter(|e| {
            at(HarnessLevel::H4, e).is_some_and(|x| PTS * (x as f64) < targets::FLOOR_H4)
                && at(HarnessLevel::H0, e).is_some_and(|x| PTS * (x as f64) >= targets::UNLOCK_H0)
        })
        .cloned()
        .collect();
    let share_by_arm = HDC_CLAIM_ARMS
        .iter()
        .filter_map(|&arm| {
            let shares: Vec<f64> = results
                .arm_runs(arm)
                .iter()
                .filter(|r| !r.train_envs.is_empty())
                .map(|r| {
                    let n = r
                        .train_envs
                        .iter()
                        .filter(|e| floor_envs.contains(e))
                        .count();
                    n as f64 / r.train_envs.len() as f64
                })
                .collect();
            let worst = shares.iter().copied().fold(f64::INFINITY, f64::min);
            (!shares.is_empty()).then_some((arm, worst))
        })
        .collect();
    let target = |e: &EnvId| runs.targets.iter().position(|t| t == e);
    let paired: Vec<Option<f64>> = runs
        .harness
        .iter()
        .filter(|h| floor_envs.contains(&h.source))
        .map(|h| {
            let i = target(&h.source)?;
            let m = runs.matrix.iter().find(|m| m.source == h.source)?;
            Some(PTS * (h.after as f64 - m.after[i] as f64))
        })
        .collect();
    Some(HdcRegime {
        floor_envs,
        floor_h4: targets::FLOOR_H4,
        unlock_h0: targets::UNLOCK_H0,
        share_by_arm,
        share_target: targets::FLOOR_SHARE,
        scaffold_over_h4: probe_mean(&paired, b, seed),
        min_probes: targets::REGIME_PROBES,
    })
}

/// Whether HDC's regime exists: every HDC arm holds its share of floor envs in every seed, and
/// the scaffold beats the same steps at H4 on enough floor sources (lo > 0).
fn regime_met(r: Option<&HdcRegime>) -> Option<bool> {
    let r = r?;
    let shares =
        !r.share_by_arm.is_empty() && r.share_by_arm.iter().all(|(_, s)| *s >= r.share_target);
    let scaffold = r
        .scaffold_over_h4
        .is_some_and(|e| e.probes >= r.min_probes && e.lo > 0.0);
    Some(shares && scaffold)
}

/// Each HDC arm's schedule over its seeds (arms without a curriculum summary are left out).
fn hdc_reach(results: &Results) -> Vec<(Arm, HdcReach)> {
    // Arms in the order their first run appears.
    let mut arms: Vec<Arm> = Vec::new();
    for run in results.runs.iter().filter(|r| r.curriculum.is_some()) {
        if !arms.contains(&run.arm) {
            arms.push(run.arm);
        }
    }
    arms.into_iter()
        .map(|arm| {
            let t = CurriculumTotals::of(
                results
                    .runs
                    .iter()
                    .filter(|r| r.arm == arm)
                    .filter_map(|r| r.curriculum.as_ref()),
            );
            let reach = HdcReach {
                runs: t.runs,
                below_h4: t.episodes_per_level[..4].iter().sum::<u64>() as f64
                    / t.episodes().max(1) as f64,
                earned_advances: t.advances.saturating_sub(t.capped_advances),
                advances: t.advances,
                below_h4_at_end: t.final_levels[..4].iter().sum(),
                envs: t.final_levels.iter().sum(),
            };
            (arm, reach)
        })
        .collect()
}

/// Whether the curriculum itself acts in every arm of HDC's claims: its competence gates earn
/// at least half of its stage advances (the rest are forced by the stage cap, a fixed
/// schedule). `None` without those arms.
fn hdc_acts(reach: &[(Arm, HdcReach)]) -> Option<bool> {
    let claimed: Vec<&HdcReach> = reach
        .iter()
        .filter(|(a, _)| HDC_CLAIM_ARMS.contains(a))
        .map(|(_, r)| r)
        .collect();
    (!claimed.is_empty()).then(|| {
        claimed
            .iter()
            .all(|r| 2 * r.earned_advances >= r.advances && r.advances > 0)
    })
}

/// Whether an arm's split keeps what it did not train: every measured untrained part (its
/// untrained families' envs, other families, OOD) at or above [`targets::KEEP`], and its
/// trained envs gaining [`targets::TRAINED_GAIN`] with lo > 0.
fn keeps(split: &TransferSplit) -> Option<bool> {
    let trained = split.trained?;
    let kept = [split.same_family, split.other_families, split.ood]
        .iter()
        .flatten()
        .all(|i| i.estimate >= targets::KEEP);
    Some(trained.estimate >= targets::TRAINED_GAIN && trained.lo > 0.0 && kept)
}

/// Both parts known: their conjunction; one unknown: unknown unless the other fails.
fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// A precondition's phrase in the testability table's short column: what was measured against
/// its target, where it is not met.
fn short_rank(name: &str, e: Option<&ProbeEstimate>, target: f64) -> Option<String> {
    match e {
        None => Some(format!("{name}: not measured")),
        Some(e) if e.estimate >= target && e.lo > 0.0 => None,
        Some(e) => Some(format!(
            "{name}: {:+.2} [{:+.2}, {:+.2}] (needs ≥ {target} with lo > 0{})",
            e.estimate,
            e.lo,
            e.hi,
            e.max
                .map_or(String::new(), |m| format!("; at most {m:.2} with its ties"))
        )),
    }
}

/// The mechanisms, their primary claims and whether this record measured them able to act.
fn testability(p: &Preconditions) -> Vec<Testability> {
    let aes_keeps = p
        .rl_keeps
        .iter()
        .find(|(a, _)| *a == RETENTION_ARMS[0])
        .and_then(|(_, s)| keeps(s));
    let harness = meets(p.harness_transfer.as_ref(), targets::HARNESS_GAIN);
    let acts = hdc_acts(&p.hdc_reach);
    let regime = regime_met(p.hdc_regime.as_ref());
    let hdc_short: Vec<String> = [
        (harness != Some(true)).then(|| {
            p.harness_transfer
                .map_or("harness_transfer not measured".into(), |e| {
                    format!(
                        "the scaffold gains {:+.1} [{:+.1}, {:+.1}] points at H4 (needs ≥ {})",
                        e.estimate,
                        e.lo,
                        e.hi,
                        targets::HARNESS_GAIN
                    )
                })
        }),
        (acts != Some(true)).then(|| "HDC's gates do not earn its advances".to_string()),
        (regime != Some(true)).then(|| match &p.hdc_regime {
            None => "HDC's regime not measured".to_string(),
            Some(r) => format!(
                "HDC's regime absent: {} pool envs at the H4 floor, each HDC arm's trained envs \
                 hold {} of them (needs {:.0}%), the scaffold beats H4 training there by {}",
                r.floor_envs.len(),
                r.share_by_arm
                    .iter()
                    .map(|(_, s)| format!("{:.0}%", 100.0 * s))
                    .collect::<Vec<_>>()
                    .join(" / "),
                100.0 * r.share_target,
                r.scaffold_over_h4
                    .map_or("– (too few probes)".into(), |e| format!(
                        "{:+.1} [{:+.1}, {:+.1}] over {} probes",
                        e.estimate, e.lo, e.hi, e.probes
                    ))
            ),
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    let coverage_short: Vec<String> = [
        short_rank(
            "profile overlap against transfer (Spearman)",
            p.transfer_vs_profile.as_ref(),
            targets::RANK,
        ),
        (aes_keeps != Some(true)).then(|| "RL does not keep what it does not train".to_string()),
    ]
    .into_iter()
    .flatten()
    .collect();
    vec![
        Testability {
            mechanism: "HDC's harness weakening: scaffolded training teaches bare vision, and \
                        the curriculum's gates move the environments up the harness"
                .into(),
            claims: vec![ClaimId::HdcHelpsAes, ClaimId::HdcHelpsRandomK],
            precondition: format!(
                "harness_transfer ≥ {} points with lo > 0; each HDC arm's competence gates \
                 earn at least half of its stage advances (hdc_reach; aes+hdc, random-k+hdc); \
                 HDC's regime (hdc_regime): at least {:.0}% of each HDC arm's trained envs in \
                 every seed at the H4 floor (base below {} points at H4, at least {} at H0), and \
                 on at least {} harness probes of such sources the scaffold beats the same steps \
                 at H4 with lo > 0",
                targets::HARNESS_GAIN,
                100.0 * targets::FLOOR_SHARE,
                targets::FLOOR_H4,
                targets::UNLOCK_H0,
                targets::REGIME_PROBES
            ),
            met: and(and(harness, acts), regime),
            short: hdc_short.join("; "),
        },
        Testability {
            mechanism: "AES's coverage: training abilities carries to untrained envs that \
                        share them, and RL keeps the rest"
                .into(),
            claims: vec![
                ClaimId::AesOverRandomK,
                ClaimId::AesOverAllPool,
                ClaimId::AesHdcOverRandomKHdc,
            ],
            precondition: format!(
                "transfer_vs_profile ≥ {} with lo > 0; aes gains ≥ {} points on its trained \
                 envs (lo > 0) and loses at most {} on its untrained envs and OOD",
                targets::RANK,
                targets::TRAINED_GAIN,
                -targets::KEEP
            ),
            met: and(
                meets(p.transfer_vs_profile.as_ref(), targets::RANK),
                aes_keeps,
            ),
            short: coverage_short.join("; "),
        },
        Testability {
            mechanism: "AES's conflict term: the base's gradient cosine predicts transfer".into(),
            claims: vec![ClaimId::ConflictMatters],
            precondition: format!("transfer_vs_gradient ≥ {} with lo > 0", targets::RANK),
            met: meets(p.transfer_vs_gradient.as_ref(), targets::RANK),
            short: short_rank(
                "the base's gradient cosine against transfer (Spearman)",
                p.transfer_vs_gradient.as_ref(),
                targets::RANK,
            )
            .unwrap_or_default(),
        },
        Testability {
            mechanism: "measured conflict: the transfer responses aes-transfer selects with \
                        predict transfer they were not computed from"
                .into(),
            claims: vec![ClaimId::TransferConflictOverGradient],
            precondition: format!(
                "transfer_vs_response ≥ {} with lo > 0 (over the probes after the ones the \
                 responses come from)",
                targets::RANK
            ),
            met: meets(p.transfer_vs_response.as_ref(), targets::RANK),
            short: short_rank(
                "aes-transfer's responses against held-out transfer (Spearman)",
                p.transfer_vs_response.as_ref(),
                targets::RANK,
            )
            .unwrap_or_default(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(earned: u32, advances: u32) -> HdcReach {
        HdcReach {
            runs: 3,
            below_h4: 0.05,
            earned_advances: earned,
            advances,
            below_h4_at_end: 0,
            envs: 90,
        }
    }

    #[test]
    fn hdc_acts_only_where_every_arms_gates_earn_half_its_advances() {
        let [aes_hdc, random_k_hdc] = HDC_CLAIM_ARMS;
        let online = crate::model::ONLINE_PAIR.0;
        // A schedule whose stage cap forces most advances.
        assert_eq!(hdc_acts(&[(aes_hdc, reach(110, 300))]), Some(false));
        // One arm earning its advances is not enough if the other does not.
        assert_eq!(
            hdc_acts(&[(aes_hdc, reach(220, 250)), (random_k_hdc, reach(100, 300))]),
            Some(false)
        );
        assert_eq!(
            hdc_acts(&[(aes_hdc, reach(220, 250)), (random_k_hdc, reach(150, 300))]),
            Some(true)
        );
        // A schedule that never advanced did not act; no HDC arm: not measured.
        assert_eq!(hdc_acts(&[(aes_hdc, reach(0, 0))]), Some(false));
        assert_eq!(hdc_acts(&[]), None);
        // Only the arms of HDC's claims decide it.
        assert_eq!(
            hdc_acts(&[(aes_hdc, reach(220, 250)), (online, reach(10, 300))]),
            Some(true)
        );
    }
}
