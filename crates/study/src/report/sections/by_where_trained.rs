//! The primary comparisons split by where the two arms trained.

use crate::report::format::{ci_signed, opt};
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let rows: Vec<_> = a
        .claims
        .iter()
        .filter(|c| c.primary)
        .filter_map(|c| c.split.as_ref().map(|s| (c, s)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut s = Section::new(
        "by-where-trained",
        3,
        "The primary comparisons by where the arms trained",
    );
    let mut table = Table::new([
        "comparison",
        "whole pool (the verdict's)",
        "pool envs either arm trained on",
        "pool envs neither trained on",
        "held-out (OOD)",
    ]);
    for (c, split) in rows {
        table.row([
            c.comparison.clone(),
            ci_signed(&c.difference),
            opt(&split.either_trained, ci_signed),
            opt(&split.neither_trained, ci_signed),
            opt(&split.ood, ci_signed),
        ]);
    }
    s.table(table);
    s.text(
        "Points [95% CI; crossed bootstrap as in \"Where the gains come from\"; the sets are \
         taken seed by seed, so random-k's differ per seed]. Not separately Holm-controlled: \
         they say where a verdict's difference comes from; an arm trained on the whole pool \
         leaves no env untrained (–).",
    );
    Some(s)
}
