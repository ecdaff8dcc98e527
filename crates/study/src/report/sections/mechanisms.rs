//! Which primary claims the testbed can test: each mechanism, the claims it carries, the
//! precondition it needs, and whether the record meets it.

use crate::report::{Inputs, Section, Table};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    i.results.analysis.as_ref()?;
    let p = i.results.preconditions.as_ref()?;
    let mut s = Section::new("mechanisms", 3, "Which claims the testbed can test");
    let mut mechanisms = Table::new(["mechanism", "primary claims", "precondition", "met here"]);
    for m in &p.testable {
        let claims: Vec<String> = m
            .claims
            .iter()
            .map(|c| c.statement().0.to_string())
            .collect();
        let met = match m.met {
            Some(true) => "yes",
            Some(false) => "**no: these claims are untestable here**",
            None => "not measured",
        };
        mechanisms.row([
            m.mechanism.clone(),
            claims.join("; "),
            m.precondition.clone(),
            met.into(),
        ]);
    }
    s.table(mechanisms);
    Some(s)
}
