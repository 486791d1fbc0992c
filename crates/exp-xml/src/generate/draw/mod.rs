//! Drawing a numeric path's fitted family during generation.
//!
//! The families a corpus fits most (normal, log-normal, gamma, exponential,
//! Weibull) draw here from ziggurat normals and exponentials
//! (`ziggurat.rs`), per-path constants computed once; the others draw
//! through exp-stats' [`FittedSampler`], as every family did before
//! generator version 2 (decision 0022). Each family's distribution is the
//! same as exp-stats' (`tests` below check it with KS tests against the
//! analytic CDF); the numbers drawn for a seed are not.
//!
//! | family | draw (Z ziggurat normal, E ziggurat exponential) |
//! |---|---|
//! | normal(mean, sd) | `mean + sd · Z` |
//! | log-normal(mu, sigma) | `e^mu · exp(sigma · Z)` |
//! | exponential(rate) | `E / rate` |
//! | gamma(shape, rate) | Marsaglia & Tsang with Z; for shape < 1 boosted by `exp(−E / shape)` (= U^(1/shape)) |
//! | Weibull(shape, scale) | `scale · E^(1/shape)` |

use exp_stats::fit::Family;
use exp_stats::sampler::marsaglia_tsang;
use exp_stats::{FittedSampler, Rng};

use super::ziggurat::{standard_exponential, standard_normal};

#[derive(Debug, Clone)]
pub(super) enum FamilyDraw {
    Normal {
        mean: f64,
        sd: f64,
    },
    LogNormal {
        scale: f64,
        sigma: f64,
    },
    Exponential {
        mean: f64,
    },
    Gamma(Gamma),
    Weibull {
        scale: f64,
        inv_shape: f64,
    },
    /// Any other family, through exp-stats.
    Other(Box<FittedSampler>),
}

/// Marsaglia–Tsang constants (as exp-stats' gamma sampler).
#[derive(Debug, Clone)]
pub(super) struct Gamma {
    d: f64,
    c: f64,
    /// −1/shape when shape < 1 (the boost), else `None`.
    neg_inv_shape: Option<f64>,
    scale: f64,
}

impl Gamma {
    fn new(shape: f64, scale: f64) -> Self {
        let boosted = if shape < 1.0 { shape + 1.0 } else { shape };
        let d = boosted - 1.0 / 3.0;
        Gamma {
            d,
            c: 1.0 / (9.0 * d).sqrt(),
            neg_inv_shape: (shape < 1.0).then(|| -1.0 / shape),
            scale,
        }
    }

    /// Marsaglia & Tsang, "A simple method for generating gamma
    /// variables", ACM TOMS 26(3), 2000 (see exp-stats' `variates.rs`).
    #[inline]
    fn sample(&self, rng: &mut Rng) -> f64 {
        let x = marsaglia_tsang(self.d, self.c, rng, standard_normal);
        let x = match self.neg_inv_shape {
            Some(neg_inv_shape) => x * (standard_exponential(rng) * neg_inv_shape).exp(),
            None => x,
        };
        x * self.scale
    }
}

/// Parameter `name` of `params` (validated by [`FittedSampler::from_named`]
/// before this is called, so present and finite).
fn param(params: &[(String, f64)], name: &str) -> f64 {
    params.iter().find(|(n, _)| n == name).map_or(f64::NAN, |&(_, v)| v)
}

impl FamilyDraw {
    /// The draw for `sampler`'s family; `params` are the ones `sampler`
    /// was built (and validated) from.
    pub fn new(sampler: FittedSampler, params: &[(String, f64)]) -> Self {
        super::ziggurat::init();
        let p = |name| param(params, name);
        match sampler.family() {
            Family::Normal => FamilyDraw::Normal {
                mean: p("mean"),
                sd: p("sd"),
            },
            Family::LogNormal => FamilyDraw::LogNormal {
                scale: p("mu").exp(),
                sigma: p("sigma"),
            },
            Family::Exponential => FamilyDraw::Exponential { mean: 1.0 / p("rate") },
            Family::Gamma => FamilyDraw::Gamma(Gamma::new(p("shape"), 1.0 / p("rate"))),
            Family::Weibull => FamilyDraw::Weibull {
                scale: p("scale"),
                inv_shape: 1.0 / p("shape"),
            },
            _ => FamilyDraw::Other(Box::new(sampler)),
        }
    }

    /// One draw; NaN only if the family's own arithmetic overflows (the
    /// caller maps it into the path's range).
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match self {
            FamilyDraw::Normal { mean, sd } => mean + sd * standard_normal(rng),
            FamilyDraw::LogNormal { scale, sigma } => scale * (sigma * standard_normal(rng)).exp(),
            FamilyDraw::Exponential { mean } => mean * standard_exponential(rng),
            FamilyDraw::Gamma(g) => g.sample(rng),
            FamilyDraw::Weibull { scale, inv_shape } => scale * standard_exponential(rng).powf(*inv_shape),
            FamilyDraw::Other(sampler) => sampler.sample(rng),
        }
    }
}

#[cfg(test)]
mod tests;
