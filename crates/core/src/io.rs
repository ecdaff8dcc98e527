//! File IO shared by every crate: atomic writes and JSON/JSONL reads whose errors name the
//! file, the line, the field and what was expected.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// An error reading or writing one of envdist's files.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The operating system refused (missing file, permission, disk full, ...).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The content did not parse or did not have the expected shape.
    #[error("{path}{}: field `{field}`: {message}", line.map(|l| format!(" line {l}")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number for JSONL files.
        line: Option<usize>,
        /// Path of the offending field (`.` for the whole document).
        field: String,
        /// What went wrong, including what was expected.
        message: String,
    },
    /// A field had a well-formed but unacceptable value.
    #[error("{path}: field `{field}`: expected {expected}, found {found}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The offending field.
        field: String,
        /// What would have been accepted.
        expected: String,
        /// What was there.
        found: String,
    },
}

impl FileError {
    /// Shorthand for [`FileError::Invalid`].
    pub fn invalid(
        path: impl AsRef<Path>,
        field: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Self::Invalid {
            path: path.as_ref().to_path_buf(),
            field: field.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Write `bytes` to `path` atomically: write a temporary file beside it, sync, then rename.
/// Readers see either the old file or the whole new one, never half of it. Creates missing
/// parent directories.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(), FileError> {
    let path = path.as_ref();
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| FileError::io(parent, e))?;
    }
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(FileError::io(path, e));
    }
    Ok(())
}

/// Serialise `value` as pretty JSON and write it atomically.
pub fn write_json_atomic<T: Serialize>(path: impl AsRef<Path>, value: &T) -> Result<(), FileError> {
    let path = path.as_ref();
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| cannot_serialise(path, e))?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// A value that serde could not write to `path` (a map with non-string keys, a failing
/// `Serialize` impl): the error names the file.
fn cannot_serialise(path: &Path, e: serde_json::Error) -> FileError {
    FileError::Parse {
        path: path.to_path_buf(),
        line: None,
        field: ".".into(),
        message: format!("cannot serialise: {e}"),
    }
}

/// Serialise each item as one JSON line and write the file atomically.
pub fn write_jsonl_atomic<T: Serialize>(
    path: impl AsRef<Path>,
    items: &[T],
) -> Result<(), FileError> {
    let path = path.as_ref();
    let mut bytes = Vec::new();
    for item in items {
        serde_json::to_writer(&mut bytes, item).map_err(|e| cannot_serialise(path, e))?;
        bytes.push(b'\n');
    }
    write_atomic(path, &bytes)
}

fn parse_value<T: DeserializeOwned>(
    path: &Path,
    line: Option<usize>,
    text: &str,
    expected_schema: Option<u32>,
) -> Result<T, FileError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| FileError::Parse {
        path: path.to_path_buf(),
        line: line.or(Some(e.line()).filter(|_| line.is_none() && e.line() > 0)),
        field: ".".into(),
        message: format!("not valid JSON: {e}"),
    })?;
    if let Some(expected) = expected_schema {
        let found = value.get("schema_version");
        match found.and_then(|v| v.as_u64()) {
            Some(v) if v == expected as u64 => {}
            _ => {
                let found = found.map_or_else(|| "nothing".to_string(), |v| v.to_string());
                return Err(match line {
                    Some(l) => FileError::Parse {
                        path: path.to_path_buf(),
                        line: Some(l),
                        field: "schema_version".into(),
                        message: format!("expected {expected}, found {found}"),
                    },
                    None => FileError::invalid(path, "schema_version", expected.to_string(), found),
                });
            }
        }
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        FileError::Parse {
            path: path.to_path_buf(),
            line,
            field,
            message: crate::plain_serde_message(&e.into_inner().to_string()),
        }
    })
}

/// Read a text file. Bytes that are not UTF-8 are an error naming the line (and the byte
/// offset) where they start, not only the file.
pub fn read_text(path: impl AsRef<Path>) -> Result<String, FileError> {
    let path = path.as_ref();
    let bytes = fs::read(path).map_err(|e| FileError::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        FileError::Parse {
            path: path.to_path_buf(),
            line: Some(bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1),
            field: ".".into(),
            message: format!("not UTF-8 text: invalid bytes at byte offset {at}"),
        }
    })
}

/// Read a JSON document. With `expected_schema`, the top-level `schema_version` must equal it.
pub fn read_json<T: DeserializeOwned>(
    path: impl AsRef<Path>,
    expected_schema: Option<u32>,
) -> Result<T, FileError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_value(path, None, &text, expected_schema)
}

/// Read a JSONL file: one JSON value per non-empty line. Errors name the 1-based line.
pub fn read_jsonl<T: DeserializeOwned>(
    path: impl AsRef<Path>,
    expected_schema: Option<u32>,
) -> Result<Vec<T>, FileError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| parse_value(path, Some(i + 1), l, expected_schema))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Doc {
        schema_version: u32,
        k: usize,
    }

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("envdist-core-io-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn round_trip_and_errors_name_file_line_field() {
        let d = tmpdir("rt");
        let p = d.join("sub/doc.json");
        write_json_atomic(
            &p,
            &Doc {
                schema_version: 1,
                k: 3,
            },
        )
        .unwrap();
        let back: Doc = read_json(&p, Some(1)).unwrap();
        assert_eq!(back.k, 3);
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);

        let e = read_json::<Doc>(&p, Some(2)).unwrap_err().to_string();
        assert!(
            e.contains("doc.json") && e.contains("schema_version") && e.contains('2'),
            "{e}"
        );

        fs::write(&p, r#"{"schema_version":1,"k":"three"}"#).unwrap();
        let e = read_json::<Doc>(&p, Some(1)).unwrap_err().to_string();
        assert!(e.contains("doc.json") && e.contains("`k`"), "{e}");

        let l = d.join("log.jsonl");
        fs::write(
            &l,
            "{\"schema_version\":1,\"k\":1}\n\n{\"schema_version\":1,\"k\":\n",
        )
        .unwrap();
        let e = read_jsonl::<Doc>(&l, Some(1)).unwrap_err().to_string();
        assert!(e.contains("log.jsonl line 3"), "{e}");
        fs::write(&l, b"{\"schema_version\":1,\"k\":1}\n{\"k\":\"\xff\"}\n").unwrap();
        let e = read_jsonl::<Doc>(&l, Some(1)).unwrap_err().to_string();
        assert!(
            e.contains("log.jsonl line 2") && e.contains("not UTF-8"),
            "{e}"
        );
        let _ = fs::remove_dir_all(&d);
    }
}
