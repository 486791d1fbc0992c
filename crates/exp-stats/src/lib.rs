//! Statistics: seeded sampling of every plan distribution (`rng`, `sample`),
//! goodness of fit (`ks`), maximum-likelihood fitting with selection by AIC
//! (`fit`), and over measured samples: percentiles for run summaries,
//! confidence intervals that name their method (`intervals`), and two
//! samples compared for a difference or equivalence (`two_sample`).
//!
//! Everything here is a pure function of its input; `None` means "not
//! defined for this input" (too few samples, a probability outside its
//! range), never an error worth a type of its own.

mod alias;
pub mod alias_index;
pub mod bootstrap;
pub mod fit;
pub mod intervals;
pub mod kendall;
pub mod ks;
pub mod rng;
pub mod sampler;
pub mod two_sample;

pub use alias_index::{AliasError, AliasIndex};
pub use fit::{fit, select, Family, Fit, FitError, Selection};
pub use fit::{DrawError, FittedSampler};
pub use intervals::{center, mean_interval, median_has_interval, quantile_interval, Bounds, Estimate, IntervalMethod};
pub use kendall::{kendall_tau, Kendall};
pub use ks::{kolmogorov_survival, ks_one_sample, ks_one_sample_with, ks_two_sample, KsError, KsResult};
pub use rng::Rng;
pub use sampler::{SampleError, Sampler};
pub use two_sample::{compare as compare_samples, welch, Comparison, Verdict, Welch};

use statrs::distribution::{ContinuousCDF, StudentsT};

/// A two-sided confidence interval for a mean: `mean ± half_width`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub half_width: f64,
    /// Number of samples the interval was computed from.
    pub n: usize,
}

impl Interval {
    pub fn low(&self) -> f64 {
        self.mean - self.half_width
    }

    pub fn high(&self) -> f64 {
        self.mean + self.half_width
    }
}

/// The two-sided Student's t confidence interval of the mean of `samples`.
///
/// With n samples x₁…xₙ:
///
/// ```text
/// mean       = (Σ xᵢ) / n
/// s²         = Σ (xᵢ − mean)² / (n − 1)          (unbiased sample variance)
/// half_width = t(1 − (1 − confidence) / 2; n − 1) · s / √n
/// ```
///
/// where t(p; ν) is the inverse CDF of Student's t distribution with ν
/// degrees of freedom (for 95 % and n = 10: t(0.975; 9) ≈ 2.262157).
///
/// Returns `None` for fewer than 2 samples (the variance is undefined), for
/// a `confidence` outside the open interval (0, 1), or when a sample is not
/// finite (the mean would be meaningless).
pub fn mean_ci(samples: &[f64], confidence: f64) -> Option<Interval> {
    let n = samples.len();
    // `!(0 < c < 1)` also rejects NaN, which statrs' inverse CDF would assert on.
    if n < 2 || !(confidence > 0.0 && confidence < 1.0) || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let mean = samples.iter().sum::<f64>() / nf;
    let variance = samples.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (nf - 1.0);
    let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, nf - 1.0)?;
    Some(Interval {
        mean,
        half_width: t * (variance / nf).sqrt(),
        n,
    })
}

/// The `p` quantile of Student's t distribution with `freedom` degrees of
/// freedom: the x with P(T ≤ x) = p. `None` unless 0 < p < 1 and freedom > 0.
pub fn t_quantile(p: f64, freedom: f64) -> Option<f64> {
    if !(p > 0.0 && p < 1.0) {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, freedom).ok()?;
    Some(t.inverse_cdf(p))
}

/// The `q` quantile (0 ≤ q ≤ 1, so 0.95 for p95) of already sorted values, by
/// linear interpolation between the two nearest ranks (Hyndman & Fan type 7,
/// the default of NumPy, R and spreadsheets):
///
/// ```text
/// h = (n − 1) · q,   k = ⌊h⌋
/// Q(q) = x[k] + (h − k) · (x[k+1] − x[k])        (x 0-indexed, ascending)
/// ```
///
/// So q = 0 is the minimum, q = 1 the maximum and q = 0.5 the usual median.
/// Returns `None` for an empty slice or a `q` outside [0, 1]. The caller
/// sorts (ascending) and removes NaNs; unsorted input gives a meaningless
/// but finite answer, never a panic.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let k = h.floor();
    // `k` is in 0..=n-1 because 0 ≤ q ≤ 1, so these conversions are exact.
    let lower = sorted.get(k as usize).copied()?;
    let upper = sorted.get(k as usize + 1).copied().unwrap_or(lower);
    let fraction = h - k;
    if fraction == 0.0 {
        // Exact rank: avoids `0 · (upper − lower)` turning an infinite neighbour into NaN.
        return Some(lower);
    }
    Some(lower + fraction * (upper - lower))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Reference values from R: qt(0.975, 9), qt(0.995, 4), qt(0.95, 1), qt(0.025, 9).
        let cases = [
            (0.975, 9.0, 2.262_157_162_740_991),
            (0.995, 4.0, 4.604_094_871_415_897),
            (0.95, 1.0, 6.313_751_514_675_043),
            (0.025, 9.0, -2.262_157_162_740_991),
        ];
        for (p, df, expected) in cases {
            let t = t_quantile(p, df).unwrap();
            assert!(close(t, expected, 1e-9), "t({p}; {df}) = {t}, expected {expected}");
        }
        assert_eq!(t_quantile(1.0, 9.0), None);
        assert_eq!(t_quantile(0.5, 0.0), None);
        assert_eq!(t_quantile(f64::NAN, 3.0), None);
    }

    #[test]
    fn mean_ci_of_known_samples() {
        // 1..=10: mean 5.5, s² = 55/6, s/√n = 0.957427…, half width = 2.262157… · that.
        let samples: Vec<f64> = (1..=10).map(f64::from).collect();
        let ci = mean_ci(&samples, 0.95).unwrap();
        assert_eq!(ci.n, 10);
        assert!(close(ci.mean, 5.5, 1e-12));
        let expected = 2.262_157_162_740_991 * (55.0f64 / 6.0 / 10.0).sqrt();
        assert!(close(ci.half_width, expected, 1e-9), "{}", ci.half_width);
        assert!(close(ci.half_width, 2.165_850_589_6, 1e-9));
        assert!(close(ci.low(), 5.5 - expected, 1e-9));
        assert!(close(ci.high(), 5.5 + expected, 1e-9));
    }

    #[test]
    fn mean_ci_edge_cases() {
        assert_eq!(mean_ci(&[], 0.95), None);
        assert_eq!(mean_ci(&[1.0], 0.95), None);
        assert_eq!(mean_ci(&[1.0, 2.0], 0.0), None);
        assert_eq!(mean_ci(&[1.0, 2.0], 1.0), None);
        assert_eq!(mean_ci(&[1.0, 2.0], f64::NAN), None);
        assert_eq!(mean_ci(&[1.0, f64::NAN], 0.95), None);
        assert_eq!(mean_ci(&[1.0, f64::INFINITY], 0.95), None);
        let constant = mean_ci(&[3.0, 3.0, 3.0], 0.99).unwrap();
        assert_eq!((constant.mean, constant.half_width), (3.0, 0.0));
        // Two samples 0 and 2: ν = 1, s = √2, s / √n = 1, so the half width is t(0.975; 1) = 12.7062….
        let two = mean_ci(&[0.0, 2.0], 0.95).unwrap();
        assert!(close(two.half_width, 12.706_204_736_174_7, 1e-8));
    }

    #[test]
    fn percentiles_interpolate_linearly() {
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&xs, 0.0), Some(1.0));
        assert_eq!(percentile(&xs, 1.0), Some(5.0));
        assert_eq!(percentile(&xs, 0.5), Some(3.0));
        assert_eq!(percentile(&xs, 0.25), Some(2.0));
        // h = 4 · 0.95 = 3.8 → 4 + 0.8 · 1 (NumPy: np.percentile([1,2,3,4,5], 95) = 4.8).
        assert!(close(percentile(&xs, 0.95).unwrap(), 4.8, 1e-12));
        // Even count: the median is the mean of the middle two.
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
        // 0..=100: p99 is exactly 99.
        let hundred: Vec<f64> = (0..=100).map(f64::from).collect();
        assert!(close(percentile(&hundred, 0.99).unwrap(), 99.0, 1e-9));
        assert_eq!(percentile(&[7.0], 0.3), Some(7.0));
    }

    #[test]
    fn percentile_edge_cases() {
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[1.0], -0.1), None);
        assert_eq!(percentile(&[1.0], 1.1), None);
        assert_eq!(percentile(&[1.0], f64::NAN), None);
        assert_eq!(percentile(&[1.0, f64::INFINITY], 0.0), Some(1.0));
        assert_eq!(percentile(&[1.0, f64::INFINITY], 1.0), Some(f64::INFINITY));
    }
}
