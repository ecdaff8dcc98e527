//! "Where the gains come from": each arm's gain split by distance from what it trained on.

use crate::model::{Arm, TransferSplit};
use crate::report::format::{ci_signed, opt};
use crate::report::{Column, Inputs, Section, Table};

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
    let columns: [Column<'_, (Arm, &TransferSplit)>; 5] = [
        ("arm", &|(arm, _)| arm.name().to_string()),
        ("(a) its trained envs", &|(_, split)| {
            opt(&split.trained, ci_signed)
        }),
        ("(b) untrained envs of trained families", &|(_, split)| {
            opt(&split.same_family, ci_signed)
        }),
        ("(c) untrained families", &|(_, split)| {
            opt(&split.other_families, ci_signed)
        }),
        ("(d) held-out (OOD)", &|(_, split)| {
            opt(&split.ood, ci_signed)
        }),
    ];
    s.table(Table::of(&columns, rows));
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
