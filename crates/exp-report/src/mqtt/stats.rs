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
        Quantiles::of_sorted(values)
    }

    /// Of the values of every group (each sorted in place) together, without
    /// putting them together: each rank is found by bisection over the
    /// sorted groups.
    pub(crate) fn of_groups(groups: &mut [Vec<f64>]) -> Option<Quantiles> {
        for group in groups.iter_mut() {
            group.retain(|v| !v.is_nan());
            group.sort_unstable_by(f64::total_cmp);
        }
        let groups: Vec<&[f64]> = groups.iter().map(Vec::as_slice).filter(|g| !g.is_empty()).collect();
        let n = groups.iter().map(|g| g.len()).sum();
        let sum = groups.iter().flat_map(|g| g.iter()).sum();
        Quantiles::of_ranks(n, sum, |rank| nth_of_groups(&groups, rank))
    }

    /// `values` sorted, without NaN.
    fn of_sorted(values: &[f64]) -> Option<Quantiles> {
        Quantiles::of_ranks(values.len(), values.iter().sum(), |rank| values[rank])
    }

    /// From `n` values summing to `sum`, the value of each rank (0-based,
    /// ascending) given by `nth`; percentiles as [`exp_stats::percentile`]
    /// (linear between ranks).
    fn of_ranks(n: usize, sum: f64, nth: impl Fn(usize) -> f64) -> Option<Quantiles> {
        let last = n.checked_sub(1)?;
        let q = |q: f64| {
            let h = last as f64 * q;
            let k = h.floor();
            // 0 ≤ k ≤ n − 1 because 0 ≤ q ≤ 1.
            let lower = nth(k as usize);
            let fraction = h - k;
            if fraction == 0.0 {
                // Exact rank: an infinite neighbour must not turn it into NaN.
                return lower;
            }
            let upper = if (k as usize) < last {
                nth(k as usize + 1)
            } else {
                lower
            };
            lower + fraction * (upper - lower)
        };
        Some(Quantiles {
            n: n as u64,
            min: nth(0),
            mean: sum / n as f64,
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            max: nth(last),
            cdf: CDF_PERCENTS
                .iter()
                .map(|&percent| CdfPoint {
                    percent,
                    value: q(percent / 100.0),
                })
                .collect(),
        })
    }
}

/// The value of `rank` (0-based) in the union of the sorted, non-empty
/// `groups`: the least value with more than `rank` values at or below it,
/// found by bisection over the floats' total order.
fn nth_of_groups(groups: &[&[f64]], rank: usize) -> f64 {
    // `f64::total_cmp`'s key: an involution from the floats' bits to
    // integers in the same order.
    let key = |bits: i64| bits ^ (((bits >> 63) as u64) >> 1) as i64;
    let value = |k: i64| f64::from_bits(key(k) as u64);
    let at_or_below = |v: f64| -> usize {
        groups
            .iter()
            .map(|g| g.partition_point(|x| x.total_cmp(&v).is_le()))
            .sum()
    };
    let ends = |pick: fn(&[f64]) -> f64| groups.iter().map(move |g| key(pick(g).to_bits() as i64));
    let mut lo = ends(|g| g[0]).min().unwrap_or(0);
    let mut hi = ends(|g| g[g.len() - 1]).max().unwrap_or(0);
    // The answer's key is in lo..=hi.
    while lo < hi {
        // Rounded down; as i128, because hi − lo can exceed i64::MAX.
        let mid = ((i128::from(lo) + i128::from(hi)).div_euclid(2)) as i64;
        if at_or_below(value(mid)) > rank {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    value(lo)
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
    fn groups_merge_into_the_quantiles_of_their_union() {
        let mut rng = exp_stats::Rng::new(3);
        let mut groups: Vec<Vec<f64>> = (0..5)
            .map(|g| (0..g * 37).map(|_| (rng.next_f64() * 100.0).floor()).collect())
            .collect();
        let mut all: Vec<f64> = groups.concat();
        let merged = Quantiles::of_groups(&mut groups);
        assert_eq!(merged, Quantiles::of(&mut all));
        // Every rank, with negative values, zeros of both signs and infinities.
        let mut groups = vec![
            vec![-1.5, 0.0, 2.0, f64::INFINITY],
            vec![-0.0, 2.0, 7.25],
            vec![f64::NEG_INFINITY],
        ];
        let mut all: Vec<f64> = groups.concat();
        all.sort_unstable_by(f64::total_cmp);
        for group in &mut groups {
            group.sort_unstable_by(f64::total_cmp);
        }
        let slices: Vec<&[f64]> = groups.iter().map(Vec::as_slice).collect();
        for (rank, value) in all.iter().enumerate() {
            assert_eq!(nth_of_groups(&slices, rank).to_bits(), value.to_bits(), "rank {rank}");
        }
        assert_eq!(Quantiles::of_groups(&mut [Vec::new(), Vec::new()]), None);
    }

    #[test]
    fn standard_deviation() {
        assert_eq!(sample_sd(&[5.0]), None);
        let sd = sample_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }
}
