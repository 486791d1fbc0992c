//! A fleet's summary metrics for the manifest and the trials table, from
//! the collector's totals of each interval.

use exp_plan::Fleet;
use exp_stats::Sampler;

use super::collector::{ns, p99, Totals};
use super::cpu::CpuUse;
use crate::executor::WorkloadSummary;
use exp_results::validity::Bounds;

pub fn merge(into: &mut Totals, t: Totals) {
    into.messages += t.messages;
    into.completed += t.completed;
    into.lost += t.lost;
    into.not_connected += t.not_connected;
    into.ack_sum_ns += t.ack_sum_ns;
    into.ack_from_schedule_sum_ns += t.ack_from_schedule_sum_ns;
    into.ack_count += t.ack_count;
    into.delivery_sum_ns += t.delivery_sum_ns;
    into.delivery_count += t.delivery_count;
    into.lateness_sum_ns += t.lateness_sum_ns;
    into.lateness.extend(t.lateness);
    into.ack_ns.extend(t.ack_ns);
    into.delivery_ns.extend(t.delivery_ns);
    into.rss_per_device = match (into.rss_per_device, t.rss_per_device) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    for d in t.devices.values() {
        into.disconnects += d.disconnects;
        into.longest_outage = into.longest_outage.max(d.outage);
    }
    into.span_ns = match (into.span_ns, t.span_ns) {
        (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
        (a, b) => a.or(b),
    };
}

pub fn summary(fleet: &Fleet, t: &mut Totals, cpu: CpuUse, bounds: &Bounds) -> WorkloadSummary {
    let mut s = WorkloadSummary::default();
    let mut put = |k: &str, v: f64| {
        s.metrics.insert(k.to_string(), v);
    };
    if t.ack_count > 0 {
        put("ack_latency", t.ack_sum_ns / t.ack_count as f64);
        put(
            "ack_latency_from_schedule",
            t.ack_from_schedule_sum_ns / t.ack_count as f64,
        );
    }
    if t.delivery_count > 0 {
        put("delivery_latency", t.delivery_sum_ns / t.delivery_count as f64);
    }
    for (name, values) in [("ack_latency", &mut t.ack_ns), ("delivery_latency", &mut t.delivery_ns)] {
        values.sort_unstable();
        let values: Vec<f64> = values.iter().map(|&ns| ns as f64).collect();
        // As the traffic percentiles: type 7, between the nearest ranks.
        for (suffix, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
            if let Some(v) = exp_stats::percentile(&values, q) {
                put(&format!("{name}_{suffix}"), v);
            }
        }
    }
    if t.messages > 0 {
        put("send_lateness", t.lateness_sum_ns / t.messages as f64);
    }
    if let Some((first, last)) = t.span_ns.filter(|(a, b)| b > a) {
        put(
            "throughput",
            t.completed.saturating_sub(1) as f64 / ((last - first) as f64 / 1e9),
        );
    }
    put("messages_lost", t.lost as f64);
    // Only when some did not connect: a trial that measured less of the
    // fleet than the spec asked for (`expc run` and `expc report` warn).
    if t.not_connected > 0 {
        put("devices_not_connected", t.not_connected as f64);
    }
    put("disconnects", t.disconnects as f64);
    put("outage", ns(t.longest_outage) as f64);
    let wall = cpu.wall_s.max(1e-9);
    put("runner_cpu_ratio", cpu.runner_s / wall);
    put("others_cpu_ratio", cpu.others_s / wall);
    put("steal_cpu_ratio", cpu.steal_s / wall);
    let sent = t.lateness.len();
    if sent > 0 {
        put("runner_cpu_per_message", cpu.runner_s * 1e9 / sent as f64);
    }
    if let Some(rss) = t.rss_per_device {
        put("runner_rss_per_device", rss);
    }
    t.lateness.sort_unstable();
    if let Some(p99) = p99(&t.lateness) {
        put("send_lateness_p99", p99 as f64);
        put("contended", if p99 > lateness_bound_ns(fleet) { 1.0 } else { 0.0 });
    }
    s.findings = super::audit::findings(t, cpu, lateness_bound_ns(fleet), bounds);
    s
}

/// The send lateness above which a trial's timing was not what the
/// schedule asked for: the fleet's `lateness_bound`, or a tenth of the
/// median gap (a message that late has moved a tenth of the way to the
/// next one), but never under 1 ms, the pacer's own batching allowance
/// (it fires at most 2,000 passes a second, up to 0.5 ms late by design).
pub fn lateness_bound_ns(fleet: &Fleet) -> u64 {
    const FLOOR_NS: u64 = 1_000_000;
    fleet.lateness_bound_ns.unwrap_or_else(|| {
        let median = Sampler::new(&fleet.gap).ok().and_then(|gap| gap.median());
        median.map_or(FLOOR_NS, |m| ((m / 10.0) as u64).max(FLOOR_NS))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lateness_bound_is_a_tenth_of_the_median_gap_at_least_1_ms() {
        let mut fleet = crate::fleet::test_fleet(10);
        let gap = |fleet: &mut Fleet, dist: serde_json::Value| {
            fleet.gap = serde_json::from_value(dist).unwrap();
        };
        gap(
            &mut fleet,
            serde_json::json!({"unit": "ns", "family": "constant", "value": 200e6}),
        );
        assert_eq!(lateness_bound_ns(&fleet), 20_000_000);
        // Pareto with shape 1 has no mean, but a median: 2 × scale.
        gap(
            &mut fleet,
            serde_json::json!({"unit": "ns", "family": "pareto", "shape": 1.0, "scale": 50e6}),
        );
        assert_eq!(lateness_bound_ns(&fleet), 10_000_000);
        gap(
            &mut fleet,
            serde_json::json!({"unit": "ns", "family": "constant", "value": 2e6}),
        );
        assert_eq!(lateness_bound_ns(&fleet), 1_000_000, "the floor");
        fleet.lateness_bound_ns = Some(300_000);
        assert_eq!(lateness_bound_ns(&fleet), 300_000, "as the spec says");
    }
}
