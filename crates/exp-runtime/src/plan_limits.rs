//! The limits a compiled plan meets by construction (E0606 schedule
//! density, MQTT QoS levels, a fleet's numeric ranges), checked again in
//! preflight: a plan read from a file may have been written by hand, and
//! must be refused as clearly as the spec it could have come from, before
//! anything expands or runs it.

use exp_diagnostics::limits::{group, MAX_INTERVALS, MAX_PLAN_INTEGER, MIN_MEAN_GAP_NS, MIN_PERIOD_PART_NS};
use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{Fleet, Period, Plan, Workload, WorkloadConfig};

/// The problems of one workload variant, each with a key that is the same
/// for every variant sharing it.
pub(crate) fn check(plan: &Plan, workload: &Workload) -> Vec<(String, Diagnostic)> {
    let mut problems = Vec::new();
    let name = &workload.name;
    if let Some(period) = &workload.window.period {
        let end = match (workload.window.end_ns, plan.experiment.duration_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(problem) = period_problem(period, workload.window.start_ns, end) {
            problems.push((
                format!("period {name}"),
                Diagnostic::error(Code::E0606, format!("workload `{name}`: {problem}"))
                    .help("a compiled plan never has this: compile the spec again, or fix `window.period` in the plan"),
            ));
        }
    }
    if let WorkloadConfig::Fleet(fleet) = &workload.config {
        if fleet.qos > 2 {
            problems.push((
                format!("qos {name}"),
                Diagnostic::error(
                    Code::E1006,
                    format!("fleet `{name}`: QoS {} is not an MQTT level (0, 1 or 2)", fleet.qos),
                ),
            ));
        }
        for (property, value, (min, max)) in fleet_numbers(fleet) {
            if !(value >= min && value <= max) {
                problems.push((
                    format!("{property} {name}"),
                    Diagnostic::error(
                        Code::E1007,
                        format!("fleet `{name}`: `{property}` is {value}, outside {min} to {max}"),
                    )
                    .help("a compiled plan never has this: compile the spec again, or fix the plan"),
                ));
            }
        }
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
    }
    problems
}

/// A fleet's numbers with the bounds the language gives their properties
/// (exp-check's `registry/fleet.rs`): outside them the runtime would divide
/// by zero, overflow a duration or size a broker for nothing.
fn fleet_numbers(fleet: &Fleet) -> [(&'static str, f64, (f64, f64)); 7] {
    let ns = |n: u64| n as f64;
    [
        ("devices", f64::from(fleet.devices), (1.0, 1e6)),
        ("connect_rate_per_s", fleet.connect_rate_per_s, (0.001, f64::MAX)),
        ("warmup_ratio", fleet.warmup_ratio, (0.0, 0.99)),
        ("keep_alive_ns", ns(fleet.keep_alive_ns), (1e9, 65535e9)),
        ("ack_timeout_ns", ns(fleet.ack_timeout_ns), (1e6, MAX_PLAN_INTEGER)),
        ("max_inflight", f64::from(fleet.broker.max_inflight), (1.0, 65535.0)),
        (
            "max_packet_bytes",
            ns(fleet.broker.max_packet_bytes),
            (1024.0, 268_435_455.0),
        ),
    ]
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
