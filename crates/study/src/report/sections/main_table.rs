//! "Main table": every arm's scores by column, its gain over the base, and the paper's
//! numbers beside them.

use crate::report::format::{ci, ci_signed, opt, percent};
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let mut s = Section::new("main-table", 2, "Main table");
    let mut table = Table::new([
        "arm",
        "seeds",
        "ST (ID)",
        "MT (ID)",
        "ST (OOD)",
        "MT (OOD)",
        "whole pool (ID)",
        "Δ ID vs base, points",
        "pooled rel. gain ID",
        "pooled rel. gain OOD",
        "avg. rel. gain (paper's statistic)",
        "paper",
    ]);
    for arm in &a.arms {
        let cols: Vec<String> = arm.columns.iter().map(|c| opt(c, ci)).collect();
        table.row([
            arm.arm.name().to_string(),
            arm.seeds.to_string(),
            cols[0].clone(),
            cols[1].clone(),
            cols[2].clone(),
            cols[3].clone(),
            ci(&arm.id),
            opt(&arm.delta_id, ci_signed),
            opt(&arm.pooled_gain_id, percent),
            opt(&arm.pooled_gain_ood, percent),
            arm.paper_gain.map_or("–".into(), |g| format!("{g:+.1}%")),
            arm.arm.card().paper_gain.unwrap_or("").to_string(),
        ]);
    }
    s.table(table);
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
