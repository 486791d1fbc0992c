//! The traffic report as text (`expc report`): one table pooled over all
//! trials by structure and RTT mode, then one by trial. The numbers and
//! their definitions are [`crate::traffic`]'s.

use std::fmt::Write;

use crate::mqtt::Quantiles;
use crate::{TrafficGroup, TrafficReport};

/// The report's section, starting with an empty line and `== Traffic`.
pub fn render(report: &TrafficReport) -> String {
    let mut out = String::from("\n== Traffic\n");
    if report.time_scale != 1.0 {
        let _ = writeln!(
            out,
            "time scale {}: windows are scaled, connection schedules are not (a window replays the connections that start within it)",
            report.time_scale
        );
    }
    out.push_str("by structure and RTT mode, all trials (in-window rows only; times in ms):\n");
    table(&mut out, &report.pooled, false);
    out.push_str("\nby trial:\n");
    table(&mut out, &report.trials, true);
    out
}

fn table(out: &mut String, groups: &[TrafficGroup], by_trial: bool) {
    let _ = writeln!(
        out,
        "  {:<5} {:<9} {:<15} {:<20} {:>6} {:>6} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>5} {:>11} {:>11}",
        "trial",
        "structure",
        "rtt",
        "workload",
        "conns",
        "failed",
        "short",
        "dur p50",
        "dur p90",
        "dur p99",
        "resp p50",
        "resp p90",
        "resp p99",
        "peak",
        "bytes out",
        "bytes in"
    );
    for g in groups {
        let q = |q: &Option<Quantiles>, pick: fn(&Quantiles) -> f64| {
            q.as_ref()
                .map_or_else(|| "-".to_string(), |q| format!("{:.1}", pick(q) / 1e6))
        };
        let trial = match (by_trial, g.trial) {
            (true, Some(t)) => t.to_string(),
            _ => "all".to_string(),
        };
        let _ = writeln!(
            out,
            "  {:<5} {:<9} {:<15} {:<20} {:>6} {:>6} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>5} {:>11} {:>11}",
            trial,
            g.structure,
            g.rtt_mode,
            g.workload,
            g.connections,
            g.failed,
            g.short,
            q(&g.duration_ns, |q| q.p50),
            q(&g.duration_ns, |q| q.p90),
            q(&g.duration_ns, |q| q.p99),
            q(&g.response_time_ns, |q| q.p50),
            q(&g.response_time_ns, |q| q.p90),
            q(&g.response_time_ns, |q| q.p99),
            g.peak_active,
            g.sent_bytes,
            g.received_bytes
        );
    }
}
