//! "At a glance": every arm's whole-pool and held-out score with its gain over the base, and
//! every primary claim's difference and verdict (the terminal shows this too).

use crate::report::format::{ci, ci_signed, opt};
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let mut s = Section::new("glance", 2, "At a glance");
    let mut arms = Table::new([
        "arm",
        "seeds",
        "ID score",
        "Δ ID vs base, points",
        "OOD score",
    ]);
    for arm in &a.arms {
        arms.row([
            arm.arm.name().to_string(),
            arm.seeds.to_string(),
            ci(&arm.id),
            arm.delta_id
                .as_ref()
                .map_or("(reference)".into(), ci_signed),
            opt(&arm.ood, ci),
        ]);
    }
    s.table(arms);
    let mut claims = Table::new([
        "claim",
        "difference, points [95% CI]",
        "p (Holm)",
        "verdict",
    ]);
    for c in a.claims.iter().filter(|c| c.primary) {
        claims.row([
            c.statement.clone(),
            ci_signed(&c.difference),
            format!("{:.3}", c.p_holm.unwrap_or(c.difference.p)),
            c.verdict.word().to_string(),
        ]);
    }
    s.table(claims);
    Some(s)
}
