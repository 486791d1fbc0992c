//! The generators that need more than one line: standard normal (Box–Muller),
//! gamma (Marsaglia–Tsang) and Poisson (inversion / PTRS).

use statrs::function::gamma::ln_gamma;

use crate::rng::Rng;

/// Marsaglia–Tsang constants for shape `a' = max(a, a + 1 if a < 1)`.
#[derive(Debug, Clone)]
pub(super) struct Gamma {
    pub(super) shape: f64,
    pub(super) scale: f64,
    /// d = a' − 1/3
    d: f64,
    /// c = 1 / √(9d)
    c: f64,
    /// 1/a when a < 1 (the `U^(1/a)` boost), else `None`.
    boost: Option<f64>,
}

/// Poisson with precomputed constants for inversion or PTRS.
#[derive(Debug, Clone)]
pub(super) struct Poisson {
    pub(super) mean: f64,
    /// e^(−λ), the pmf at 0 (inversion).
    exp_neg: f64,
    /// PTRS constants (Hörmann 1993, as in NumPy's `random_poisson_ptrs`).
    ln_mean: f64,
    b: f64,
    a: f64,
    ln_inv_alpha: f64,
    vr: f64,
}

/// Below this mean Poisson uses inversion (expected ≤ λ + 1 steps); at and
/// above it PTRS, whose acceptance rate is ≥ 0.9 for λ ≥ 10.
const POISSON_PTRS_FROM: f64 = 10.0;

/// Z ~ Normal(0, 1) by the Box–Muller transform (one of its two outputs):
/// `√(−2 ln U₁) · cos(2π U₂)`, U₁ ∈ (0, 1) so the logarithm is finite;
/// |Z| ≤ √(2 · 53 ln 2) ≈ 8.57.
#[inline]
pub fn standard_normal(rng: &mut Rng) -> f64 {
    let r = (-2.0 * rng.open01().ln()).sqrt();
    r * (std::f64::consts::TAU * rng.next_f64()).cos()
}

impl Gamma {
    /// Precomputes d and c for a validated shape > 0 and scale > 0.
    pub(super) fn new(shape: f64, scale: f64) -> Self {
        let boosted = if shape < 1.0 { shape + 1.0 } else { shape };
        let d = boosted - 1.0 / 3.0;
        Gamma {
            shape,
            scale,
            d,
            c: 1.0 / (9.0 * d).sqrt(),
            boost: (shape < 1.0).then(|| 1.0 / shape),
        }
    }

    /// Marsaglia & Tsang, "A simple method for generating gamma variables",
    /// ACM TOMS 26(3), 2000. For a ≥ 1, with d = a − 1/3, c = 1/√(9d):
    /// repeat { Z; v = (1 + cZ)³; U } until v > 0 and
    /// (U < 1 − 0.0331 Z⁴ (squeeze) or ln U < Z²/2 + d (1 − v + ln v));
    /// return d · v. For a < 1, draw with a + 1 and multiply by U^(1/a).
    /// Acceptance rate ≥ 0.95, so the loop ends fast with probability 1.
    #[inline]
    pub(super) fn sample(&self, rng: &mut Rng) -> f64 {
        let x = marsaglia_tsang(self.d, self.c, rng, standard_normal);
        let x = match self.boost {
            Some(inv_shape) => x * rng.open01().powf(inv_shape),
            None => x,
        };
        x * self.scale
    }
}

impl Poisson {
    /// Precomputes the inversion and PTRS constants for a validated mean ≥ 0.
    pub(super) fn new(mean: f64) -> Self {
        let b = 0.931 + 2.53 * mean.sqrt();
        let a = -0.059 + 0.02483 * b;
        Poisson {
            mean,
            exp_neg: (-mean).exp(),
            ln_mean: mean.ln(),
            b,
            a,
            ln_inv_alpha: (1.1239 + 1.1328 / (b - 3.4)).ln(),
            vr: 0.9277 - 3.6224 / (b - 2.0),
        }
    }

    #[inline]
    pub(super) fn sample(&self, rng: &mut Rng) -> f64 {
        if self.mean < POISSON_PTRS_FROM {
            self.inversion(rng)
        } else {
            self.ptrs(rng)
        }
    }

    /// Sequential search of the CDF: k = min{k : U ≤ Σ_{j ≤ k} e^(−λ) λʲ / j!},
    /// using pmf(k) = pmf(k − 1) · λ / k. The bound on k only matters if
    /// rounding leaves the summed CDF below U; the pmf beyond it is < 1e-200.
    fn inversion(&self, rng: &mut Rng) -> f64 {
        let u = rng.next_f64();
        let mut pmf = self.exp_neg;
        let mut cdf = pmf;
        let mut k = 0.0;
        while u > cdf && k < 200.0 {
            k += 1.0;
            pmf *= self.mean / k;
            cdf += pmf;
        }
        k
    }

    /// PTRS, the transformed rejection method with squeeze (Hörmann, "The
    /// transformed rejection method for generating Poisson random variables",
    /// Insurance: Mathematics and Economics 12, 1993), constants as in NumPy:
    /// b = 0.931 + 2.53 √λ, a = −0.059 + 0.02483 b, 1/α = 1.1239 + 1.1328/(b − 3.4),
    /// v_r = 0.9277 − 3.6224/(b − 2). Exact; about 1.1 tries per draw.
    fn ptrs(&self, rng: &mut Rng) -> f64 {
        loop {
            let u = rng.next_f64() - 0.5;
            let v = rng.next_f64();
            let us = 0.5 - u.abs();
            let k = ((2.0 * self.a / us + self.b) * u + self.mean + 0.43).floor();
            if us >= 0.07 && v <= self.vr {
                return k;
            }
            if k < 0.0 || (us < 0.013 && v > us) {
                continue;
            }
            let lhs = v.ln() + self.ln_inv_alpha - (self.a / (us * us) + self.b).ln();
            if lhs <= -self.mean + k * self.ln_mean - ln_gamma(k + 1.0) {
                return k;
            }
        }
    }
}

/// The rejection loop of Marsaglia–Tsang for d = a − 1/3, c = 1/√(9d)
/// (a ≥ 1), with the standard normal drawn by `normal`: exp-xml's
/// generation draws it by ziggurat, everything else by Box–Muller.
#[inline]
pub fn marsaglia_tsang(d: f64, c: f64, rng: &mut Rng, mut normal: impl FnMut(&mut Rng) -> f64) -> f64 {
    loop {
        let z = normal(rng);
        let t = 1.0 + c * z;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u = rng.open01();
        let z2 = z * z;
        if u < 1.0 - 0.0331 * z2 * z2 || u.ln() < 0.5 * z2 + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}
