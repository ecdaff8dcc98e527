//! The testbed's preconditions, from what the precondition stages measured
//! ([`crate::stages::preconditions`]) and the arms' transfer split: can each of the paper's
//! mechanisms act here? A comparison whose mechanism cannot act tests the testbed, not the
//! method; [`Preconditions::testable`] says which primary claims that leaves.
//!
//! Units: success points (100 × rate). Every interval resamples probes (a probe's targets
//! share its fine-tune), [`crate::stats::bootstrap`] with the analysis's replicates.

use envdist_core::EnvId;

use crate::model::{
    Analysis, Arm, ClaimId, CurriculumTotals, HDC_CLAIM_ARMS, HdcReach, Preconditions,
    ProbeEstimate, RETENTION_ARMS, Results, Testability, TransferSplit, TurnScores,
};
use crate::stats::bootstrap;

/// Points per unit of success rate.
const PTS: f64 = 100.0;

/// The targets the issue sets for each precondition (points or Spearman's rho).
pub mod targets {
    /// H4 points a scaffolded fine-tune must gain on its source (with lo > 0).
    pub const HARNESS_GAIN: f64 = 3.0;
    /// Rank correlation of similarity with transfer (with lo > 0).
    pub const RANK: f64 = 0.3;
    /// Points an AES arm must gain on its trained envs (with lo > 0).
    pub const TRAINED_GAIN: f64 = 10.0;
    /// Points an AES arm may lose on what it did not train (untrained pool envs, OOD).
    pub const KEEP: f64 = -1.0;
}

/// The mean over probes of `per_probe` (one value per probe; `None` drops the probe).
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
    })
}

/// Spearman over `(probe, x, y)` pairs with its probe-level interval.
fn rank(pairs: &[(usize, f32, f32)], probes: usize, b: u32, seed: u64) -> Option<ProbeEstimate> {
    let i = crate::stats::probe_level_spearman(pairs, probes, b, seed)?;
    Some(ProbeEstimate {
        estimate: i.estimate,
        lo: i.lo,
        hi: i.hi,
        probes,
        pairs: Some(pairs.len()),
    })
}

/// Whether `e` meets `target` with its interval above zero.
fn meets(e: Option<&ProbeEstimate>, target: f64) -> Option<bool> {
    e.map(|e| e.estimate >= target && e.lo > 0.0)
}

/// The preconditions of `results` (needs its precondition runs; the arms' part needs its
/// analysis).
pub fn analyse(results: &Results, analysis: Option<&Analysis>) -> Option<Preconditions> {
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
    let mut profile_pairs = Vec::new();
    let mut gradient_pairs = Vec::new();
    let mut family_pairs = Vec::new();
    let (mut same, mut other, mut ood) = (Vec::new(), Vec::new(), Vec::new());
    let family = |e: &EnvId| sets.family.get(e);
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    for (p, m) in runs.matrix.iter().enumerate() {
        let (mut s, mut o, mut d) = (Vec::new(), Vec::new(), Vec::new());
        for (i, t) in runs.targets.iter().enumerate() {
            if *t == m.source {
                continue;
            }
            let transfer = PTS * (m.after[i] as f64 - base(i));
            if sets.ood.contains(t) {
                d.push(transfer);
                continue;
            }
            if family(t) == family(&m.source) {
                s.push(transfer);
            } else {
                o.push(transfer);
            }
            // Rounded so that equal transfers rank as ties whatever the float noise.
            let y = ((transfer * 1e6).round() / 1e6) as f32;
            if let Some(x) = m.profile_overlap[i] {
                profile_pairs.push((p, x, y));
                let same = family(t) == family(&m.source);
                family_pairs.push((p, if same { 1.0 } else { 0.0 }, y));
            }
            if let Some(x) = m.gradient_cosine[i] {
                gradient_pairs.push((p, x, y));
            }
        }
        same.push(mean(&s));
        other.push(mean(&o));
        ood.push(mean(&d));
    }
    let probes = runs.matrix.len();
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
        transfer_vs_profile: rank(&profile_pairs, probes, b, seed),
        transfer_vs_gradient: rank(&gradient_pairs, probes, b, seed),
        transfer_vs_family: rank(&family_pairs, probes, b, seed),
        probe_same_family: probe_mean(&same, b, seed),
        probe_other_families: probe_mean(&other, b, seed),
        probe_ood: probe_mean(&ood, b, seed),
        rl_keeps,
        hdc_reach: hdc_reach(results),
        testable: vec![],
    };
    p.testable = testability(&p);
    Some(p)
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

/// The mechanisms, their primary claims and whether this record measured them able to act.
fn testability(p: &Preconditions) -> Vec<Testability> {
    let aes_keeps = p
        .rl_keeps
        .iter()
        .find(|(a, _)| *a == RETENTION_ARMS[0])
        .and_then(|(_, s)| keeps(s));
    vec![
        Testability {
            mechanism: "HDC's harness weakening: scaffolded training teaches bare vision, and \
                        the curriculum's gates move the environments up the harness"
                .into(),
            claims: vec![ClaimId::HdcHelpsAes, ClaimId::HdcHelpsRandomK],
            precondition: format!(
                "harness_transfer ≥ {} points with lo > 0; each HDC arm's competence gates \
                 earn at least half of its stage advances (hdc_reach; aes+hdc, random-k+hdc)",
                targets::HARNESS_GAIN
            ),
            met: and(
                meets(p.harness_transfer.as_ref(), targets::HARNESS_GAIN),
                hdc_acts(&p.hdc_reach),
            ),
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
        },
        Testability {
            mechanism: "AES's conflict term: the base's gradient cosine predicts transfer".into(),
            claims: vec![ClaimId::ConflictMatters],
            precondition: format!("transfer_vs_gradient ≥ {} with lo > 0", targets::RANK),
            met: meets(p.transfer_vs_gradient.as_ref(), targets::RANK),
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
