//! The sections of REPORT.md, one file each, and their order.

mod base_model;
mod by_scale;
mod by_where_trained;
mod controls;
mod facts;
mod figures;
mod gains;
mod glance;
mod hdc;
mod header;
mod main_table;
mod measured_transfer;
mod mechanisms;
mod pool_size;
mod precision;
mod preconditions;
mod ranking;
mod rl_phase;
mod rliable;
mod selections;
mod stage_times;
mod variance;
mod verdicts;

use super::format::ci_signed;
use super::{Inputs, Section, Table};
use crate::model::{Analysis, Claim, Comparison};

/// A section: `None` when the results hold nothing for it.
pub type MakeSection = fn(&Inputs<'_>) -> Option<Section>;

/// The report's sections, in order.
pub const ALL: [MakeSection; 23] = [
    header::section,
    glance::section,
    preconditions::section,
    mechanisms::section,
    verdicts::section,
    by_where_trained::section,
    variance::section,
    precision::section,
    main_table::section,
    by_scale::section,
    rliable::section,
    gains::section,
    rl_phase::section,
    ranking::section,
    base_model::section,
    hdc::section,
    measured_transfer::section,
    controls::section,
    pool_size::section,
    selections::section,
    facts::section,
    stage_times::section,
    figures::section,
];

/// The sections the terminal summary shows, by key, and the columns it keeps of their tables
/// (`None`: every column).
pub const TERMINAL: [(&str, Option<&[&str]>); 3] = [
    ("glance", None),
    ("mechanisms", Some(&["mechanism", "met here"])),
    ("measured-transfer", None),
];

/// A table of comparisons: each one's difference, detection limit and verdict.
fn comparisons_table(rows: &[Comparison]) -> Table {
    let mut table = Table::new([
        "comparison",
        "difference, points [95% CI]",
        "smallest detectable",
        "verdict on \"> 0\"",
    ]);
    for c in rows {
        table.row([
            c.label.clone(),
            ci_signed(&c.difference),
            format!("{:.1}", c.difference.mde()),
            c.verdict.word().to_string(),
        ]);
    }
    table
}

/// The primary claims that have the part `part` picks, each with it; `None` when none has (the
/// section is then left out).
fn primary_claims_with<'a, T>(
    a: &'a Analysis,
    part: impl Fn(&'a Claim) -> Option<&'a T>,
) -> Option<Vec<(&'a Claim, &'a T)>> {
    let rows: Vec<_> = a
        .claims
        .iter()
        .filter(|c| c.primary)
        .filter_map(|c| part(c).map(|p| (c, p)))
        .collect();
    (!rows.is_empty()).then_some(rows)
}
