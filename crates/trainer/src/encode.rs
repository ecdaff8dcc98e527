//! Observation encoding, in plain Rust (no burn): frames become patch bytes, text channels
//! become hashed token buckets. Features are compact (bytes and `u16` buckets) so that a
//! rollout of thousands of steps stays small; [`BatchBuffers`] turns many of them into the
//! arrays one batched forward needs (patch values, token ids), reusing its allocations.

use envdist_core::hash::{FNV_OFFSET, fnv1a, fnv1a_from};
use envdist_core::{ActionMask, NUM_ACTIONS, Observation, Rgb8Image};
use rayon::prelude::*;

use crate::config::{CONV_STRIDE, ImageEncoder, ModelConfig, NUM_CHANNELS};

/// Additive logit for an illegal action: large enough that its probability is exactly zero in
/// f32, small enough that `p * log p` stays finite (0 * -1e9 = 0).
pub const ILLEGAL_LOGIT: f32 = -1e9;

/// Most tokens read from one channel (longer texts are cut, to bound encoding cost).
const MAX_TOKENS: usize = 96;

/// One observation, encoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    /// The frame's bytes: `patch-mlp`, `num_patches * patch * patch * 3` of them, patch-major,
    /// each patch row-major RGB; `conv`, `image_size * image_size * 3`, row-major RGB (the
    /// im2col of the first convolution is built from them by [`BatchBuffers::fill`]).
    pub patches: Vec<u8>,
    /// Hash buckets per channel; `None` when the channel is absent at this harness level.
    pub text: [Option<Vec<u16>>; NUM_CHANNELS],
    /// Legal actions.
    pub legal: ActionMask,
}

/// Hash a text into buckets: each lower-cased alphanumeric token once on its own (what is
/// said) and once with its position (where it is said: a grid row, a coordinate's slot), so
/// that a bag of tokens still distinguishes "agent at (1,2)" from "agent at (2,1)".
pub fn hash_text(text: &str, vocab: usize) -> Vec<u16> {
    let mut out = Vec::with_capacity(32);
    let mut i = 0u64;
    // A token's hash is FNV-1a of its bytes, which streams: a word is hashed as its (lower-
    // cased) characters arrive, with no buffer to fill and clear per word.
    let emit = |h: u64, i: u64, out: &mut Vec<u16>| {
        out.push((h % vocab as u64) as u16);
        let hp = fnv1a_from(h ^ 0x9e37_79b9_7f4a_7c15, &i.to_le_bytes());
        out.push((hp % vocab as u64) as u16);
    };
    let mut word: Option<u64> = None;
    // Grid-like text (rows of symbols) carries meaning per character, so non-alphanumeric
    // symbols are tokens too.
    for ch in text.chars() {
        if out.len() >= 2 * MAX_TOKENS {
            break;
        }
        let mut buf = [0u8; 4];
        if ch.is_ascii_alphanumeric() {
            let h = word.unwrap_or(FNV_OFFSET);
            word = Some(fnv1a_from(h, &[ch.to_ascii_lowercase() as u8]));
            continue;
        }
        if ch.is_alphanumeric() {
            let mut h = word.unwrap_or(FNV_OFFSET);
            for lower in ch.to_lowercase() {
                h = fnv1a_from(h, lower.encode_utf8(&mut buf).as_bytes());
            }
            word = Some(h);
            continue;
        }
        if let Some(h) = word.take() {
            emit(h, i, &mut out);
            i += 1;
        }
        if !ch.is_whitespace() && !matches!(ch, ',' | '(' | ')' | ';' | ':' | '.') {
            emit(fnv1a(ch.encode_utf8(&mut buf).as_bytes()), i, &mut out);
            i += 1;
        } else if ch == '\n' {
            // A row break is a position change worth keeping.
            i += 1;
        }
    }
    if let Some(h) = word
        && out.len() < 2 * MAX_TOKENS
    {
        emit(h, i, &mut out);
    }
    out
}

/// Box-filter (or nearest-sample, when sizes do not divide) `img` to `size x size` and cut it
/// into `patch x patch` patches.
pub fn encode_image(img: &Rgb8Image, size: usize, patch: usize, out: &mut Vec<u8>) {
    out.clear();
    out.resize(size * size * 3, 0);
    let (w, h) = (img.width as usize, img.height as usize);
    let per_row = size / patch;
    let patch_len = patch * patch * 3;
    let write = |out: &mut Vec<u8>, x: usize, y: usize, rgb: [u8; 3]| {
        let p = (y / patch) * per_row + x / patch;
        let o = p * patch_len + ((y % patch) * patch + x % patch) * 3;
        out[o..o + 3].copy_from_slice(&rgb);
    };
    if w == 0 || h == 0 || img.data.len() < w * h * 3 {
        return;
    }
    if w == size && h == size && patch > 0 && size.is_multiple_of(patch) {
        // The frame at the model's size (every preset's canvas): no filtering, only the
        // patch-major reorder, one patch row (`patch` pixels) at a time. The box filter below
        // gives the same bytes (a 1x1 box is the pixel itself), one pixel at a time.
        let span = patch * 3;
        for y in 0..size {
            let src_row = &img.data[y * w * 3..(y + 1) * w * 3];
            let within = (y % patch) * span;
            for (px, src) in src_row.chunks_exact(span).enumerate() {
                let o = ((y / patch) * per_row + px) * patch_len + within;
                out[o..o + span].copy_from_slice(src);
            }
        }
        return;
    }
    if w % size == 0 && h % size == 0 {
        let (fx, fy) = (w / size, h / size);
        let n = (fx * fy) as u32;
        for y in 0..size {
            for x in 0..size {
                let mut acc = [0u32; 3];
                for yy in y * fy..(y + 1) * fy {
                    let row = yy * w * 3;
                    for xx in x * fx..(x + 1) * fx {
                        let i = row + xx * 3;
                        acc[0] += img.data[i] as u32;
                        acc[1] += img.data[i + 1] as u32;
                        acc[2] += img.data[i + 2] as u32;
                    }
                }
                let rgb = [
                    ((acc[0] + n / 2) / n) as u8,
                    ((acc[1] + n / 2) / n) as u8,
                    ((acc[2] + n / 2) / n) as u8,
                ];
                write(out, x, y, rgb);
            }
        }
    } else {
        for y in 0..size {
            for x in 0..size {
                let sx = (x * w / size).min(w - 1);
                let sy = (y * h / size).min(h - 1);
                write(out, x, y, img.get(sx as u32, sy as u32));
            }
        }
    }
}

/// Encode one observation.
pub fn encode(obs: &Observation, legal: ActionMask, cfg: &ModelConfig) -> Features {
    let mut patches = Vec::new();
    // A patch of one pixel is the row-major frame.
    let patch = match cfg.encoder {
        ImageEncoder::PatchMlp => cfg.patch,
        ImageEncoder::Conv => 1,
    };
    encode_image(&obs.image, cfg.image_size, patch, &mut patches);
    let h = &obs.harness;
    let chan = |t: Option<&String>| t.map(|s| hash_text(s, cfg.vocab));
    Features {
        patches,
        text: [
            Some(hash_text(&obs.instruction, cfg.vocab)),
            chan(h.observation.as_ref()),
            chan(h.state.as_ref()),
            chan(h.hints.as_ref()),
            chan(h.rules.as_ref()),
        ],
        legal,
    }
}

/// Reusable host buffers for one batch, in the layout [`crate::model::Inputs`] uploads.
///
/// Text travels as token ids (an embedding-bag lookup on the device), not as dense bags of
/// `n x channels x vocab` floats: a bag of the `gpu` preset is 20k floats per sample, most of
/// them zero, and building and uploading it cost more than the network's whole forward pass.
#[derive(Debug, Default)]
pub struct BatchBuffers {
    /// `[n, num_patches, patch_values]` in `[0, 1]`.
    pub patches: Vec<f32>,
    /// Hash bucket of every token of every present channel, row-major over (row, channel).
    pub tokens: Vec<i32>,
    /// Segment of each token: `row * NUM_CHANNELS + channel`.
    pub token_segments: Vec<i32>,
    /// `[n, NUM_CHANNELS, 1]`: the weight of a channel's token sum, 1/sqrt(its token count)
    /// (0 for an absent or empty channel). One weight per segment rather than per token: the
    /// product then costs `n x channels x width`, not `tokens x width`.
    pub segment_weights: Vec<f32>,
    /// `[n, NUM_CHANNELS, 1]`: 1 where the channel is present.
    pub present: Vec<f32>,
    /// `[n, NUM_ACTIONS]`: 0 for legal actions, [`ILLEGAL_LOGIT`] for the others.
    pub mask: Vec<f32>,
    /// Rows filled.
    pub n: usize,
}

/// The im2col of the first convolution of the `conv` encoder: `frame` (`size x size` RGB
/// bytes, row-major) to `out` (`side * side` rows of `k x k x 3` values in `[0, 1]`, in
/// `(ky, kx, channel)` order, `side = (size + 2 pad - k) / 2 + 1`), the frame read as if `pad`
/// rows and columns of zeros surrounded it. A frame shorter than `size x size` (an empty
/// image) leaves zeros.
fn first_conv_im2col(frame: &[u8], size: usize, k: usize, pad: usize, out: &mut [f32]) {
    out.fill(0.0);
    if frame.len() < size * size * 3 || size + 2 * pad < k {
        return;
    }
    let side = (size + 2 * pad - k) / CONV_STRIDE + 1;
    let span = k * 3;
    let mut o = 0;
    for oy in 0..side {
        for ox in 0..side {
            for ky in 0..k {
                // Padded coordinates; a tap outside the frame stays zero.
                let (y, x0) = (oy * CONV_STRIDE + ky, ox * CONV_STRIDE);
                let row = &mut out[o..o + span];
                o += span;
                if y < pad || y >= size + pad {
                    continue;
                }
                let y = y - pad;
                // Columns x0..x0 + k of the padded row: those inside the frame.
                let lo = pad.saturating_sub(x0);
                let hi = k.min((size + pad).saturating_sub(x0));
                if lo >= hi {
                    continue;
                }
                let at = (y * size + x0 + lo - pad) * 3;
                for (d, b) in row[lo * 3..hi * 3]
                    .iter_mut()
                    .zip(&frame[at..at + (hi - lo) * 3])
                {
                    *d = *b as f32 * (1.0 / 255.0);
                }
            }
        }
    }
}

/// Rows of patch values converted per parallel task (small batches stay on one thread).
const PATCH_ROWS_PER_TASK: usize = 32;

impl BatchBuffers {
    /// Fill from `items`, overwriting previous contents.
    pub fn fill<'a>(
        &mut self,
        items: impl ExactSizeIterator<Item = &'a Features>,
        cfg: &ModelConfig,
    ) {
        let items: Vec<&Features> = items.collect();
        let n = items.len();
        self.n = n;
        let img = cfg.num_patches() * cfg.patch_values();
        self.patches.clear();
        self.patches.resize(n * img, 0.0);
        if img > 0 {
            let (encoder, size) = (cfg.encoder, cfg.image_size);
            let (k1, pad) = (cfg.conv_kernels[0], cfg.conv_padding);
            self.patches
                .par_chunks_mut(img * PATCH_ROWS_PER_TASK)
                .zip(items.par_chunks(PATCH_ROWS_PER_TASK))
                .for_each(|(dst, rows)| {
                    for (d, f) in dst.chunks_mut(img).zip(rows) {
                        match encoder {
                            ImageEncoder::PatchMlp => {
                                for (o, b) in d.iter_mut().zip(&f.patches) {
                                    *o = *b as f32 * (1.0 / 255.0);
                                }
                            }
                            ImageEncoder::Conv => first_conv_im2col(&f.patches, size, k1, pad, d),
                        }
                    }
                });
        }
        self.fill_text(&items);
        self.present.clear();
        self.present.resize(n * NUM_CHANNELS, 0.0);
        self.mask.clear();
        self.mask.resize(n * NUM_ACTIONS, ILLEGAL_LOGIT);
        for (row, f) in items.iter().enumerate() {
            for (c, t) in f.text.iter().enumerate() {
                if t.is_some() {
                    self.present[row * NUM_CHANNELS + c] = 1.0;
                }
            }
            let m = &mut self.mask[row * NUM_ACTIONS..(row + 1) * NUM_ACTIONS];
            // An env with no legal action would make the softmax undefined; treat all as legal.
            let legal = if f.legal.count() == 0 {
                ActionMask::ALL
            } else {
                f.legal
            };
            for a in legal.iter() {
                m[a.index()] = 0.0;
            }
        }
    }

    /// Refill only the text arrays (`tokens`, `token_segments`, `segment_weights`) from
    /// `items`.
    pub fn fill_text(&mut self, items: &[&Features]) {
        self.tokens.clear();
        self.token_segments.clear();
        self.segment_weights.clear();
        self.segment_weights.resize(items.len() * NUM_CHANNELS, 0.0);
        for (row, f) in items.iter().enumerate() {
            for (c, t) in f.text.iter().enumerate() {
                let Some(tokens) = t else { continue };
                if tokens.is_empty() {
                    continue;
                }
                let seg = row * NUM_CHANNELS + c;
                // 1/sqrt(n) rather than 1/n: a long channel (the text grid) does not drown
                // the one token that matters in a short one (the hint's action word).
                self.segment_weights[seg] = 1.0 / (tokens.len() as f32).sqrt();
                self.tokens.extend(tokens.iter().map(|&b| b as i32));
                self.token_segments
                    .extend(std::iter::repeat_n(seg as i32, tokens.len()));
            }
        }
        // The lookup needs at least one index: a batch without any token gets one whose
        // segment weighs nothing (row 0's instruction is present, hence non-empty, whenever
        // it has a token, so segment 0 has weight 0 here).
        if self.tokens.is_empty() {
            self.tokens.push(0);
            self.token_segments.push(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::HarnessText;

    /// The hashing as first written (each word gathered in a `String`, lower-cased char by
    /// char, then hashed whole): the streaming form must give the same buckets.
    fn hash_text_word_by_word(text: &str, vocab: usize) -> Vec<u16> {
        let mut out = Vec::new();
        let mut i = 0u64;
        let emit = |token: &str, i: u64, out: &mut Vec<u16>| {
            let h = fnv1a(token.as_bytes());
            out.push((h % vocab as u64) as u16);
            let hp = fnv1a_from(h ^ 0x9e37_79b9_7f4a_7c15, &i.to_le_bytes());
            out.push((hp % vocab as u64) as u16);
        };
        let mut word = String::new();
        for ch in text.chars() {
            if out.len() >= 2 * MAX_TOKENS {
                break;
            }
            if ch.is_alphanumeric() {
                word.extend(ch.to_lowercase());
                continue;
            }
            if !word.is_empty() {
                emit(&word, i, &mut out);
                i += 1;
                word.clear();
            }
            if !ch.is_whitespace() && !matches!(ch, ',' | '(' | ')' | ';' | ':' | '.') {
                let mut buf = [0u8; 4];
                emit(ch.encode_utf8(&mut buf), i, &mut out);
                i += 1;
            } else if ch == '\n' {
                i += 1;
            }
        }
        if !word.is_empty() && out.len() < 2 * MAX_TOKENS {
            emit(&word, i, &mut out);
        }
        out
    }

    #[test]
    fn streamed_hashing_gives_the_word_by_word_buckets() {
        let mut texts: Vec<String> = [
            "",
            "agent at (1,2)",
            "Reach the GOAL; avoid lava.",
            "#.#\n#A#\n#G#",
            "next action: down; the goal is 16 steps away",
            "ÄÖÜ straße İstanbul ΣΑΣ café 北京 x\u{0B}y\u{0C}z\r\n\tend",
            "word",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        texts.push("ab ".repeat(500));
        texts.push("#".repeat(500));
        // Random strings over a small alphabet of every kind of character the hashing tells
        // apart: ASCII and non-ASCII letters and digits, separators, symbols, whitespace.
        let alphabet: Vec<char> = "aZ09 \n\t,().;:#@-_ÉéßİΣ١٢北\u{0B}\u{85}".chars().collect();
        let mut rng = envdist_core::Rng::seed_from_u64(7);
        for _ in 0..2_000 {
            let len = rng.index(60);
            texts.push(
                (0..len)
                    .map(|_| alphabet[rng.index(alphabet.len())])
                    .collect(),
            );
        }
        for t in &texts {
            for vocab in [64, 1024, 4096] {
                assert_eq!(
                    hash_text(t, vocab),
                    hash_text_word_by_word(t, vocab),
                    "{t:?} at vocab {vocab}"
                );
            }
        }
    }

    #[test]
    fn a_frame_at_the_model_size_is_cut_into_patches_pixel_for_pixel() {
        let mut rng = envdist_core::Rng::seed_from_u64(11);
        for (size, patch) in [(32, 8), (16, 4), (8, 8), (12, 3), (6, 1)] {
            let mut img = Rgb8Image::new(size as u32, size as u32);
            for b in img.data.iter_mut() {
                *b = rng.index(256) as u8;
            }
            let mut out = Vec::new();
            encode_image(&img, size, patch, &mut out);
            let per_row = size / patch;
            for y in 0..size {
                for x in 0..size {
                    let p = (y / patch) * per_row + x / patch;
                    let o = (p * patch * patch + (y % patch) * patch + x % patch) * 3;
                    assert_eq!(
                        out[o..o + 3],
                        img.get(x as u32, y as u32),
                        "size {size}, patch {patch}, pixel ({x},{y})"
                    );
                }
            }
        }
    }

    #[test]
    fn hashing_is_deterministic_positional_and_bounded() {
        let a = hash_text("agent at (1,2)", 1024);
        let b = hash_text("agent at (2,1)", 1024);
        assert_eq!(a, hash_text("Agent at (1,2)", 1024));
        assert_ne!(a, b);
        let mut sa = a.clone();
        let mut sb = b.clone();
        sa.sort();
        sb.sort();
        assert_ne!(sa, sb, "position must matter");
        assert!(a.iter().all(|x| (*x as usize) < 1024));
        assert!(hash_text(&"x ".repeat(10_000), 64).len() <= 2 * MAX_TOKENS);
        assert!(hash_text("", 64).is_empty());
    }

    #[test]
    fn image_downsampling_averages_and_patches_are_patch_major() {
        let mut img = Rgb8Image::new(8, 8);
        img.fill_rect(4, 0, 4, 4, [200, 100, 0]);
        let mut out = Vec::new();
        encode_image(&img, 4, 2, &mut out);
        assert_eq!(out.len(), 4 * 4 * 3);
        // Patch 1 (top-right) is the coloured quadrant.
        assert!(out[12..24].chunks(3).all(|p| p == [200, 100, 0]));
        assert!(out[..12].iter().all(|v| *v == 0));
        // Non-dividing sizes fall back to nearest sampling.
        let img = Rgb8Image::new(10, 10);
        encode_image(&img, 4, 2, &mut out);
        assert_eq!(out.len(), 48);
    }

    #[test]
    fn absent_channels_leave_no_trace() {
        let cfg = ModelConfig::tiny();
        let obs = Observation {
            image: Rgb8Image::new(16, 16),
            instruction: "reach the goal".into(),
            harness: HarnessText {
                hints: Some("go right".into()),
                ..Default::default()
            },
        };
        let f = encode(&obs, ActionMask::moves_interact_wait(), &cfg);
        let mut b = BatchBuffers::default();
        b.fill([&f].into_iter(), &cfg);
        assert_eq!(b.present, vec![1.0, 0.0, 0.0, 1.0, 0.0]);
        let tokens_of = |c: i32| b.token_segments.iter().filter(|s| **s == c).count();
        assert_eq!(tokens_of(1), 0, "an absent channel has no tokens");
        assert_eq!(b.segment_weights[1], 0.0);
        assert_eq!(tokens_of(3), 4);
        assert!(
            (b.segment_weights[3] * tokens_of(3) as f32 - 2.0).abs() < 1e-5,
            "4 tokens weigh 1/2 each"
        );
        assert_eq!(b.tokens.len(), b.token_segments.len());
        assert_eq!(b.mask[0], 0.0);
        assert_eq!(b.mask[6], ILLEGAL_LOGIT);
    }
}
