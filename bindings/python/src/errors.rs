//! Rust errors as Python exceptions: unknown ids are `KeyError`s, missing files
//! `FileNotFoundError`s, everything else a `ValueError` carrying the Rust message (which names
//! the file, the field and the expected value).

use envdist_core::FileError;
use pyo3::PyErr;
use pyo3::exceptions::{PyFileNotFoundError, PyKeyError, PyValueError};

/// A `ValueError` with `message`.
pub fn value_error(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(message.to_string())
}

/// A `KeyError` with `message`.
pub fn key_error(message: impl std::fmt::Display) -> PyErr {
    PyKeyError::new_err(message.to_string())
}

/// A file error: `FileNotFoundError` when the file is missing, else `ValueError`.
pub fn file_error(e: &FileError) -> PyErr {
    match e {
        FileError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(e.to_string())
        }
        _ => value_error(e),
    }
}

/// JSON produced by Rust for Python; serialising plain data cannot fail, but say so if it does.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String, PyErr> {
    serde_json::to_string(value).map_err(|e| value_error(format!("cannot serialise: {e}")))
}
