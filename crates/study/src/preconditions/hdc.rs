//! Whether HDC can act here: where its schedule went (its gates or its cap moving the
//! environments up the harness), and whether its regime exists (reward scarce at H4, the
//! scaffold unlocking what bare training cannot).

use envdist_core::{EnvId, HarnessLevel};

use super::crossed::probe_mean;
use super::targets::{self, PTS};
use crate::model::{Arm, CurriculumTotals, HDC_CLAIM_ARMS, HdcReach, HdcRegime, Results};

/// HDC's regime: the pool envs at the H4 floor with H0 above it, each HDC arm's share of them
/// among its trained envs (its worst seed), and the scaffold against the same steps at H4 on
/// the harness probes of those sources.
pub(super) fn hdc_regime(results: &Results, b: u32, seed: u64) -> Option<HdcRegime> {
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
pub(super) fn regime_met(r: Option<&HdcRegime>) -> Option<bool> {
    let r = r?;
    let shares =
        !r.share_by_arm.is_empty() && r.share_by_arm.iter().all(|(_, s)| *s >= r.share_target);
    let scaffold = r
        .scaffold_over_h4
        .is_some_and(|e| e.probes >= r.min_probes && e.lo > 0.0);
    Some(shares && scaffold)
}

/// Each HDC arm's schedule over its seeds (arms without a curriculum summary are left out).
pub(super) fn hdc_reach(results: &Results) -> Vec<(Arm, HdcReach)> {
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
pub(super) fn hdc_acts(reach: &[(Arm, HdcReach)]) -> Option<bool> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HdcReach;

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
