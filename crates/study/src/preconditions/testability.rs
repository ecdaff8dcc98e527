//! Which mechanisms the testbed lets act, by the preconditions measured: each mechanism's
//! primary claims, its preconditions in words, whether they are met, and what was measured
//! where not.

use super::hdc::{hdc_acts, regime_met};
use super::targets;
use crate::model::{
    ClaimId, Preconditions, ProbeEstimate, RETENTION_ARMS, Testability, TransferSplit,
};

/// Whether `e` meets `target` with its interval above zero.
pub(super) fn meets(e: Option<&ProbeEstimate>, target: f64) -> Option<bool> {
    e.map(|e| e.estimate >= target && e.lo > 0.0)
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
pub(super) fn testability(p: &Preconditions) -> Vec<Testability> {
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
