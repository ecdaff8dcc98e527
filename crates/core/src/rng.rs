//! A small, fast, seedable and serialisable random number generator.
//!
//! Every crate draws from this one generator so that a `(seed, call order)` pair replays
//! exactly, and so that sampler and trainer state can be saved to JSON and restored
//! bit-identically. It is xoshiro256** seeded through SplitMix64 (the authors' recommended
//! seeding), which is plenty for simulation and sampling; it is not for cryptography.

use serde::{Deserialize, Serialize};

/// xoshiro256** generator with a SplitMix64 seeder. `Clone` copies the stream.
///
/// A saved generator is refused when all four words are zero: xoshiro's one fixed point,
/// where every draw is 0 forever (a sampler restored there would draw its first environment
/// at its first level and scale, seed 0, for ever). Seeding never reaches it (SplitMix64 is a
/// bijection, so four consecutive outputs are never all zero), so only an edited or corrupt
/// state holds it; refusing it when parsing covers every state that holds a generator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SavedRng")]
pub struct Rng {
    s: [u64; 4],
}

/// A generator as saved, before [`Rng`]'s check.
#[derive(Deserialize)]
struct SavedRng {
    s: [u64; 4],
}

impl TryFrom<SavedRng> for Rng {
    type Error = String;
    fn try_from(saved: SavedRng) -> Result<Self, String> {
        if saved.s == [0; 4] {
            return Err(
                "the all-zero xoshiro256** state [0, 0, 0, 0], which never changes (every draw \
                 would be 0); expected four words, not all zero"
                    .into(),
            );
        }
        Ok(Self { s: saved.s })
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Self { s }
    }

    /// A generator derived from a seed and a stream index (e.g. env index, worker id), so
    /// that parallel streams are independent of how work is scheduled.
    pub fn derive(seed: u64, stream: u64) -> Self {
        let mut sm = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mixed = splitmix64(&mut sm) ^ stream;
        Self::seed_from_u64(mixed)
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)` with 24 bits of precision.
    #[inline]
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `[0, n)`; `n` must be positive. Lemire's nearly-divisionless method.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        let mut m = (self.next_u64() as u128) * (n as u128);
        let mut low = m as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = (self.next_u64() as u128) * (n as u128);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Uniform index in `[0, n)`.
    #[inline]
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// Uniform integer in the inclusive range `[lo, hi]`.
    #[inline]
    pub fn range_inclusive(&mut self, lo: u32, hi: u32) -> u32 {
        debug_assert!(lo <= hi);
        lo + self.below((hi - lo) as u64 + 1) as u32
    }

    /// `true` with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f32) -> bool {
        self.next_f32() < p
    }

    /// A standard normal draw (Box-Muller).
    pub fn normal(&mut self) -> f32 {
        let u1 = self.next_f64().max(1e-300);
        let u2 = self.next_f64();
        ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()) as f32
    }

    /// Fisher-Yates shuffle in place.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }

    /// A uniformly chosen element, or `None` for an empty slice.
    pub fn choose<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[self.index(items.len())])
        }
    }

    /// An index drawn in proportion to non-negative `weights`; `None` if they sum to zero.
    pub fn weighted_index(&mut self, weights: &[f64]) -> Option<usize> {
        let total: f64 = weights.iter().copied().filter(|w| *w > 0.0).sum();
        // NaN weights were filtered by `w > 0.0` above; `total` is finite or +inf.
        if total <= 0.0 {
            return None;
        }
        let mut target = self.next_f64() * total;
        let mut last_positive = None;
        for (i, &w) in weights.iter().enumerate() {
            if w > 0.0 {
                last_positive = Some(i);
                if target < w {
                    return Some(i);
                }
                target -= w;
            }
        }
        last_positive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_serde_round_trip() {
        let mut a = Rng::seed_from_u64(7);
        let mut b = Rng::seed_from_u64(7);
        for _ in 0..10 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let json = serde_json::to_string(&a).unwrap();
        let mut c: Rng = serde_json::from_str(&json).unwrap();
        assert_eq!(a.next_u64(), c.next_u64());
        assert_ne!(
            Rng::seed_from_u64(1).next_u64(),
            Rng::seed_from_u64(2).next_u64()
        );
        assert_ne!(Rng::derive(1, 0).next_u64(), Rng::derive(1, 1).next_u64());
    }

    #[test]
    fn the_all_zero_state_is_refused_and_never_seeded() {
        let e = serde_json::from_str::<Rng>(r#"{"s": [0, 0, 0, 0]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("all-zero") && e.contains("not all zero"), "{e}");
        let one: Rng = serde_json::from_str(r#"{"s": [0, 0, 0, 1]}"#).unwrap();
        assert_eq!(one.s, [0, 0, 0, 1]);
        for seed in [0, 1, u64::MAX, 0x9E37_79B9_7F4A_7C15] {
            assert_ne!(Rng::seed_from_u64(seed).s, [0; 4]);
            assert_ne!(Rng::derive(seed, seed).s, [0; 4]);
        }
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = Rng::seed_from_u64(3);
        let mut counts = [0u32; 5];
        for _ in 0..50_000 {
            counts[r.below(5) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn weighted_index_skips_zero_weights() {
        let mut r = Rng::seed_from_u64(9);
        for _ in 0..1000 {
            let i = r.weighted_index(&[0.0, 1.0, 0.0, 3.0]).unwrap();
            assert!(i == 1 || i == 3);
        }
        assert_eq!(r.weighted_index(&[0.0, 0.0]), None);
    }
}
