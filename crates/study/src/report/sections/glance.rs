//! "At a glance": every arm's whole-pool and held-out score with its gain over the base, and
//! every primary claim's difference and verdict (the terminal shows this too).

use crate::model::{ArmSummary, Claim};
use crate::report::format::{ci, ci_signed, opt};
use crate::report::{Column, Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let arms: [Column<'_, &ArmSummary>; 5] = [
        ("arm", &|arm| arm.arm.name().to_string()),
        ("seeds", &|arm| arm.seeds.to_string()),
        ("ID score", &|arm| ci(&arm.id)),
        ("Δ ID vs base, points", &|arm| {
            arm.delta_id
                .as_ref()
                .map_or("(reference)".into(), ci_signed)
        }),
        ("OOD score", &|arm| opt(&arm.ood, ci)),
    ];
    let mut s = Section::new("glance", 2, "At a glance");
    s.table(Table::of(&arms, &a.arms));
    let testable = i.results.preconditions.as_ref().map(|p| &p.testable);
    let claims: [Column<'_, &Claim>; 5] = [
        ("claim", &|c| c.statement.clone()),
        ("difference, points [95% CI]", &|c| ci_signed(&c.difference)),
        ("p (Holm)", &|c| {
            format!("{:.3}", c.p_holm.unwrap_or(c.difference.p))
        }),
        ("verdict", &|c| c.verdict.word().to_string()),
        ("testable here", &|c| match c.testable {
            Some(true) => "yes".to_string(),
            Some(false) => format!(
                "no{}",
                testable
                    .and_then(|t| t.iter().find(|m| m.claims.contains(&c.id)))
                    .map_or(String::new(), |m| format!(": {}", m.short))
            ),
            None => "–".into(),
        }),
    ];
    s.table(Table::of(&claims, a.claims.iter().filter(|c| c.primary)));
    Some(s)
}
