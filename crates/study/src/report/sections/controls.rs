//! "Control pool, hints, online re-selection".

use super::comparisons_table;
use crate::model::{Comparison, HINT_PAIR};
use crate::report::{Inputs, Section};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    let a = i.results.analysis.as_ref()?;
    let c = &i.results.config;
    let mut s = Section::new("controls", 2, "Control pool, hints, online re-selection");
    s.table(comparisons_table(&a.control));
    s.text(
        "The control pool drops the rule-inverted member of every conflict pair (mirrored \
         controls, negated goals); there AES has no designed conflict to avoid, so its advantage \
         over random-k should shrink.",
    );
    let extra: Vec<Comparison> = a.hints.iter().chain(&a.online).cloned().collect();
    if !extra.is_empty() {
        s.table(comparisons_table(&extra));
        s.text(format!(
            "Hints: the study trains with `{}` hints; `{}` uses `{}` hints \
             (action: the solver's next action; subgoal: what to reach or look at, never the \
             action). Evaluation has no hints (H4): the difference is the transfer.",
            c.suite.hint_style,
            HINT_PAIR.1.name(),
            c.other_hint_style()
        ));
    }
    Some(s)
}
