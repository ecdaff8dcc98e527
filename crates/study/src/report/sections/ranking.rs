//! "Every method ranked, and against AES + HDC".

use super::comparisons_table;
use crate::report::format::ci_signed;
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let mut s = Section::new("ranking", 2, "Every method ranked, and against AES + HDC");
    let mut table = Table::new(["rank", "arm", "Δ whole pool vs base, points [95% CI]"]);
    for (k, (arm, d)) in a.ranking.iter().enumerate() {
        table.row([(k + 1).to_string(), arm.name().to_string(), ci_signed(d)]);
    }
    s.table(table);
    s.table(comparisons_table(&a.versus_aes_hdc));
    s.text(
        "The rivals (pass-rate filtering, learning progress, SEC, the RLVE ladder, robust PLR) \
         each choose over the whole pool with their published defaults (see \
         crates/curriculum and docs/curriculum-rivals); the same base, budget and evaluation as \
         every other arm.",
    );
    Some(s)
}
