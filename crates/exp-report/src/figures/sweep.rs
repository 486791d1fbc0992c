//! Sweeps and repetitions: every trial metric against each swept numeric
//! parameter, the mean over a point's completed repetitions with its 95 %
//! confidence interval (Student t), one series per combination of the
//! other parameters. The `repeat until` metric comes first. The same
//! numbers are the report's sweep table ([`points`]).

use std::collections::BTreeMap;

use exp_plan::{Plan, Value};
use exp_results::{Manifest, TrialStatus};

use super::chart::{Axis, Chart, Marks, Series};
use super::Figure;

/// Confidence of the intervals drawn and tabled.
pub const CONFIDENCE: f64 = 0.95;

/// One metric at one sweep point over its completed repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct PointMetric {
    pub point: u32,
    /// `workload.metric`, or the bare name `repeat until` reads.
    pub metric: String,
    /// The workload's kind (`fleet`, …), which gives the metric its unit.
    pub kind: String,
    pub n: usize,
    pub mean: f64,
    /// Half the width of the confidence interval; `None` below 2 samples.
    pub half_width: Option<f64>,
}

/// Mean and interval of every metric at every point, by point then
/// metric; none for a run of one trial. Metrics are the workloads' own
/// (`workload.metric`); of the bare names, which average over workloads of
/// any kind, only the one `repeat until` reads.
pub fn points(manifest: &Manifest, plan: Option<&Plan>) -> Vec<PointMetric> {
    if manifest.trials.len() < 2 {
        return Vec::new();
    }
    let mut samples: BTreeMap<(u32, &str), Vec<f64>> = BTreeMap::new();
    for t in manifest.trials.iter().filter(|t| t.status == TrialStatus::Complete) {
        for (metric, &v) in t.metrics.iter().filter(|(m, v)| v.is_finite() && shown_metric(plan, m)) {
            samples.entry((t.point, metric.as_str())).or_default().push(v);
        }
    }
    samples
        .into_iter()
        .map(|((point, metric), values)| {
            let n = values.len();
            let mean = values.iter().sum::<f64>() / n as f64;
            PointMetric {
                point,
                metric: metric.to_string(),
                kind: plan.map_or_else(String::new, |p| metric_kind(p, metric).to_string()),
                n,
                mean,
                half_width: exp_stats::mean_ci(&values, CONFIDENCE).map(|ci| ci.half_width),
            }
        })
        .collect()
}

/// How a trial metric (`workload.metric`) is drawn: the factor from its
/// stored value and the unit that gives, from its workload's kind.
fn metric_axis(plan: &Plan, key: &str) -> (f64, &'static str) {
    let metric = key.split_once('.').map_or(key, |(_, m)| m);
    crate::text::units::axis(metric_kind(plan, key), metric)
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

/// A parameter's value as a number on its axis, with the axis unit: time
/// in ms, sizes in bytes, rates per second.
fn numeric(value: &Value) -> Option<(f64, &'static str)> {
    Some(match *value {
        Value::Int(i) => (i as f64, ""),
        Value::Float(f) | Value::PerS(f) => (f, ""),
        Value::Ratio(r) => (r * 100.0, "%"),
        Value::DurationNs(ns) => (ns as f64 / 1e6, "ms"),
        Value::Bytes(b) => (b as f64, "bytes"),
        Value::BitPerS(b) => (b as f64, "bit/s"),
        _ => return None,
    })
}

pub(super) fn figures(manifest: &Manifest, plan: &Plan) -> Vec<Figure> {
    let table = points(manifest, Some(plan));
    if plan.parameters.is_empty() && plan.repeat.max < 2 {
        return Vec::new();
    }
    let stop_metric = plan.repeat.stop.as_ref().map(|s| s.metric.as_str());
    let mut metrics: Vec<&str> = table.iter().map(|p| p.metric.as_str()).collect();
    metrics.sort_by_key(|m| (Some(*m) != stop_metric, *m));
    metrics.dedup();
    // Without parameters, each metric's mean and interval at the one point.
    let parameters: Vec<usize> = if plan.parameters.is_empty() {
        vec![usize::MAX]
    } else {
        (0..plan.parameters.len()).collect()
    };
    parameters
        .into_iter()
        .flat_map(|k| metrics.iter().map(move |m| (k, *m)))
        .filter_map(|(k, m)| against(plan, &table, k, m, Some(m) == stop_metric))
        .collect()
}

/// `metric` against parameter `k` (`usize::MAX`: no parameter, x = 0).
fn against(plan: &Plan, table: &[PointMetric], k: usize, metric: &str, stop: bool) -> Option<Figure> {
    let mut series: BTreeMap<String, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
    let mut unit = "";
    let (scale, y_unit) = metric_axis(plan, metric);
    for p in table.iter().filter(|p| p.metric == metric) {
        let values = plan.values_at(p.point)?;
        let (x, u) = match values.get(k) {
            Some((_, v)) => numeric(&v.value)?,
            None => (0.0, ""),
        };
        unit = u;
        let others: Vec<String> = values
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != k)
            .map(|(_, (param, v))| format!("{}={}", param.name, v.label))
            .collect();
        let (mean, h) = (p.mean * scale, p.half_width.unwrap_or(0.0) * scale);
        series
            .entry(others.join(", "))
            .or_default()
            .push((x, mean, mean - h, mean + h));
    }
    if series.is_empty() {
        return None;
    }
    let name = plan.parameters.get(k).map_or("point", |p| p.name.as_str());
    let x_label = if unit.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({unit})")
    };
    let series = series
        .into_iter()
        .map(|(name, mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                name: if name.is_empty() { metric.to_string() } else { name },
                marks: Marks::Intervals(points),
            }
        })
        .collect();
    let title = if stop {
        format!("{metric} (repeat until)")
    } else {
        metric.to_string()
    };
    Some(Figure::new(
        format!("sweep-{metric}-by-{name}"),
        Chart {
            title,
            x: Axis::linear(x_label),
            y: Axis::linear(if y_unit.is_empty() { metric.to_string() } else { format!("{metric} ({y_unit})") }),
            series,
            bands: Vec::new(),
        },
        format!(
            "Mean of {metric} over each point's completed repetitions with its {}% confidence interval (Student t; no bar with one repetition).",
            CONFIDENCE * 100.0
        ),
    ))
}
