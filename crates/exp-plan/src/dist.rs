use serde::{Deserialize, Serialize};

/// The unit a distribution's values are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Ns,
    Bytes,
    BitPerS,
    PerS,
    Ratio,
    /// Dimensionless: counts and plain numbers.
    Count,
}

/// A distribution with the unit of its values. Parameters are `f64` in the
/// unit's base (a Pareto median of 100 ms has scale 100e6 / 2^(1/shape) ns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistValue {
    pub unit: Unit,
    #[serde(flatten)]
    pub dist: Dist,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum Dist {
    Constant {
        value: f64,
    },
    Uniform {
        min: f64,
        max: f64,
    },
    Normal {
        mean: f64,
        sd: f64,
    },
    /// `location + scale · exp(shape · Z)`, Z standard normal (scipy's lognorm).
    Lognormal {
        shape: f64,
        scale: f64,
        location: f64,
    },
    Exponential {
        mean: f64,
    },
    /// Pareto type I: support `[scale, ∞)`, median `scale · 2^(1/shape)`.
    Pareto {
        shape: f64,
        scale: f64,
    },
    Weibull {
        shape: f64,
        scale: f64,
    },
    Gamma {
        shape: f64,
        scale: f64,
    },
    Poisson {
        mean: f64,
    },
    /// Failures before the first success, support `{0, 1, 2, …}`.
    Geometric {
        p: f64,
    },
    /// Resampling of the values read from `file` at compile time.
    Empirical {
        file: String,
        sha256: String,
        values: Vec<f64>,
    },
}

impl Dist {
    /// The shape parameter of the families that have one (lognormal,
    /// Pareto, Weibull, gamma), which the language bounds to `SHAPE_RANGE`.
    pub fn shape(&self) -> Option<f64> {
        match self {
            Dist::Lognormal { shape, .. }
            | Dist::Pareto { shape, .. }
            | Dist::Weibull { shape, .. }
            | Dist::Gamma { shape, .. } => Some(*shape),
            _ => None,
        }
    }
}
