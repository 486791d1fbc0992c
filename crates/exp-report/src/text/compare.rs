//! Runs compared as text: per point and metric, the baseline's mean, the
//! other run's, the change and Welch's p-value, flagged below 0.05.

use std::fmt::Write;

use crate::compare::MetricDiff;

use super::units::value_text;

/// p-values below this are marked `*`: the change is unlikely to be noise.
const SIGNIFICANT: f64 = 0.05;

/// The comparison of `other` (named) against `baseline` (named).
pub fn render(baseline: &str, other: &str, diffs: &[MetricDiff]) -> String {
    let mut out = format!("{other} against {baseline}\n");
    if diffs.is_empty() {
        out.push_str("  no metric at a point both runs have\n");
        return out;
    }
    let _ = writeln!(
        out,
        "  {:<24} {:<32} {:>12} {:>12} {:>8} {:>7} {:>7}",
        "point", "metric", "baseline", "compared", "change", "p", "n"
    );
    for d in diffs {
        let point = if d.point.is_empty() { "-" } else { d.point.as_str() };
        let p = d.p_value.map_or("-".to_string(), |p| {
            format!("{p:.3}{}", if p < SIGNIFICANT { "*" } else { "" })
        });
        let value = |v: f64| value_text(&d.kind, d.metric.split_once('.').map_or(&d.metric, |(_, m)| m), v);
        let _ = writeln!(
            out,
            "  {point:<24} {:<32} {:>12} {:>12} {:>8} {p:>7} {:>7}",
            d.metric,
            value(d.baseline.mean),
            value(d.other.mean),
            change(d),
            format!("{}/{}", d.baseline.n, d.other.n)
        );
    }
    out.push_str("  p: Welch's t-test over completed repetitions; * below 0.05\n");
    out
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
