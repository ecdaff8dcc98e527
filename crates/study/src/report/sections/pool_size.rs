//! "Pool size": the whole-pool score of random subsets of growing size.

use crate::report::format::ci;
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let mut s = Section::new("pool-size", 2, "Pool size");
    let mut table = Table::new([
        "random environments trained on",
        "whole-pool score, points [95% CI]",
    ]);
    for (n, i) in &a.scaling {
        table.row([n.to_string(), ci(i)]);
    }
    s.table(table);
    Some(s)
}
