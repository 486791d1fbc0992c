//! Each sweep point's metrics over its repetitions, as the sweep table
//! (text, JSON, HTML) and the sweep figures show them.
//!
//! - A measured quantity gets the median with its distribution-free
//!   order-statistic interval when every point has the repetitions such an
//!   interval needs (6 at 95 %), else the mean with Student's t interval cut
//!   to the metric's physical range (a latency's never reaches below 0).
//!   One statistic per metric across the points, so a figure compares like
//!   with like; the method is named wherever the numbers are.
//! - A yes/no metric (`contended`) is counted: how many repetitions said yes.
//! - Trials whose validity verdict is `invalid` are left out unless asked
//!   for, and counted with their reasons.

use std::collections::BTreeMap;

use exp_plan::Plan;
use exp_results::validity::Verdict;
use exp_results::{Manifest, TrialRecord, TrialStatus};
use exp_stats::intervals::{Bounds, Estimate};

/// Confidence of the intervals drawn and tabled.
pub const CONFIDENCE: f64 = 0.95;

/// Metrics that say yes (1) or no (0) about a trial: counted, never averaged.
const FLAGS: &[&str] = &["contended"];

/// One metric at one sweep point over its counted repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct PointMetric {
    pub point: u32,
    /// `workload.metric`, or the bare name `repeat until` reads.
    pub metric: String,
    /// The workload's kind (`fleet`, …), which gives the metric its unit.
    pub kind: String,
    pub n: usize,
    pub value: PointValue,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PointValue {
    /// A median or mean with its interval (ends `None` where the samples
    /// give none).
    Estimate {
        statistic: &'static str,
        estimate: Estimate,
    },
    /// A yes/no metric: how many of the `n` repetitions said yes.
    Count { yes: usize },
}

impl PointMetric {
    /// The estimate, for a measured quantity.
    pub fn estimate(&self) -> Option<&Estimate> {
        match &self.value {
            PointValue::Estimate { estimate, .. } => Some(estimate),
            PointValue::Count { .. } => None,
        }
    }
}

/// A trial left out of the aggregates, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Excluded {
    pub trial: u32,
    pub point: u32,
    /// The codes of its `invalid` findings (`V0101: …`).
    pub reasons: Vec<String>,
}

/// The sweep table of a run: every point's metrics, and the trials left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepTable {
    pub points: Vec<PointMetric>,
    pub excluded: Vec<Excluded>,
    /// Invalid trials were asked for and counted in.
    pub included_invalid: usize,
}

impl SweepTable {
    /// `3 invalid trials left out (V0101 send lateness over its bound: 3)`, or `None`.
    pub fn exclusion_note(&self) -> Option<String> {
        if self.included_invalid > 0 {
            return Some(format!(
                "{} invalid trial{} counted in (--include-invalid)",
                self.included_invalid,
                plural(self.included_invalid)
            ));
        }
        if self.excluded.is_empty() {
            return None;
        }
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        for reason in self.excluded.iter().flat_map(|e| &e.reasons) {
            *reasons.entry(reason.as_str()).or_default() += 1;
        }
        let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        Some(format!(
            "{} invalid trial{} left out ({}); --include-invalid counts them",
            self.excluded.len(),
            plural(self.excluded.len()),
            reasons.join("; ")
        ))
    }
}

impl SweepTable {
    /// The table as `expc report --json` gives it (`sweep`): each point's
    /// metrics with the statistic, interval ends (null where none), method
    /// and n; counts for yes/no metrics; the trials left out with their codes.
    pub fn to_json(&self) -> serde_json::Value {
        let points: Vec<serde_json::Value> = self
            .points
            .iter()
            .map(|p| match &p.value {
                PointValue::Estimate { statistic, estimate } => serde_json::json!({
                    "point": p.point, "metric": p.metric, "n": p.n,
                    "statistic": statistic, "value": estimate.value,
                    "low": estimate.low, "high": estimate.high,
                    "confidence": estimate.confidence,
                    "method": estimate.method.key(), "method_name": estimate.method.name(),
                }),
                PointValue::Count { yes } => serde_json::json!({
                    "point": p.point, "metric": p.metric, "n": p.n, "statistic": "count", "yes": yes,
                }),
            })
            .collect();
        let excluded: Vec<serde_json::Value> = self
            .excluded
            .iter()
            .map(|e| serde_json::json!({"trial": e.trial, "point": e.point, "reasons": e.reasons}))
            .collect();
        serde_json::json!({
            "points": points,
            "excluded_invalid": excluded,
            "included_invalid": self.included_invalid,
        })
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Whether a trial is `invalid` by its validity verdict (none recorded: not).
pub fn is_invalid(trial: &TrialRecord) -> bool {
    trial.validity.as_ref().is_some_and(|v| v.verdict == Verdict::Invalid)
}

/// Every metric at every point over its completed repetitions (none for a
/// run of one trial), invalid trials left out unless `include_invalid`.
/// Metrics are the workloads' own (`workload.metric`); of the bare names,
/// which average over workloads of any kind, only the one `repeat until`
/// reads.
pub fn sweep_table(manifest: &Manifest, plan: Option<&Plan>, include_invalid: bool) -> SweepTable {
    let mut table = SweepTable::default();
    if manifest.trials.len() < 2 {
        return table;
    }
    let mut samples: BTreeMap<(&str, u32), Vec<f64>> = BTreeMap::new();
    for t in manifest.trials.iter().filter(|t| t.status == TrialStatus::Complete) {
        if is_invalid(t) {
            if include_invalid {
                table.included_invalid += 1;
            } else {
                table.excluded.push(excluded(t));
                continue;
            }
        }
        for (metric, &v) in t.metrics.iter().filter(|(m, v)| v.is_finite() && shown_metric(plan, m)) {
            samples.entry((metric.as_str(), t.point)).or_default().push(v);
        }
    }
    let mut by_metric: BTreeMap<&str, Vec<(u32, Vec<f64>)>> = BTreeMap::new();
    for ((metric, point), values) in samples {
        by_metric.entry(metric).or_default().push((point, values));
    }
    for (metric, points) in by_metric {
        let kind = plan.map_or_else(String::new, |p| metric_kind(p, metric).to_string());
        let median = points.iter().all(|(_, v)| median_has_interval(v.len()));
        for (point, values) in points {
            let Some(value) = point_value(metric, &values, median) else {
                continue;
            };
            table.points.push(PointMetric {
                point,
                metric: metric.to_string(),
                kind: kind.clone(),
                n: values.len(),
                value,
            });
        }
    }
    table
        .points
        .sort_by(|a, b| (a.point, &a.metric).cmp(&(b.point, &b.metric)));
    table
}

fn excluded(trial: &TrialRecord) -> Excluded {
    let reasons = trial
        .validity
        .iter()
        .flat_map(|v| &v.findings)
        .filter(|f| f.verdict == Verdict::Invalid)
        .map(|f| f.code.clone())
        .collect();
    Excluded {
        trial: trial.trial,
        point: trial.point,
        reasons,
    }
}

fn median_has_interval(n: usize) -> bool {
    exp_stats::median_has_interval(n, CONFIDENCE)
}

/// `None` without values (a point is made from at least one).
fn point_value(metric: &str, values: &[f64], median: bool) -> Option<PointValue> {
    let bare = metric.rsplit_once('.').map_or(metric, |(_, m)| m);
    if FLAGS.contains(&bare) {
        return Some(PointValue::Count {
            yes: values.iter().filter(|v| **v != 0.0).count(),
        });
    }
    let (statistic, estimate) = exp_stats::center(values, CONFIDENCE, bounds(bare), median)?;
    Some(PointValue::Estimate { statistic, estimate })
}

/// The values a trial metric can physically take: shares within [0, 1],
/// everything else expc measures (latencies, durations, counts, bytes,
/// rates) non-negative.
pub fn bounds(metric: &str) -> Bounds {
    const SHARES: &[&str] = &["duplicate_rate", "skeleton_jsd", "max_ks", "max_total_variation"];
    if SHARES.contains(&metric) {
        Bounds::RATIO
    } else {
        Bounds::NON_NEGATIVE
    }
}

/// Whether a trial metric is reported: each workload's own
/// (`workload.metric`); of the bare names, which average over workloads of
/// any kind, only the one `repeat until` reads.
pub(crate) fn shown_metric(plan: Option<&Plan>, metric: &str) -> bool {
    let stop = plan.and_then(|p| p.repeat.stop.as_ref()).map(|s| s.metric.as_str());
    metric.contains('.') || Some(metric) == stop
}

/// The kind of the workload of `workload.metric` (empty for a bare name).
pub(crate) fn metric_kind<'p>(plan: &'p Plan, key: &str) -> &'p str {
    let workload = key.split_once('.').map_or("", |(w, _)| w);
    let variants = plan.workloads.iter().filter_map(|w| w.variants.first());
    variants
        .into_iter()
        .find(|w| w.name == workload)
        .map_or("", |w| w.config.kind())
}

/// How the estimates of a metric were made, for captions and JSON:
/// `median, distribution-free order-statistic interval (…)`.
pub fn method_text(statistic: &str, estimate: &Estimate) -> String {
    format!(
        "{statistic} with its {}% {}",
        estimate.confidence * 100.0,
        estimate.method.name()
    )
}
