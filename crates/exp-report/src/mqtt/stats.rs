//! Order statistics of measured values, with the project's one percentile
//! definition ([`exp_stats::percentile`]: linear between ranks).

use serde::{Deserialize, Serialize};

/// The percentages at which [`Quantiles::cdf`] gives the value.
pub const CDF_PERCENTS: [f64; 10] = [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9];

/// Quantiles of one measured quantity (ns for latencies and lateness).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub n: u64,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    /// The value at each of [`CDF_PERCENTS`]: P(X ≤ value) ≈ percent / 100.
    pub cdf: Vec<CdfPoint>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CdfPoint {
    pub percent: f64,
    pub value: f64,
}

impl Quantiles {
    /// `None` when there are no values. Sorts `values` in place; NaNs are
    /// left out (the tables hold integers, so there are none in practice).
    pub(crate) fn of(values: &mut Vec<f64>) -> Option<Quantiles> {
        values.retain(|v| !v.is_nan());
        values.sort_unstable_by(f64::total_cmp);
        let q = |q: f64| exp_stats::percentile(values, q);
        Some(Quantiles {
            n: values.len() as u64,
            min: *values.first()?,
            mean: mean(values)?,
            p50: q(0.50)?,
            p90: q(0.90)?,
            p95: q(0.95)?,
            p99: q(0.99)?,
            max: *values.last()?,
            cdf: CDF_PERCENTS
                .iter()
                .filter_map(|&percent| q(percent / 100.0).map(|value| CdfPoint { percent, value }))
                .collect(),
        })
    }
}

pub(crate) fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The sample standard deviation (n − 1 in the denominator); `None` below 2 values.
pub(crate) fn sample_sd(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    let squares: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    Some((squares / (values.len() - 1) as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_ranks() {
        let mut values: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let q = Quantiles::of(&mut values).unwrap();
        assert_eq!((q.n, q.min, q.max, q.mean, q.p50), (100, 1.0, 100.0, 50.5, 50.5));
        // h = 99 · q: p90 = 90.1, p99 = 99.01, p99.9 = 99.901.
        assert!((q.p90 - 90.1).abs() < 1e-9 && (q.p99 - 99.01).abs() < 1e-9);
        assert_eq!(q.cdf.len(), CDF_PERCENTS.len());
        assert!((q.cdf[9].value - 99.901).abs() < 1e-9);
        assert_eq!(
            q.cdf[0],
            CdfPoint {
                percent: 1.0,
                value: 1.99
            }
        );
        assert_eq!(Quantiles::of(&mut Vec::new()), None);
    }

    #[test]
    fn standard_deviation() {
        assert_eq!(sample_sd(&[5.0]), None);
        let sd = sample_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }
}
