//! Quantities as people read them. Trial metrics: `ack_latency 236.0µs`,
//! `runner_rss_per_device 16.8 KB/device`, `throughput 20000 msg/s`; metric
//! names carry no unit (specs name them in `repeat until`), so the unit
//! comes from the workload's kind and the metric's name. Table columns:
//! their names carry units (`*_ns`, `*_bytes`, `*_pct`), and identifiers
//! and points in time get no mean. The manifest and `--json` keep raw numbers.

use crate::column_kinds::{column_kind, ColumnKind};
use crate::ColumnSummary;

/// What a metric's number measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// ns
    Duration,
    Bytes,
    /// CPU seconds per second.
    Cores,
    /// A share of 1, shown as a percentage.
    Share,
    /// Counted things.
    Count,
    /// 0 or 1.
    Flag,
    /// Per second, with the thing counted.
    Rate(&'static str),
    /// A statistic without a unit (a divergence, a distance).
    Plain,
}

fn unit(kind: &str, metric: &str) -> Unit {
    let duration = [
        "latency",
        "lateness",
        "outage",
        "duration",
        "response_time",
        "cpu_per_message",
    ];
    match (kind, metric) {
        (_, "contended") => Unit::Flag,
        (_, m) if m.ends_with("_cpu_ratio") => Unit::Cores,
        (_, m) if m.ends_with("_bytes") || m.contains("rss") || m == "bytes_touched" || m == "document_size" => {
            Unit::Bytes
        }
        (_, m) if duration.iter().any(|d| m.contains(d)) => Unit::Duration,
        ("fleet", "throughput") => Unit::Rate("msg/s"),
        ("traffic", "throughput") => Unit::Rate("bit/s"),
        ("xml", "throughput") => Unit::Rate("MB/s"),
        ("anomaly", "achieved_utilization") => Unit::Share,
        (_, m)
            if m.ends_with("connections")
                || ["messages_lost", "disconnects", "operations", "devices_not_connected"].contains(&m) =>
        {
            Unit::Count
        }
        _ => Unit::Plain,
    }
}

/// How a figure's axis shows a metric: the factor from the stored value
/// (ns, bytes, a share of 1, bit/s) and the unit that gives.
pub fn axis(kind: &str, metric: &str) -> (f64, &'static str) {
    match unit(kind, metric) {
        Unit::Duration => (1e-6, "ms"),
        Unit::Bytes => (1e-3, "KB"),
        Unit::Cores => (1.0, "cores"),
        Unit::Share => (100.0, "%"),
        Unit::Rate("bit/s") => (1e-6, "Mbit/s"),
        Unit::Rate(what) => (1.0, what),
        Unit::Count | Unit::Flag | Unit::Plain => (1.0, ""),
    }
}

/// `metric value` with its unit (`per_device` for `runner_rss_per_device`).
pub fn metric_text(kind: &str, metric: &str, value: f64) -> String {
    format!("{metric} {}", value_text(kind, metric, value))
}

/// A metric's value with its unit, without the name (`16.8 KB/device`).
pub fn value_text(kind: &str, metric: &str, value: f64) -> String {
    let per = if metric.ends_with("_per_device") { "/device" } else { "" };
    let text = match unit(kind, metric) {
        _ if !value.is_finite() => number(value),
        // Durations as the MQTT report writes its latencies.
        Unit::Duration => time(value),
        Unit::Bytes => scaled(value, 1000.0, &["B", "KB", "MB", "GB", "TB"]),
        Unit::Cores => format!("{} cores", significant(value)),
        Unit::Share => format!("{}%", significant(value * 100.0)),
        Unit::Count => format!("{value:.0}"),
        Unit::Flag => (if value != 0.0 { "yes" } else { "no" }).to_string(),
        Unit::Rate("bit/s") => scaled(value, 1000.0, &["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"]),
        Unit::Rate(what) => format!("{} {what}", significant(value)),
        Unit::Plain => significant(value),
    };
    format!("{text}{per}")
}

/// `value` in the largest unit that keeps it at 1 or more.
fn scaled(value: f64, step: f64, units: &[&str]) -> String {
    let mut v = value;
    let mut i = 0;
    while v.abs() >= step && i + 1 < units.len() {
        v /= step;
        i += 1;
    }
    format!("{} {}", significant(v), units[i])
}

/// Three significant digits, whole numbers above 100 (`236`, `16.8`, `1.23`, `0.0512`).
fn significant(v: f64) -> String {
    let a = v.abs();
    let text = if a >= 100.0 {
        return format!("{v:.0}");
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 || a == 0.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A column summary's cells (mean, min, p50, p95, p99, max) as text, or
/// `None` for a column whose statistics mean nothing (identifiers, dates).
pub fn column_cells(c: &ColumnSummary) -> Option<[String; 6]> {
    let kind = column_kind(&c.column);
    let format = |v: Option<f64>| -> String {
        let Some(v) = v else { return "-".into() };
        match kind {
            _ if !v.is_finite() => number(v),
            ColumnKind::Duration | ColumnKind::TrialTime => time(v),
            ColumnKind::Bytes => scaled(v, 1000.0, &["B", "KB", "MB", "GB", "TB"]),
            ColumnKind::Percent => format!("{}%", significant(v)),
            ColumnKind::Rate => scaled(v, 1000.0, &["/s", "k/s", "M/s", "G/s"]),
            _ => number(v),
        }
    };
    match kind {
        ColumnKind::Identifier | ColumnKind::UnixTime => None,
        // A moment's mean or percentiles say nothing; its first and last do.
        ColumnKind::TrialTime => Some([
            "-".into(),
            format(c.min),
            "-".into(),
            "-".into(),
            "-".into(),
            format(c.max),
        ]),
        _ => Some([c.mean, c.min, c.p50, c.p95, c.p99, c.max].map(format)),
    }
}

/// Nanoseconds with a unit that keeps three or four significant digits:
/// the reports' latencies, and every duration shown with a unit.
pub fn time(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3}s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}ms", ns / 1e6)
    } else if a >= 1e3 {
        format!("{:.1}µs", ns / 1e3)
    } else {
        format!("{ns:.0}ns")
    }
}

/// A number without a unit: a whole number as an integer; otherwise three
/// decimals, or scientific notation when very large or small.
pub fn number(v: f64) -> String {
    // Counts (`documents 500`, `bytes_written 124933`) are whole: no decimals.
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    if v.abs() >= 1e6 || (v != 0.0 && v.abs() < 1e-3) {
        format!("{v:.3e}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::{column_cells, metric_text, number};
    use crate::ColumnSummary;

    #[test]
    fn whole_numbers_have_no_decimals() {
        assert_eq!(number(500.0), "500");
        assert_eq!(number(124_933.0), "124933");
        assert_eq!(number(0.5), "0.500");
        assert_eq!(number(2.5e7 + 0.5), "2.500e7");
    }

    #[test]
    fn columns_get_units_and_only_meaningful_statistics() {
        let summary = |column: &str, values: [f64; 6]| ColumnSummary {
            column: column.into(),
            count: 10,
            nan: 0,
            mean: Some(values[0]),
            min: Some(values[1]),
            p50: Some(values[2]),
            p95: Some(values[3]),
            p99: Some(values[4]),
            max: Some(values[5]),
        };
        let cells = |column: &str, values| column_cells(&summary(column, values)).map(|c| c.join(" | "));
        assert_eq!(cells("seed", [6.4e18; 6]), None);
        assert_eq!(cells("start_unix_ns", [1.8e18; 6]), None);
        assert_eq!(
            cells(
                "ack_latency_ns",
                [704_348.3, 19_560.0, 214_911.0, 359_216.0, 825_409.5, 1.265e7]
            )
            .unwrap(),
            "704.3µs | 19.6µs | 214.9µs | 359.2µs | 825.4µs | 12.65ms"
        );
        assert_eq!(
            cells("sent_ns", [3e10, 1.2e9, 3e10, 5e10, 6e10, 6.6e10]).unwrap(),
            "- | 1.200s | - | - | - | 66.000s"
        );
        assert_eq!(
            cells("rss_bytes", [622e3, 1e3, 2e3, 3e3, 4e3, 5e6]).unwrap(),
            "622 KB | 1 KB | 2 KB | 3 KB | 4 KB | 5 MB"
        );
        assert_eq!(
            cells("cpu0_user_pct", [11.111, 0.0, 1.0, 2.0, 3.0, 17.0])
                .unwrap()
                .split(" | ")
                .next(),
            Some("11.1%")
        );
        assert_eq!(
            cells("ctxt_per_s", [78_710.3; 6]).unwrap().split(" | ").next(),
            Some("78.7 k/s")
        );
        assert_eq!(cells("size", [2.5; 6]).unwrap().split(" | ").next(), Some("2.500"));
    }

    #[test]
    fn metrics_read_with_their_units() {
        let cases = [
            ("fleet", "ack_latency", 235_956.4, "ack_latency 236.0µs"),
            ("fleet", "send_lateness_p99", 480_794.0, "send_lateness_p99 480.8µs"),
            (
                "fleet",
                "runner_cpu_per_message",
                16_613.3,
                "runner_cpu_per_message 16.6µs",
            ),
            (
                "fleet",
                "runner_rss_per_device",
                16_761.9,
                "runner_rss_per_device 16.8 KB/device",
            ),
            ("fleet", "runner_cpu_ratio", 0.312, "runner_cpu_ratio 0.312 cores"),
            ("fleet", "throughput", 19_999.976, "throughput 20000 msg/s"),
            ("fleet", "contended", 0.0, "contended no"),
            ("fleet", "messages_lost", 0.0, "messages_lost 0"),
            ("fleet", "devices_not_connected", 413.0, "devices_not_connected 413"),
            ("fleet", "outage", 0.0, "outage 0ns"),
            ("traffic", "throughput", 2.5e9, "throughput 2.5 Gbit/s"),
            ("traffic", "response_time_p99", 1.5e9, "response_time_p99 1.500s"),
            ("traffic", "failed_connections", 3.0, "failed_connections 3"),
            ("anomaly", "achieved_utilization", 0.4987, "achieved_utilization 49.9%"),
            ("anomaly", "bytes_touched", 2.0e9, "bytes_touched 2 GB"),
            ("xml", "throughput", 143.27, "throughput 143 MB/s"),
            ("xml", "max_ks", 0.0512, "max_ks 0.051"),
            ("xml", "unknown_metric", f64::NAN, "unknown_metric NaN"),
        ];
        for (kind, metric, value, want) in cases {
            assert_eq!(metric_text(kind, metric, value), want, "{kind} {metric}");
        }
    }
}
