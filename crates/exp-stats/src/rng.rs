//! A small, fast, seedable pseudo-random number generator that we own, so a
//! seed gives the same sequence forever (no dependency upgrade can change it).
//!
//! # Algorithm
//!
//! The generator is **xoshiro256++** (Blackman & Vigna, "Scrambled linear
//! pseudorandom number generators", ACM TOMS 47(4), 2021; reference C code at
//! <https://prng.di.unimi.it/xoshiro256plusplus.c>). State: four `u64` words
//! s₀…s₃, not all zero. One step:
//!
//! ```text
//! result = rotl(s₀ + s₃, 23) + s₀
//! t  = s₁ << 17
//! s₂ ^= s₀;  s₃ ^= s₁;  s₁ ^= s₂;  s₀ ^= s₃
//! s₂ ^= t;   s₃ = rotl(s₃, 45)
//! ```
//!
//! Period 2²⁵⁶ − 1; passes BigCrush and PractRand. It is *not*
//! cryptographically secure, which we do not need.
//!
//! A `u64` seed is expanded into the 256-bit state with **SplitMix64**
//! (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014; <https://prng.di.unimi.it/splitmix64.c>), as the xoshiro
//! authors recommend:
//!
//! ```text
//! x += 0x9E3779B97F4A7C15                      (the golden-ratio increment)
//! z = x
//! z = (z ^ (z >> 30)) · 0xBF58476D1CE4E5B9
//! z = (z ^ (z >> 27)) · 0x94D049BB133111EB
//! return z ^ (z >> 31)
//! ```
//!
//! SplitMix64 is a bijection of its counter, so four consecutive outputs are
//! never all zero and the xoshiro state is always valid.

/// The SplitMix64 golden-ratio increment, ⌊2⁶⁴ / φ⌋ (odd).
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// Domain tags so that `fork("x")` and `stream(i)` can never coincide.
const FORK_DOMAIN: u64 = 0x666F_726B_2D6C_6162; // "fork-lab"
const STREAM_DOMAIN: u64 = 0x7374_7265_616D_2D69; // "stream-i"

/// One SplitMix64 step: advances `state` and returns the mixed output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256++: see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose state is four SplitMix64 outputs from `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        Rng {
            s: [
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
            ],
        }
    }

    /// A generator with exactly this state (for reference test vectors).
    /// `None` for the all-zero state, a fixed point of the recurrence.
    pub fn from_state(s: [u64; 4]) -> Option<Self> {
        if s == [0; 4] {
            return None;
        }
        Some(Rng { s })
    }

    /// The next 64 uniformly distributed bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = self.s;
        let result = s0.wrapping_add(s3).rotate_left(23).wrapping_add(s0);
        let t = s1 << 17;
        let s2 = s2 ^ s0;
        let s3 = s3 ^ s1;
        let s1 = s1 ^ s2;
        let s0 = s0 ^ s3;
        self.s = [s0, s1, s2 ^ t, s3.rotate_left(45)];
        result
    }

    /// Uniform on [0, 1) with 53 bits of precision: `(x >> 11) · 2⁻⁵³`.
    /// Every value is a multiple of 2⁻⁵³; 0 is possible, 1 is not.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on the open interval (0, 1): `((x >> 12) + ½) · 2⁻⁵²`, the
    /// midpoints of a 2⁻⁵² grid, so `ln(u)` and `u^(−1/a)` are always finite.
    /// Smallest value 2⁻⁵³, largest 1 − 2⁻⁵³.
    #[inline]
    pub fn open01(&mut self) -> f64 {
        ((self.next_u64() >> 12) as f64 + 0.5) * (1.0 / (1u64 << 52) as f64)
    }

    /// Uniform integer in `0..n` (`0` when `n == 0`), by Lemire's
    /// multiply-shift: `⌊x · n / 2⁶⁴⌋`. Without rejection the bias is at most
    /// n / 2⁶⁴ per value, far below anything a test could see.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// An independent generator derived from this one's state and `label`
    /// (e.g. a workload name). Does not advance `self`, so the result does
    /// not depend on how many values were drawn from other forks.
    pub fn fork(&self, label: &str) -> Rng {
        self.derive(FORK_DOMAIN, fnv1a64(label.as_bytes()))
    }

    /// The `index`-th independent stream (e.g. one per device) derived from
    /// this generator's state. Does not advance `self`.
    pub fn stream(&self, index: u64) -> Rng {
        self.derive(STREAM_DOMAIN, index)
    }

    /// Hashes (domain, key, state) through SplitMix64 into a new 64-bit seed.
    /// Every input word passes a full avalanche mix, so nearby keys (device 0,
    /// 1, 2, …) give unrelated seeds.
    fn derive(&self, domain: u64, key: u64) -> Rng {
        let mut h = domain;
        let mut seed = splitmix64(&mut h);
        for word in [key, self.s[0], self.s[1], self.s[2], self.s[3]] {
            h ^= word ^ seed;
            seed = splitmix64(&mut h);
        }
        Rng::new(seed)
    }
}

/// 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3): a
/// stable string hash; std's `DefaultHasher` is explicitly not stable.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_reference_vector() {
        // State [1, 2, 3, 4]: the first output is rotl(1 + 4, 23) + 1 = 5·2²³ + 1; the rest are the
        // published test vector of rand_xoshiro (checked against Vigna's C reference).
        let mut rng = Rng::from_state([1, 2, 3, 4]).unwrap_or_else(|| Rng::new(0));
        let expected: [u64; 10] = [
            41_943_041,
            58_720_359,
            3_588_806_011_781_223,
            3_591_011_842_654_386,
            9_228_616_714_210_784_205,
            9_973_669_472_204_895_162,
            14_011_001_112_246_962_877,
            12_406_186_145_184_390_807,
            15_849_039_046_786_891_736,
            10_450_023_813_501_588_000,
        ];
        for e in expected {
            assert_eq!(rng.next_u64(), e);
        }
        assert_eq!(Rng::from_state([0; 4]), None);
    }

    #[test]
    fn fnv_reference() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
