//! The progress line's live part: per running workload, its counters and
//! the latest second's throughput or latency, read from the run's live
//! counters (`exp_runtime::live`) at each progress tick.

use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use exp_diagnostics::limits::group;
use exp_runtime::live::{Live, WorkloadCounters};

/// A workload's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Reading {
    pub sent: u64,
    pub acked: u64,
    pub lost: u64,
    pub ack_sum_ns: u64,
    pub ack_count: u64,
    pub started: u64,
    pub finished: u64,
    pub documents: u64,
    pub activations_active: u64,
    pub achieved_utilization: f64,
}

impl Reading {
    fn of(c: &WorkloadCounters) -> Reading {
        let started = c.activations_started.load(Relaxed);
        Reading {
            sent: c.messages_sent.load(Relaxed),
            acked: c.messages_acked.load(Relaxed),
            lost: c.messages_lost.load(Relaxed),
            ack_sum_ns: c.ack_latency_sum_ns.load(Relaxed),
            ack_count: c.ack_latency_count.load(Relaxed),
            started: c.connections.started.load(Relaxed),
            finished: c.connections.finished.load(Relaxed),
            documents: c.documents.load(Relaxed),
            activations_active: started.saturating_sub(c.activations_ended.load(Relaxed)),
            achieved_utilization: c.achieved_utilization(),
        }
    }
}

/// The previous reading of each workload, for the latest second's rates.
#[derive(Default)]
pub struct LiveLine {
    last: HashMap<String, (Instant, Reading)>,
}

impl LiveLine {
    /// `sensors: 12,345 sent, 12,300 ok, 0 lost, 2,000/s, ack 1.2 ms │ …`
    /// for the workloads running now.
    pub fn line(&mut self, live: &Live) -> String {
        let now = Instant::now();
        let mut parts = Vec::new();
        for (name, kind, counters) in live.workloads() {
            if !counters.running.load(Relaxed) {
                continue;
            }
            let reading = Reading::of(&counters);
            let before = self
                .last
                .insert(name.clone(), (now, reading))
                .map(|(at, r)| (r, now.saturating_duration_since(at)));
            parts.push(format!("{name}: {}", describe(kind, &reading, before)));
        }
        parts.join(" │ ")
    }
}

/// What one workload did, and in the time since `before` (its rate, or the
/// mean acknowledgement latency of the messages that became final in it).
pub fn describe(kind: &str, now: &Reading, before: Option<(Reading, Duration)>) -> String {
    let since = before.filter(|(_, elapsed)| !elapsed.is_zero());
    match kind {
        "fleet" => {
            let mut text = format!(
                "{} sent, {} ok, {} lost",
                group(now.sent),
                group(now.acked),
                group(now.lost)
            );
            if let Some((before, elapsed)) = since {
                let rate = now.acked.saturating_sub(before.acked) as f64 / elapsed.as_secs_f64();
                text.push_str(&format!(", {}/s", group(rate.round() as u64)));
                let acks = now.ack_count.saturating_sub(before.ack_count);
                if acks > 0 {
                    let mean_ns = now.ack_sum_ns.saturating_sub(before.ack_sum_ns) as f64 / acks as f64;
                    text.push_str(&format!(", ack {}", latency(mean_ns)));
                }
            }
            text
        }
        "traffic" => {
            let open = now.started.saturating_sub(now.finished);
            let mut text = format!("{} open, {} finished", group(open), group(now.finished));
            if let Some((before, elapsed)) = since {
                let rate = now.finished.saturating_sub(before.finished) as f64 / elapsed.as_secs_f64();
                text.push_str(&format!(", {}/s", group(rate.round() as u64)));
            }
            text
        }
        "anomaly" if now.achieved_utilization.is_finite() => format!(
            "{} active, {:.0} % achieved",
            now.activations_active,
            now.achieved_utilization * 100.0
        ),
        "anomaly" => format!("{} active", now.activations_active),
        _ => format!("{} documents", group(now.documents)),
    }
}

/// `850 µs`, `1.2 ms`, `3.40 s`.
fn latency(ns: f64) -> String {
    if ns < 1e6 {
        format!("{:.0} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fleet_shows_its_counts_rate_and_latest_latency() {
        let before = Reading {
            sent: 1_000,
            acked: 990,
            ack_sum_ns: 990_000_000,
            ack_count: 990,
            ..Reading::default()
        };
        let now = Reading {
            sent: 3_000,
            acked: 2_990,
            lost: 2,
            ack_sum_ns: 990_000_000 + 2_000 * 1_200_000,
            ack_count: 2_990,
            ..Reading::default()
        };
        assert_eq!(
            describe("fleet", &now, Some((before, Duration::from_secs(1)))),
            "3,000 sent, 2,990 ok, 2 lost, 2,000/s, ack 1.2 ms"
        );
        assert_eq!(describe("fleet", &now, None), "3,000 sent, 2,990 ok, 2 lost");
    }

    #[test]
    fn other_kinds_show_what_they_count() {
        let traffic = Reading {
            started: 50,
            finished: 40,
            ..Reading::default()
        };
        let earlier = Reading {
            finished: 20,
            ..Reading::default()
        };
        assert_eq!(
            describe("traffic", &traffic, Some((earlier, Duration::from_secs(2)))),
            "10 open, 40 finished, 10/s"
        );
        let anomaly = Reading {
            activations_active: 1,
            achieved_utilization: 0.494,
            ..Reading::default()
        };
        assert_eq!(describe("anomaly", &anomaly, None), "1 active, 49 % achieved");
        let starting = Reading {
            achieved_utilization: f64::NAN,
            ..Reading::default()
        };
        assert_eq!(describe("anomaly", &starting, None), "0 active");
    }
}
