//! Standard normal and standard exponential variates by the ziggurat
//! method, for generation only (generator version 2, decision 0022).
//!
//! exp-stats' samplers draw a normal by Box–Muller (a `ln`, a `sqrt` and a
//! `cos` per value) and an exponential by inversion (a `ln`): on small
//! documents that was about a third of generation's CPU. A ziggurat covers
//! the density with C equal-area blocks; a draw picks a block and a point
//! in it from one 64-bit word, and returns it after one multiply when the
//! point lies in the block's part that is inside the curve (≈ 99 % of
//! draws). Only the rest evaluate `exp` (a wedge) or `ln` (the tail). The
//! variates have exactly the target distributions; they are not the same
//! numbers as exp-stats', which is why generation has a version.
//!
//! Layout (Doornik, "An improved ziggurat method to generate normal random
//! samples", 2005, which fixes the correlation between block and point of
//! Marsaglia & Tsang's original, "The ziggurat method for generating random
//! variables", J. Stat. Software 5(8), 2000): for a decreasing density f
//! on [0, ∞), with tail start R and block area V,
//!
//! ```text
//! x₀ = V / f(R),  x₁ = R,  xᵢ₊₁ = f⁻¹(V / xᵢ + f(xᵢ)),  x_C = 0
//! ```
//!
//! Block i (width xᵢ, heights f(xᵢ)…f(xᵢ₊₁); block 0 is the base, of height
//! f(R), plus the tail beyond R) has area V. A draw takes block i uniform
//! and u uniform: x = u·xᵢ is accepted at once when u < xᵢ₊₁ / xᵢ (the
//! block's part under the curve); block 0 otherwise samples the tail;
//! other blocks test the wedge: y uniform between f(xᵢ) and f(xᵢ₊₁) is
//! accepted when y < f(x), else the draw starts over. The block index uses
//! the low bits of the word and u the high 53 bits, so they are independent.
//!
//! Constants: normal C = 128, R = 3.442619855899, V = 9.91256303526217e-3
//! (f(x) = e^(−x²/2), unnormalised; Marsaglia & Tsang); exponential C = 256,
//! R = 7.69711747013104972, V = 3.949659822581572e-3 (f(x) = e^(−x)).

use std::sync::LazyLock;

use exp_stats::Rng;

const NORMAL_BLOCKS: usize = 128;
const NORMAL_R: f64 = 3.442_619_855_899;
const NORMAL_V: f64 = 9.912_563_035_262_17e-3;

const EXPONENTIAL_BLOCKS: usize = 256;
const EXPONENTIAL_R: f64 = 7.697_117_470_131_05;
const EXPONENTIAL_V: f64 = 3.949_659_822_581_572e-3;

/// 2⁻⁵³: the spacing of `next_f64`'s grid.
const UNIT: f64 = 1.0 / (1u64 << 53) as f64;

/// One block: its width xᵢ, the next edge xᵢ₊₁ and the fast-acceptance
/// ratio xᵢ₊₁ / xᵢ, side by side (one cache line per draw).
#[derive(Debug, Clone, Copy, Default)]
struct Block {
    x: f64,
    next: f64,
    ratio: f64,
}

/// The blocks of one ziggurat.
#[derive(Debug)]
struct Tables<const C: usize> {
    blocks: [Block; C],
}

impl<const C: usize> Tables<C> {
    /// Builds the edges for density `f` with inverse `f_inv` (see the module docs).
    fn new(r: f64, v: f64, f: impl Fn(f64) -> f64, f_inv: impl Fn(f64) -> f64) -> Self {
        let mut x = vec![0.0; C + 1];
        x[0] = v / f(r);
        x[1] = r;
        for i in 2..C {
            let below = x[i - 1];
            x[i] = f_inv(v / below + f(below));
        }
        x[C] = 0.0;
        let mut blocks = [Block::default(); C];
        for (i, block) in blocks.iter_mut().enumerate() {
            *block = Block {
                x: x[i],
                next: x[i + 1],
                ratio: x[i + 1] / x[i],
            };
        }
        Tables { blocks }
    }
}

static NORMAL: LazyLock<Tables<NORMAL_BLOCKS>> =
    LazyLock::new(|| Tables::new(NORMAL_R, NORMAL_V, |x| (-0.5 * x * x).exp(), |y| (-2.0 * y.ln()).sqrt()));

static EXPONENTIAL: LazyLock<Tables<EXPONENTIAL_BLOCKS>> =
    LazyLock::new(|| Tables::new(EXPONENTIAL_R, EXPONENTIAL_V, |x| (-x).exp(), |y| -y.ln()));

/// Builds both tables now, so the first document does not pay for them.
pub(super) fn init() {
    LazyLock::force(&NORMAL);
    LazyLock::force(&EXPONENTIAL);
}

/// Z ~ Normal(0, 1). The fast path (≈ 99 % of draws) is inlined into the
/// caller; the wedge, the tail and a rejected draw's retry are not, so the
/// inlined part stays a few instructions.
#[inline(always)]
pub(super) fn standard_normal(rng: &mut Rng) -> f64 {
    let bits = rng.next_u64();
    let i = (bits as usize) % NORMAL_BLOCKS;
    // u uniform on [−1, 1): the sign and the position in the block.
    let u = 2.0 * ((bits >> 11) as f64 * UNIT) - 1.0;
    let block = NORMAL.blocks[i];
    if u.abs() < block.ratio {
        return u * block.x;
    }
    normal_edge(rng, i, u, block)
}

/// The rest of a normal draw whose point `u` in block `i` was not
/// accepted at once: the tail (block 0) or the wedge test, and on
/// rejection a new draw.
#[cold]
#[inline(never)]
fn normal_edge(rng: &mut Rng, i: usize, u: f64, block: Block) -> f64 {
    if i == 0 {
        return normal_tail(rng, u < 0.0);
    }
    match in_wedge(rng, u, block, |edge, x| (-0.5 * (edge * edge - x * x)).exp()) {
        Some(x) => x,
        None => standard_normal(rng),
    }
}

/// The wedge test of both distributions: x = u·xᵢ is kept when a uniform
/// y between the block's edges falls under the density at x.
/// `relative_density(edge, x)` is f(edge)/f(x), so f(x) is 1.
fn in_wedge(rng: &mut Rng, u: f64, block: Block, relative_density: impl Fn(f64, f64) -> f64) -> Option<f64> {
    let x = u * block.x;
    let f0 = relative_density(block.x, x);
    let f1 = relative_density(block.next, x);
    (f1 + rng.next_f64() * (f0 - f1) < 1.0).then_some(x)
}

/// The normal tail beyond R (Marsaglia 1964): x = −ln(U₁)/R, y = −ln(U₂),
/// accepted when 2y > x²; the variate is R + x.
#[cold]
fn normal_tail(rng: &mut Rng, negative: bool) -> f64 {
    loop {
        let x = -rng.open01().ln() / NORMAL_R;
        let y = -rng.open01().ln();
        if 2.0 * y > x * x {
            let z = NORMAL_R + x;
            return if negative { -z } else { z };
        }
    }
}

/// E ~ Exponential(1); inlined like [`standard_normal`].
#[inline(always)]
pub(super) fn standard_exponential(rng: &mut Rng) -> f64 {
    let bits = rng.next_u64();
    let i = (bits as usize) % EXPONENTIAL_BLOCKS;
    let u = (bits >> 11) as f64 * UNIT;
    let block = EXPONENTIAL.blocks[i];
    if u < block.ratio {
        return u * block.x;
    }
    exponential_edge(rng, i, u, block)
}

/// The rest of an exponential draw not accepted at once (see
/// [`normal_edge`]).
#[cold]
#[inline(never)]
fn exponential_edge(rng: &mut Rng, i: usize, u: f64, block: Block) -> f64 {
    if i == 0 {
        // The tail beyond R is R plus an exponential (no memory).
        return EXPONENTIAL_R - rng.open01().ln();
    }
    match in_wedge(rng, u, block, |edge, x| (x - edge).exp()) {
        Some(x) => x,
        None => standard_exponential(rng),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recurrence closes: the top block reaches f(0) = 1 (x_C = 0),
    /// which checks the constants R and V belong together.
    #[test]
    fn tables_close_at_the_top() {
        let n = &NORMAL.blocks;
        let last = n[NORMAL_BLOCKS - 1].x;
        let top = NORMAL_V / last + (-0.5 * last * last).exp();
        assert!((top - 1.0).abs() < 1e-9, "normal top {top}");
        let e = &EXPONENTIAL.blocks;
        let last = e[EXPONENTIAL_BLOCKS - 1].x;
        let top = EXPONENTIAL_V / last + (-last).exp();
        assert!((top - 1.0).abs() < 1e-9, "exponential top {top}");
        assert!(n.iter().all(|b| b.x > b.next), "normal edges decrease");
        assert!(e.iter().all(|b| b.x > b.next), "exponential edges decrease");
    }
}
