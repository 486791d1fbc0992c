//! Trial metrics as people read them: `ack_latency 236 µs`, `runner_rss_per_device
//! 16.8 KB`, `throughput 20,000 msg/s`. Metric names carry no unit (specs
//! name them in `repeat until`), so the unit comes from the workload's kind
//! and the metric's name; the manifest and `--json` keep the raw numbers.

use crate::summary::number;

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
        (_, m) if m.ends_with("connections") || m == "messages_lost" || m == "disconnects" || m == "operations" => {
            Unit::Count
        }
        _ => Unit::Plain,
    }
}

/// `metric value` with its unit (`per_device` for `runner_rss_per_device`).
pub fn metric_text(kind: &str, metric: &str, value: f64) -> String {
    let per = if metric.ends_with("_per_device") { "/device" } else { "" };
    let text = match unit(kind, metric) {
        _ if !value.is_finite() => number(value),
        Unit::Duration => duration(value),
        Unit::Bytes => scaled(value, 1000.0, &["B", "KB", "MB", "GB", "TB"]),
        Unit::Cores => format!("{} cores", significant(value)),
        Unit::Share => format!("{}%", significant(value * 100.0)),
        Unit::Count => format!("{value:.0}"),
        Unit::Flag => (if value != 0.0 { "yes" } else { "no" }).to_string(),
        Unit::Rate("bit/s") => scaled(value, 1000.0, &["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"]),
        Unit::Rate(what) => format!("{} {what}", significant(value)),
        Unit::Plain => significant(value),
    };
    format!("{metric} {text}{per}")
}

/// ns as `850 ns`, `236 µs`, `1.23 ms`, `4.5 s`.
fn duration(ns: f64) -> String {
    if ns == 0.0 {
        return "0 s".into();
    }
    scaled(ns, 1000.0, &["ns", "µs", "ms", "s"])
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

#[cfg(test)]
mod tests {
    use super::metric_text;

    #[test]
    fn metrics_read_with_their_units() {
        let cases = [
            ("fleet", "ack_latency", 235_956.4, "ack_latency 236 µs"),
            ("fleet", "send_lateness_p99", 480_794.0, "send_lateness_p99 481 µs"),
            (
                "fleet",
                "runner_cpu_per_message",
                16_613.3,
                "runner_cpu_per_message 16.6 µs",
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
            ("fleet", "outage", 0.0, "outage 0 s"),
            ("traffic", "throughput", 2.5e9, "throughput 2.5 Gbit/s"),
            ("traffic", "response_time_p99", 1.5e9, "response_time_p99 1.5 s"),
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
