//! "Facts of this run".

use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    i.results.analysis.as_ref()?;
    let mut s = Section::new("facts", 2, "Facts of this run");
    let mut table = Table::new(["fact", "value"]);
    for (k, v) in i.results.facts.rows() {
        table.row([k.to_string(), v]);
    }
    s.table(table);
    Some(s)
}
