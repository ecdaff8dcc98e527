//! "Figures": every figure written beside the report.

use crate::report::{Block, Inputs, Section};

pub fn section(i: &Inputs<'_>) -> Option<Section> {
    i.results.analysis.as_ref()?;
    if i.figures.is_empty() {
        return None;
    }
    let mut s = Section::new("figures", 2, "Figures");
    for (title, file) in i.figures {
        s.blocks.push(Block::Figure {
            title: title.clone(),
            file: file.clone(),
        });
    }
    Some(s)
}
