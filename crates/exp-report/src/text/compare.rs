//! Runs compared as text: whether the plans differ, points only one run
//! has, environment differences, trials left out, then per point and
//! metric the baseline's mean, the other run's, the change, Welch's p and
//! the equivalence verdict.

use std::fmt::Write;

use crate::compare::{MetricDiff, Plans, RunComparison};

use super::units::value_text;

/// Point labels listed before "and N more".
const LABELS_SHOWN: usize = 8;

/// The comparison of one run against the baseline.
pub fn render(c: &RunComparison) -> String {
    let mut out = format!("{} against {}\n", c.compared, c.baseline);
    for line in context(c) {
        let _ = writeln!(out, "  {line}");
    }
    if c.metrics.is_empty() {
        out.push_str("  no metric at a point both runs have\n");
        return out;
    }
    let _ = writeln!(
        out,
        "  {:<24} {:<32} {:>12} {:>12} {:>8} {:>7} {:<12} {:>7}",
        "point", "metric", "baseline", "compared", "change", "p", "verdict", "n"
    );
    for d in &c.metrics {
        let point = if d.point.is_empty() { "-" } else { d.point.as_str() };
        let p = d.p_value.map_or("-".to_string(), |p| {
            format!("{p:.3}{}", if p < c.alpha { "*" } else { "" })
        });
        let value = |v: f64| value_text(&d.kind, d.metric.split_once('.').map_or(&d.metric, |(_, m)| m), v);
        let _ = writeln!(
            out,
            "  {point:<24} {:<32} {:>12} {:>12} {:>8} {p:>7} {:<12} {:>7}",
            d.metric,
            value(d.baseline.mean),
            value(d.other.mean),
            change(d),
            d.verdict.unwrap_or("-"),
            format!("{}/{}", d.baseline.n, d.other.n)
        );
    }
    let _ = writeln!(out, "  {}", legend(c));
    out
}

/// What the table's p and verdict mean, with the margin and level used.
pub fn legend(c: &RunComparison) -> String {
    let level = c.alpha;
    format!(
        "p: Welch's t-test over completed repetitions, * below {level}; verdict: equivalent when two one-sided \
         tests put the difference within ±{} of the baseline's mean (TOST, α = {level}), different when Welch's \
         p < {level}, else inconclusive; - needs 2 repetitions with variance on each side",
        percent(c.margin)
    )
}

/// The lines before the table: plans, points, environment, trials left out.
pub fn context(c: &RunComparison) -> Vec<String> {
    let mut lines = Vec::new();
    match &c.plans {
        Plans::Same => lines.push("plans: the same".to_string()),
        Plans::SameTrials => lines.push("plans: the same trials (only where the spec was read from differs)".into()),
        Plans::Unknown { reason } => lines.push(format!("plans: differ ({reason})")),
        Plans::Differ { changes } => {
            lines.push(format!("plans: differ ({}):", changes.len()));
            lines.extend(changes.iter().map(|change| format!("  {change}")));
        }
    }
    for (run, only) in [(&c.baseline, &c.only_in_baseline), (&c.compared, &c.only_in_compared)] {
        if !only.is_empty() {
            lines.push(format!("points only in {run} ({}): {}", only.len(), labels(only)));
        }
    }
    if c.environment.is_empty() {
        lines.push("environment: no recorded fact differs".into());
    } else {
        lines.push(format!("environment: {} facts differ:", c.environment.len()));
        for e in &c.environment {
            lines.push(format!("  {}: {} → {}", e.fact, e.baseline, e.compared));
        }
    }
    for (run, left_out) in [(&c.baseline, &c.left_out_baseline), (&c.compared, &c.left_out_compared)] {
        if let Some(text) = left_out.describe() {
            lines.push(format!("left out of {run}: {text}; --include-invalid puts them back"));
        }
    }
    lines
}

fn labels(list: &[String]) -> String {
    exp_plan::diff_text::point_labels(list, LABELS_SHOWN)
}

/// `5%`, `2.5%`.
pub(crate) fn percent(ratio: f64) -> String {
    let text = format!("{:.2}", ratio * 100.0);
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

/// The relative change, `-` against a baseline of zero.
pub(crate) fn change(d: &MetricDiff) -> String {
    let r = d.relative();
    if r.is_finite() {
        format!("{:+.1}%", r * 100.0)
    } else {
        "-".to_string()
    }
}
