//! The limits a compiled plan meets by construction (E0606 schedule
//! density, MQTT QoS levels, every workload kind's numeric ranges, an
//! anomaly's parameters), checked again in preflight: a plan read from a
//! file may have been written by hand, and must be refused as clearly as
//! the spec it could have come from, before anything expands or runs it.

use exp_diagnostics::limits::{
    group, MAX_INTERVALS, MAX_PLAN_INTEGER, MAX_SYNTHETIC_CONNECTIONS, MIN_MEAN_GAP_NS, MIN_PERIOD_PART_NS,
};
use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{Anomaly, Fleet, Period, Plan, Traffic, Vectors, Warmup, Workload, Xml};

/// The problems of the plan's own times: the experiment's `duration` and
/// `pause`, each monitor's `interval` (a duration of 2^64 − 1 ns waited
/// for ever; the language holds every time to 2^53 − 1 ns).
pub(crate) fn check_times(plan: &Plan) -> Vec<(String, Diagnostic)> {
    let ns = |n: u64| n as f64;
    let mut times = vec![("pause_ns", ns(plan.experiment.pause_ns), (0.0, MAX_PLAN_INTEGER))];
    if let Some(duration) = plan.experiment.duration_ns {
        times.push(("duration_ns", ns(duration), (1.0, MAX_PLAN_INTEGER)));
    }
    let monitors = plan.monitor.iter().flat_map(|m| &m.variants);
    times.extend(monitors.map(|m| ("monitor interval_ns", ns(m.interval_ns), (10e6, 3600e9))));
    times
        .into_iter()
        .filter(|&(_, value, (min, max))| !(value >= min && value <= max))
        .map(|(property, value, (min, max))| {
            (
                format!("experiment {property}"),
                Diagnostic::error(
                    Code::E1005,
                    format!("experiment: `{property}` is {value}, outside {min} to {max}"),
                )
                .help(COMPILED_ONLY),
            )
        })
        .collect()
}

/// The problems of one workload variant, each with a key that is the same
/// for every variant sharing it.
pub(crate) fn check(plan: &Plan, workload: &Workload) -> Vec<(String, Diagnostic)> {
    let mut problems = window_problems(plan, workload);
    problems.extend(crate::kinds::limits(&workload.name, &workload.config));
    problems
}

/// The rules the anomaly's child applies before it runs a kernel.
pub(crate) fn anomaly_problems(name: &str, anomaly: &Anomaly) -> Vec<(String, Diagnostic)> {
    let Err(problem) = exp_anomaly::validate(anomaly) else {
        return Vec::new();
    };
    vec![(
        format!("params {name}"),
        Diagnostic::error(Code::E1005, format!("anomaly `{name}`: {problem}")).help(COMPILED_ONLY),
    )]
}

/// A traffic workload's numbers and network.
pub(crate) fn traffic_problems(name: &str, traffic: &Traffic) -> Vec<(String, Diagnostic)> {
    let mut problems: Vec<_> = out_of_bounds(Code::E1005, "traffic", name, traffic_numbers(traffic)).collect();
    if !matches!(traffic.network.as_str(), "loopback" | "namespaces") {
        problems.push((
            format!("network {name}"),
            Diagnostic::error(
                Code::E1005,
                format!(
                    "traffic `{name}`: `network` is `{}`, not `loopback` or `namespaces`",
                    traffic.network
                ),
            )
            .help(COMPILED_ONLY),
        ));
    }
    problems
}

/// An xml workload's numbers.
pub(crate) fn xml_problems(name: &str, xml: &Xml) -> Vec<(String, Diagnostic)> {
    out_of_bounds(Code::E1005, "xml", name, xml_numbers(xml)).collect()
}

/// A window the runtime cannot honour: a period too dense, times past what
/// a plan holds.
fn window_problems(plan: &Plan, workload: &Workload) -> Vec<(String, Diagnostic)> {
    let (name, window) = (&workload.name, &workload.window);
    let mut problems = Vec::new();
    if let Some(period) = &window.period {
        let end = match (window.end_ns, plan.experiment.duration_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(problem) = period_problem(period, window.start_ns, end) {
            problems.push((
                format!("period {name}"),
                Diagnostic::error(Code::E0606, format!("workload `{name}`: {problem}"))
                    .help("a compiled plan never has this: compile the spec again, or fix `window.period` in the plan"),
            ));
        }
    }
    let times = [
        ("window start_ns", window.start_ns as f64, (0.0, MAX_PLAN_INTEGER)),
        (
            "window end_ns",
            window.end_ns.map_or(0.0, |t| t as f64),
            (0.0, MAX_PLAN_INTEGER),
        ),
    ];
    problems.extend(out_of_bounds(Code::E1005, "workload", name, times));
    problems
}

/// A fleet's QoS, numbers and gap.
pub(crate) fn fleet_problems(name: &str, fleet: &Fleet) -> Vec<(String, Diagnostic)> {
    let mut problems = Vec::new();
    if fleet.qos > 2 {
        problems.push((
            format!("qos {name}"),
            Diagnostic::error(
                Code::E1006,
                format!("fleet `{name}`: QoS {} is not an MQTT level (0, 1 or 2)", fleet.qos),
            ),
        ));
    }
    problems.extend(out_of_bounds(Code::E1007, "fleet", name, fleet_numbers(fleet)));
    // A gap that cannot be sampled is reported by the fleet's own check.
    let mean = exp_stats::Sampler::new(&fleet.gap).ok().and_then(|s| s.mean());
    if let Some(mean) = mean.filter(|m| m.is_nan() || *m < MIN_MEAN_GAP_NS as f64) {
        problems.push((
            format!("gap {name}"),
            Diagnostic::error(
                Code::E0606,
                format!("fleet `{name}`: a device's mean gap is {mean:.0} ns, less than {MIN_MEAN_GAP_NS} ns"),
            )
            .help("for more load, add devices rather than shortening their gap"),
        ));
    }
    problems
}

/// Each number outside its inclusive bounds (NaN included).
fn out_of_bounds<'a>(
    code: Code,
    kind: &'a str,
    name: &'a str,
    numbers: impl IntoIterator<Item = (&'static str, f64, (f64, f64))> + 'a,
) -> impl Iterator<Item = (String, Diagnostic)> + 'a {
    numbers
        .into_iter()
        .filter(|(_, value, (min, max))| !(*value >= *min && *value <= *max))
        .map(move |(property, value, (min, max))| {
            (
                format!("{property} {name}"),
                Diagnostic::error(
                    code,
                    format!("{kind} `{name}`: `{property}` is {value}, outside {min} to {max}"),
                )
                .help(COMPILED_ONLY),
            )
        })
}

const COMPILED_ONLY: &str = "a compiled plan never has this: compile the spec again, or fix the plan";

/// A fleet's numbers with the bounds the language gives their properties
/// (exp-check's `registry/fleet.rs`): outside them the runtime would divide
/// by zero, overflow a duration or size a broker for nothing.
fn fleet_numbers(fleet: &Fleet) -> Vec<(&'static str, f64, (f64, f64))> {
    let ns = |n: u64| n as f64;
    let mut numbers = vec![
        ("devices", f64::from(fleet.devices), (1.0, 1e6)),
        ("connect_rate_per_s", fleet.connect_rate_per_s, (0.001, f64::MAX)),
        match fleet.warmup {
            Warmup::Ratio(ratio) => ("warmup.ratio", ratio, (0.0, 0.99)),
            Warmup::Ns(span) => ("warmup.ns", ns(span), (0.0, MAX_PLAN_INTEGER)),
        },
        ("keep_alive_ns", ns(fleet.keep_alive_ns), (1e9, 65535e9)),
        ("ack_timeout_ns", ns(fleet.ack_timeout_ns), (1e6, MAX_PLAN_INTEGER)),
        ("max_inflight", f64::from(fleet.broker.max_inflight), (1.0, 65535.0)),
        (
            "max_packet_bytes",
            ns(fleet.broker.max_packet_bytes),
            (1024.0, 268_435_455.0),
        ),
    ];
    if let Some(messages) = fleet.messages {
        numbers.push(("messages", ns(messages), (1.0, MAX_PLAN_INTEGER)));
    }
    if let Some(port) = fleet.broker.port {
        numbers.push(("port", f64::from(port), exp_plan::bounds::PORT));
    }
    numbers
}

/// A traffic workload's numbers with the bounds the language gives them
/// (exp-check's `registry/traffic.rs` and `synthetic`): outside them the
/// replay would allocate without bound, sample every nanosecond or bind
/// addresses that do not exist. Absent options are not checked.
fn traffic_numbers(traffic: &Traffic) -> Vec<(&'static str, f64, (f64, f64))> {
    let ns = |n: u64| n as f64;
    let mut numbers = vec![
        ("interval_ns", ns(traffic.interval_ns), (1e6, MAX_PLAN_INTEGER)),
        ("source_addresses", f64::from(traffic.source_addresses), (1.0, 254.0)),
        ("queue_bytes", ns(traffic.queue_bytes), (1500.0, MAX_PLAN_INTEGER)),
    ];
    if let Some(window) = traffic.window_bytes {
        numbers.push(("window_bytes", ns(window), (256.0, MAX_PLAN_INTEGER)));
    }
    if let Some(rate) = traffic.bottleneck_bit_per_s {
        numbers.push(("bottleneck_bit_per_s", ns(rate), (1000.0, MAX_PLAN_INTEGER)));
    }
    if let Vectors::Synthetic(synthetic) = &traffic.vectors {
        let most = MAX_SYNTHETIC_CONNECTIONS as f64;
        numbers.push(("connections", ns(synthetic.connections), (1.0, most)));
    }
    numbers
}

/// An xml workload's numbers with the bounds the language gives them
/// (exp-check's `registry/xml.rs`): outside them generation would start
/// billions of threads or never end.
fn xml_numbers(xml: &Xml) -> Vec<(&'static str, f64, (f64, f64))> {
    let n = |n: u64| n as f64;
    let mut numbers = vec![
        ("max_distinct", f64::from(xml.max_distinct), (1.0, 1e6)),
        (
            "categorical_threshold",
            f64::from(xml.categorical_threshold),
            (1.0, 1e6),
        ),
        ("per_file", f64::from(xml.per_file), (1.0, 1e9)),
        ("threads", f64::from(xml.threads), (0.0, 1024.0)),
    ];
    if let Some(documents) = xml.documents {
        numbers.push(("documents", n(documents), (1.0, MAX_PLAN_INTEGER)));
    }
    if let Some(bytes) = xml.size_bytes {
        numbers.push(("size_bytes", n(bytes), (1.0, MAX_PLAN_INTEGER)));
    }
    numbers
}

/// Why a periodic window cannot be honoured, as the compiler words it.
fn period_problem(period: &Period, start: u64, end: Option<u64>) -> Option<String> {
    if period.active_ns < MIN_PERIOD_PART_NS {
        return Some(format!(
            "`active` is {} ns, shorter than {MIN_PERIOD_PART_NS} ns",
            period.active_ns
        ));
    }
    let pause = period.every_ns.saturating_sub(period.active_ns);
    if pause < MIN_PERIOD_PART_NS {
        return Some(format!(
            "the pause `every − active` is {pause} ns, shorter than {MIN_PERIOD_PART_NS} ns"
        ));
    }
    let intervals = end.map_or(1, |end| end.saturating_sub(start).div_ceil(period.every_ns));
    (intervals > MAX_INTERVALS).then(|| {
        format!(
            "the window has {} active intervals in one trial, more than {}",
            group(intervals),
            group(MAX_INTERVALS)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn period(every: u64, active: u64) -> Period {
        Period {
            every_ns: every,
            active_ns: active,
        }
    }

    #[test]
    fn periods_the_compiler_refuses_are_refused_here() {
        assert!(period_problem(&period(2, 1), 0, Some(3_600_000 * MS)).is_some_and(|p| p.contains("`active`")));
        assert!(period_problem(&period(15 * MS, 10 * MS), 0, None).is_some_and(|p| p.contains("pause")));
        assert!(period_problem(&period(10 * MS, 20 * MS), 0, None).is_some_and(|p| p.contains("pause")));
        let hour = 3_600_000 * MS;
        assert!(period_problem(&period(20 * MS, 10 * MS), 0, Some(hour)).is_some_and(|p| p.contains("180,000")));
        assert_eq!(period_problem(&period(20 * MS, 10 * MS), 0, Some(1_000 * MS)), None);
        assert_eq!(period_problem(&period(20 * MS, 10 * MS), 0, None), None);
    }
}
