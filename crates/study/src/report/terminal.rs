//! Sections as plain text for a terminal: headings underlined, tables in aligned columns,
//! markdown emphasis dropped.

use super::section::{Block, Section, Table};

/// The text of `sections`, in order.
pub fn render(sections: &[Section]) -> String {
    let mut out = String::from("\n");
    for s in sections {
        if let Some((_, text)) = &s.heading {
            out.push_str(text);
            out.push('\n');
        }
        for b in &s.blocks {
            match b {
                Block::Table(t) => table(&mut out, t),
                Block::Text(_) | Block::Figure { .. } => {}
            }
        }
        out.push('\n');
    }
    out
}

fn plain(cell: &str) -> String {
    cell.replace("**", "").replace('`', "")
}

fn table(out: &mut String, t: &Table) {
    let rows: Vec<Vec<String>> = std::iter::once(&t.header)
        .chain(&t.rows)
        .map(|r| r.iter().map(|c| plain(c)).collect())
        .collect();
    let cols = t.header.len();
    let width: Vec<usize> = (0..cols)
        .map(|k| {
            rows.iter()
                .filter_map(|r| r.get(k))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&width)
            .map(|(c, w)| format!("{c:<w$}", w = *w))
            .collect();
        out.push_str("  ");
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
}
