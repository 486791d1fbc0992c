//! Seeded sampling from every [`exp_plan::Dist`] family.
//!
//! A [`Sampler`] validates a [`DistValue`] once, precomputes what each draw
//! needs, and then draws with [`Sampler::sample`] from a caller-owned
//! [`Rng`], so the same seed always gives the same values. Values are in the
//! unit's base (ns, bytes, …), exactly like the distribution's parameters.
//!
//! Algorithms (U ~ Uniform(0, 1) from [`Rng::open01`], Z ~ Normal(0, 1)):
//!
//! | family | draw |
//! |---|---|
//! | uniform | `min + (max − min) · U` |
//! | normal | `mean + sd · Z`, Z by Box–Muller: `√(−2 ln U₁) · cos(2π U₂)` |
//! | lognormal | `location + scale · exp(shape · Z)` (scipy's `lognorm`) |
//! | exponential | `−mean · ln U` (inverse CDF) |
//! | pareto I | `scale · U^(−1/shape)` (inverse CDF) |
//! | weibull | `scale · (−ln U)^(1/shape)` (inverse CDF) |
//! | gamma | Marsaglia & Tsang (2000), boosted by `U^(1/shape)` for shape < 1 |
//! | poisson | inversion by sequential search for mean < 10, else Hörmann's PTRS (1993) |
//! | geometric | `⌊ln U / ln(1 − p)⌋` (inverse CDF, failures before the first success) |
//! | empirical | Vose's alias table over the distinct values weighted by their counts |
//!
//! Box–Muller uses one of its two outputs so a draw needs no state beyond
//! the generator (≈ one `ln`, `sqrt` and `cos`); a ziggurat would be faster
//! but needs tables. Continuous draws that overflow `f64` (a Pareto with a
//! tiny shape) are clamped to `±f64::MAX` so every sample is finite.

use exp_plan::{Dist, DistValue, Unit};
use statrs::function::erf::erfc;
use statrs::function::gamma::{checked_gamma_lr, checked_gamma_ur, gamma};

pub(crate) mod error;
mod variates;

use crate::alias::AliasTable;
use crate::rng::Rng;
pub use error::SampleError;
pub use variates::{marsaglia_tsang, standard_normal};
use variates::{Gamma, Poisson};

/// A validated distribution, ready to draw from.
#[derive(Debug, Clone)]
pub struct Sampler {
    unit: Unit,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Constant(f64),
    Uniform { min: f64, width: f64 },
    Normal { mean: f64, sd: f64 },
    Lognormal { shape: f64, scale: f64, location: f64 },
    Exponential { mean: f64 },
    Pareto { shape: f64, scale: f64, neg_inv_shape: f64 },
    Weibull { shape: f64, scale: f64, inv_shape: f64 },
    Gamma(Gamma),
    Poisson(Poisson),
    Geometric { p: f64, ln_q: f64 },
    Empirical(AliasTable),
}

fn positive(family: &'static str, name: &'static str, value: f64) -> Result<f64, SampleError> {
    if value > 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(SampleError::InvalidParameter {
            family,
            name,
            requirement: "finite and > 0",
            value,
        })
    }
}

fn non_negative(family: &'static str, name: &'static str, value: f64) -> Result<f64, SampleError> {
    if value >= 0.0 && value.is_finite() {
        Ok(value)
    } else {
        Err(SampleError::InvalidParameter {
            family,
            name,
            requirement: "finite and ≥ 0",
            value,
        })
    }
}

fn finite(family: &'static str, name: &'static str, value: f64) -> Result<f64, SampleError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(SampleError::InvalidParameter {
            family,
            name,
            requirement: "finite",
            value,
        })
    }
}

impl Sampler {
    /// Validates the parameters and precomputes the per-draw constants.
    pub fn new(value: &DistValue) -> Result<Self, SampleError> {
        let kind = match &value.dist {
            Dist::Constant { value } => Kind::Constant(finite("constant", "value", *value)?),
            Dist::Uniform { min, max } => {
                let (min, max) = (*min, *max);
                if !(min <= max && (max - min).is_finite()) {
                    return Err(SampleError::UniformRange { min, max });
                }
                Kind::Uniform { min, width: max - min }
            }
            Dist::Normal { mean, sd } => Kind::Normal {
                mean: finite("normal", "mean", *mean)?,
                sd: non_negative("normal", "sd", *sd)?,
            },
            Dist::Lognormal { shape, scale, location } => Kind::Lognormal {
                shape: positive("lognormal", "shape", *shape)?,
                scale: positive("lognormal", "scale", *scale)?,
                location: finite("lognormal", "location", *location)?,
            },
            Dist::Exponential { mean } => Kind::Exponential {
                mean: positive("exponential", "mean", *mean)?,
            },
            Dist::Pareto { shape, scale } => {
                let shape = positive("pareto", "shape", *shape)?;
                Kind::Pareto {
                    shape,
                    scale: positive("pareto", "scale", *scale)?,
                    neg_inv_shape: -1.0 / shape,
                }
            }
            Dist::Weibull { shape, scale } => {
                let shape = positive("weibull", "shape", *shape)?;
                Kind::Weibull {
                    shape,
                    scale: positive("weibull", "scale", *scale)?,
                    inv_shape: 1.0 / shape,
                }
            }
            Dist::Gamma { shape, scale } => {
                let shape = positive("gamma", "shape", *shape)?;
                let scale = positive("gamma", "scale", *scale)?;
                Kind::Gamma(Gamma::new(shape, scale))
            }
            Dist::Poisson { mean } => Kind::Poisson(Poisson::new(non_negative("poisson", "mean", *mean)?)),
            Dist::Geometric { p } => {
                let p = *p;
                if !(p > 0.0 && p <= 1.0) {
                    return Err(SampleError::InvalidParameter {
                        family: "geometric",
                        name: "p",
                        requirement: "in (0, 1]",
                        value: p,
                    });
                }
                // ln_1p keeps ln(1 − p) accurate (and non-zero) for tiny p.
                Kind::Geometric { p, ln_q: (-p).ln_1p() }
            }
            Dist::Empirical { values, .. } => Kind::Empirical(AliasTable::from_values(values)?),
        };
        Ok(Sampler { unit: value.unit, kind })
    }

    /// The unit of the values this sampler draws.
    pub fn unit(&self) -> Unit {
        self.unit
    }

    /// Whether the CDF is continuous (no atoms), as the one-sample KS test needs.
    pub fn is_continuous(&self) -> bool {
        match &self.kind {
            Kind::Uniform { width, .. } => *width > 0.0,
            Kind::Normal { sd, .. } => *sd > 0.0,
            Kind::Lognormal { .. } | Kind::Exponential { .. } | Kind::Pareto { .. } => true,
            Kind::Weibull { .. } | Kind::Gamma(_) => true,
            Kind::Constant(_) | Kind::Poisson(_) | Kind::Geometric { .. } | Kind::Empirical(_) => false,
        }
    }

    /// One draw, in the unit's base. Always finite.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        let x = match &self.kind {
            Kind::Constant(v) => return *v,
            Kind::Uniform { min, width } => min + width * rng.next_f64(),
            Kind::Normal { mean, sd } => mean + sd * standard_normal(rng),
            Kind::Lognormal { shape, scale, location } => location + scale * (shape * standard_normal(rng)).exp(),
            Kind::Exponential { mean } => -mean * rng.open01().ln(),
            Kind::Pareto {
                scale, neg_inv_shape, ..
            } => scale * rng.open01().powf(*neg_inv_shape),
            Kind::Weibull { scale, inv_shape, .. } => scale * (-rng.open01().ln()).powf(*inv_shape),
            Kind::Gamma(g) => g.sample(rng),
            Kind::Poisson(p) => p.sample(rng),
            // U in (0, 1) so ln U < 0 and ln_q < 0 (or −∞ for p = 1, giving exactly 0).
            Kind::Geometric { ln_q, .. } => (rng.open01().ln() / ln_q).floor(),
            Kind::Empirical(table) => return table.sample(rng),
        };
        x.clamp(-f64::MAX, f64::MAX)
    }

    /// One draw rounded to the nearest integer and clamped at 0, for
    /// quantities (bytes, counts, nanoseconds). Saturates at `u64::MAX`.
    #[inline]
    pub fn sample_u64(&self, rng: &mut Rng) -> u64 {
        // `as` saturates: negative → 0, too large → u64::MAX.
        self.sample(rng).round() as u64
    }

    /// The analytic mean; `None` when it is infinite (Pareto shape ≤ 1).
    pub fn mean(&self) -> Option<f64> {
        Some(match &self.kind {
            Kind::Constant(v) => *v,
            Kind::Uniform { min, width } => min + width / 2.0,
            Kind::Normal { mean, .. } => *mean,
            Kind::Lognormal { shape, scale, location } => location + scale * (shape * shape / 2.0).exp(),
            Kind::Exponential { mean } => *mean,
            // E = shape · scale / (shape − 1) for shape > 1.
            Kind::Pareto { shape, scale, .. } => (*shape > 1.0).then(|| shape * scale / (shape - 1.0))?,
            // E = scale · Γ(1 + 1/shape).
            Kind::Weibull { scale, inv_shape, .. } => scale * gamma(1.0 + inv_shape),
            Kind::Gamma(g) => g.shape * g.scale,
            Kind::Poisson(p) => p.mean,
            Kind::Geometric { p, .. } => (1.0 - p) / p,
            Kind::Empirical(t) => t.mean(),
        })
    }

    /// The analytic variance; `None` when it is infinite (Pareto shape ≤ 2).
    pub fn variance(&self) -> Option<f64> {
        Some(match &self.kind {
            Kind::Constant(_) => 0.0,
            Kind::Uniform { width, .. } => width * width / 12.0,
            Kind::Normal { sd, .. } => sd * sd,
            // scale² · e^(s²) · (e^(s²) − 1)
            Kind::Lognormal { shape, scale, .. } => {
                let w = (shape * shape).exp();
                scale * scale * w * (w - 1.0)
            }
            Kind::Exponential { mean } => mean * mean,
            // scale² · shape / ((shape − 1)² (shape − 2)) for shape > 2.
            Kind::Pareto { shape, scale, .. } => {
                (*shape > 2.0).then(|| scale * scale * shape / ((shape - 1.0).powi(2) * (shape - 2.0)))?
            }
            // scale² · (Γ(1 + 2/k) − Γ(1 + 1/k)²)
            Kind::Weibull { scale, inv_shape, .. } => {
                scale * scale * (gamma(1.0 + 2.0 * inv_shape) - gamma(1.0 + inv_shape).powi(2))
            }
            Kind::Gamma(g) => g.shape * g.scale * g.scale,
            Kind::Poisson(p) => p.mean,
            Kind::Geometric { p, .. } => (1.0 - p) / (p * p),
            Kind::Empirical(t) => t.variance(),
        })
    }

    /// The median: the smallest x with P(X ≤ x) ≥ ½, by bisection on the
    /// CDF (every family has one, not every family a finite mean). `None`
    /// only if the CDF is not a CDF (NaN).
    pub fn median(&self) -> Option<f64> {
        let at_least_half = |x: f64| self.cdf(x) >= 0.5;
        let (mut lo, mut hi) = (-1.0_f64, 1.0_f64);
        while !at_least_half(hi) {
            hi *= 2.0;
            if !hi.is_finite() {
                return None;
            }
        }
        while at_least_half(lo) {
            lo *= 2.0;
            if !lo.is_finite() {
                return None;
            }
        }
        // Invariant: cdf(lo) < ½ ≤ cdf(hi); stop when the interval no longer shrinks.
        loop {
            let mid = lo + (hi - lo) / 2.0;
            if mid <= lo || mid >= hi {
                return Some(hi);
            }
            if at_least_half(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }

    /// P(X ≤ x). Closed forms, with statrs' erfc and regularised incomplete
    /// gamma functions for the normal, lognormal, gamma and Poisson families.
    pub fn cdf(&self, x: f64) -> f64 {
        if x.is_nan() {
            return f64::NAN;
        }
        match &self.kind {
            Kind::Constant(v) => step(x >= *v),
            Kind::Uniform { min, width } => {
                if *width == 0.0 {
                    step(x >= *min)
                } else {
                    ((x - min) / width).clamp(0.0, 1.0)
                }
            }
            Kind::Normal { mean, sd } => {
                if *sd == 0.0 {
                    step(x >= *mean)
                } else {
                    normal_cdf((x - mean) / sd)
                }
            }
            Kind::Lognormal { shape, scale, location } => {
                if x <= *location {
                    0.0
                } else {
                    normal_cdf(((x - location) / scale).ln() / shape)
                }
            }
            // 1 − e^(−x/mean), via exp_m1 for accuracy near 0.
            Kind::Exponential { mean } => {
                if x <= 0.0 {
                    0.0
                } else {
                    -(-x / mean).exp_m1()
                }
            }
            // 1 − (scale / x)^shape on [scale, ∞).
            Kind::Pareto { shape, scale, .. } => {
                if x < *scale {
                    0.0
                } else {
                    1.0 - (scale / x).powf(*shape)
                }
            }
            // 1 − exp(−(x/scale)^shape)
            Kind::Weibull { shape, scale, .. } => {
                if x <= 0.0 {
                    0.0
                } else {
                    -(-(x / scale).powf(*shape)).exp_m1()
                }
            }
            // P(shape, x/scale), the regularised lower incomplete gamma function.
            Kind::Gamma(g) => {
                if x <= 0.0 {
                    0.0
                } else if x == f64::INFINITY {
                    1.0
                } else {
                    checked_gamma_lr(g.shape, x / g.scale).unwrap_or(f64::NAN)
                }
            }
            // P(X ≤ k) = Q(k + 1, λ), the regularised upper incomplete gamma function.
            Kind::Poisson(p) => {
                if x < 0.0 {
                    0.0
                } else if p.mean == 0.0 || x == f64::INFINITY {
                    1.0
                } else {
                    checked_gamma_ur(x.floor() + 1.0, p.mean).unwrap_or(f64::NAN)
                }
            }
            // 1 − (1 − p)^(k + 1), k = ⌊x⌋.
            Kind::Geometric { ln_q, .. } => {
                if x < 0.0 {
                    0.0
                } else {
                    -((x.floor() + 1.0) * ln_q).exp_m1()
                }
            }
            Kind::Empirical(t) => t.cdf(x),
        }
    }
}

fn step(at_or_above: bool) -> f64 {
    if at_or_above {
        1.0
    } else {
        0.0
    }
}

/// Φ(z) = ½ erfc(−z / √2).
fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}
