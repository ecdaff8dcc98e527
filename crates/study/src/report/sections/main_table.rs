//! "Main table": every arm's scores by column, its gain over the base, and the paper's
//! numbers beside them.

use crate::model::ArmSummary;
use crate::report::format::{ci, ci_signed, opt, percent};
use crate::report::{Column, Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let mut s = Section::new("main-table", 2, "Main table");
    let columns: [Column<'_, &ArmSummary>; 12] = [
        ("arm", &|arm| arm.arm.name().to_string()),
        ("seeds", &|arm| arm.seeds.to_string()),
        ("ST (ID)", &|arm| opt(&arm.columns[0], ci)),
        ("MT (ID)", &|arm| opt(&arm.columns[1], ci)),
        ("ST (OOD)", &|arm| opt(&arm.columns[2], ci)),
        ("MT (OOD)", &|arm| opt(&arm.columns[3], ci)),
        ("whole pool (ID)", &|arm| ci(&arm.id)),
        ("Δ ID vs base, points", &|arm| {
            opt(&arm.delta_id, ci_signed)
        }),
        ("pooled rel. gain ID", &|arm| {
            opt(&arm.pooled_gain_id, percent)
        }),
        ("pooled rel. gain OOD", &|arm| {
            opt(&arm.pooled_gain_ood, percent)
        }),
        ("avg. rel. gain (paper's statistic)", &|arm| {
            arm.paper_gain.map_or("–".into(), |g| format!("{g:+.1}%"))
        }),
        ("paper", &|arm| {
            arm.arm.card().paper_gain.unwrap_or("").to_string()
        }),
    ];
    s.table(Table::of(&columns, &a.arms));
    s.text(
        "The pooled relative gain is mean(arm) / mean(base) − 1 over the environments; the \
         paper's statistic is the mean over the four columns of (arm − base) / base and skips a \
         column where the base scores 0 (undefined), which can reverse comparisons: read the \
         points and the pooled gain first. The paper's numbers (Qwen3-VL, 200 → 30 \
         environments) are beside ours for direction only.",
    );
    s.text(format!(
        "Score on the environments each arm trained on (mean over seeds, points): {}.",
        a.arms
            .iter()
            .filter_map(|s| s.trained_id.map(|t| format!("{} {t:.1}", s.arm.name())))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Some(s)
}
