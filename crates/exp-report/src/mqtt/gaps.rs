//! Gap accuracy: the achieved gaps between a device's consecutive sends
//! (`achieved.rs`), against the gap distribution of the plan.

use exp_plan::{Dist, DistValue};
use exp_stats::Sampler;
use serde::{Deserialize, Serialize};

use super::stats::{mean, sample_sd};

/// How faithfully one fleet's gaps followed the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapAccuracy {
    /// `None` when the plan could not be read or does not name the fleet.
    pub target: Option<GapTarget>,
    pub achieved: Option<GapStats>,
    /// achieved median / target median − 1.
    pub median_error: Option<f64>,
    /// Only for continuous distributions with at least one gap.
    pub ks: Option<KsTest>,
}

/// The configured gap. Fleet gaps are not scaled by `--time-scale` (like
/// every intensity, see docs/running.md), so this is the plan's distribution as is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapTarget {
    pub gap: DistValue,
    pub constant: bool,
    /// inf { x : F(x) ≥ ½ }, in ns.
    pub median: Option<f64>,
    /// `None` when infinite (Pareto shape ≤ 1).
    pub mean: Option<f64>,
}

/// Achieved gaps in ns: `sent_ns` of a device's message minus that of its
/// previous one (`seq` − 1, same active interval), both sent and not warm-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapStats {
    pub n: u64,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n − 1); `None` for a single gap.
    pub sd: Option<f64>,
    pub min: f64,
    pub max: f64,
}

/// A one-sample Kolmogorov–Smirnov test of the achieved gaps against the
/// target ([`exp_stats::ks_one_sample`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KsTest {
    pub statistic: f64,
    pub p_value: f64,
    pub n: u64,
}

impl GapTarget {
    /// `None` for a distribution exp-stats rejects (a plan from elsewhere).
    pub(crate) fn new(gap: &DistValue) -> Option<GapTarget> {
        let sampler = Sampler::new(gap).ok()?;
        Some(GapTarget {
            gap: gap.clone(),
            constant: matches!(gap.dist, Dist::Constant { .. }),
            median: median(&sampler),
            mean: sampler.mean(),
        })
    }
}

/// The median of a distribution by bisection on its CDF, which works for
/// every family (exp-stats has no quantile functions): the smallest x with
/// F(x) ≥ ½, so for a discrete family the atom where F crosses ½.
pub(crate) fn median(sampler: &Sampler) -> Option<f64> {
    let mut hi = sampler.mean().filter(|m| m.is_finite()).map_or(1.0, f64::abs).max(1.0);
    while sampler.cdf(hi) < 0.5 {
        hi *= 2.0;
        if !hi.is_finite() {
            return None;
        }
    }
    let mut lo = -hi;
    while sampler.cdf(lo) >= 0.5 {
        lo *= 2.0;
        if !lo.is_finite() {
            return None;
        }
    }
    // Invariant F(lo) < ½ ≤ F(hi); 200 halvings exhaust f64 precision.
    for _ in 0..200 {
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        if sampler.cdf(mid) >= 0.5 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Summarises `gaps` (sorted in place) against `target`.
pub(crate) fn accuracy(target: Option<GapTarget>, gaps: &mut [f64]) -> GapAccuracy {
    gaps.sort_unstable_by(f64::total_cmp);
    let achieved = match (gaps.first(), gaps.last(), exp_stats::percentile(gaps, 0.5), mean(gaps)) {
        (Some(&min), Some(&max), Some(median), Some(mean)) => Some(GapStats {
            n: gaps.len() as u64,
            mean,
            median,
            sd: sample_sd(gaps),
            min,
            max,
        }),
        _ => None,
    };
    let median_error = match (&target, &achieved) {
        (Some(GapTarget { median: Some(t), .. }), Some(a)) if *t > 0.0 => Some(a.median / t - 1.0),
        _ => None,
    };
    let ks = target.as_ref().and_then(|t| {
        let sampler = Sampler::new(&t.gap).ok()?;
        let ks = exp_stats::ks_one_sample(gaps, &sampler).ok()?;
        Some(KsTest {
            statistic: ks.statistic,
            p_value: ks.p_value,
            n: gaps.len() as u64,
        })
    });
    GapAccuracy {
        target,
        achieved,
        median_error,
        ks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use exp_plan::Unit;

    fn ns(dist: Dist) -> DistValue {
        DistValue { unit: Unit::Ns, dist }
    }

    #[test]
    fn medians_of_distributions() {
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1.0));
        let pareto = GapTarget::new(&ns(Dist::Pareto {
            shape: 3.0,
            scale: 100e6 / 2f64.powf(1.0 / 3.0),
        }))
        .unwrap();
        assert!(close(pareto.median, 100e6), "{:?}", pareto.median);
        assert!(!pareto.constant);
        let exponential = GapTarget::new(&ns(Dist::Exponential { mean: 50e6 })).unwrap();
        assert!(close(exponential.median, 50e6 * 2f64.ln()));
        assert!(close(exponential.mean, 50e6));
        let constant = GapTarget::new(&ns(Dist::Constant { value: 20e6 })).unwrap();
        assert!(constant.constant && close(constant.median, 20e6) && close(constant.mean, 20e6));
        let normal = GapTarget::new(&ns(Dist::Normal { mean: -3.0, sd: 1.0 })).unwrap();
        assert!(close(normal.median, -3.0));
        // Heavy tail: no mean, the median is still defined.
        let heavy = GapTarget::new(&ns(Dist::Pareto { shape: 1.0, scale: 1e6 })).unwrap();
        assert!(heavy.mean.is_none() && close(heavy.median, 2e6));
    }
}
