//! Summary statistics of a sample, computed once and shared by every family
//! that [`select`](super::select) fits, so that each estimator starts from
//! sufficient statistics instead of rescanning the data.

use std::cell::OnceCell;

use super::{Family, FitError};

/// Largest integer below which every f64 integer is exact (2⁵³).
const EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

pub(crate) struct Sample<'a> {
    pub data: &'a [f64],
    pub n: usize,
    /// n as f64, used everywhere in the formulas.
    pub nf: f64,
    pub mean: f64,
    /// Maximum-likelihood (biased, divisor n) variance.
    pub var: f64,
    pub min: f64,
    pub max: f64,
    pub finite: bool,
    pub integer: bool,
    /// Σ ln xᵢ, when every xᵢ > 0.
    pub sum_ln: f64,
    /// Σ ln(1 − xᵢ), when every xᵢ < 1 (and > 0).
    pub sum_ln1m: f64,
    sorted: OnceCell<Vec<f64>>,
    counts: OnceCell<Vec<(u64, f64)>>,
}

impl<'a> Sample<'a> {
    /// Errors: fewer than 2 values, or all values equal (`Degenerate`).
    pub fn new(data: &'a [f64]) -> Result<Sample<'a>, FitError> {
        let n = data.len();
        if n < 2 {
            return Err(FitError::TooFewValues { needed: 2, got: n });
        }
        let nf = n as f64;
        let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
        let (mut finite, mut integer) = (true, true);
        for &x in data {
            min = min.min(x);
            max = max.max(x);
            sum += x;
            finite &= x.is_finite();
            integer &= x.fract() == 0.0 && x.abs() < EXACT_INTEGER;
        }
        if finite && min == max {
            return Err(FitError::Degenerate);
        }
        let mean = sum / nf;
        let var = data.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / nf;
        let positive = finite && min > 0.0;
        let sum_ln = if positive {
            data.iter().map(|x| x.ln()).sum()
        } else {
            f64::NAN
        };
        let sum_ln1m = if positive && max < 1.0 {
            data.iter().map(|x| (-x).ln_1p()).sum()
        } else {
            f64::NAN
        };
        Ok(Sample {
            data,
            n,
            nf,
            mean,
            var,
            min,
            max,
            finite,
            integer: integer && finite,
            sum_ln,
            sum_ln1m,
            sorted: OnceCell::new(),
            counts: OnceCell::new(),
        })
    }

    /// Mean of ln x (only meaningful after [`Sample::positive`] succeeded).
    pub fn mean_ln(&self) -> f64 {
        self.sum_ln / self.nf
    }

    pub fn finite(&self, family: Family) -> Result<(), FitError> {
        if self.finite {
            Ok(())
        } else {
            Err(FitError::Domain {
                family,
                reason: "a value is not finite",
            })
        }
    }

    /// Support x > 0.
    pub fn positive(&self, family: Family) -> Result<(), FitError> {
        self.finite(family)?;
        if self.min > 0.0 {
            Ok(())
        } else {
            Err(FitError::Domain {
                family,
                reason: "a value is not strictly positive",
            })
        }
    }

    /// Support x ≥ 0.
    pub fn non_negative(&self, family: Family) -> Result<(), FitError> {
        self.finite(family)?;
        if self.min >= 0.0 {
            Ok(())
        } else {
            Err(FitError::Domain {
                family,
                reason: "a value is negative",
            })
        }
    }

    /// Support 0 < x < 1.
    pub fn unit_interval(&self, family: Family) -> Result<(), FitError> {
        self.positive(family)?;
        if self.max < 1.0 {
            Ok(())
        } else {
            Err(FitError::Domain {
                family,
                reason: "a value is not below 1",
            })
        }
    }

    /// Support {0, 1, 2, …}.
    pub fn counts_domain(&self, family: Family) -> Result<(), FitError> {
        self.non_negative(family)?;
        if self.integer {
            Ok(())
        } else {
            Err(FitError::Domain {
                family,
                reason: "a value is not an integer",
            })
        }
    }

    /// The values in ascending order (computed on first use).
    pub fn sorted(&self) -> &[f64] {
        self.sorted.get_or_init(|| {
            let mut v = self.data.to_vec();
            v.sort_by(f64::total_cmp);
            v
        })
    }

    /// Distinct values with their multiplicities, ascending; only meaningful
    /// for count data. Discrete likelihoods are sums over this table, which
    /// is usually far shorter than the data.
    pub fn counts(&self) -> &[(u64, f64)] {
        self.counts.get_or_init(|| {
            let mut table: Vec<(u64, f64)> = Vec::new();
            for &x in self.sorted() {
                // Values are validated non-negative integers below 2⁵³ before this is used.
                let k = x as u64;
                match table.last_mut() {
                    Some((last, c)) if *last == k => *c += 1.0,
                    _ => table.push((k, 1.0)),
                }
            }
            table
        })
    }

    /// The `q` quantile of the sample (type 7, as [`crate::percentile`]).
    pub fn quantile(&self, q: f64) -> f64 {
        crate::percentile(self.sorted(), q).unwrap_or(self.mean)
    }
}

/// The log-likelihood to report: statrs' sum when it is finite, otherwise
/// our own closed-form sum (statrs' F density, for one, computes `pdf().ln()`
/// and overflows for large degrees of freedom although the log density is
/// perfectly finite).
pub(crate) fn reported_ll(statrs_sum: f64, ours: f64) -> f64 {
    if statrs_sum.is_finite() || !ours.is_finite() {
        statrs_sum
    } else {
        ours
    }
}
