//! Sweeps and repetitions, from the sweep table ([`crate::aggregate`]):
//! every measured trial metric against each swept numeric parameter — each
//! point's median with its order-statistic interval, or mean with its t
//! interval cut to the metric's range, as the table chose — one series per
//! combination of the other parameters, the `repeat until` metric first.
//! A run without a swept parameter gets no sweep figure: its repetitions
//! are drawn one by one, in the order they ran. Yes/no metrics
//! (`contended`) are counted in the table, not drawn.

use std::collections::BTreeMap;

use exp_plan::{Plan, Value};
use exp_results::{Manifest, TrialStatus};

use super::chart::{Axis, Chart, Marks, Series};
use super::Figure;
use crate::aggregate::{is_invalid, method_text, metric_kind, shown_metric, sweep_table, PointMetric, SweepTable};

/// How a trial metric (`workload.metric`) is drawn: the factor from its
/// stored value and the unit that gives, from its workload's kind.
fn metric_axis(plan: &Plan, key: &str) -> (f64, &'static str) {
    let metric = key.split_once('.').map_or(key, |(_, m)| m);
    crate::text::units::axis(metric_kind(plan, key), metric)
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

pub(super) fn figures(manifest: &Manifest, plan: &Plan, include_invalid: bool) -> Vec<Figure> {
    let stop_metric = plan.repeat.stop.as_ref().map(|s| s.metric.as_str());
    if plan.parameters.is_empty() {
        return repetitions(manifest, plan, include_invalid, stop_metric);
    }
    let table = sweep_table(manifest, Some(plan), include_invalid);
    let mut metrics: Vec<&str> = table
        .points
        .iter()
        .filter(|p| p.estimate().is_some())
        .map(|p| p.metric.as_str())
        .collect();
    metrics.sort_by_key(|m| (Some(*m) != stop_metric, *m));
    metrics.dedup();
    (0..plan.parameters.len())
        .flat_map(|k| metrics.iter().map(move |m| (k, *m)))
        .filter_map(|(k, m)| against(plan, &table, k, m, Some(m) == stop_metric))
        .collect()
}

/// `metric` against parameter `k`.
fn against(plan: &Plan, table: &SweepTable, k: usize, metric: &str, stop: bool) -> Option<Figure> {
    let mut series: BTreeMap<String, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
    let mut unit = "";
    let (scale, y_unit) = metric_axis(plan, metric);
    let rows: Vec<&PointMetric> = table.points.iter().filter(|p| p.metric == metric).collect();
    let mut method = None;
    for p in &rows {
        let estimate = p.estimate()?;
        let values = plan.values_at(p.point)?;
        let (x, u) = numeric(&values.get(k)?.1.value)?;
        unit = u;
        let others: Vec<String> = values
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != k)
            .map(|(_, (param, v))| format!("{}={}", param.name, v.label))
            .collect();
        let y = estimate.value * scale;
        // Without an end (one repetition, too few for a median's), no bar that way.
        let low = estimate.low.map_or(y, |l| l * scale);
        let high = estimate.high.map_or(y, |h| h * scale);
        series.entry(others.join(", ")).or_default().push((x, y, low, high));
        if let crate::aggregate::PointValue::Estimate { statistic, estimate } = &p.value {
            method = Some(method_text(statistic, estimate));
        }
    }
    let method = method?;
    let name = plan.parameters.get(k)?.name.as_str();
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
    let left_out = table.exclusion_note().map(|n| format!(" {n}.")).unwrap_or_default();
    Some(Figure::new(
        format!("sweep-{metric}-by-{name}"),
        Chart {
            title,
            x: Axis::linear(x_label),
            y: Axis::linear(y_label(metric, y_unit)),
            series,
            bands: Vec::new(),
        },
        format!(
            "{} of {metric} over each point's completed repetitions (no bar where the repetitions give no interval).{left_out}",
            capitalized(&method)
        ),
    ))
}

/// A run without a swept parameter: each measured metric of each completed
/// repetition, in the order the repetitions ran.
fn repetitions(manifest: &Manifest, plan: &Plan, include_invalid: bool, stop: Option<&str>) -> Vec<Figure> {
    let mut ran: Vec<_> = manifest
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Complete && (include_invalid || !is_invalid(t)))
        .collect();
    if ran.len() < 2 {
        return Vec::new();
    }
    ran.sort_by_key(|t| (t.started_at_unix_ns, t.trial));
    let left_out = manifest
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Complete && !include_invalid && is_invalid(t))
        .count();
    let mut series: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    for (order, trial) in ran.iter().enumerate() {
        for (metric, &v) in trial
            .metrics
            .iter()
            .filter(|(m, v)| v.is_finite() && shown_metric(Some(plan), m))
        {
            series.entry(metric.as_str()).or_default().push(((order + 1) as f64, v));
        }
    }
    let mut metrics: Vec<&str> = series.keys().copied().filter(|m| !m.ends_with("contended")).collect();
    metrics.sort_by_key(|m| (Some(*m) != stop, *m));
    let note = match left_out {
        0 => String::new(),
        n => format!(" {n} invalid repetition{} left out.", if n == 1 { "" } else { "s" }),
    };
    metrics
        .into_iter()
        .map(|metric| {
            let (scale, y_unit) = metric_axis(plan, metric);
            let points = series[metric].iter().map(|&(x, y)| (x, y * scale)).collect();
            Figure::new(
                format!("repetitions-{metric}"),
                Chart {
                    title: metric.to_string(),
                    x: Axis::linear("repetition, in run order".to_string()),
                    y: Axis::linear(y_label(metric, y_unit)),
                    series: vec![Series {
                        name: metric.to_string(),
                        marks: Marks::Points(points),
                    }],
                    bands: Vec::new(),
                },
                format!(
                    "{metric} of each completed repetition, in the order they ran: a drift or a step shows here, not in a summary.{note}"
                ),
            )
        })
        .collect()
}

fn y_label(metric: &str, unit: &str) -> String {
    if unit.is_empty() {
        metric.to_string()
    } else {
        format!("{metric} ({unit})")
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}
