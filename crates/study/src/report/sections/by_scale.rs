//! Every arm's whole-pool score at each evaluated scale alone, and its gain there.

use crate::report::format::{ci, ci_signed};
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let first = a.arms.iter().find(|s| !s.by_scale.is_empty())?;
    let mut s = Section::new("by-scale", 3, "Scores by evaluated scale");
    let mut table = Table::new(
        std::iter::once("arm".to_string()).chain(
            first
                .by_scale
                .iter()
                .map(|x| format!("{} scale: ID score (Δ vs base)", x.scale)),
        ),
    );
    for arm in &a.arms {
        table.row(
            std::iter::once(arm.arm.name().to_string()).chain(arm.by_scale.iter().map(|x| {
                match &x.delta_id {
                    Some(d) => format!("{} ({})", ci(&x.id), ci_signed(d)),
                    None => ci(&x.id),
                }
            })),
        );
    }
    s.table(table);
    s.text(
        "Points [95% CI], each env's own min, mid and max scale; the headline averages them. \
         Arms train over each env's whole scale range; HDC's scale half climbs to the top, so \
         it can show at the max scale.",
    );
    Some(s)
}
