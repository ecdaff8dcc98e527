//! "Preconditions": what the testbed lets each mechanism do, measured before the arms.

use crate::model::{Interval, ProbeEstimate};
use crate::preconditions::targets as t;
use crate::report::format::{ci_signed, opt, within_noise};
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    i.results.analysis.as_ref()?;
    let results = i.results;
    let p = results.preconditions.as_ref()?;
    let mut s = Section::new(
        "preconditions",
        2,
        "Preconditions: can the paper's mechanisms act here?",
    );
    s.text(
        "Measured before any arm trains (stages `preconditions/…`), except the last row's \
         outcome check, which reads the AES arms. A comparison whose mechanism cannot act here \
         tests the testbed, not the method.",
    );
    let pts = |x: Option<f64>| x.map_or("–".into(), |v| format!("{v:.1}"));
    s.text(
        "**The base at each harness level** (greedy success on the pool, points; the arms' \
         evaluation instances; H4 is what evaluation plays):",
    );
    let mut levels = Table::new(
        std::iter::once(String::new()).chain(p.base_by_harness.keys().map(|h| h.to_string())),
    );
    for (label, st) in [("single-turn", true), ("multi-turn", false)] {
        levels.row(
            std::iter::once(label.to_string()).chain(
                p.base_by_harness
                    .values()
                    .map(|x| pts(if st { x.st } else { x.mt })),
            ),
        );
    }
    s.table(levels);
    let c = &results.config.transfer;
    s.text(format!(
        "**Single-environment probes**: the base fine-tuned on one pool environment alone \
         ({} env steps, the arms' RL settings), sources drawn evenly from {} strata of their mean \
         profile overlap with the pool; transfer = success after minus the base's, on the same \
         probe instances ({} per environment and scale, none of them an evaluation's). Intervals \
         resample probes, crossed with the targets' families where a statistic is over targets.",
        c.steps, c.strata, c.eval_episodes
    ));
    let mut table = Table::new([
        "precondition",
        "estimate [95% CI]",
        "over",
        "target",
        "largest its ties allow",
    ]);
    let rows = [
        (
            "harness_transfer: H4 gain on the source from training at H0–H2 only, points",
            est(&p.harness_transfer, true),
            over(&p.harness_transfer),
            format!("≥ {} with lo > 0", t::HARNESS_GAIN),
        ),
        (
            "the same sources' H4 gain from the same steps at H4, points",
            est(&p.harness_transfer_h4, true),
            over(&p.harness_transfer_h4),
            "(for scale)".into(),
        ),
        (
            "transfer_vs_profile: Spearman of profile overlap with transfer",
            est(&p.transfer_vs_profile, false),
            over(&p.transfer_vs_profile),
            format!("≥ {} with lo > 0", t::RANK),
        ),
        (
            "transfer_vs_gradient: Spearman of the base's gradient cosine with transfer",
            est(&p.transfer_vs_gradient, false),
            over(&p.transfer_vs_gradient),
            format!("≥ {} with lo > 0", t::RANK),
        ),
        (
            "transfer_vs_family: Spearman of same family (1/0) with transfer",
            est(&p.transfer_vs_family, false),
            over(&p.transfer_vs_family),
            "(what an overlap that knew only families would reach)".into(),
        ),
        (
            "transfer_vs_response: Spearman of aes-transfer's response cosine with the \
             transfer of the probes it was not computed from",
            est(&p.transfer_vs_response, false),
            over(&p.transfer_vs_response),
            format!("≥ {} with lo > 0", t::RANK),
        ),
        (
            "a probe's transfer to its family's other envs, points",
            est(&p.probe_same_family, true),
            over(&p.probe_same_family),
            String::new(),
        ),
        (
            "a probe's transfer to other families' envs, points",
            est(&p.probe_other_families, true),
            over(&p.probe_other_families),
            format!("≥ {}", t::KEEP),
        ),
        (
            "a probe's transfer to the held-out envs, points",
            est(&p.probe_ood, true),
            over(&p.probe_ood),
            format!("≥ {}", t::KEEP),
        ),
    ];
    let caps = [
        None,
        None,
        p.transfer_vs_profile.and_then(|e| e.max),
        p.transfer_vs_gradient.and_then(|e| e.max),
        p.transfer_vs_family.and_then(|e| e.max),
        p.transfer_vs_response.and_then(|e| e.max),
        None,
        None,
        None,
    ];
    for ((what, e, n, target), cap) in rows.into_iter().zip(caps) {
        let cap = cap.map_or(String::new(), |m| format!("{m:+.2}"));
        table.row([what.to_string(), e, n, target, cap]);
    }
    // The smallest change each part could detect (two-sided 5%, power 80%): a keep target a
    // point from zero is decided only where this is near a point.
    let z = crate::stats::detection_z(0.05, 0.8);
    let detectable = |i: &Option<Interval>| {
        i.as_ref()
            .map_or("–".into(), |i| format!("{:.1}", z * i.se))
    };
    for (arm, split) in &p.rl_keeps {
        let untrained = split.same_family.or(split.other_families);
        table.row([
            format!(
                "outcome: {} over the base on its trained envs / untrained pool envs / OOD, points",
                arm.name()
            ),
            format!(
                "{} / {} / {}",
                opt(&split.trained, ci_signed),
                opt(&untrained, ci_signed),
                opt(&split.ood, ci_signed)
            ),
            "its seeds".into(),
            format!(
                "trained ≥ {} (lo > 0); the rest ≥ {}",
                t::TRAINED_GAIN,
                t::KEEP
            ),
            String::new(),
        ]);
        table.row([
            format!(
                "{}: the smallest change each could detect ({z:.1} se), points; the parts whose \
                 keep target is within noise",
                arm.name()
            ),
            format!(
                "{} / {} / {}; {}",
                detectable(&split.trained),
                detectable(&untrained),
                detectable(&split.ood),
                within_noise(&[("untrained pool envs", &untrained), ("OOD", &split.ood)])
            ),
            "its seeds".into(),
            format!("about {} to decide the keep target", -t::KEEP),
            String::new(),
        ]);
    }
    for (arm, h) in &p.hdc_reach {
        table.row([
            format!(
                "hdc_reach: {}'s schedule: episodes below H4; advances earned at the gate / all; \
                 env-runs below H4 at the end",
                arm.name()
            ),
            format!(
                "{:.1}%; {} / {}; {} of {}",
                100.0 * h.below_h4,
                h.earned_advances,
                h.advances,
                h.below_h4_at_end,
                h.envs
            ),
            format!("its {} seeds", h.runs),
            "earned ≥ half".into(),
            String::new(),
        ]);
    }
    if let Some(r) = &p.hdc_regime {
        table.row([
            format!(
                "hdc_regime: pool envs at the H4 floor (base < {} points at H4, ≥ {} at H0); \
                 each HDC arm's share of them among its trained envs (worst seed)",
                r.floor_h4, r.unlock_h0
            ),
            format!(
                "{}; {}",
                r.floor_envs.len(),
                r.share_by_arm
                    .iter()
                    .map(|(a, s)| format!("{} {:.0}%", a.name(), 100.0 * s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "the pool; each HDC arm's seeds".into(),
            format!("share ≥ {:.0}%", 100.0 * r.share_target),
            String::new(),
        ]);
        table.row([
            "hdc_regime: on harness probes of floor sources, H4 success after H0–H2 training \
             minus after the same steps at H4, points"
                .to_string(),
            est(&r.scaffold_over_h4, true),
            over(&r.scaffold_over_h4),
            format!("lo > 0 over ≥ {} probes", r.min_probes),
            String::new(),
        ]);
    }
    s.table(table);
    if !p.transfer_by_sharing.is_empty() {
        s.text(
            "**What pairs share.** A probe's transfer to the other pool environments by what the \
             two profiles share (a task ability; only an observation variant's ability, noise, \
             occlusion or an egocentric crop; nothing; or the family itself, for scale) and \
             whether they draw with the same palette, points:",
        );
        let mut shared = Table::new(["shared", "same look", "other look"]);
        for what in [
            "a task ability",
            "only an observation ability",
            "nothing",
            "family",
        ] {
            let cell = |same: bool| {
                p.transfer_by_sharing
                    .iter()
                    .find(|x| x.shared == what && x.same_look == same)
                    .map_or("–".into(), |x| {
                        format!("{} ({})", est(&x.transfer, true), over(&x.transfer))
                    })
            };
            shared.row([what.to_string(), cell(true), cell(false)]);
        }
        s.table(shared);
    }
    Some(s)
}

fn est(e: &Option<ProbeEstimate>, signed: bool) -> String {
    e.as_ref().map_or("–".into(), |e| {
        if signed {
            format!("{:+.1} [{:+.1}, {:+.1}]", e.estimate, e.lo, e.hi)
        } else {
            format!("{:+.2} [{:+.2}, {:+.2}]", e.estimate, e.lo, e.hi)
        }
    })
}

fn over(e: &Option<ProbeEstimate>) -> String {
    e.as_ref().map_or("–".into(), |e| {
        let crossed = if e.crossed { " × target families" } else { "" };
        match e.pairs {
            Some(k) => format!("{} probes{crossed}, {k} pairs", e.probes),
            None => format!("{} probes", e.probes),
        }
    })
}
