//! REPORT.md: the paper-shaped tables with 95% intervals, each claim's verdict and the smallest
//! difference the run could detect, the rivals, the controls, the diagnostics, the figures.

use std::fmt::Write as _;

use crate::analysis::base_vs_constant_by_family;
use crate::model::Arm;
use crate::model::Comparison;
use crate::model::CurriculumTotals;
use crate::model::Interval;
use crate::model::Results;

fn ci(i: &Interval) -> String {
    format!("{:.1} [{:.1}, {:.1}]", i.estimate, i.lo, i.hi)
}

fn ci_signed(i: &Interval) -> String {
    format!("{:+.1} [{:+.1}, {:+.1}]", i.estimate, i.lo, i.hi)
}

fn opt(i: &Option<Interval>, f: fn(&Interval) -> String) -> String {
    i.as_ref().map_or("–".into(), f)
}

/// The named parts that miss the keep target ([`crate::preconditions::targets::KEEP`]) at
/// their estimate while their interval still holds it ("within noise" of the target), or
/// "none".
fn within_noise(parts: &[(&str, &Option<Interval>)]) -> String {
    let keep = crate::preconditions::targets::KEEP;
    let names: Vec<&str> = parts
        .iter()
        .filter_map(|(name, i)| {
            let i = i.as_ref()?;
            (i.estimate < keep && i.hi >= keep).then_some(*name)
        })
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

fn comparisons(r: &mut String, rows: &[Comparison]) {
    let _ = writeln!(
        r,
        "| comparison | difference, points [95% CI] | smallest detectable | verdict on \"> 0\" |\n|---|---|---|---|"
    );
    for c in rows {
        let _ = writeln!(
            r,
            "| {} | {} | {:.1} | {} |",
            c.label,
            ci_signed(&c.difference),
            c.difference.mde(),
            c.verdict.word()
        );
    }
}

/// "Where the gains come from": each arm's gain split by distance from what it trained on.
fn where_gains_come_from(r: &mut String, a: &crate::model::Analysis) {
    let rows: Vec<_> = a
        .arms
        .iter()
        .filter_map(|s| s.transfer.as_ref().map(|t| (s.arm, t)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(r, "## Where the gains come from\n");
    let _ = writeln!(
        r,
        "| arm | (a) its trained envs | (b) untrained envs of trained families | (c) untrained families | (d) held-out (OOD) |\n|---|---|---|---|---|"
    );
    for (arm, t) in rows {
        let _ = writeln!(
            r,
            "| {} | {} | {} | {} | {} |",
            arm.name(),
            opt(&t.trained, ci_signed),
            opt(&t.same_family, ci_signed),
            opt(&t.other_families, ci_signed),
            opt(&t.ood, ci_signed)
        );
    }
    let _ = writeln!(
        r,
        "\nGain over the base in points [95% CI; crossed bootstrap: seeds, and one environment \
         draw applied to every seed; where seeds trained on different sets (random-k), the draw \
         is from their union and each seed averages its own]. The whole-pool verdicts above are \
         the headline; this table says where \
         they come from: an arm trains on a few environments and the whole-pool score mixes \
         what it learned there with what it kept or lost everywhere else.\n"
    );
}

/// "Variance components": where each primary comparison's variance comes from, and how many
/// seeds or environments an undecided one would need.
fn variance_components(r: &mut String, a: &crate::model::Analysis, target: f64) {
    let rows: Vec<_> = a
        .claims
        .iter()
        .filter(|c| c.primary)
        .filter_map(|c| c.variance.as_ref().map(|v| (c, v)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(r, "### Variance components of the primary comparisons\n");
    let _ = writeln!(
        r,
        "| comparison | seeds × envs | seed variance | env variance | residual | SE | seeds for {target} points | envs for {target} points |\n|---|---|---|---|---|---|---|---|"
    );
    let count = |n: Option<usize>| n.map_or("not by this alone".into(), |n| n.to_string());
    for (c, v) in rows {
        let _ = writeln!(
            r,
            "| {} | {} × {} | {:.1} | {:.1} | {:.1} | {:.2} | {} | {} |",
            c.comparison,
            v.seeds,
            v.envs,
            v.seed,
            v.env,
            v.residual,
            v.se,
            count(v.seeds_needed),
            count(v.envs_needed)
        );
    }
    let _ = writeln!(
        r,
        "\nPoints² of the paired difference per (seed, environment), split by least squares on \
         `d = μ + a_seed + b_env + ε`; SE is the standard error of the mean they imply. The last \
         two columns: seeds (environments as now) or environments (seeds as now) that would \
         bring the detection limit at the verdict's level down to {target} points.\n"
    );
}

/// rliable's aggregates (Agarwal et al. 2021): IQM per arm, probability of improvement per
/// claim.
fn rliable_aggregates(r: &mut String, a: &crate::model::Analysis) {
    if a.arms.iter().all(|s| s.iqm.is_none()) {
        return;
    }
    let _ = writeln!(r, "## rliable's aggregates\n");
    let _ = writeln!(
        r,
        "| arm | mean, whole pool (ID) | interquartile mean (IQM) |\n|---|---|---|"
    );
    for s in &a.arms {
        let _ = writeln!(
            r,
            "| {} | {} | {} |",
            s.arm.name(),
            ci(&s.id),
            opt(&s.iqm, ci)
        );
    }
    if !a.probability_of_improvement.is_empty() {
        let _ = writeln!(r, "\n| claim | P(a > b) [95% CI] |\n|---|---|");
        for p in &a.probability_of_improvement {
            let i = &p.probability;
            let _ = writeln!(
                r,
                "| {} − {} | {:.2} [{:.2}, {:.2}] |",
                p.a.name(),
                p.b.name(),
                i.estimate,
                i.lo,
                i.hi
            );
        }
    }
    let _ = writeln!(
        r,
        "\nOver the (seed, pool environment) scores; stratified bootstrap (seeds resampled within \
         each environment, the environments held fixed: rliable's default, so these intervals \
         are narrower than the crossed ones above). P(a > b): per environment the share of seed pairs where `a` scores \
         above `b` (ties a half), averaged over environments; 0.5 is no difference. Performance \
         profiles (share of scores above each threshold) are in results.json \
         (`analysis.performance_profiles`).\n"
    );
}

/// How much the seeds' selections agree: each seed selects from its own gradients (or draws
/// anew), so this is the selection's own noise, inside every interval of its arms.
fn selection_overlap(r: &mut String, results: &Results) {
    use crate::model::EnvSource;
    let seeds = results.config.seeds;
    if seeds < 2 {
        return;
    }
    let _ = writeln!(
        r,
        "\n| selection | picks shared by two seeds (mean over pairs) | picks in every seed's |\n|---|---|---|"
    );
    for source in EnvSource::SELECTIONS {
        let sets: Vec<&Vec<envdist_core::EnvId>> = (0..seeds)
            .filter_map(|seed| {
                let id = source.at_seed(seed)?;
                results
                    .selections
                    .iter()
                    .find(|s| s.name == id)
                    .map(|s| &s.envs)
            })
            .collect();
        if sets.len() < 2 {
            continue;
        }
        let (mut shared, mut pairs) = (0usize, 0usize);
        for i in 0..sets.len() {
            for j in i + 1..sets.len() {
                shared += sets[i].iter().filter(|e| sets[j].contains(e)).count();
                pairs += 1;
            }
        }
        let everywhere = sets[0]
            .iter()
            .filter(|e| sets.iter().all(|s| s.contains(e)))
            .count();
        let _ = writeln!(
            r,
            "| {} | {:.1} of {} | {} |",
            source.name(),
            shared as f64 / pairs as f64,
            sets[0].len(),
            everywhere
        );
    }
    let _ = writeln!(
        r,
        "\nEach training seed selects from per-environment gradients of its own (seed i: the \
         gradient seed of the master seed + i, other episodes and another projection; the \
         random draws draw anew), so every interval of an arm that selects includes its \
         selection's noise.\n"
    );
}

/// "The RL phase": how far the arms' RL moved the base, and whether the critic learned.
fn rl_phase(r: &mut String, results: &Results) {
    let arms: Vec<Arm> = results
        .config
        .arms
        .iter()
        .copied()
        .filter(|a| !a.is_base())
        .collect();
    let rows: Vec<(Arm, Vec<&crate::model::ArmRun>)> = arms
        .iter()
        .map(|a| (*a, results.arm_runs(*a)))
        .filter(|(_, runs)| runs.iter().any(|x| !x.diagnostics.is_empty()))
        .collect();
    if rows.is_empty() {
        return;
    }
    let c = &results.config;
    let t = &c.rl;
    let _ = writeln!(r, "## The RL phase\n");
    let _ = writeln!(
        r,
        "Every arm fine-tunes the base for {} env steps ({} envs x {} steps per update, {} \
         epochs of {}-sample minibatches, lr {} ({:?}), {} value-only warm-up updates): \
         about {:.2} in Adam steps x learning rate. The base's critic was warmed for {} \
         value-only updates on its own rollouts before any arm started.\n",
        c.rl.total_env_steps,
        t.num_envs,
        t.rollout_len,
        t.epochs,
        t.minibatch,
        t.lr,
        t.lr_schedule,
        c.rl.value_warmup_updates,
        c.optimisation(),
        c.base.critic_warmup_updates
    );
    let charged = c
        .arms
        .iter()
        .filter(|a| a.recipe().is_some_and(|r| r.envs.charges_transfer_probes()));
    for arm in charged {
        let _ = writeln!(
            r,
            "`{}` trains {} of them: the {} transfer probes it selects with fine-tuned the base \
             for {} env steps ({} each), charged to its budget.\n",
            arm.name(),
            c.rl.total_env_steps.saturating_sub(c.aes_transfer_charge()),
            c.transfer.aes_transfer_probes,
            c.aes_transfer_charge(),
            c.transfer.steps
        );
    }
    let _ = writeln!(
        r,
        "| arm | training success ST: first → last update | MT: first → last | KL to the base at the end | entropy first → last | value loss first → last | evaluation share of the arm's time |\n|---|---|---|---|---|---|---|"
    );
    let mean = |v: Vec<f32>| -> String {
        if v.is_empty() {
            "–".into()
        } else {
            format!("{:.2}", v.iter().sum::<f32>() / v.len() as f32)
        }
    };
    for (arm, runs) in rows {
        let first = |f: &dyn Fn(&crate::model::Diagnostic) -> Option<f32>| {
            mean(
                runs.iter()
                    .filter_map(|x| {
                        x.diagnostics
                            .iter()
                            .find_map(|d| (!d.value_only).then(|| f(d)).flatten())
                    })
                    .collect(),
            )
        };
        let last = |f: &dyn Fn(&crate::model::Diagnostic) -> Option<f32>| {
            mean(
                runs.iter()
                    .filter_map(|x| x.diagnostics.iter().rev().find_map(f))
                    .collect(),
            )
        };
        let share: Vec<f32> = runs
            .iter()
            .filter(|x| x.wall_seconds > 0.0)
            .map(|x| (x.eval_seconds / x.wall_seconds) as f32)
            .collect();
        let _ = writeln!(
            r,
            "| {} | {} → {} | {} → {} | {} | {} → {} | {} → {} | {} |",
            arm.name(),
            first(&|d| d.success_single),
            last(&|d| d.success_single),
            first(&|d| d.success_multi),
            last(&|d| d.success_multi),
            last(&|d| d.kl_to_base),
            first(&|d| Some(d.entropy)),
            last(&|d| Some(d.entropy)),
            first(&|d| Some(d.value_loss)),
            last(&|d| Some(d.value_loss)),
            if share.is_empty() {
                "–".into()
            } else {
                format!(
                    "{:.0}%",
                    100.0 * share.iter().sum::<f32>() / share.len() as f32
                )
            }
        );
    }
    let _ = writeln!(
        r,
        "\nMeans over seeds; training success is with sampled actions at the arm's own harness \
         levels (the evaluation is greedy at H4). `figures/learning_curves.png` has the whole \
         curves.\n"
    );
}

/// Every arm's whole-pool score at each evaluated scale alone, and its gain there.
fn scores_by_scale(r: &mut String, a: &crate::model::Analysis) {
    let Some(first) = a.arms.iter().find(|s| !s.by_scale.is_empty()) else {
        return;
    };
    let scales: Vec<String> = first.by_scale.iter().map(|s| s.scale.to_string()).collect();
    let _ = writeln!(r, "### Scores by evaluated scale\n");
    let _ = writeln!(
        r,
        "| arm | {} |\n|---|{}",
        scales
            .iter()
            .map(|s| format!("{s} scale: ID score (Δ vs base)"))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(scales.len())
    );
    for s in &a.arms {
        let cells: Vec<String> = s
            .by_scale
            .iter()
            .map(|x| match &x.delta_id {
                Some(d) => format!("{} ({})", ci(&x.id), ci_signed(d)),
                None => ci(&x.id),
            })
            .collect();
        let _ = writeln!(r, "| {} | {} |", s.arm.name(), cells.join(" | "));
    }
    let _ = writeln!(
        r,
        "\nPoints [95% CI], each env's own min, mid and max scale; the headline averages them. \
         Arms train over each env's whole scale range; HDC's scale half climbs to the top, so \
         it can show at the max scale.\n"
    );
}

/// The primary comparisons split by where the two arms trained.
fn claims_by_where_trained(r: &mut String, a: &crate::model::Analysis) {
    let rows: Vec<_> = a
        .claims
        .iter()
        .filter(|c| c.primary)
        .filter_map(|c| c.split.as_ref().map(|s| (c, s)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(r, "### The primary comparisons by where the arms trained\n");
    let _ = writeln!(
        r,
        "| comparison | whole pool (the verdict's) | pool envs either arm trained on | pool envs neither trained on | held-out (OOD) |\n|---|---|---|---|---|"
    );
    for (c, s) in rows {
        let _ = writeln!(
            r,
            "| {} | {} | {} | {} | {} |",
            c.comparison,
            ci_signed(&c.difference),
            opt(&s.either_trained, ci_signed),
            opt(&s.neither_trained, ci_signed),
            opt(&s.ood, ci_signed)
        );
    }
    let _ = writeln!(
        r,
        "\nPoints [95% CI; crossed bootstrap as in \"Where the gains come from\"; the sets are \
         taken seed by seed, so random-k's differ per seed]. Not separately Holm-controlled: \
         they say where a verdict's difference comes from; an arm trained on the whole pool \
         leaves no env untrained (–).\n"
    );
}

/// "Preconditions": what the testbed lets each mechanism do, measured before the arms.
fn preconditions(r: &mut String, results: &Results) {
    let Some(p) = &results.preconditions else {
        return;
    };
    let _ = writeln!(
        r,
        "## Preconditions: can the paper's mechanisms act here?
"
    );
    let _ = writeln!(
        r,
        "Measured before any arm trains (stages `preconditions/…`), except the last row's \
         outcome check, which reads the AES arms. A comparison whose mechanism cannot act here \
         tests the testbed, not the method.\n"
    );
    let pts = |x: Option<f64>| x.map_or("–".into(), |v| format!("{v:.1}"));
    let _ = writeln!(
        r,
        "**The base at each harness level** (greedy success on the pool, points; the arms' \
         evaluation instances; H4 is what evaluation plays):\n"
    );
    let _ = writeln!(r, "| | {} |", {
        let v: Vec<String> = p.base_by_harness.keys().map(|h| h.to_string()).collect();
        v.join(" | ")
    });
    let _ = writeln!(r, "|---|{}", "---|".repeat(p.base_by_harness.len()));
    for (label, st) in [("single-turn", true), ("multi-turn", false)] {
        let v: Vec<String> = p
            .base_by_harness
            .values()
            .map(|s| pts(if st { s.st } else { s.mt }))
            .collect();
        let _ = writeln!(r, "| {label} | {} |", v.join(" | "));
    }
    let est = |e: &Option<crate::model::ProbeEstimate>, signed: bool| {
        e.as_ref().map_or("–".into(), |e| {
            if signed {
                format!("{:+.1} [{:+.1}, {:+.1}]", e.estimate, e.lo, e.hi)
            } else {
                format!("{:+.2} [{:+.2}, {:+.2}]", e.estimate, e.lo, e.hi)
            }
        })
    };
    let n = |e: &Option<crate::model::ProbeEstimate>| {
        e.as_ref().map_or("–".into(), |e| match e.pairs {
            Some(k) => format!("{} probes, {k} pairs", e.probes),
            None => format!("{} probes", e.probes),
        })
    };
    let c = &results.config.transfer;
    let _ = writeln!(
        r,
        "\n**Single-environment probes**: the base fine-tuned on one pool environment alone \
         ({} env steps, the arms' RL settings), sources drawn evenly from {} strata of their mean \
         profile overlap with the pool; transfer = success after minus the base's, same \
         instances ({} per environment and scale). Intervals resample probes.\n",
        c.steps, c.strata, c.eval_episodes
    );
    let _ = writeln!(
        r,
        "| precondition | estimate [95% CI] | over | target |\n|---|---|---|---|"
    );
    use crate::preconditions::targets as t;
    let rows = [
        (
            "harness_transfer: H4 gain on the source from training at H0–H2 only, points",
            est(&p.harness_transfer, true),
            n(&p.harness_transfer),
            format!("≥ {} with lo > 0", t::HARNESS_GAIN),
        ),
        (
            "the same sources' H4 gain from the same steps at H4, points",
            est(&p.harness_transfer_h4, true),
            n(&p.harness_transfer_h4),
            "(for scale)".into(),
        ),
        (
            "transfer_vs_profile: Spearman of profile overlap with transfer",
            est(&p.transfer_vs_profile, false),
            n(&p.transfer_vs_profile),
            format!("≥ {} with lo > 0", t::RANK),
        ),
        (
            "transfer_vs_gradient: Spearman of the base's gradient cosine with transfer",
            est(&p.transfer_vs_gradient, false),
            n(&p.transfer_vs_gradient),
            format!("≥ {} with lo > 0", t::RANK),
        ),
        (
            "transfer_vs_family: Spearman of same family (1/0) with transfer",
            est(&p.transfer_vs_family, false),
            n(&p.transfer_vs_family),
            "(the pool's ceiling for an ability overlap)".into(),
        ),
        (
            "a probe's transfer to its family's other envs, points",
            est(&p.probe_same_family, true),
            n(&p.probe_same_family),
            String::new(),
        ),
        (
            "a probe's transfer to other families' envs, points",
            est(&p.probe_other_families, true),
            n(&p.probe_other_families),
            format!("≥ {}", t::KEEP),
        ),
        (
            "a probe's transfer to the held-out envs, points",
            est(&p.probe_ood, true),
            n(&p.probe_ood),
            format!("≥ {}", t::KEEP),
        ),
    ];
    for (what, e, over, target) in rows {
        let _ = writeln!(r, "| {what} | {e} | {over} | {target} |");
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
        let _ = writeln!(
            r,
            "| outcome: {} over the base on its trained envs / untrained pool envs / OOD, points | \
             {} / {} / {} | its seeds | trained ≥ {} (lo > 0); the rest ≥ {} |",
            arm.name(),
            opt(&split.trained, ci_signed),
            opt(&untrained, ci_signed),
            opt(&split.ood, ci_signed),
            t::TRAINED_GAIN,
            t::KEEP
        );
        let _ = writeln!(
            r,
            "| {}: the smallest change each could detect ({z:.1} se), points; the parts whose \
             keep target is within noise | {} / {} / {}; {} | its seeds | about {} to decide \
             the keep target |",
            arm.name(),
            detectable(&split.trained),
            detectable(&untrained),
            detectable(&split.ood),
            within_noise(&[("untrained pool envs", &untrained), ("OOD", &split.ood)]),
            -t::KEEP
        );
    }
    for (arm, h) in &p.hdc_reach {
        let _ = writeln!(
            r,
            "| hdc_reach: {}'s schedule: episodes below H4; advances earned at the gate / all; \
             env-runs below H4 at the end | {:.1}%; {} / {}; {} of {} | its {} seeds | earned ≥ \
             half |",
            arm.name(),
            100.0 * h.below_h4,
            h.earned_advances,
            h.advances,
            h.below_h4_at_end,
            h.envs,
            h.runs
        );
    }
    let _ = writeln!(
        r,
        "\n| mechanism | primary claims | precondition | met here |\n|---|---|---|---|"
    );
    for m in &p.testable {
        let claims: Vec<String> = m
            .claims
            .iter()
            .map(|c| c.statement().0.to_string())
            .collect();
        let met = match m.met {
            Some(true) => "yes",
            Some(false) => "**no: these claims are untestable here**",
            None => "not measured",
        };
        let _ = writeln!(
            r,
            "| {} | {} | {} | {met} |",
            m.mechanism,
            claims.join("; "),
            m.precondition
        );
    }
    let _ = writeln!(r);
}

/// "Measured transfer": does fine-tuning on one environment help or hurt the others, and do
/// the base's gradient cosines predict it.
fn measured_transfer(r: &mut String, results: &Results, a: &crate::model::Analysis) {
    let Some(t) = &a.transfer else {
        return;
    };
    let c = &results.config.transfer;
    let _ = writeln!(
        r,
        "\n## Measured transfer: is the conflict term worth penalising?\n"
    );
    let _ = writeln!(
        r,
        "For each of {} designed conflict pairs, the base was fine-tuned on one member alone \
         ({} env steps at H4, the arms' RL settings) and evaluated ({} instances per scale) on \
         itself, its twin, a same-family variant and an environment of another family. \
         Transfer = success after − the base's success, points [95% CI over the probes].\n",
        t.probes, c.steps, c.eval_episodes
    );
    let _ = writeln!(r, "| target | mean transfer, points |\n|---|---|");
    for (rel, i) in &t.by_relation {
        let _ = writeln!(r, "| {} | {} |", rel.name(), ci_signed(i));
    }
    if let Some(d) = &t.twin_minus_same_family {
        let _ = writeln!(
            r,
            "| twin − same family (paired by probe) | {} |",
            ci_signed(d)
        );
    }
    let reading = |rc: &Interval| {
        if rc.lo > 0.0 {
            "the cosines predict transfer"
        } else if rc.hi < 0.0 {
            "the cosines rank pairs against their transfer"
        } else {
            "no evidence either way: the interval spans 0, which says nothing of a correlation \
             smaller than its width"
        }
    };
    if let Some(rc) = &t.rank_correlation {
        let _ = writeln!(
            r,
            "\nRank correlation (Spearman, average ranks) of the base's gradient cosine at H4 with \
             the measured transfer, over {} (source, target) pairs with a known cosine, interval by \
             resampling the {} probes: **{:+.2} [{:+.2}, {:+.2}]** ({}). Left out: {} pairs whose \
             cosine is exactly 0 (a zero gradient: unknown). {} pairs have a target the base never \
             solves, where transfer cannot be negative{}.\n",
            t.pairs,
            t.probes,
            rc.estimate,
            rc.lo,
            rc.hi,
            reading(rc),
            t.unknown_cosine_pairs,
            t.floor_pairs,
            t.rank_correlation_above_floor
                .as_ref()
                .map_or(String::new(), |x| format!(
                    "; without them: {:+.2} [{:+.2}, {:+.2}]",
                    x.estimate, x.lo, x.hi
                ))
        );
    }
}

/// Render REPORT.md.
pub fn render(results: &Results, figures: &[(String, String)], command: &str) -> String {
    let c = &results.config;
    let mut r = String::new();
    let _ = writeln!(
        r,
        "# envdist experiment report (preset `{}`)\n",
        c.preset.name()
    );
    let _ = writeln!(
        r,
        "Made by `{command}` at commit `{}` (source hash `{}`); `config.json` beside this report \
         holds every field, and `cargo xtask experiment --config config.json --out NEW_DIR` at \
         that commit reproduces these numbers (the pipeline is deterministic). Compute time of \
         all stages {:.1} min on this machine (a stage loaded from the cache counts the time of \
         the run that computed it); this invocation took {:.1} min.\n",
        results.code.commit,
        results.code.source_hash,
        results.compute_seconds / 60.0,
        results.total_seconds / 60.0
    );
    let m = &results.machine;
    let _ = writeln!(
        r,
        "Machine: {} ({}), L1d {}, {} worker threads. The numbers are bit-identical on any \
         x86-64 machine with FMA running this commit, at any thread count and vector width \
         (every matrix product contracts over at most 512 values, so `gemm`'s cache-dependent \
         blocking cannot change a sum, and each product's shape keeps it in `gemm`'s kernels \
         that sum each value in order, never in lanes; see ARCHITECTURE.md, Determinism).\n",
        if m.cpu.is_empty() {
            "unknown CPU"
        } else {
            &m.cpu
        },
        if m.simd.is_empty() {
            "no SIMD flags read".to_string()
        } else {
            m.simd.join(", ")
        },
        m.l1d
            .as_ref()
            .map_or("unknown".into(), |(size, ways)| format!(
                "{size} {ways}-way"
            )),
        m.threads
    );
    let _ = writeln!(
        r,
        "**Protocol.** The base model is the solvers' behaviour cloned ({} demonstration steps at \
         harness levels and scales drawn uniformly, no RL): a stand-in for a pretrained VLM's \
         priors. Every arm trains from it for the same {} environment steps{}, {} training seeds \
         per arm, paired by seed (seed i draws the same random-k set and PPO stream in every \
         arm). Evaluation is greedy at H4 (image and task statement only), {} instances per \
         environment and scale at the {} scales, instances distinct per environment, on the {} \
         pool environments (ID) and {} held-out ones (OOD). Scores are success rates in points; \
         every interval is a 95% crossed bootstrap interval over training seeds and environments \
         ({} replicates: one environment draw applied to every seed and to both arms of a \
         comparison); \"smallest detectable\" is the true difference the run would detect four \
         times in five at the level its verdict uses (Holm's first step for a primary claim, \
         5% for an exploratory one). A claim is **equivalent** when its difference is shown to \
         lie within ±{} points (two one-sided tests; the margin is named before the run, \
         `analysis.equivalence_margin`).\n",
        c.base.samples,
        c.rl.total_env_steps,
        format_args!(
            " (PPO{}; the harness's hints in training: {})",
            if c.rl.kl_coef > 0.0 {
                format!(
                    " with a KL penalty to the base, `rl.kl_coef` {}",
                    c.rl.kl_coef
                )
            } else {
                String::new()
            },
            c.suite.hint_style
        ),
        c.seeds,
        c.eval.episodes,
        c.eval
            .scales
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(" and "),
        results.facts.pool_envs,
        results.facts.ood_envs,
        c.analysis.bootstrap,
        c.analysis.equivalence_margin,
    );
    let Some(a) = &results.analysis else {
        let _ = writeln!(r, "(no analysis: the base run is missing)");
        return r;
    };

    preconditions(&mut r, results);
    let _ = writeln!(r, "## Verdicts on the paper's claims\n");
    let _ = writeln!(
        r,
        "| claim | comparison (whole pool unless said) | difference, points [95% CI] | smallest detectable (× SE) | p (Holm-adjusted for primary claims) | equivalence p (±{m} points) | | verdict |\n|---|---|---|---|---|---|---|---|",
        m = c.analysis.equivalence_margin
    );
    let mut ordered: Vec<&crate::model::Claim> = a.claims.iter().filter(|c| c.primary).collect();
    ordered.extend(a.claims.iter().filter(|c| !c.primary));
    for cl in ordered {
        let _ = writeln!(
            r,
            "| {} | {} | {} | {:.1} ({:.1}) | {} | {} | {} | **{}** |",
            cl.statement,
            cl.comparison,
            ci_signed(&cl.difference),
            cl.mde,
            cl.mde_z,
            match cl.p_holm {
                Some(p) => format!("{p:.3} (raw {:.3})", cl.difference.p),
                None => format!("{:.3}", cl.difference.p),
            },
            match (cl.p_equivalence_holm, cl.p_equivalence) {
                (Some(q), Some(raw)) => format!("{q:.3} (raw {raw:.3})"),
                (None, Some(raw)) => format!("{raw:.3}"),
                _ => "–".into(),
            },
            if cl.primary { "primary" } else { "exploratory" },
            cl.verdict.word()
        );
    }
    let primary = a.claims.iter().filter(|c| c.primary).count();
    let _ = writeln!(
        r,
        "\nThe {primary} primary claims were named in the configuration before the run \
         (`analysis.primary`); their verdicts come from Holm-adjusted bootstrap p-values (of \
         the difference, and apart of the equivalence), so the chance of any false \
         \"supported\" or \"refuted\" among them is at most 5%, and likewise of any false \
         \"equivalent\" (the study's `power_tests` check the family-wise rate and the power at \
         the detection limit on simulated studies). Exploratory comparisons are judged by their own \
         intervals: with many of them, about one in twenty of their verdicts can be noise."
    );
    let mdes: Vec<f64> = a
        .claims
        .iter()
        .filter(|c| c.primary)
        .map(|c| c.mde)
        .collect();
    if !mdes.is_empty() {
        let lo = mdes.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = mdes.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let _ = writeln!(
            r,
            "\nPower: the smallest difference between arms this run could detect in a primary \
             claim ranges from {lo:.1} to {hi:.1} points on the pooled ID score. {}\n",
            if hi <= 5.0 {
                "Every comparison can separate arms whose true difference is 5 points."
            } else if lo <= 5.0 {
                "Some comparisons can separate arms 5 points apart; the others cannot, and their \
                 \"inconclusive\" verdicts say only that any difference is smaller than their \
                 detection limit."
            } else {
                "No comparison can separate arms 5 points apart: an inconclusive verdict here \
                 means only that the difference, if any, is below the detection limit."
            }
        );
    }

    claims_by_where_trained(&mut r, a);
    variance_components(&mut r, a, c.analysis.detect_points);
    let _ = writeln!(r, "## Main table\n");
    let _ = writeln!(
        r,
        "| arm | seeds | ST (ID) | MT (ID) | ST (OOD) | MT (OOD) | whole pool (ID) | Δ ID vs base, points | pooled rel. gain ID | pooled rel. gain OOD | avg. rel. gain (paper's statistic) | paper |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for s in &a.arms {
        let cols: Vec<String> = s.columns.iter().map(|c| opt(c, ci)).collect();
        let _ = writeln!(
            r,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.arm.name(),
            s.seeds,
            cols[0],
            cols[1],
            cols[2],
            cols[3],
            ci(&s.id),
            opt(&s.delta_id, ci_signed),
            opt(&s.pooled_gain_id, |i| format!(
                "{:+.1}% [{:+.1}, {:+.1}]",
                i.estimate, i.lo, i.hi
            )),
            opt(&s.pooled_gain_ood, |i| format!(
                "{:+.1}% [{:+.1}, {:+.1}]",
                i.estimate, i.lo, i.hi
            )),
            s.paper_gain.map_or("–".into(), |g| format!("{g:+.1}%")),
            s.arm.card().paper_gain.unwrap_or(""),
        );
    }
    let _ = writeln!(
        r,
        "\nThe pooled relative gain is mean(arm) / mean(base) − 1 over the environments; the \
         paper's statistic is the mean over the four columns of (arm − base) / base and skips a \
         column where the base scores 0 (undefined), which can reverse comparisons: read the \
         points and the pooled gain first. The paper's numbers (Qwen3-VL, 200 → 30 \
         environments) are beside ours for direction only.\n"
    );
    let _ = writeln!(
        r,
        "Score on the environments each arm trained on (mean over seeds, points): {}.\n",
        a.arms
            .iter()
            .filter_map(|s| s.trained_id.map(|t| format!("{} {t:.1}", s.arm.name())))
            .collect::<Vec<_>>()
            .join(", ")
    );

    scores_by_scale(&mut r, a);
    rliable_aggregates(&mut r, a);
    where_gains_come_from(&mut r, a);
    rl_phase(&mut r, results);

    let _ = writeln!(r, "## Every method ranked, and against AES + HDC\n");
    let _ = writeln!(
        r,
        "| rank | arm | Δ whole pool vs base, points [95% CI] |\n|---|---|---|"
    );
    for (i, (arm, d)) in a.ranking.iter().enumerate() {
        let _ = writeln!(r, "| {} | {} | {} |", i + 1, arm.name(), ci_signed(d));
    }
    let _ = writeln!(r);
    comparisons(&mut r, &a.versus_aes_hdc);
    let _ = writeln!(
        r,
        "\nThe rivals (pass-rate filtering, learning progress, SEC, the RLVE ladder, robust PLR) \
         each choose over the whole pool with their published defaults (see \
         crates/curriculum and docs/curriculum-rivals); the same base, budget and evaluation as \
         every other arm.\n"
    );

    let _ = writeln!(r, "## Base model\n");
    if let Some(d) = &a.base_over_constant {
        let _ = writeln!(
            r,
            "On the single-turn pool environments the base scores {} points above the best \
             constant answer (the bar a policy that ignores the image can reach). Per family \
             (points; base vs best constant answer):\n",
            ci_signed(d)
        );
    }
    let _ = writeln!(r, "| family | base | constant answer |\n|---|---|---|");
    for (fam, (b, k)) in base_vs_constant_by_family(results) {
        let _ = writeln!(r, "| {fam} | {b:.1} | {k:.1} |");
    }
    let _ = writeln!(r);

    let _ = writeln!(r, "## HDC: where the curricula went\n");
    let _ = writeln!(
        r,
        "| arm | episodes at H0 / H1 / H2 / H3 / H4 (share) | final level H0..H4 (envs) | envs at H4 at the end | half the envs at H4 after | capped / all stage advances |\n|---|---|---|---|---|---|"
    );
    for arm in Arm::ALL.into_iter().filter(|a| a.has_hdc()) {
        let t = CurriculumTotals::of(
            results
                .arm_runs(arm)
                .iter()
                .filter_map(|x| x.curriculum.as_ref()),
        );
        if t.runs == 0 {
            continue;
        }
        let (eps, fin, half) = (t.episodes_per_level, t.final_levels, &t.half_at_h4_after);
        let total: u64 = t.episodes().max(1);
        let _ = writeln!(
            r,
            "| {} | {} | {} | {:.0}% | {} | {} / {} |",
            arm.name(),
            eps.iter()
                .map(|e| format!("{:.0}%", 100.0 * *e as f64 / total as f64))
                .collect::<Vec<_>>()
                .join(" / "),
            fin.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(" / "),
            100.0 * t.share_at_h4_sum / t.runs as f32,
            if half.len() == t.runs {
                format!(
                    "{:.0}% of the episodes",
                    100.0 * half.iter().sum::<f32>() / half.len() as f32
                )
            } else {
                format!("{} of {} seeds never", t.runs - half.len(), t.runs)
            },
            t.capped_advances,
            t.advances
        );
    }
    let windows = match c.hdc.windows_per_level {
        0 => format!(
            "window {} scales moving by {}",
            c.hdc.window_width, c.hdc.window_step
        ),
        n => format!("each env's scale range passed in {n} windows per level"),
    };
    let _ = writeln!(
        r,
        "\nHDC settings: {windows}, competence {:.2} (EMA rate {:.2}, at \
         least {} episodes), a stage capped at {} episodes (a capped advance is a budget \
         fallback, not earned competence), review decay λ = {}.\n",
        c.hdc.competence_threshold,
        c.hdc.ema_rate,
        c.hdc.min_episodes,
        c.hdc.max_stage_episodes,
        c.hdc.lambda
    );

    measured_transfer(&mut r, results, a);

    let _ = writeln!(r, "## Control pool, hints, online re-selection\n");
    comparisons(&mut r, &a.control);
    let _ = writeln!(
        r,
        "\nThe control pool drops the rule-inverted member of every conflict pair (mirrored \
         controls, negated goals); there AES has no designed conflict to avoid, so its advantage \
         over random-k should shrink.\n"
    );
    let extra: Vec<Comparison> = a.hints.iter().chain(&a.online).cloned().collect();
    if !extra.is_empty() {
        comparisons(&mut r, &extra);
        let _ = writeln!(
            r,
            "\nHints: the study trains with `{}` hints; `{}` uses `{}` hints \
             (action: the solver's next action; subgoal: what to reach or look at, never the \
             action). Evaluation has no hints (H4): the difference is the transfer.\n",
            c.suite.hint_style,
            crate::model::HINT_PAIR.1.name(),
            c.other_hint_style()
        );
    }

    let _ = writeln!(r, "## Pool size\n");
    let _ = writeln!(
        r,
        "| random environments trained on | whole-pool score, points [95% CI] |\n|---|---|"
    );
    for (n, i) in &a.scaling {
        let _ = writeln!(r, "| {n} | {} |", ci(i));
    }

    let _ = writeln!(r, "\n## Selections\n");
    let _ = writeln!(
        r,
        "| selection | envs | abilities covered | mean pairwise gradient cosine | pairs with cosine < −0.1 | certified gap to optimum |\n|---|---|---|---|---|---|"
    );
    for s in &results.selections {
        let _ = writeln!(
            r,
            "| {} | {} | {}/{} | {} | {} | {} |",
            s.name,
            s.envs.len(),
            s.covered,
            s.coverable,
            s.mean_pairwise_cosine
                .map_or("–".into(), |c| format!("{c:+.3}")),
            s.conflicting_pairs,
            s.certificate_gap
                .map_or("–".into(), |g| format!("≤ {:.1}%", 100.0 * g))
        );
    }
    selection_overlap(&mut r, results);
    for s in results.selections.iter().filter(|s| s.note.is_some()) {
        let _ = writeln!(
            r,
            "\nNote on `{}`: {}",
            s.name,
            s.note.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(
        r,
        "\nAES enforces full ability coverage, breaks ties between equal-scoring environments \
         in a seeded random order, and {} environments whose gradient is exactly zero.\n",
        if c.selection.exclude_zero_gradient {
            "excludes (as unknown)"
        } else {
            "keeps (as conflict-free, the paper's literal objective)"
        }
    );

    let _ = writeln!(r, "## Facts of this run\n");
    let _ = writeln!(r, "| fact | value |\n|---|---|");
    for (k, v) in results.facts.rows() {
        let _ = writeln!(r, "| {k} | {v} |");
    }
    let _ = writeln!(
        r,
        "\n## Stage times (seconds; cached stages show the time of the run that computed them)\n"
    );
    let _ = writeln!(r, "| stage | seconds |\n|---|---|");
    for (k, v) in &results.stage_seconds {
        let _ = writeln!(r, "| {k} | {v:.1} |");
    }
    let train: f64 = results
        .runs
        .iter()
        .filter(|x| !x.arm.is_base())
        .map(|x| x.wall_seconds)
        .sum::<f64>()
        + results
            .scaling
            .iter()
            .map(|p| p.run.wall_seconds)
            .sum::<f64>();
    let _ = writeln!(
        r,
        "| training + evaluation of every arm and seed | {train:.1} |"
    );
    if !figures.is_empty() {
        let _ = writeln!(r, "\n## Figures\n");
        for (title, file) in figures {
            let _ = writeln!(r, "### {title}\n\n![{title}]({file})\n");
        }
    }
    r
}

/// The end-of-run table for the terminal: every arm's whole-pool and held-out score and its
/// gain over the base, with 95% intervals.
pub fn terminal_summary(results: &Results) -> String {
    let mut s = String::from(
        "\narm                     seeds  ID score        Δ ID vs base (pts)      OOD score\n",
    );
    let Some(a) = &results.analysis else {
        return s;
    };
    for arm in &a.arms {
        let ci = |i: &Interval| format!("{:5.1} [{:5.1},{:5.1}]", i.estimate, i.lo, i.hi);
        s.push_str(&format!(
            "{:<23} {:>5}  {:<18} {:<22} {}\n",
            arm.arm.name(),
            arm.seeds,
            ci(&arm.id),
            arm.delta_id.map_or("(reference)".into(), |d| format!(
                "{:+5.1} [{:+5.1},{:+5.1}]",
                d.estimate, d.lo, d.hi
            )),
            arm.ood.as_ref().map_or("–".into(), ci),
        ));
    }
    for (title, primary) in [
        ("primary claims (Holm-adjusted p)", true),
        ("exploratory", false),
    ] {
        let claims: Vec<_> = a.claims.iter().filter(|c| c.primary == primary).collect();
        if claims.is_empty() {
            continue;
        }
        s.push_str(&format!("\n{title}:\n"));
        for c in claims {
            s.push_str(&format!(
                "  {:<70} {:+5.1} pts [{:+.1}, {:+.1}]  p {:.3}  {}\n",
                c.statement,
                c.difference.estimate,
                c.difference.lo,
                c.difference.hi,
                c.p_holm.unwrap_or(c.difference.p),
                c.verdict.word()
            ));
        }
    }
    if let Some(p) = &results.preconditions {
        s.push_str("\npreconditions (can each mechanism act here?):\n");
        for m in &p.testable {
            let met = match m.met {
                Some(true) => "met",
                Some(false) => "NOT met: its claims are untestable here",
                None => "not measured",
            };
            s.push_str(&format!(
                "  {}\n    {}: {met}\n",
                m.mechanism, m.precondition
            ));
        }
    }
    if let Some(t) = &a.transfer {
        s.push_str("\nmeasured transfer (points):\n");
        for (rel, i) in &t.by_relation {
            s.push_str(&format!(
                "  {:<14} {:+5.1} [{:+.1}, {:+.1}]\n",
                rel.name(),
                i.estimate,
                i.lo,
                i.hi
            ));
        }
        if let Some(rc) = &t.rank_correlation {
            s.push_str(&format!(
                "  gradient cosine vs transfer, Spearman {:+.2} [{:+.2}, {:+.2}] over {} pairs\n",
                rc.estimate, rc.lo, rc.hi, t.pairs
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(estimate: f64, lo: f64, hi: f64) -> Option<Interval> {
        Some(Interval {
            estimate,
            lo,
            hi,
            se: (hi - lo) / 4.0,
            p: 1.0,
        })
    }

    /// A part that misses the keep target only at its estimate is within noise; one that
    /// meets it, one whose whole interval misses it, and one not measured are not.
    #[test]
    fn within_noise_names_only_the_parts_whose_interval_holds_the_keep_target() {
        let ood = interval(-1.7, -4.3, 0.5);
        let met = interval(-0.8, -2.8, 0.7);
        let missed = interval(-3.0, -4.5, -1.5);
        assert_eq!(
            within_noise(&[("untrained", &met), ("OOD", &ood), ("gone", &None)]),
            "OOD"
        );
        assert_eq!(within_noise(&[("missed", &missed), ("met", &met)]), "none");
    }
}
