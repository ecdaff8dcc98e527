//! "Where the gains come from": each arm's gain split by distance from what it trained on.

use crate::report::format::{ci_signed, opt};
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let rows: Vec<_> = a
        .arms
        .iter()
        .filter_map(|s| s.transfer.as_ref().map(|t| (s.arm, t)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut s = Section::new("gains", 2, "Where the gains come from");
    let mut table = Table::new([
        "arm",
        "(a) its trained envs",
        "(b) untrained envs of trained families",
        "(c) untrained families",
        "(d) held-out (OOD)",
    ]);
    for (arm, t) in rows {
        table.row([
            arm.name().to_string(),
            opt(&t.trained, ci_signed),
            opt(&t.same_family, ci_signed),
            opt(&t.other_families, ci_signed),
            opt(&t.ood, ci_signed),
        ]);
    }
    s.table(table);
    s.text(
        "Gain over the base in points [95% CI; crossed bootstrap: seeds, and one environment \
         draw applied to every seed; where seeds trained on different sets (random-k), the draw \
         is from their union and each seed averages its own]. The whole-pool verdicts above are \
         the headline; this table says where \
         they come from: an arm trains on a few environments and the whole-pool score mixes \
         what it learned there with what it kept or lost everywhere else.",
    );
    Some(s)
}
