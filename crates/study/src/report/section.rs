//! The values a report is made of.

/// One section of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// A stable name, for tests and for choosing sections (`"verdicts"`, `"main-table"`).
    pub key: &'static str,
    /// Heading level (1 is the title) and text; `None` continues the section before.
    pub heading: Option<(u8, String)>,
    /// What the section says, in order.
    pub blocks: Vec<Block>,
}

/// A piece of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A paragraph (markdown inline markup allowed).
    Text(String),
    /// A table.
    Table(Table),
    /// A figure beside the report: its title and file.
    Figure {
        /// The caption.
        title: String,
        /// The file, relative to the report.
        file: String,
    },
}

/// A table column over rows of `T`: its header, and how it writes a row's cell. Keeping the two
/// side by side means a header can never drift out of line with its cells.
pub type Column<'a, T> = (&'a str, &'a dyn Fn(&T) -> String);

/// A table: a header row and rows of cells (as many as the header's).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// A table with these columns and a row for each of `rows`.
    pub fn of<T>(columns: &[Column<'_, T>], rows: impl IntoIterator<Item = T>) -> Self {
        let mut table = Self::new(columns.iter().map(|(header, _)| *header));
        for r in rows {
            table.row(columns.iter().map(|(_, cell)| cell(&r)));
        }
        table
    }

    /// Add a row.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The cells of the column named `name` (none when there is no such column).
    pub fn column(&self, name: &str) -> Vec<&str> {
        let Some(k) = self.header.iter().position(|h| h == name) else {
            return Vec::new();
        };
        self.rows
            .iter()
            .filter_map(|r| r.get(k).map(String::as_str))
            .collect()
    }
}

impl Section {
    /// A section with a heading at `level`.
    pub fn new(key: &'static str, level: u8, heading: impl Into<String>) -> Self {
        Self {
            key,
            heading: Some((level, heading.into())),
            blocks: Vec::new(),
        }
    }

    /// A section without a heading of its own (it continues the one before).
    pub fn untitled(key: &'static str) -> Self {
        Self {
            key,
            heading: None,
            blocks: Vec::new(),
        }
    }

    /// Add a paragraph.
    pub fn text(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Text(text.into()));
    }

    /// Add a table.
    pub fn table(&mut self, table: Table) {
        self.blocks.push(Block::Table(table));
    }

    /// The section with only the columns named `keep` in its tables.
    pub fn keep_columns(mut self, keep: &[&str]) -> Self {
        for b in &mut self.blocks {
            if let Block::Table(t) = b {
                let idx: Vec<usize> = (0..t.header.len())
                    .filter(|&k| keep.contains(&t.header[k].as_str()))
                    .collect();
                let pick = |row: &[String]| -> Vec<String> {
                    idx.iter().filter_map(|&k| row.get(k).cloned()).collect()
                };
                t.header = pick(&t.header);
                t.rows = t.rows.iter().map(|r| pick(r)).collect();
            }
        }
        self
    }

    /// The section's tables, in order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
    }
}
