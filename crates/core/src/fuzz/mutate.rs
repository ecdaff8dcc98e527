//! The mutation engine: seeded and deterministic, so that input `i` of a campaign is the same
//! bytes on every machine and every run (a failure is reproduced by its reader and index).
//!
//! Each input is one seed file with one to five mutations stacked on it. The mutations are
//! those that break readers in practice: bit and byte flips, truncation, deleted, repeated or
//! inserted ranges, splices of two seeds, invalid UTF-8, and, aimed at the text inside a file
//! (JSON, a numpy header, a safetensors header), numbers replaced by huge, negative,
//! non-finite or malformed ones, scalars replaced by values of another type, duplicated keys,
//! deep nesting, and binary length fields overwritten with extreme integers.

use crate::Rng;

/// Numbers written where a number was: the edges of every integer width, beyond them,
/// non-finite and malformed spellings.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999999999",
    "1e999",
    "-1e999",
    "1e308",
    "-1e308",
    "3.4028236e38",
    "1e-400",
    "0.5",
    "-0.5",
    "1.0000001",
    "NaN",
    "-NaN",
    "Infinity",
    "-Infinity",
    "nan",
    "1e",
    "--1",
    "0x10",
    "01",
    "1.",
];

/// Values written where a scalar was: other types, empty and odd strings, nesting.
const VALUES: &[&str] = &[
    "null",
    "true",
    "false",
    "\"\"",
    "[]",
    "{}",
    "[null]",
    "{\"\":null}",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "\"\\udfff\\ud800\"",
    "\"\u{e9}\u{1F600}\"",
    "\"\\\\\"",
    "\"H9\"",
    "\"answer_99\"",
    "\"../../x\"",
    "[1e999]",
    "[-1]",
    "{\"a\":{\"b\":[[]]}}",
];

/// Byte sequences inserted anywhere: invalid UTF-8 of every kind, control characters, a BOM,
/// JSON punctuation.
const BYTES: &[&[u8]] = &[
    &[0xFF],
    &[0xFE],
    &[0x80],
    &[0xC3],
    &[0xC0, 0x80],
    &[0xED, 0xA0, 0x80],
    &[0xF4, 0x90, 0x80, 0x80],
    &[0xF0, 0x9F],
    &[0x00],
    b"\r",
    b"\n",
    b"\n\n",
    b"\t",
    b"\\",
    b"\"",
    b",",
    b":",
    b"{",
    b"}",
    b"[",
    b"]",
    &[0xEF, 0xBB, 0xBF],
    &[0xE2, 0x80, 0xA8],
];

/// Depths of inserted nesting: around serde_json's recursion limit (128) and far beyond it.
const DEPTHS: &[usize] = &[2, 64, 127, 128, 129, 1_000, 100_000];

#[derive(Clone, Copy, PartialEq)]
enum TokenKind {
    Number,
    String,
    Literal,
}

#[derive(Clone, Copy)]
struct Token {
    start: usize,
    end: usize,
    kind: TokenKind,
}

/// The scalar tokens of JSON-like text inside `b` (also inside binary files: a numpy or
/// safetensors header is text). Strings honour backslash escapes; a string left open at the
/// end of the input is not a token.
fn tokens(b: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if j >= b.len() {
                break;
            }
            out.push(Token {
                start: i,
                end: j + 1,
                kind: TokenKind::String,
            });
            i = j + 1;
        } else if c.is_ascii_digit() || (c == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let mut j = i + 1;
            while j < b.len() && matches!(b[j], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                j += 1;
            }
            out.push(Token {
                start: i,
                end: j,
                kind: TokenKind::Number,
            });
            i = j;
        } else if let Some(word) = [&b"true"[..], b"false", b"null"]
            .into_iter()
            .find(|w| b[i..].starts_with(w))
        {
            out.push(Token {
                start: i,
                end: i + word.len(),
                kind: TokenKind::Literal,
            });
            i += word.len();
        } else {
            i += 1;
        }
    }
    out
}

/// One mutated input: its bytes, the seed it grew from and what was done to it.
#[derive(Debug, Clone)]
pub struct Mutant {
    /// The input.
    pub bytes: Vec<u8>,
    /// Index of the seed it started from.
    pub seed: usize,
    /// The mutations applied, in order (`flip bit 3 of byte 120`, `truncate to 55 bytes`, ...).
    pub steps: Vec<String>,
}

/// Grows mutants from a fixed list of seed files, deterministically from one `u64`.
pub struct Mutator {
    rng: Rng,
    seeds: Vec<Vec<u8>>,
    /// String and number tokens of the seeds, swapped in for other tokens.
    dictionary: Vec<Vec<u8>>,
    max_len: usize,
}

impl Mutator {
    /// A mutator over `seeds` (at least one), whose stream is fixed by `seed`.
    pub fn new(seed: u64, seeds: Vec<Vec<u8>>) -> Self {
        assert!(!seeds.is_empty(), "a mutator needs at least one seed");
        let mut dictionary: Vec<Vec<u8>> = seeds
            .iter()
            .flat_map(|s| {
                tokens(s)
                    .into_iter()
                    .map(move |t| s[t.start..t.end].to_vec())
            })
            .filter(|t| t.len() <= 256)
            .collect();
        dictionary.sort();
        dictionary.dedup();
        let longest = seeds.iter().map(Vec::len).max().unwrap_or(0);
        Self {
            rng: Rng::seed_from_u64(seed),
            seeds,
            dictionary,
            // Room for the deepest nesting and a repeated range, never an unbounded input.
            max_len: 2 * longest + 256 * 1024,
        }
    }

    /// The next mutant.
    pub fn next_mutant(&mut self) -> Mutant {
        let seed = self.rng.index(self.seeds.len());
        let mut bytes = self.seeds[seed].clone();
        // One mutation half of the time, two a quarter, ... up to five.
        let count = 1 + (self.rng.next_u64().trailing_zeros() as usize).min(4);
        let mut steps = Vec::with_capacity(count);
        for _ in 0..count {
            steps.push(self.mutate(&mut bytes));
            if bytes.len() > self.max_len {
                bytes.truncate(self.max_len);
                steps.push(format!("cut to {} bytes", self.max_len));
            }
        }
        Mutant { bytes, seed, steps }
    }

    fn pos(&mut self, len: usize) -> usize {
        self.rng.index(len + 1)
    }

    fn range(&mut self, len: usize) -> (usize, usize) {
        let a = self.pos(len);
        // Mostly short ranges: a field, a line.
        let span = if self.rng.chance(0.8) { 16 } else { len.max(1) };
        let b = (a + 1 + self.rng.index(span)).min(len);
        (a, b)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.rng.index(items.len())]
    }

    /// Apply one mutation to `b` and say what it was.
    fn mutate(&mut self, b: &mut Vec<u8>) -> String {
        let toks = tokens(b);
        // Text-aware mutations need tokens; fall back to byte mutations without them.
        let op = if toks.is_empty() {
            self.rng.index(9)
        } else {
            self.rng.index(15)
        };
        let len = b.len();
        match op {
            0 if len > 0 => {
                let (at, bit) = (self.rng.index(len), self.rng.index(8));
                b[at] ^= 1 << bit;
                format!("flip bit {bit} of byte {at}")
            }
            1 if len > 0 => {
                let at = self.rng.index(len);
                let v = *self.pick(&[0x00, 0xFF, 0x7F, 0x80, b'"', b'{', b'[', b'0', b'9', b'-']);
                b[at] = v;
                format!("set byte {at} to {v:#04x}")
            }
            2 => {
                let at = self.pos(len);
                b.truncate(at);
                format!("truncate to {at} bytes")
            }
            3 if len > 0 => {
                let (x, y) = self.range(len);
                b.drain(x..y);
                format!("delete bytes {x}..{y}")
            }
            4 if len > 0 => {
                let (x, y) = self.range(len);
                let times = *self.pick(&[1usize, 2, 10, 1_000]);
                let chunk = b[x..y].to_vec();
                let extra: Vec<u8> = chunk
                    .iter()
                    .copied()
                    .cycle()
                    .take(chunk.len() * times)
                    .collect();
                b.splice(y..y, extra);
                format!("repeat bytes {x}..{y} {times} more times")
            }
            5 => {
                let at = self.pos(len);
                let ins = self.pick(BYTES).to_vec();
                b.splice(at..at, ins.iter().copied());
                format!("insert {ins:02x?} at {at}")
            }
            6 => {
                let other = self.rng.index(self.seeds.len());
                let (x, y) = (self.pos(len), self.pos(self.seeds[other].len()));
                b.truncate(x);
                b.extend_from_slice(&self.seeds[other][y..]);
                format!("splice: bytes ..{x}, then seed {other} from byte {y}")
            }
            7 => self.overwrite_int(b),
            8 => {
                let at = self.pos(len);
                let n = self.rng.index(8) + 1;
                let junk: Vec<u8> = (0..n).map(|_| self.rng.next_u64() as u8).collect();
                b.splice(at..at, junk);
                format!("insert {n} random bytes at {at}")
            }
            9 | 10 => {
                let numbers: Vec<Token> = toks
                    .iter()
                    .copied()
                    .filter(|t| t.kind == TokenKind::Number)
                    .collect();
                let t = if numbers.is_empty() {
                    *self.pick(&toks)
                } else {
                    *self.pick(&numbers)
                };
                let v = self.pick(NUMBERS).as_bytes().to_vec();
                let text = String::from_utf8_lossy(&v).into_owned();
                b.splice(t.start..t.end, v);
                format!("replace the token at {} with {text}", t.start)
            }
            11 => {
                let t = *self.pick(&toks);
                let v: Vec<u8> = match self.rng.index(4) {
                    0 => self.pick(VALUES).as_bytes().to_vec(),
                    1 if !self.dictionary.is_empty() => {
                        let i = self.rng.index(self.dictionary.len());
                        self.dictionary[i].clone()
                    }
                    2 => {
                        let n = *self.pick(&[1_000usize, 70_000]);
                        let mut s = vec![b'"'];
                        s.extend(std::iter::repeat_n(b'a', n));
                        s.push(b'"');
                        s
                    }
                    _ => self.nested_value(),
                };
                let shown = String::from_utf8_lossy(&v[..v.len().min(40)]).into_owned();
                b.splice(t.start..t.end, v);
                format!("replace the token at {} with {shown}", t.start)
            }
            12 => {
                // A key seen again: insert `"key": <value>,` before the key.
                let keys: Vec<Token> = toks
                    .iter()
                    .copied()
                    .filter(|t| {
                        t.kind == TokenKind::String
                            && b[t.end..].iter().find(|c| !c.is_ascii_whitespace()) == Some(&b':')
                    })
                    .collect();
                let Some(&k) = keys.get(self.rng.index(keys.len().max(1))) else {
                    return self.mutate(b);
                };
                let mut ins = b[k.start..k.end].to_vec();
                ins.push(b':');
                ins.extend_from_slice(self.pick(VALUES).as_bytes());
                ins.push(b',');
                let key = String::from_utf8_lossy(&b[k.start..k.end]).into_owned();
                b.splice(k.start..k.start, ins);
                format!("duplicate key {key} at {}", k.start)
            }
            13 => {
                let depth = *self.pick(DEPTHS);
                let at = self.pos(len);
                let open = *self.pick(&[&b"["[..], b"{\"a\":"]);
                let ins: Vec<u8> = open
                    .iter()
                    .copied()
                    .cycle()
                    .take(open.len() * depth)
                    .collect();
                b.splice(at..at, ins);
                format!("open {depth} levels of nesting at {at}")
            }
            14 => {
                let t = *self.pick(&toks);
                let v = self.nested_value();
                let depth = v.iter().filter(|&&c| c == b'[').count();
                b.splice(t.start..t.end, v);
                format!("nest the token at {} {depth} levels deep", t.start)
            }
            // An op that needs bytes, on an empty input.
            _ => {
                let ins = self.pick(BYTES).to_vec();
                b.extend_from_slice(&ins);
                format!("append {ins:02x?}")
            }
        }
    }

    /// Balanced nesting around a number: valid JSON at any depth.
    fn nested_value(&mut self) -> Vec<u8> {
        let depth = *self.pick(DEPTHS);
        let mut v = vec![b'['; depth];
        v.push(b'0');
        v.extend(std::iter::repeat_n(b']', depth));
        v
    }

    /// Overwrite a little-endian integer with an extreme value: aimed at binary length and
    /// offset fields (a safetensors header length, a numpy header length), most often in the
    /// first 16 bytes where such fields sit.
    fn overwrite_int(&mut self, b: &mut [u8]) -> String {
        let width = *self.pick(&[1usize, 2, 4, 8]);
        if b.len() < width {
            return format!("skip an {width}-byte overwrite of a {}-byte input", b.len());
        }
        let last = b.len() - width;
        let at = if self.rng.chance(0.5) {
            self.rng.index(last.min(16) + 1)
        } else {
            self.rng.index(last + 1)
        };
        let n = b.len() as u64;
        let v: u64 = *self.pick(&[
            0,
            1,
            0x7F,
            0x80,
            0xFF,
            0xFFFF,
            0x7FFF_FFFF,
            0xFFFF_FFFF,
            1 << 32,
            1 << 40,
            i64::MAX as u64,
            u64::MAX,
            n,
            n.saturating_sub(1),
            n + 1,
            2 * n,
        ]);
        b[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
        format!("write {v} as {width} bytes at {at}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_find_json_scalars() {
        let t = tokens(br#"{"a\"b": [-1.5e3, true, null], "c": "d"} 7"#);
        let kinds: Vec<_> = t
            .iter()
            .map(|t| match t.kind {
                TokenKind::Number => 'n',
                TokenKind::String => 's',
                TokenKind::Literal => 'l',
            })
            .collect();
        assert_eq!(kinds.iter().collect::<String>(), "snllssn");
    }

    #[test]
    fn mutants_are_deterministic_and_bounded() {
        let seeds = vec![
            br#"{"schema_version": 1, "k": [1, 2, "x"]}"#.to_vec(),
            vec![0u8; 64],
        ];
        let a: Vec<_> = {
            let mut m = Mutator::new(7, seeds.clone());
            (0..500).map(|_| m.next_mutant().bytes).collect()
        };
        let mut m = Mutator::new(7, seeds);
        for x in &a {
            let y = m.next_mutant();
            assert_eq!(&y.bytes, x, "{:?}", y.steps);
            assert!(y.bytes.len() <= m.max_len);
        }
        // Mutations change the input most of the time.
        assert!(
            a.iter()
                .filter(|x| x.as_slice() != br#"{"schema_version": 1, "k": [1, 2, "x"]}"#)
                .count()
                > 400
        );
    }
}
