//! "Base model": the base against the best constant answer, per single-turn family.

use crate::analysis::base_vs_constant_by_family;
use crate::report::format::ci_signed;
use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let mut s = Section::new("base-model", 2, "Base model");
    if let Some(d) = &a.base_over_constant {
        s.text(format!(
            "On the single-turn pool environments the base scores {} points above the best \
             constant answer (the bar a policy that ignores the image can reach). Per family \
             (points; base vs best constant answer):",
            ci_signed(d)
        ));
    }
    let mut table = Table::new(["family", "base", "constant answer"]);
    for (fam, (b, k)) in base_vs_constant_by_family(i.results) {
        table.row([fam, format!("{b:.1}"), format!("{k:.1}")]);
    }
    s.table(table);
    Some(s)
}
