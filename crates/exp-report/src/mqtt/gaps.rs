//! Gap accuracy: the achieved gaps between a device's consecutive sends,
//! against the gap distribution of the plan.
//!
//! Rows are written when their outcome is final, not in send order, so a
//! device's sends must be sorted before they can be differenced. Sorting
//! needs every row of a device at once; to bound memory the devices are
//! split into partitions (`device mod k`), one pass over the files each,
//! with k chosen so a partition's rows fit [`SORT_BUDGET_BYTES`].

use std::path::Path;

use exp_plan::{Dist, DistValue};
use exp_stats::Sampler;
use serde::{Deserialize, Serialize};

use super::passes::Fleets;
use super::stats::{mean, sample_sd};
use super::Failure;
use crate::scan::for_each_chunk;

/// Memory for one partition's rows (32 bytes each): 8 Mi rows.
const SORT_BUDGET_BYTES: u64 = 256 << 20;
const ROW_BYTES: u64 = 32;
/// `sent` of a row that cannot start or end a gap (warm-up, or never sent).
const UNUSABLE: u64 = u64::MAX;

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

#[derive(Clone, Copy)]
struct Send {
    device: u64,
    scheduled: u64,
    seq: u64,
    sent: u64,
}

/// Every fleet's achieved gaps, unsorted. The trial's `total` rows decide
/// the number of partitions; `rows` gives a fleet's (warm-up included), to
/// size every vector once.
pub(crate) fn achieved(files: &[&Path], total: u64, rows: &dyn Fn(&str) -> usize) -> Result<Fleets<Vec<f64>>, Failure> {
    let partitions = total.saturating_mul(ROW_BYTES).div_ceil(SORT_BUDGET_BYTES).max(1);
    // Device numbers are dense, so `device mod k` splits evenly; 1/16 extra
    // absorbs the remainder without a reallocation.
    let share = |fleet: &str| {
        let n = rows(fleet) as u64 / partitions;
        usize::try_from(n + n / 16 + 16).unwrap_or(usize::MAX)
    };
    let mut gaps = Fleets::<Vec<f64>>::default();
    let columns = ["fleet", "device", "seq", "scheduled_ns", "sent_ns", "warmup"];
    for partition in 0..partitions {
        let mut sends = Fleets::<Vec<Send>>::default();
        for (index, path) in files.iter().enumerate() {
            for_each_chunk(path, &columns, &[], |chunk| {
                let fleet = chunk.str("fleet")?;
                let device = chunk.u64("device")?;
                let seq = chunk.u64("seq")?;
                let scheduled = chunk.u64("scheduled_ns")?;
                let sent = chunk.u64("sent_ns")?;
                let warmup = chunk.bool("warmup")?;
                let ids = fleet.iter().zip(device.iter()).zip(seq.iter());
                let times = scheduled.iter().zip(sent.iter()).zip(warmup.iter());
                for (((fleet, device), seq), ((scheduled, sent), warmup)) in ids.zip(times) {
                    // Every fired message is kept, usable or not, so `seq`
                    // runs without holes within an interval and restarts at 0
                    // in the next: consecutive rows are one gap apart only
                    // when their seqs are.
                    let (Some(device), Some(seq), Some(scheduled)) = (device, seq, scheduled) else {
                        continue;
                    };
                    if device % partitions != partition {
                        continue;
                    }
                    let sent = match (sent, warmup) {
                        (Some(s), Some(false) | None) if s != UNUSABLE => s,
                        _ => UNUSABLE,
                    };
                    let fleet = fleet.unwrap_or_default();
                    sends.get_or(fleet, || Vec::with_capacity(share(fleet))).push(Send {
                        device,
                        scheduled,
                        seq,
                        sent,
                    });
                }
                Ok(())
            })
            .map_err(|e| (index, e))?;
        }
        for (fleet, sends) in sends.iter_mut() {
            sends.sort_unstable_by_key(|s| (s.device, s.scheduled, s.seq));
            let out = gaps.get_or(fleet, || Vec::with_capacity(rows(fleet)));
            for pair in sends.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                if a.device == b.device && b.seq == a.seq.wrapping_add(1) && a.sent != UNUSABLE && b.sent != UNUSABLE {
                    out.push(b.sent as f64 - a.sent as f64);
                }
            }
        }
    }
    Ok(gaps)
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
