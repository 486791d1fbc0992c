//! The sweep table as text: each point's metrics over its repetitions, the
//! statistic and interval method named, yes/no metrics counted, and the
//! trials left out said.

use std::fmt::Write;

use exp_results::Manifest;

use super::units::value_text;
use crate::aggregate::{PointMetric, PointValue, SweepTable};
use crate::figures::point_label;

/// `== sweep points`, a line per point and metric; empty for a table
/// without points (a run of one trial).
pub fn render(table: &SweepTable, manifest: &Manifest) -> String {
    let mut out = String::new();
    if table.points.is_empty() {
        return out;
    }
    out.push_str("\n== sweep points\n");
    for method in methods(table) {
        let _ = writeln!(out, "{method}");
    }
    if let Some(note) = table.exclusion_note() {
        let _ = writeln!(out, "{note}");
    }
    let mut last_point = None;
    for p in &table.points {
        if last_point != Some(p.point) {
            let label = manifest
                .trials
                .iter()
                .find(|t| t.point == p.point)
                .map(point_label)
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "point {}{}",
                p.point,
                if label.is_empty() {
                    String::new()
                } else {
                    format!(" ({label})")
                }
            );
            last_point = Some(p.point);
        }
        let _ = writeln!(out, "  {:<36} {}", p.metric, cell(p));
    }
    out
}

/// `median 12.1 ms [10.2 ms, 14 ms] n=6`, `2 of 6 yes`.
pub fn cell(p: &PointMetric) -> String {
    let metric = p.metric.rsplit_once('.').map_or(p.metric.as_str(), |(_, m)| m);
    let text = |v: f64| value_text(&p.kind, metric, v);
    match &p.value {
        PointValue::Count { yes } => format!("{yes} of {} yes", p.n),
        PointValue::Estimate { statistic, estimate } => {
            let end = |v: Option<f64>| v.map_or("—".to_string(), text);
            let interval = match (estimate.low, estimate.high) {
                (None, None) => String::new(),
                (low, high) => format!(" [{}, {}]", end(low), end(high)),
            };
            format!("{statistic} {}{interval} n={}", text(estimate.value), p.n)
        }
    }
}

/// How the table's numbers were made, one line per statistic used.
pub fn methods(table: &SweepTable) -> Vec<String> {
    let mut lines: Vec<String> = table
        .points
        .iter()
        .map(|p| match &p.value {
            PointValue::Estimate { statistic, estimate } => crate::aggregate::method_text(statistic, estimate),
            PointValue::Count { .. } => "yes/no metrics counted: the repetitions that said yes, of n".to_string(),
        })
        .collect();
    lines.sort();
    lines.dedup();
    lines
}
