//! The primary comparisons split by where the two arms trained.

use super::primary_claims_with;
use crate::model::{Claim, ClaimSplit};
use crate::report::format::{ci_signed, opt};
use crate::report::{Column, Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let rows = primary_claims_with(a, |c| c.split.as_ref())?;
    let mut s = Section::new(
        "by-where-trained",
        3,
        "The primary comparisons by where the arms trained",
    );
    let columns: [Column<'_, (&Claim, &ClaimSplit)>; 5] = [
        ("comparison", &|(c, _)| c.comparison.clone()),
        ("whole pool (the verdict's)", &|(c, _)| {
            ci_signed(&c.difference)
        }),
        ("pool envs either arm trained on", &|(_, split)| {
            opt(&split.either_trained, ci_signed)
        }),
        ("pool envs neither trained on", &|(_, split)| {
            opt(&split.neither_trained, ci_signed)
        }),
        ("held-out (OOD)", &|(_, split)| opt(&split.ood, ci_signed)),
    ];
    s.table(Table::of(&columns, rows));
    s.text(
        "Points [95% CI; crossed bootstrap as in \"Where the gains come from\"; the sets are \
         taken seed by seed, so random-k's differ per seed]. Not separately Holm-controlled: \
         they say where a verdict's difference comes from; an arm trained on the whole pool \
         leaves no env untrained (–).",
    );
    Some(s)
}
