//! A sample as the estimators see it: exact summary statistics and the data
//! as weighted points, computed once and shared by every family that
//! [`select`](super::select) fits.
//!
//! The points are the distinct values with their multiplicities, which is
//! the data exactly (values read from text have few decimals, so this is
//! often far shorter than the data). A sample built with a point budget
//! ([`Sample::sketched`]) replaces a longer table by a sketch: the sorted
//! data cut into bins of equal width on the arcsine scale
//! q ↦ asin(2q − 1), each bin standing for its middle value with the bin's
//! count as weight. Bins are narrow at both tails (a few single values
//! there) and wide in the middle, where the density varies slowly, so
//! likelihood sums over the sketch stay close to those over the data while
//! costing O(points), not O(n). The statistics the closed-form estimators
//! use (mean, variance, Σ ln x, the variance of ln x, Σ ln(1 − x)) are
//! always those of the whole data.

use super::{Family, FitError};

/// Largest integer below which every f64 integer is exact (2⁵³).
const EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

pub(crate) struct Sample {
    /// (value, weight) in ascending order of value, weights summing to n.
    pub points: Vec<(f64, f64)>,
    /// The points are the data (distinct values and counts), not a sketch.
    pub exact: bool,
    /// With a sketch, the data's distinct values and counts, to score the
    /// fits on (`rescore.rs`); `None` when `points` are the data.
    pub exact_table: Option<Vec<(f64, f64)>>,
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
    /// Σ (ln xᵢ − mean ln x)² / n, when every xᵢ > 0.
    pub var_ln: f64,
    /// Σ ln(1 − xᵢ), when every xᵢ < 1 (and > 0).
    pub sum_ln1m: f64,
    /// Σ w ln x over the points (`sum_ln` when exact): the iterative
    /// estimators use this one, so that every data term of their
    /// likelihood comes from the same points. Mixing the exact sum with
    /// sums over a sketch does not cancel where the likelihood is a
    /// difference of large terms (F with a huge d₁).
    pub points_sum_ln: f64,
    /// Σ w x / n over the points (`mean` when exact), for the same reason.
    pub points_mean: f64,
    /// Type-7 quartiles of the data (q = ¼, ½, ¾).
    quartiles: [f64; 3],
}

impl Sample {
    /// The sample of `data` in any order, exactly.
    /// Errors: fewer than 2 values, or all values equal (`Degenerate`).
    pub fn new(data: &[f64]) -> Result<Sample, FitError> {
        let mut sorted = data.to_vec();
        sorted.sort_by(f64::total_cmp);
        Sample::sketched(&sorted, usize::MAX)
    }

    /// The sample of ascending `sorted` data, as a sketch of at most
    /// `max_points` points when it has more distinct values than that.
    pub fn sketched(sorted: &[f64], max_points: usize) -> Result<Sample, FitError> {
        let n = sorted.len();
        if n < 2 {
            return Err(FitError::TooFewValues { needed: 2, got: n });
        }
        Sample::from_distinct(distinct(sorted), n, max_points)
    }

    /// The sample of distinct values with their counts (any order), exactly.
    pub fn from_table(table: &[(f64, u64)]) -> Result<Sample, FitError> {
        let mut table: Vec<(f64, f64)> = table.iter().filter(|e| e.1 > 0).map(|&(x, c)| (x, c as f64)).collect();
        table.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = table.iter().map(|e| e.1).sum::<f64>() as usize;
        if n < 2 {
            return Err(FitError::TooFewValues { needed: 2, got: n });
        }
        Sample::from_distinct(table, n, usize::MAX)
    }

    /// `table`: distinct values ascending with their counts, `n` in all.
    fn from_distinct(table: Vec<(f64, f64)>, n: usize, max_points: usize) -> Result<Sample, FitError> {
        let finite = table.iter().all(|(x, _)| x.is_finite());
        let (min, max) = (table[0].0, table[table.len() - 1].0);
        if finite && min == max {
            return Err(FitError::Degenerate);
        }
        let integer = finite && table.iter().all(|(x, _)| x.fract() == 0.0 && x.abs() < EXACT_INTEGER);
        let nf = n as f64;
        let mean = table.iter().map(|(x, w)| w * x).sum::<f64>() / nf;
        let var = table.iter().map(|(x, w)| w * (x - mean) * (x - mean)).sum::<f64>() / nf;
        let positive = finite && min > 0.0;
        let (sum_ln, var_ln) = if positive {
            log_moments(&table, nf)
        } else {
            (f64::NAN, f64::NAN)
        };
        let sum_ln1m = if positive && max < 1.0 {
            table.iter().map(|(x, w)| w * (-x).ln_1p()).sum()
        } else {
            f64::NAN
        };
        let quartiles = [0.25, 0.5, 0.75].map(|q| table_percentile(&table, n, q));
        let exact = table.len() <= max_points;
        let (points, exact_table) = if exact {
            (table, None)
        } else {
            (sketch(&table, n, max_points), Some(table))
        };
        let points_mean = if exact {
            mean
        } else {
            points.iter().map(|(x, w)| w * x).sum::<f64>() / nf
        };
        let points_sum_ln = if exact || !positive {
            sum_ln
        } else {
            points.iter().map(|(x, w)| w * x.ln()).sum()
        };
        Ok(Sample {
            points,
            exact,
            exact_table,
            n,
            nf,
            mean,
            var,
            min,
            max,
            finite,
            integer,
            sum_ln,
            var_ln,
            sum_ln1m,
            points_sum_ln,
            points_mean,
            quartiles,
        })
    }

    /// Mean of ln x (only meaningful after [`Sample::positive`] succeeded).
    pub fn mean_ln(&self) -> f64 {
        self.sum_ln / self.nf
    }

    /// Σ w·f(x) over the points: Σ f(xᵢ) over the data when exact.
    pub fn sum(&self, f: impl Fn(f64) -> f64) -> f64 {
        self.points.iter().map(|&(x, w)| w * f(x)).sum()
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

    /// The points as counts k with weights; only meaningful for count data
    /// (validated non-negative integers below 2⁵³, and a sketch of integers
    /// stands for integers).
    pub fn counts(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        self.points.iter().map(|&(x, w)| (x as u64, w))
    }

    /// The `q` quantile of the data for q = ¼, ½ or ¾ (type 7, as
    /// [`crate::percentile`]).
    pub fn quartile(&self, quarter: usize) -> f64 {
        self.quartiles[quarter - 1]
    }

    /// The log-likelihood to report, from statrs' sum over the points
    /// (computed only when it is used) and our own (closed-form or
    /// optimised) value. On exact points statrs' sum is preferred when it
    /// is finite, so the density definitions are statrs' (but the F's,
    /// whose `pdf().ln()` overflows for large degrees of freedom: the F fit
    /// passes its own log density, `heavy::f_ln_pdf`). On a sketch our
    /// value is preferred: the closed forms use the exact statistics of
    /// the whole data, where statrs' sum would be the sketch's.
    pub fn reported_ll(&self, statrs_sum: impl FnOnce() -> f64, ours: f64) -> f64 {
        // On a sketch statrs' sum is only the fallback: not computed unless needed.
        if !self.exact && ours.is_finite() {
            return ours;
        }
        let statrs_sum = statrs_sum();
        if statrs_sum.is_finite() || !ours.is_finite() {
            statrs_sum
        } else {
            ours
        }
    }
}

/// The type-7 `q` quantile ([`crate::percentile`]) of the data a sorted
/// table of distinct values and counts stands for.
fn table_percentile(table: &[(f64, f64)], n: usize, q: f64) -> f64 {
    let h = (n - 1) as f64 * q;
    let rank = h.floor() as usize;
    // The value at a 0-based rank of the data.
    let at = |r: usize| {
        let mut end = 0.0;
        for &(x, c) in table {
            end += c;
            if (r as f64) < end {
                return x;
            }
        }
        table[table.len() - 1].0
    };
    let (lower, upper) = (at(rank), at((rank + 1).min(n - 1)));
    let fraction = h - rank as f64;
    if fraction == 0.0 {
        lower
    } else {
        lower + fraction * (upper - lower)
    }
}

/// Distinct values of sorted data with their multiplicities.
pub(crate) fn distinct(sorted: &[f64]) -> Vec<(f64, f64)> {
    let mut table: Vec<(f64, f64)> = Vec::new();
    for &x in sorted {
        match table.last_mut() {
            // `total_cmp` equality, so NaNs group instead of each standing alone.
            Some((last, c)) if last.total_cmp(&x).is_eq() => *c += 1.0,
            _ => table.push((x, 1.0)),
        }
    }
    table
}

/// Σ ln x and the variance of ln x over a weighted table of positive
/// values. The squares are taken about the ln of the median point, so the
/// variance does not cancel when ln x is large and its spread tiny.
fn log_moments(table: &[(f64, f64)], nf: f64) -> (f64, f64) {
    let shift = table[table.len() / 2].0.ln();
    let (mut s1, mut s2) = (0.0, 0.0);
    for &(x, w) in table {
        let d = x.ln() - shift;
        s1 += w * d;
        s2 += w * d * d;
    }
    let m = s1 / nf;
    (nf * shift + s1, (s2 / nf - m * m).max(0.0))
}

/// At most `max_points` points standing for the weighted `table` (n values
/// in all): bin j of the sorted data holds the ranks [n·q_j, n·q_{j+1}) with
/// q_j = (1 + sin(π (j/m − ½))) / 2, and stands for the value at its middle
/// rank, weighted by its size, except that the first and last bins are the
/// minimum and the maximum alone (extremes weigh most in heavy-tailed
/// likelihoods). Empty bins are dropped and equal neighbours merged.
fn sketch(table: &[(f64, f64)], n: usize, max_points: usize) -> Vec<(f64, f64)> {
    let m = max_points.max(2);
    let bound = |j: usize| {
        let q = 0.5 * (1.0 + (std::f64::consts::PI * (j as f64 / m as f64 - 0.5)).sin());
        ((n as f64 * q).round() as usize).min(n)
    };
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(m);
    // Walk the table once: `end` is the rank just past entry `i`.
    let (mut i, mut end) = (0, table[0].1 as usize);
    let mut lo = 0;
    for j in 1..=m {
        let hi = match j {
            1 => 1,
            _ if j == m => n,
            _ if j == m - 1 => n - 1,
            _ => bound(j).clamp(1, n - 1),
        };
        if hi <= lo {
            continue;
        }
        let middle = lo + (hi - lo - 1) / 2;
        while end <= middle && i + 1 < table.len() {
            i += 1;
            end += table[i].1 as usize;
        }
        let (x, w) = (table[i].0, (hi - lo) as f64);
        match out.last_mut() {
            Some((last, c)) if *last == x => *c += w,
            _ => out.push((x, w)),
        }
        lo = hi;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_samples_are_the_distinct_values() {
        let s = Sample::new(&[3.0, 1.0, 3.0, 2.0, 3.0]).unwrap();
        assert!(s.exact);
        assert_eq!(s.points, vec![(1.0, 1.0), (2.0, 1.0), (3.0, 3.0)]);
        assert_eq!(s.n, 5);
        assert!((s.mean - 2.4).abs() < 1e-15);
        assert_eq!(s.quartile(2), 3.0);
    }

    #[test]
    fn a_table_is_the_data_it_counts() {
        let data = [3.0, 1.0, 3.0, 2.0, 3.0, 7.0];
        let from_data = Sample::new(&data).unwrap();
        let from_table = Sample::from_table(&[(7.0, 1), (3.0, 3), (1.0, 1), (2.0, 1), (9.0, 0)]).unwrap();
        assert_eq!(from_table.points, from_data.points);
        assert_eq!(
            (from_table.n, from_table.mean, from_table.var),
            (from_data.n, from_data.mean, from_data.var)
        );
        // Quartiles of the counts are those of the data they stand for (type 7).
        let sorted = [1.0, 2.0, 3.0, 3.0, 3.0, 7.0];
        for quarter in 1..=3 {
            let want = crate::percentile(&sorted, quarter as f64 / 4.0).unwrap();
            assert_eq!(from_table.quartile(quarter), want);
            assert_eq!(from_data.quartile(quarter), want);
        }
    }

    #[test]
    fn a_sketch_keeps_the_weight_the_tails_and_the_order() {
        let sorted: Vec<f64> = (0..100_000).map(f64::from).collect();
        let s = Sample::sketched(&sorted, 256).unwrap();
        assert!(!s.exact);
        assert!(s.points.len() <= 256 && s.points.len() > 200, "{}", s.points.len());
        assert_eq!(s.points.iter().map(|p| p.1).sum::<f64>(), 100_000.0);
        assert!(s.points.windows(2).all(|w| w[0].0 < w[1].0));
        // Both extremes stand for themselves; the statistics are the data's.
        assert_eq!(s.points[0], (0.0, 1.0));
        assert_eq!(s.points[s.points.len() - 1], (99_999.0, 1.0));
        assert_eq!(s.mean, 49_999.5);
        assert_eq!((s.min, s.max), (0.0, 99_999.0));
    }

    #[test]
    fn a_sketch_of_few_distinct_values_is_exact() {
        let sorted: Vec<f64> = (0..10_000).map(|i| f64::from(i % 7)).collect::<Vec<_>>();
        let mut sorted = sorted;
        sorted.sort_by(f64::total_cmp);
        let s = Sample::sketched(&sorted, 16).unwrap();
        assert!(s.exact);
        assert_eq!(s.points.len(), 7);
    }

    #[test]
    fn log_variance_does_not_cancel() {
        // ln x ≈ 13.8 with a spread of 1e-9: the naive Σ ln² − n·mean² loses every digit.
        let base = 1e6;
        let data = [base, base * (1.0 + 1e-9), base * (1.0 + 2e-9)];
        let s = Sample::new(&data).unwrap();
        let want = 2.0 / 3.0 * 1e-18;
        assert!((s.var_ln - want).abs() < 1e-3 * want, "{}", s.var_ln);
    }
}
