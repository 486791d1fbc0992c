//! Drawing from a fitted [`Family`]: the inverse of [`fit`](super::fit), so
//! a synthesis set can regenerate values like the ones it was fitted on.
//!
//! Parameters come in the order of the table on [`Family`]. Draws reuse the
//! plan samplers ([`Sampler`]: normal, log-normal, exponential, Weibull,
//! gamma, Poisson, geometric) and build the rest from them
//! (U ~ Uniform(0, 1), Z ~ Normal(0, 1), G(a, s) ~ Gamma(shape a, scale s)):
//!
//! | family | draw |
//! |---|---|
//! | beta(α, β) | `X / (X + Y)`, X ~ G(α, 1), Y ~ G(β, 1) |
//! | Cauchy(loc, scale) | `loc + scale · tan(π (U − ½))` (inverse CDF) |
//! | χ²(df) | `G(df/2, 2)` |
//! | F(d1, d2) | `G(d1/2, 2/d1) / G(d2/2, 2/d2)` (ratio of scaled χ²) |
//! | gamma(shape, rate) | `G(shape, 1/rate)` |
//! | negative binomial(r, p) | `Poisson(λ)`, λ ~ G(r, (1 − p)/p) (gamma–Poisson mixture; failures before the r-th success) |
//! | Student t(loc, scale, df) | `loc + scale · Z / √V`, V ~ G(df/2, 2/df) |
//!
//! and exponential(rate) = plan exponential with mean 1/rate, log-normal(mu,
//! sigma) = plan lognormal with shape sigma, scale e^mu, geometric(p) and
//! Poisson(lambda) as in the plan. Every draw is finite (clamped to
//! `±f64::MAX`).

use exp_plan::{Dist, DistValue, Unit};

use super::{Family, Fit};
use crate::rng::Rng;
use crate::sampler::{standard_normal, SampleError, Sampler};

/// Why a sampler could not be built from a family and parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DrawError {
    #[error("{family}: expected {expected} parameters, got {got}")]
    ParamCount {
        family: Family,
        expected: usize,
        got: usize,
    },
    #[error("{family}: parameter `{name}` missing")]
    MissingParam { family: Family, name: &'static str },
    #[error("{family}: `{name}` must be {requirement}, got {value}")]
    Parameter {
        family: Family,
        name: &'static str,
        requirement: &'static str,
        value: f64,
    },
    #[error(transparent)]
    Sampler(#[from] SampleError),
}

/// A validated fitted distribution, ready to draw from.
#[derive(Debug, Clone)]
pub struct FittedSampler {
    family: Family,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// Families the plan sampler draws directly.
    Plain(Sampler),
    Constant(f64),
    Beta {
        x: Sampler,
        y: Sampler,
        p_x: f64,
    },
    Cauchy {
        location: f64,
        scale: f64,
    },
    F {
        numerator: Sampler,
        denominator: Sampler,
    },
    NegativeBinomial {
        rate: Sampler,
    },
    StudentT {
        location: f64,
        scale: f64,
        chi: Sampler,
    },
}

/// Parameter names of each family, in the documented order.
pub fn param_names(family: Family) -> &'static [&'static str] {
    match family {
        Family::Beta => &["alpha", "beta"],
        Family::Cauchy => &["location", "scale"],
        Family::ChiSquared => &["df"],
        Family::Exponential => &["rate"],
        Family::F => &["d1", "d2"],
        Family::Gamma => &["shape", "rate"],
        Family::Geometric => &["p"],
        Family::LogNormal => &["mu", "sigma"],
        Family::NegativeBinomial => &["r", "p"],
        Family::Normal => &["mean", "sd"],
        Family::Poisson => &["lambda"],
        Family::StudentT => &["location", "scale", "df"],
        Family::Weibull => &["shape", "scale"],
    }
}

fn plan(dist: Dist) -> Result<Sampler, DrawError> {
    Ok(Sampler::new(&DistValue {
        unit: Unit::Count,
        dist,
    })?)
}

fn gamma(shape: f64, scale: f64) -> Result<Sampler, DrawError> {
    plan(Dist::Gamma { shape, scale })
}

impl FittedSampler {
    /// A sampler for `family` with `params` in the documented order.
    pub fn new(family: Family, params: &[f64]) -> Result<Self, DrawError> {
        let names = param_names(family);
        if params.len() != names.len() {
            return Err(DrawError::ParamCount {
                family,
                expected: names.len(),
                got: params.len(),
            });
        }
        let check = |i: usize, requirement: &'static str, ok: fn(f64) -> bool| -> Result<f64, DrawError> {
            let value = params.get(i).copied().unwrap_or(f64::NAN);
            if value.is_finite() && ok(value) {
                Ok(value)
            } else {
                Err(DrawError::Parameter {
                    family,
                    name: names.get(i).copied().unwrap_or("?"),
                    requirement,
                    value,
                })
            }
        };
        let positive = |i| check(i, "finite and > 0", |v| v > 0.0);
        let any = |i| check(i, "finite", |_| true);
        let kind = match family {
            Family::Beta => {
                let (a, b) = (positive(0)?, positive(1)?);
                Kind::Beta {
                    x: gamma(a, 1.0)?,
                    y: gamma(b, 1.0)?,
                    p_x: a / (a + b),
                }
            }
            Family::Cauchy => Kind::Cauchy {
                location: any(0)?,
                scale: positive(1)?,
            },
            Family::ChiSquared => Kind::Plain(gamma(positive(0)? / 2.0, 2.0)?),
            Family::Exponential => Kind::Plain(plan(Dist::Exponential {
                mean: 1.0 / positive(0)?,
            })?),
            Family::F => {
                let (d1, d2) = (positive(0)?, positive(1)?);
                Kind::F {
                    numerator: gamma(d1 / 2.0, 2.0 / d1)?,
                    denominator: gamma(d2 / 2.0, 2.0 / d2)?,
                }
            }
            Family::Gamma => Kind::Plain(gamma(positive(0)?, 1.0 / positive(1)?)?),
            Family::Geometric => Kind::Plain(plan(Dist::Geometric {
                p: check(0, "in (0, 1]", |p| p > 0.0 && p <= 1.0)?,
            })?),
            Family::LogNormal => Kind::Plain(plan(Dist::Lognormal {
                shape: positive(1)?,
                scale: any(0)?.exp(),
                location: 0.0,
            })?),
            Family::NegativeBinomial => {
                let r = positive(0)?;
                let p = check(1, "in (0, 1]", |p| p > 0.0 && p <= 1.0)?;
                if p == 1.0 {
                    Kind::Constant(0.0)
                } else {
                    Kind::NegativeBinomial {
                        rate: gamma(r, (1.0 - p) / p)?,
                    }
                }
            }
            Family::Normal => Kind::Plain(plan(Dist::Normal {
                mean: any(0)?,
                sd: check(1, "finite and ≥ 0", |v| v >= 0.0)?,
            })?),
            Family::Poisson => Kind::Plain(plan(Dist::Poisson {
                mean: check(0, "finite and ≥ 0", |v| v >= 0.0)?,
            })?),
            Family::StudentT => {
                let df = positive(2)?;
                Kind::StudentT {
                    location: any(0)?,
                    scale: positive(1)?,
                    chi: gamma(df / 2.0, 2.0 / df)?,
                }
            }
            Family::Weibull => Kind::Plain(plan(Dist::Weibull {
                shape: positive(0)?,
                scale: positive(1)?,
            })?),
        };
        Ok(FittedSampler { family, kind })
    }

    /// A sampler from named parameters (any order); every name of
    /// [`param_names`] must be present.
    pub fn from_named<S: AsRef<str>>(family: Family, params: &[(S, f64)]) -> Result<Self, DrawError> {
        let values = param_names(family)
            .iter()
            .map(|&name| {
                params
                    .iter()
                    .find(|(n, _)| n.as_ref() == name)
                    .map(|&(_, v)| v)
                    .ok_or(DrawError::MissingParam { family, name })
            })
            .collect::<Result<Vec<f64>, DrawError>>()?;
        Self::new(family, &values)
    }

    /// A sampler for a fit.
    pub fn from_fit(fit: &Fit) -> Result<Self, DrawError> {
        Self::from_named(fit.family, &fit.params)
    }

    pub fn family(&self) -> Family {
        self.family
    }

    /// One draw. Always finite; integers for the discrete families.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        let x = match &self.kind {
            Kind::Plain(s) => return s.sample(rng),
            Kind::Constant(v) => return *v,
            Kind::Beta { x, y, p_x } => {
                let (a, b) = (x.sample(rng), y.sample(rng));
                let sum = a + b;
                if sum > 0.0 {
                    a / sum
                } else {
                    // Both gammas underflowed (tiny shapes): the beta is then
                    // concentrated at 0 and 1 with P(1) = α / (α + β).
                    f64::from(u8::from(rng.next_f64() < *p_x))
                }
            }
            Kind::Cauchy { location, scale } => location + scale * (std::f64::consts::PI * (rng.open01() - 0.5)).tan(),
            Kind::F { numerator, denominator } => {
                numerator.sample(rng) / denominator.sample(rng).max(f64::MIN_POSITIVE)
            }
            Kind::NegativeBinomial { rate } => {
                let lambda = rate.sample(rng);
                match plan(Dist::Poisson { mean: lambda }) {
                    Ok(poisson) => poisson.sample(rng),
                    Err(_) => 0.0,
                }
            }
            Kind::StudentT { location, scale, chi } => {
                let v = chi.sample(rng).max(f64::MIN_POSITIVE);
                location + scale * standard_normal(rng) / v.sqrt()
            }
        };
        if x.is_nan() {
            return 0.0;
        }
        x.clamp(-f64::MAX, f64::MAX)
    }
}
