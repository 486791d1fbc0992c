//! Confidence intervals over repetitions (or rows) of a measured metric,
//! each naming its method, as every number a user sees must.
//!
//! - [`quantile_interval`]: a median or percentile with the
//!   distribution-free interval between two order statistics, whose ranks
//!   come from the binomial distribution (exact, no assumption about the
//!   metric's distribution; Hoefler & Belli, SC 2015, ask for these). The
//!   same ranks as SciPy's `quantile_test(...).confidence_interval()`.
//! - [`mean_interval`]: a mean with Student's t interval, for metrics whose
//!   mean is what a study wants (counts, throughputs).
//!
//! Both keep to the metric's physical [`Bounds`]: the order-statistic
//! interval lies between measured values, so inside them by construction;
//! the t interval is intersected with them (a confidence set cut to the
//! parameter's possible values keeps its coverage), so a latency's interval
//! never reaches below 0.

use statrs::distribution::{Binomial, DiscreteCDF};

use crate::{mean_ci, percentile};

/// How an interval was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalMethod {
    /// Student's t interval of the mean.
    StudentT,
    /// Between two order statistics, ranks from Binomial(n, q): distribution-free.
    OrderStatistics,
}

impl IntervalMethod {
    /// Its name in captions, JSON and the Methods paragraph.
    pub fn name(self) -> &'static str {
        match self {
            IntervalMethod::StudentT => "Student's t interval of the mean",
            IntervalMethod::OrderStatistics => "distribution-free order-statistic interval (exact binomial ranks)",
        }
    }

    /// A short key for JSON and tables (`t`, `order-statistics`).
    pub fn key(self) -> &'static str {
        match self {
            IntervalMethod::StudentT => "t",
            IntervalMethod::OrderStatistics => "order-statistics",
        }
    }
}

/// The values a metric can physically take (a latency `[0, ∞)`, a ratio `[0, 1]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub low: f64,
    pub high: f64,
}

impl Bounds {
    pub const ANY: Bounds = Bounds {
        low: f64::NEG_INFINITY,
        high: f64::INFINITY,
    };
    pub const NON_NEGATIVE: Bounds = Bounds {
        low: 0.0,
        high: f64::INFINITY,
    };
    pub const RATIO: Bounds = Bounds { low: 0.0, high: 1.0 };
}

/// An estimate and, where the samples allow one, its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The mean, or the quantile (type 7, as [`percentile`]).
    pub value: f64,
    /// The interval's ends; an end is `None` when too few samples give
    /// none at this confidence (a 95 % interval of p99 needs 300 samples
    /// for its upper end, but 100 give its lower).
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub confidence: f64,
    pub n: usize,
    pub method: IntervalMethod,
}

impl Estimate {
    /// Both ends, when the samples give both.
    pub fn interval(&self) -> Option<(f64, f64)> {
        self.low.zip(self.high)
    }

    /// The interval's full width relative to |value| (`None` without an
    /// interval or for a zero value): what `repeat until` compares.
    pub fn relative_width(&self) -> Option<f64> {
        let (low, high) = self.interval()?;
        (self.value != 0.0 && self.value.is_finite()).then(|| (high - low) / self.value.abs())
    }
}

/// The `q` quantile of `samples` (any order, finite values) with its
/// two-sided distribution-free interval at `confidence`: the order
/// statistics x₍ₗ₎ and x₍ᵤ₎ (1-based, ascending) with
///
/// ```text
/// α = (1 − confidence) / 2
/// l = min { k : P(B ≤ k) ≥ α }             B ~ Binomial(n, q)
/// u = min { k : P(B > k) ≤ α } + 1
/// ```
///
/// so P(x₍ₗ₎ ≤ Q(q) ≤ x₍ᵤ₎) ≥ confidence for any continuous distribution.
/// An end whose rank falls outside 1..=n (too few samples: a 95 % interval
/// of the median needs 6) is `None`.
/// `None` for no samples, a non-finite one, or q or confidence outside (0, 1).
pub fn quantile_interval(samples: &[f64], q: f64, confidence: f64) -> Option<Estimate> {
    if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) || !in_open_unit(q) || !in_open_unit(confidence) {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let (l, u) = order_statistic_ranks(n as u64, q, confidence)?;
    let at = |rank: Option<u64>| rank.map(|r| sorted[r as usize - 1]);
    Some(Estimate {
        value: percentile(&sorted, q)?,
        low: at(l),
        high: at(u),
        confidence,
        n,
        method: IntervalMethod::OrderStatistics,
    })
}

/// The 1-based ranks (l, u) of [`quantile_interval`], each `None` when it
/// falls outside 1..=n; `None` for a q or n Binomial refuses.
pub fn order_statistic_ranks(n: u64, q: f64, confidence: f64) -> Option<(Option<u64>, Option<u64>)> {
    let binomial = Binomial::new(q, n).ok()?;
    let alpha = (1.0 - confidence) / 2.0;
    // Smallest k with cdf(k) ≥ α (SciPy's `ppf`); as a 1-based rank, k.
    let l = smallest(n, |k| binomial.cdf(k) >= alpha).filter(|&k| k >= 1);
    // Smallest k with sf(k) ≤ α (SciPy's `isf`); as a 1-based rank, k + 1.
    let u = smallest(n, |k| binomial.sf(k) <= alpha)
        .map(|k| k + 1)
        .filter(|&r| r <= n);
    Some((l, u))
}

/// The smallest k in 0..=n for which `holds` (monotone: false then true).
fn smallest(n: u64, holds: impl Fn(u64) -> bool) -> Option<u64> {
    if !holds(n) {
        return None;
    }
    let (mut low, mut high) = (0, n);
    while low < high {
        let mid = low + (high - low) / 2;
        if holds(mid) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    Some(low)
}

/// The mean of `samples` with Student's t interval at `confidence`,
/// intersected with `bounds`. `None` as [`mean_ci`] (fewer than 2 samples,
/// a non-finite one, confidence outside (0, 1)).
pub fn mean_interval(samples: &[f64], confidence: f64, bounds: Bounds) -> Option<Estimate> {
    let ci = mean_ci(samples, confidence)?;
    let low = ci.low().max(bounds.low);
    let high = ci.high().min(bounds.high);
    Some(Estimate {
        value: ci.mean,
        low: Some(low.min(high)),
        high: Some(high.max(low)),
        confidence,
        n: ci.n,
        method: IntervalMethod::StudentT,
    })
}

/// Whether `n` values give the median a two-sided interval at `confidence`.
pub fn median_has_interval(n: usize, confidence: f64) -> bool {
    order_statistic_ranks(n as u64, 0.5, confidence).is_some_and(|(low, high)| low.is_some() && high.is_some())
}

/// The centre of a sweep point's repetitions, as the sweep table and the
/// claims give it: with `median` (callers choose it where
/// [`median_has_interval`]) the median and its order-statistic interval,
/// else the mean and its t interval cut to `bounds`; a single value is its
/// own mean without an interval. Returns the statistic's name with it;
/// `None` without values.
pub fn center(values: &[f64], confidence: f64, bounds: Bounds, median: bool) -> Option<(&'static str, Estimate)> {
    if values.is_empty() {
        return None;
    }
    let estimate = if median {
        quantile_interval(values, 0.5, confidence).map(|e| ("median", e))
    } else {
        mean_interval(values, confidence, bounds).map(|e| ("mean", e))
    };
    Some(estimate.unwrap_or((
        "mean",
        Estimate {
            value: values.iter().sum::<f64>() / values.len() as f64,
            low: None,
            high: None,
            confidence,
            n: values.len(),
            method: IntervalMethod::StudentT,
        },
    )))
}

fn in_open_unit(x: f64) -> bool {
    x > 0.0 && x < 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from SciPy 1.17.1:
    /// `stats.quantile_test(x, q=0, p=P).confidence_interval(C)`, with
    /// `x = [((i * 37) % 101) / 7 for i in range(N)]`.
    fn data(n: usize) -> Vec<f64> {
        (0..n).map(|i| ((i * 37) % 101) as f64 / 7.0).collect()
    }

    #[test]
    fn order_statistic_intervals_equal_scipy() {
        // (n, q, confidence, low, high); NaN: SciPy has no bound there.
        let cases = [
            (5, 0.5, 0.95, f64::NAN, f64::NAN),
            (6, 0.5, 0.95, 0.0, 12.0),
            (10, 0.5, 0.95, 1.4285714285714286, 12.0),
            (10, 0.9, 0.95, 8.142857142857142, f64::NAN),
            (30, 0.5, 0.95, 4.285714285714286, 9.571428571428571),
            (30, 0.99, 0.9, 13.428571428571429, f64::NAN),
            (100, 0.5, 0.95, 5.571428571428571, 8.571428571428571),
            (100, 0.99, 0.95, 13.857142857142858, f64::NAN),
            (100, 0.95, 0.99, 12.714285714285714, f64::NAN),
            (1000, 0.99, 0.95, 14.142857142857142, 14.285714285714286),
            (7, 0.5, 0.5, 2.857142857142857, 6.714285714285714),
            (2, 0.5, 0.2, 0.0, 5.285714285714286),
        ];
        let end = |x: f64| (!x.is_nan()).then_some(x);
        for (n, q, c, low, high) in cases {
            let e = quantile_interval(&data(n), q, c).unwrap();
            assert_eq!((e.low, e.high), (end(low), end(high)), "n {n} q {q} c {c}");
        }
    }

    #[test]
    fn a_t_interval_of_a_non_negative_metric_stops_at_zero() {
        let e = mean_interval(&[0.01, 0.02, 3.0], 0.95, Bounds::NON_NEGATIVE).unwrap();
        let (low, high) = e.interval().unwrap();
        assert_eq!(low, 0.0);
        assert!(high > 3.0);
        let free = mean_interval(&[0.01, 0.02, 3.0], 0.95, Bounds::ANY).unwrap();
        assert!(free.low.unwrap() < 0.0);
    }
}
