//! "Measured transfer": does fine-tuning on one environment help or hurt the others, and do
//! the base's gradient cosines predict it.

use crate::model::Interval;
use crate::report::format::ci_signed;
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let t = a.transfer.as_ref()?;
    let c = &i.results.config.transfer;
    let mut s = Section::new(
        "measured-transfer",
        2,
        "Measured transfer: is the conflict term worth penalising?",
    );
    s.text(format!(
        "For each of {} designed conflict pairs, the base was fine-tuned on one member alone \
         ({} env steps at H4, the arms' RL settings) and evaluated ({} instances per scale) on \
         itself, its twin, a same-family variant and an environment of another family. \
         Transfer = success after − the base's success, points [95% CI over the probes].",
        t.probes, c.steps, c.eval_episodes
    ));
    let mut table = Table::new(["target", "mean transfer, points"]);
    for (rel, i) in &t.by_relation {
        table.row([rel.name().to_string(), ci_signed(i)]);
    }
    if let Some(d) = &t.twin_minus_same_family {
        table.row([
            "twin − same family (paired by probe)".to_string(),
            ci_signed(d),
        ]);
    }
    s.table(table);
    if let Some(rc) = &t.rank_correlation {
        s.text(format!(
            "Rank correlation (Spearman, average ranks) of the base's gradient cosine at H4 with \
             the measured transfer, over {} (source, target) pairs with a known cosine, interval by \
             resampling the {} probes: **{:+.2} [{:+.2}, {:+.2}]** ({}). Left out: {} pairs whose \
             cosine is exactly 0 (a zero gradient: unknown). {} pairs have a target the base never \
             solves, where transfer cannot be negative{}.",
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
        ));
    }
    Some(s)
}

fn reading(rc: &Interval) -> &'static str {
    if rc.lo > 0.0 {
        "the cosines predict transfer"
    } else if rc.hi < 0.0 {
        "the cosines rank pairs against their transfer"
    } else {
        "no evidence either way: the interval spans 0, which says nothing of a correlation \
         smaller than its width"
    }
}
