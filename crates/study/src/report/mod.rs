//! REPORT.md as data. Each section of the report is a function from the results to a
//! [`Section`] value (a heading, prose, tables, figures), one file each under `sections/`;
//! [`sections`] lists them in the report's order; one renderer writes markdown
//! ([`markdown`]), another the end-of-run summary for the terminal, a subset of the same
//! sections ([`terminal_summary`]). Tests check section values, not rendered text.

mod format;
mod markdown;
pub mod section;
mod sections;
mod terminal;

pub use section::{Block, Column, Section, Table};

use crate::model::Results;

/// What a section reads: the results, and where the report's figures are.
pub struct Inputs<'a> {
    /// The study's record.
    pub results: &'a Results,
    /// `(title, file)` of each figure written beside the report.
    pub figures: &'a [(String, String)],
    /// The command that made the record.
    pub command: &'a str,
}

/// Every section of REPORT.md, in order (sections with nothing to show are left out).
pub fn sections(inputs: &Inputs<'_>) -> Vec<Section> {
    sections::ALL
        .iter()
        .filter_map(|make| make(inputs))
        .collect()
}

/// Render REPORT.md.
pub fn render(results: &Results, figures: &[(String, String)], command: &str) -> String {
    markdown::render(&sections(&Inputs {
        results,
        figures,
        command,
    }))
}

/// The end-of-run summary for the terminal: the sections [`sections::TERMINAL`] names, as
/// aligned text.
pub fn terminal_summary(results: &Results) -> String {
    let inputs = Inputs {
        results,
        figures: &[],
        command: "",
    };
    let mut chosen = Vec::new();
    for (key, columns) in sections::TERMINAL {
        if let Some(s) = sections(&inputs).into_iter().find(|s| s.key == key) {
            chosen.push(match columns {
                Some(keep) => s.keep_columns(keep),
                None => s,
            });
        }
    }
    terminal::render(&chosen)
}
