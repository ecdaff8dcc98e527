//! TensorBoard event files: the training curve in the format SB3, CleanRL and Sample Factory
//! users read (`tensorboard --logdir DIR`).
//!
//! Written here rather than with a crate because no maintained one fits: `tensorboard-rs`
//! (0.5.9, last released 2022, its repository marked "not active") pulls in protobuf 2 and
//! image 0.23 for a format this small, and nothing else on crates.io writes event files. The
//! format, as TensorFlow's `tensorflow/core/lib/io/record_writer.cc` and
//! `tensorflow/core/util/event.proto` define it:
//!
//! - **TFRecord framing**: each record is `u64 length (LE) | u32 masked CRC-32C of the length
//!   bytes (LE) | data | u32 masked CRC-32C of data (LE)`, where
//!   `mask(c) = ((c >> 15) | (c << 17)) + 0xa282ead8` (wrapping).
//! - **Event** (protobuf): `double wall_time = 1; int64 step = 2; string file_version = 3;
//!   Summary summary = 5`; `Summary { repeated Value value = 1 }`, `Value { string tag = 1;
//!   float simple_value = 2 }`. A file's first event carries `file_version = "brain.Event:2"`.
//!
//! Only what the trainer writes is encoded (scalars); the reader decodes those fields and skips
//! any other, so the trainer can read back the file it wrote when a run resumes
//! ([`EventWriter::restart`]).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use envdist_core::FileError;

/// The file version TensorBoard expects in a file's first event.
pub const FILE_VERSION: &str = "brain.Event:2";

/// How every event file's name starts (`events.out.tfevents.<seconds>.<host>`): TensorBoard
/// reads the files of a directory whose names contain `tfevents`.
pub const EVENTS_FILE_PREFIX: &str = "events.out.tfevents.";

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord framing.
/// No crate of the lock file computes it (crc32fast is the IEEE polynomial).
pub fn crc32c(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 == 1 {
                    (c >> 1) ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    let mut crc = !0u32;
    for &b in bytes {
        crc = TABLE[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// The masked CRC-32C TFRecord stores (masking keeps a CRC of data holding CRCs well mixed).
pub fn masked_crc32c(bytes: &[u8]) -> u32 {
    // `(c >> 15) | (c << 17)`, as the format's definition writes it.
    crc32c(bytes).rotate_right(15).wrapping_add(0xa282_ead8)
}

/// `data` framed as one TFRecord.
pub fn frame_record(data: &[u8]) -> Vec<u8> {
    let len = (data.len() as u64).to_le_bytes();
    let mut out = Vec::with_capacity(data.len() + 16);
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc32c(data).to_le_bytes());
    out
}

/// The data of each complete, intact record of `bytes`, in order, up to the first record that
/// is cut short or fails its checksum: the tail a process killed while appending leaves, which
/// TensorBoard's reader also stops at.
pub fn records(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Some((head, after)) = rest.split_first_chunk::<12>() {
        let (len, crc) = head.split_at(8);
        if masked_crc32c(len).to_le_bytes() != crc {
            break;
        }
        let mut len8 = [0u8; 8];
        len8.copy_from_slice(len);
        let Ok(n) = usize::try_from(u64::from_le_bytes(len8)) else {
            break;
        };
        if after.len() < n.saturating_add(4) {
            break;
        }
        let (data, after) = after.split_at(n);
        let (crc, after) = after.split_at(4);
        if masked_crc32c(data).to_le_bytes() != crc {
            break;
        }
        out.push(data);
        rest = after;
    }
    out
}

/// What an event holds besides its time and step.
#[derive(Debug, Clone, PartialEq)]
pub enum EventBody {
    /// The file's first event: the format version ([`FILE_VERSION`]).
    FileVersion(String),
    /// Scalars `(tag, value)` at the event's step.
    Scalars(Vec<(String, f32)>),
    /// Neither (fields this module does not write).
    Other,
}

/// One event of an event file.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Seconds since the Unix epoch.
    pub wall_time: f64,
    /// The x axis TensorBoard plots against.
    pub step: i64,
    /// Its content.
    pub body: EventBody,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field (wire type 2).
fn put_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    put_varint(out, u64::from(field << 3 | 2));
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

impl Event {
    /// The event that starts every file.
    pub fn file_version(wall_time: f64) -> Self {
        Self {
            wall_time,
            step: 0,
            body: EventBody::FileVersion(FILE_VERSION.into()),
        }
    }

    /// The event's protobuf encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // wall_time: field 1, 64-bit; step: field 2, varint (two's complement, as protobuf).
        out.push(1 << 3 | 1);
        out.extend_from_slice(&self.wall_time.to_le_bytes());
        out.push(2 << 3);
        put_varint(&mut out, self.step as u64);
        match &self.body {
            EventBody::FileVersion(v) => put_bytes(&mut out, 3, v.as_bytes()),
            EventBody::Scalars(values) => {
                let mut summary = Vec::new();
                for (tag, value) in values {
                    let mut v = Vec::new();
                    put_bytes(&mut v, 1, tag.as_bytes());
                    // simple_value: field 2, 32-bit.
                    v.push(2 << 3 | 5);
                    v.extend_from_slice(&value.to_le_bytes());
                    put_bytes(&mut summary, 1, &v);
                }
                put_bytes(&mut out, 5, &summary);
            }
            EventBody::Other => {}
        }
        out
    }

    /// Decode an event's protobuf encoding: the fields [`Event::encode`] writes; any other
    /// field is skipped.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let mut event = Self {
            wall_time: 0.0,
            step: 0,
            body: EventBody::Other,
        };
        for field in fields(bytes)? {
            match (field.number, field.value) {
                (1, Wire::Fixed64(v)) => event.wall_time = f64::from_le_bytes(v),
                (2, Wire::Varint(v)) => event.step = v as i64,
                (3, Wire::Bytes(b)) => {
                    let v = std::str::from_utf8(b)
                        .map_err(|_| "file_version: not UTF-8".to_string())?;
                    event.body = EventBody::FileVersion(v.into());
                }
                (5, Wire::Bytes(b)) => event.body = EventBody::Scalars(decode_summary(b)?),
                _ => {}
            }
        }
        Ok(event)
    }
}

fn decode_summary(bytes: &[u8]) -> Result<Vec<(String, f32)>, String> {
    let mut values = Vec::new();
    for field in fields(bytes)? {
        if let (1, Wire::Bytes(v)) = (field.number, field.value) {
            let (mut tag, mut value) = (None, None);
            for f in fields(v)? {
                match (f.number, f.value) {
                    (1, Wire::Bytes(t)) => {
                        tag = Some(
                            std::str::from_utf8(t)
                                .map_err(|_| "summary value tag: not UTF-8".to_string())?
                                .to_string(),
                        );
                    }
                    (2, Wire::Fixed32(x)) => value = Some(f32::from_le_bytes(x)),
                    _ => {}
                }
            }
            // A value without a simple_value (an image, a histogram) is not a scalar.
            if let (Some(tag), Some(value)) = (tag, value) {
                values.push((tag, value));
            }
        }
    }
    Ok(values)
}

enum Wire<'a> {
    Varint(u64),
    Fixed64([u8; 8]),
    Bytes(&'a [u8]),
    Fixed32([u8; 4]),
}

struct Field<'a> {
    number: u64,
    value: Wire<'a>,
}

fn varint(bytes: &mut &[u8]) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes
            .split_first()
            .ok_or_else(|| "a varint runs past the end".to_string())?;
        *bytes = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("a varint longer than 10 bytes".into())
}

fn take<'a>(bytes: &mut &'a [u8], n: usize, what: &str) -> Result<&'a [u8], String> {
    if bytes.len() < n {
        return Err(format!(
            "a {what} of {n} bytes runs past the end ({} left)",
            bytes.len()
        ));
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

/// The top-level fields of one protobuf message.
fn fields(mut bytes: &[u8]) -> Result<Vec<Field<'_>>, String> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        let number = key >> 3;
        let value = match key & 7 {
            0 => Wire::Varint(varint(&mut bytes)?),
            1 => {
                let mut v = [0u8; 8];
                v.copy_from_slice(take(&mut bytes, 8, "64-bit field")?);
                Wire::Fixed64(v)
            }
            2 => {
                let n = usize::try_from(varint(&mut bytes)?).unwrap_or(usize::MAX);
                Wire::Bytes(take(&mut bytes, n, "length-delimited field")?)
            }
            5 => {
                let mut v = [0u8; 4];
                v.copy_from_slice(take(&mut bytes, 4, "32-bit field")?);
                Wire::Fixed32(v)
            }
            other => {
                return Err(format!(
                    "field {number}: wire type {other}, expected one of 0, 1, 2, 5"
                ));
            }
        };
        out.push(Field { number, value });
    }
    Ok(out)
}

/// The events of the file at `path`, up to a cut-short or corrupt tail (see [`records`]).
pub fn read_events(path: &Path) -> Result<Vec<Event>, FileError> {
    let bytes = std::fs::read(path).map_err(|source| FileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    records(&bytes)
        .into_iter()
        .enumerate()
        .map(|(i, data)| {
            Event::decode(data).map_err(|message| FileError::Parse {
                path: path.to_path_buf(),
                line: None,
                field: format!("record {}", i + 1),
                message,
            })
        })
        .collect()
}

/// Seconds since the Unix epoch, now.
pub fn now_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// An event file open for appending, one record per [`EventWriter::write`].
#[derive(Debug)]
pub struct EventWriter {
    path: PathBuf,
    file: File,
}

impl EventWriter {
    /// Open `path` for the events of a run that continues from step `keep_through`: the
    /// events of the file there at steps up to `keep_through` are kept (a resumed run's from
    /// before its checkpoint), those after it dropped (they will be written again from the
    /// checkpoint: TensorBoard would otherwise see each of those steps twice), and a missing
    /// file starts with its [`FILE_VERSION`] event. The kept part replaces the file
    /// atomically; later events are appended.
    pub fn restart(path: &Path, keep_through: i64, wall_time: f64) -> Result<Self, FileError> {
        let old = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(FileError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut kept = Vec::new();
        let mut has_version = false;
        for (i, data) in records(&old).into_iter().enumerate() {
            let event = Event::decode(data).map_err(|message| FileError::Parse {
                path: path.to_path_buf(),
                line: None,
                field: format!("record {}", i + 1),
                message,
            })?;
            let is_version = matches!(event.body, EventBody::FileVersion(_));
            if is_version && i == 0 {
                has_version = true;
            }
            if (is_version && i == 0) || (!is_version && event.step <= keep_through) {
                kept.extend_from_slice(&frame_record(data));
            }
        }
        if !has_version {
            let mut with_version = frame_record(&Event::file_version(wall_time).encode());
            with_version.extend_from_slice(&kept);
            kept = with_version;
        }
        envdist_core::io::write_atomic(path, &kept)?;
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|source| FileError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append `event` as one record, in one write: a reader (or a process killed meanwhile)
    /// sees whole records, and at worst a cut-short last one that readers skip.
    pub fn write(&mut self, event: &Event) -> Result<(), FileError> {
        self.file
            .write_all(&frame_record(&event.encode()))
            .and_then(|()| self.file.flush())
            .map_err(|source| FileError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_has_the_standard_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
        // RFC 3720 (iSCSI) B.4: 32 bytes of zeros.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
    }

    /// The framing, byte by byte: length, masked CRC of the length, data, masked CRC of the
    /// data (that the real TensorBoard reads it is checked by bindings/python's
    /// test_tensorboard.py).
    #[test]
    fn framing_is_length_crc_data_crc() {
        let framed = frame_record(b"abc");
        assert_eq!(framed.len(), 8 + 4 + 3 + 4);
        assert_eq!(&framed[..8], &3u64.to_le_bytes());
        let c = crc32c(&3u64.to_le_bytes());
        // The mask as the format's definition spells it (the code rotates).
        #[allow(clippy::manual_rotate)]
        let masked = ((c >> 15) | (c << 17)).wrapping_add(0xa282_ead8);
        assert_eq!(&framed[8..12], &masked.to_le_bytes());
        assert_eq!(&framed[12..15], b"abc");
        assert_eq!(&framed[15..], &masked_crc32c(b"abc").to_le_bytes());
        // The empty record: masked CRC-32C of the zero length and of nothing.
        let empty = frame_record(b"");
        assert_eq!(
            &empty[8..12],
            &masked_crc32c(&0u64.to_le_bytes()).to_le_bytes()
        );
        assert_eq!(&empty[12..], &0xa282_ead8u32.to_le_bytes());
    }

    #[test]
    fn events_encode_as_protobuf_and_decode_back() {
        let version = Event::file_version(1.5);
        // wall_time (field 1, fixed64), step (field 2, varint 0), file_version (field 3).
        let mut expected = vec![0x09];
        expected.extend_from_slice(&1.5f64.to_le_bytes());
        expected.extend_from_slice(&[0x10, 0x00, 0x1a, 13]);
        expected.extend_from_slice(b"brain.Event:2");
        assert_eq!(version.encode(), expected);

        let scalars = Event {
            wall_time: 1_700_000_000.25,
            step: 300,
            body: EventBody::Scalars(vec![("loss/policy".into(), -0.5), ("a".into(), 2.0)]),
        };
        let bytes = scalars.encode();
        // step 300 as a varint: 0xac 0x02; the summary (field 5) holds two values (field 1),
        // each a tag (field 1) and a simple_value (field 2, fixed32).
        assert_eq!(&bytes[9..12], &[0x10, 0xac, 0x02]);
        let mut value_a = vec![0x0a, 1, b'a', 0x15];
        value_a.extend_from_slice(&2.0f32.to_le_bytes());
        assert!(bytes.ends_with(&value_a));
        assert_eq!(bytes[12], 0x2a);
        assert_eq!(Event::decode(&bytes).unwrap(), scalars);
        assert_eq!(Event::decode(&version.encode()).unwrap(), version);
    }

    #[test]
    fn a_cut_short_or_corrupt_tail_is_where_reading_stops() {
        let a = Event::file_version(1.0).encode();
        let b = Event {
            wall_time: 2.0,
            step: 7,
            body: EventBody::Scalars(vec![("x".into(), 1.0)]),
        }
        .encode();
        let mut file = frame_record(&a);
        file.extend_from_slice(&frame_record(&b));
        assert_eq!(records(&file), vec![&a[..], &b[..]]);
        for cut in 1..frame_record(&b).len() {
            assert_eq!(
                records(&file[..file.len() - cut]),
                vec![&a[..]],
                "cut {cut}"
            );
        }
        let last = file.len() - 1;
        file[last] ^= 1;
        assert_eq!(records(&file), vec![&a[..]]);
        // A length field claiming more than the file holds is a cut-short record.
        let mut huge = frame_record(&a);
        let len = u64::MAX.to_le_bytes();
        huge.extend_from_slice(&len);
        huge.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
        assert_eq!(records(&huge), vec![&a[..]]);
    }

    #[test]
    fn a_restart_keeps_the_steps_up_to_the_checkpoint_and_drops_a_torn_tail() {
        let dir = std::env::temp_dir().join(format!("envdist-tb-restart-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{EVENTS_FILE_PREFIX}1.host"));
        let at = |step: i64| Event {
            wall_time: step as f64,
            step,
            body: EventBody::Scalars(vec![("s".into(), step as f32)]),
        };
        let mut w = EventWriter::restart(&path, 0, 0.5).unwrap();
        for step in [128, 256, 384] {
            w.write(&at(step)).unwrap();
        }
        drop(w);
        // A process killed in the middle of its next append.
        let torn = frame_record(&at(512).encode());
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&torn[..torn.len() / 2]).unwrap();
        drop(f);

        let mut w = EventWriter::restart(&path, 256, 9.0).unwrap();
        w.write(&at(384)).unwrap();
        let events = read_events(&path).unwrap();
        assert_eq!(
            events[0],
            Event::file_version(0.5),
            "the first file version kept"
        );
        let steps: Vec<i64> = events[1..].iter().map(|e| e.step).collect();
        assert_eq!(steps, [128, 256, 384]);
        // The whole file is records again: nothing torn is left between them.
        let bytes = std::fs::read(&path).unwrap();
        let framed: usize = records(&bytes).iter().map(|r| r.len() + 16).sum();
        assert_eq!(framed, bytes.len());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
