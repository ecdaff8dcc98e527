//! Sections as markdown: a heading, then each block followed by a blank line.

use super::section::{Block, Section, Table};

/// The markdown of `sections`, in order.
pub fn render(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        if let Some((level, text)) = &s.heading {
            out.push_str(&"#".repeat(usize::from(*level)));
            out.push(' ');
            out.push_str(text);
            out.push_str("\n\n");
        }
        for b in &s.blocks {
            match b {
                Block::Text(t) => out.push_str(t.trim_end()),
                Block::Table(t) => table(&mut out, t),
                Block::Figure { title, file } => {
                    out.push_str(&format!("### {title}\n\n![{title}]({file})"));
                }
            }
            out.push_str("\n\n");
        }
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

fn table(out: &mut String, t: &Table) {
    let line = |cells: &[String]| format!("| {} |", cells.join(" | "));
    out.push_str(&line(&t.header));
    out.push('\n');
    out.push('|');
    out.push_str(&"---|".repeat(t.header.len()));
    for r in &t.rows {
        out.push('\n');
        out.push_str(&line(r));
    }
}
