//! The limits a compiled plan meets by construction, for what every plan
//! and workload has (the experiment's times, each workload's window and
//! E0606 schedule density), checked again in preflight: a plan read from a
//! file may have been written by hand, and must be refused as clearly as
//! the spec it could have come from, before anything expands or runs it.
//! Each kind's own limits are in its `<kind>/check.rs` (`kinds::limits`).

use exp_diagnostics::limits::{group, MAX_INTERVALS, MAX_PLAN_INTEGER, MIN_PERIOD_PART_NS};
use exp_diagnostics::{Code, Diagnostic};
use exp_plan::{Period, Plan, Workload};

use crate::findings::{out_of_bounds, Finding, COMPILED_ONLY};

/// The problems of the plan's own times: the experiment's `duration` and
/// `pause`, each monitor's `interval` (a duration of 2^64 − 1 ns waited
/// for ever; the language holds every time to 2^53 − 1 ns).
pub(crate) fn check_times(plan: &Plan) -> Vec<Finding> {
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

/// The problems of one workload variant's window, each with a key that is
/// the same for every variant sharing it: a period the runtime cannot
/// honour (too dense), times past what a plan holds.
pub(crate) fn check(plan: &Plan, workload: &Workload) -> Vec<Finding> {
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
