//! A small reader for numpy `.npy` files (format versions 1-3), enough for the dense
//! `env x ability` count matrices numpy users save with `np.save`.
//!
//! Supported element types: bool, u8/u16/u32/u64, i8/i16/i32/i64, f32/f64, little-endian (or
//! byte-order free), C or Fortran order. The matrix goes straight to a sparse row form so a
//! 100,000 x 1,000 `u8` file never becomes a dense `f32` copy.

use std::path::Path;

use envdist_core::FileError;

use crate::error::SelectError;

/// A sparse `rows x cols` non-negative count matrix in compressed-row form.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseCounts {
    /// Number of rows (environments).
    pub rows: usize,
    /// Number of columns (abilities).
    pub cols: usize,
    /// Row `r` owns `indices[indptr[r]..indptr[r + 1]]`; length `rows + 1`.
    pub indptr: Vec<usize>,
    /// Column of each non-zero entry, ascending within a row.
    pub indices: Vec<u32>,
    /// Value of each non-zero entry (finite, positive).
    pub values: Vec<f32>,
}

impl SparseCounts {
    /// Build from a dense row-major matrix. Zeros are dropped; negative or non-finite
    /// entries are errors naming the entry; `source_name` names the origin in errors. A shape
    /// with an empty dimension is refused: it holds no values to bound the other dimension
    /// (an empty `10**12 x 0` array would allocate terabytes of row pointers).
    pub fn from_dense(
        rows: usize,
        cols: usize,
        dense: &[f32],
        source_name: &str,
    ) -> Result<Self, SelectError> {
        if rows == 0 || cols == 0 {
            return Err(SelectError::invalid(
                source_name,
                "shape",
                "at least one environment and one ability",
                format!("{rows} x {cols}"),
            ));
        }
        if Some(dense.len()) != rows.checked_mul(cols) {
            return Err(SelectError::invalid(
                source_name,
                "shape",
                format!("{rows} x {cols} values"),
                format!("{} values", dense.len()),
            ));
        }
        let mut b = Builder::new(rows, cols);
        for r in 0..rows {
            for c in 0..cols {
                b.push(r, c, f64::from(dense[r * cols + c]), source_name)?;
            }
            b.end_row();
        }
        Ok(b.finish())
    }
}

struct Builder {
    out: SparseCounts,
}

impl Builder {
    fn new(rows: usize, cols: usize) -> Self {
        let mut indptr = Vec::with_capacity(rows + 1);
        indptr.push(0);
        Self {
            out: SparseCounts {
                rows,
                cols,
                indptr,
                indices: Vec::new(),
                values: Vec::new(),
            },
        }
    }

    #[inline]
    fn push(&mut self, r: usize, c: usize, v: f64, source: &str) -> Result<(), SelectError> {
        // Counts are kept as f32: a finite f64 beyond f32's range would become infinite, and a
        // positive one below its smallest value zero (which is dropped like any zero).
        if v.is_nan() || v < 0.0 || !(v as f32).is_finite() {
            return Err(SelectError::invalid(
                source,
                format!("[{r}, {c}]"),
                "a finite non-negative count (at most 3.4e38)",
                v.to_string(),
            ));
        }
        if v as f32 == 0.0 {
            return Ok(());
        }
        self.out.indices.push(c as u32);
        self.out.values.push(v as f32);
        Ok(())
    }

    fn end_row(&mut self) {
        self.out.indptr.push(self.out.indices.len());
    }

    fn finish(self) -> SparseCounts {
        self.out
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Dtype {
    Bool,
    U(usize),
    I(usize),
    F(usize),
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Dtype::Bool => 1,
            Dtype::U(s) | Dtype::I(s) | Dtype::F(s) => s,
        }
    }

    #[inline]
    fn read(self, b: &[u8]) -> f64 {
        match self {
            Dtype::Bool => f64::from(b[0] != 0),
            Dtype::U(1) => f64::from(b[0]),
            Dtype::U(2) => f64::from(u16::from_le_bytes([b[0], b[1]])),
            Dtype::U(4) => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            Dtype::U(_) => u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])) as f64,
            Dtype::I(1) => f64::from(b[0] as i8),
            Dtype::I(2) => f64::from(i16::from_le_bytes([b[0], b[1]])),
            Dtype::I(4) => f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            Dtype::I(_) => i64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])) as f64,
            Dtype::F(4) => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            Dtype::F(_) => f64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])),
        }
    }
}

fn parse_descr(descr: &str) -> Option<Dtype> {
    // Bytes, not chars: the header is lossily decoded text and may hold any character.
    let (&order, rest) = descr.as_bytes().split_first()?;
    if !matches!(order, b'<' | b'|' | b'=') {
        return None;
    }
    let (&kind, size) = rest.split_first()?;
    let size: usize = std::str::from_utf8(size).ok()?.parse().ok()?;
    match (kind, size) {
        (b'b', 1) => Some(Dtype::Bool),
        (b'u', 1 | 2 | 4 | 8) => Some(Dtype::U(size)),
        (b'i', 1 | 2 | 4 | 8) => Some(Dtype::I(size)),
        (b'f', 4 | 8) => Some(Dtype::F(size)),
        _ => None,
    }
}

/// Value of `key` in a numpy header dict such as `{'descr': '<f4', 'fortran_order': False,
/// 'shape': (3, 4), }`: the raw text up to the next top-level comma.
fn header_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("'{key}':");
    let start = header.find(&pat)? + pat.len();
    let rest = header[start..].trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else {
        rest.find([',', '}']).unwrap_or(rest.len())
    };
    Some(rest[..end].trim())
}

/// Read a 2-D count matrix from an `.npy` file.
pub fn read_counts_npy(path: impl AsRef<Path>) -> Result<SparseCounts, SelectError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_counts_npy(&bytes, &path.display().to_string())
}

/// What an `.npy` header declares, checked against the bytes that follow it.
struct Header<'a> {
    dtype: Dtype,
    fortran: bool,
    dims: Vec<usize>,
    shape_text: String,
    /// The array's bytes: exactly `product(dims) * dtype.size()` of them.
    data: &'a [u8],
}

/// Parse and check an `.npy` header: magic, version, header length, dtype, order and shape.
/// The declared shape is checked against the bytes actually present before anything is
/// allocated for it, so a header claiming a huge array is refused, not believed.
fn parse_header<'a>(bytes: &'a [u8], source_name: &str) -> Result<Header<'a>, SelectError> {
    let bad = |field: &str, expected: &str, found: String| {
        SelectError::invalid(source_name, field, expected, found)
    };
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad(
            "magic",
            "a numpy .npy file (starts with \\x93NUMPY)",
            "other bytes".into(),
        ));
    }
    let major = bytes[6];
    let (header_len, header_start) = match major {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        2 | 3 => {
            return Err(bad(
                "header",
                "a 4-byte header length",
                "a truncated file".into(),
            ));
        }
        _ => {
            return Err(bad("version", "npy format 1, 2 or 3", format!("{major}")));
        }
    };
    let data_start = header_start + header_len;
    if bytes.len() < data_start {
        return Err(bad(
            "header",
            &format!("{header_len} header bytes"),
            "a truncated file".into(),
        ));
    }
    let header = String::from_utf8_lossy(&bytes[header_start..data_start]);
    let descr = header_value(&header, "descr")
        .map(|d| d.trim_matches(|c| c == '\'' || c == '"'))
        .ok_or_else(|| bad("descr", "a dtype description", "nothing".into()))?;
    let dtype = parse_descr(descr).ok_or_else(|| {
        bad(
            "descr",
            "a little-endian bool, integer or float dtype (e.g. '|u1', '<i8', '<f4', '<f8')",
            format!("{descr:?}"),
        )
    })?;
    let fortran = match header_value(&header, "fortran_order") {
        Some("True") => true,
        Some("False") => false,
        other => {
            return Err(bad("fortran_order", "True or False", format!("{other:?}")));
        }
    };
    let shape_text = header_value(&header, "shape")
        .ok_or_else(|| bad("shape", "a tuple", "nothing".into()))?
        .to_string();
    let dims: Vec<usize> = shape_text
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad("shape", "a tuple of integers", shape_text.clone()))?;
    let need = dims
        .iter()
        .try_fold(dtype.size(), |n, &d| n.checked_mul(d))
        .ok_or_else(|| bad("shape", "a shape that fits in memory", shape_text.clone()))?;
    let data = &bytes[data_start..];
    if data.len() < need {
        return Err(bad(
            "data",
            &format!("{need} bytes for shape {shape_text}"),
            format!("{} bytes", data.len()),
        ));
    }
    Ok(Header {
        dtype,
        fortran,
        dims,
        shape_text,
        data: &data[..need],
    })
}

/// Decode `.npy` bytes; `source_name` (usually the path) is used in error messages.
pub fn parse_counts_npy(bytes: &[u8], source_name: &str) -> Result<SparseCounts, SelectError> {
    let Header {
        dtype,
        fortran,
        dims,
        shape_text,
        data,
    } = parse_header(bytes, source_name)?;
    // An empty dimension holds no data, so the file cannot bound the other one: a shape of
    // (10**15, 0) would allocate petabytes of row pointers for nothing to select from.
    let (rows, cols) = match dims[..] {
        [rows, cols] if rows > 0 && cols > 0 && cols < u32::MAX as usize => (rows, cols),
        _ => {
            return Err(SelectError::invalid(
                source_name,
                "shape",
                "a 2-D shape (envs, abilities), each at least 1 (and fewer than 2^32 - 1 abilities)",
                shape_text,
            ));
        }
    };
    let size = dtype.size();
    let mut b = Builder::new(rows, cols);
    if matches!(dtype, Dtype::U(1) | Dtype::Bool) && !fortran {
        // The common numpy case (uint8 / bool counts, C order): no per-element decoding, and
        // every value is a valid non-negative count.
        for row in data.chunks_exact(cols) {
            for (c, &v) in row.iter().enumerate() {
                if v != 0 {
                    b.out.indices.push(c as u32);
                    b.out.values.push(if dtype == Dtype::Bool {
                        1.0
                    } else {
                        f32::from(v)
                    });
                }
            }
            b.end_row();
        }
        return Ok(b.finish());
    }
    for r in 0..rows {
        for c in 0..cols {
            let at = if fortran { c * rows + r } else { r * cols + c } * size;
            b.push(r, c, dtype.read(&data[at..at + size]), source_name)?;
        }
        b.end_row();
    }
    Ok(b.finish())
}

/// Read a 1-D integer `.npy` array (e.g. a reference ranking) as `i64`s.
pub fn read_index_npy(path: impl AsRef<Path>) -> Result<Vec<i64>, SelectError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path.display().to_string();
    let h = parse_header(&bytes, &name)?;
    if !matches!(h.dtype, Dtype::I(_) | Dtype::U(_)) {
        return Err(SelectError::invalid(
            &name,
            "descr",
            "an integer dtype",
            format!("{:?}", h.dtype),
        ));
    }
    if h.dims.len() != 1 {
        return Err(SelectError::invalid(
            &name,
            "shape",
            "a 1-D shape (n,)",
            h.shape_text,
        ));
    }
    // Zeros matter here (index 0), so decode the values directly, not through the sparse form.
    h.data
        .chunks_exact(h.dtype.size())
        .enumerate()
        .map(|(i, c)| match h.dtype {
            Dtype::U(8) => {
                let v = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
                i64::try_from(v).map_err(|_| {
                    SelectError::invalid(
                        &name,
                        format!("[{i}]"),
                        "an index below 2^63",
                        v.to_string(),
                    )
                })
            }
            Dtype::I(8) => Ok(i64::from_le_bytes(c.try_into().unwrap_or([0; 8]))),
            d => Ok(d.read(c) as i64),
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A numpy `.npy` file as `np.save` writes it (format 1, header padded to 64 bytes).
    pub(crate) fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut header = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_c_and_fortran_order_and_several_dtypes() {
        // [[0, 2, 1], [3, 0, 0]]
        let c = npy("|u1", false, "(2, 3)", &[0, 2, 1, 3, 0, 0]);
        let f = npy("|u1", true, "(2, 3)", &[0, 3, 2, 0, 1, 0]);
        let a = parse_counts_npy(&c, "c.npy").unwrap();
        assert_eq!(a, parse_counts_npy(&f, "f.npy").unwrap());
        assert_eq!(a.indptr, vec![0, 2, 3]);
        assert_eq!(a.indices, vec![1, 2, 0]);
        assert_eq!(a.values, vec![2.0, 1.0, 3.0]);
        let b = parse_counts_npy(&npy("|b1", false, "(2, 3)", &[0, 1, 1, 1, 0, 0]), "b").unwrap();
        assert_eq!(
            (b.indices.clone(), b.values.clone()),
            (a.indices.clone(), vec![1.0; 3])
        );
        let i8s: Vec<u8> = [0i64, 2, 1, 3, 0, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            parse_counts_npy(&npy("<i8", false, "(2, 3)", &i8s), "x").unwrap(),
            a
        );
        let f8s: Vec<u8> = [0f64, 2., 1., 3., 0., 0.]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            parse_counts_npy(&npy("<f8", false, "(2, 3)", &f8s), "x").unwrap(),
            a
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse_counts_npy(&npy(">f4", false, "(1, 1)", &[0; 4]), "big.npy")
            .unwrap_err()
            .to_string();
        assert!(e.contains("big.npy") && e.contains("descr"), "{e}");
        let e = parse_counts_npy(&npy("|u1", false, "(4,)", &[0; 4]), "v.npy")
            .unwrap_err()
            .to_string();
        assert!(e.contains("2-D"), "{e}");
        let e = parse_counts_npy(&npy("|u1", false, "(2, 3)", &[0; 5]), "t.npy")
            .unwrap_err()
            .to_string();
        assert!(e.contains("6 bytes"), "{e}");
        let nan: Vec<u8> = f32::NAN.to_le_bytes().to_vec();
        let e = parse_counts_npy(&npy("<f4", false, "(1, 1)", &nan), "n.npy")
            .unwrap_err()
            .to_string();
        assert!(e.contains("[0, 0]") && e.contains("NaN"), "{e}");
        assert!(parse_counts_npy(b"garbage!!!!!", "g").is_err());
    }

    /// An empty `10**12 x 0` array (numpy makes one in no memory, `envdist.select` takes it)
    /// once allocated terabytes of row pointers and aborted the interpreter.
    #[test]
    fn an_empty_dimension_is_refused_before_allocating() {
        for (rows, cols) in [(1_000_000_000_000, 0), (0, 1_000_000_000_000), (0, 0)] {
            let e = SparseCounts::from_dense(rows, cols, &[], "profiles")
                .unwrap_err()
                .to_string();
            assert!(e.contains("profiles") && e.contains("shape"), "{e}");
        }
    }
}
