//! A traffic workload's summary metrics for the manifest, the trials table
//! and `repeat until`, by the names the registry declares (`duration`,
//! `response_time`, `active_connections`, `throughput`) plus percentiles
//! and counts. Only rows inside the measurement window count.

use exp_traffic::replay::{ConnectionRecord, ConnectionStatus, Interruption, ReplayResult};

use exp_results::validity::Finding;

use crate::executor::WorkloadSummary;

/// Totals over every window of one trial.
#[derive(Default)]
pub struct Totals {
    durations_ns: Vec<f64>,
    responses_ns: Vec<f64>,
    pub(super) connections: u64,
    pub(super) failed: u64,
    peak_active: u32,
    bytes: u64,
    interval_ns: u64,
    /// For the audit (audit.rs): each tried connection's start lateness,
    /// and each measured connection's (achieved, assigned) RTT in µs.
    pub(super) start_lateness_us: Vec<u64>,
    pub(super) rtts_us: Vec<(u64, u64)>,
}

impl Totals {
    pub fn add(&mut self, result: &ReplayResult) {
        // Connections a stop kept from starting were never tried; those it
        // cut count, but their truncated durations would skew the statistics.
        let tried = |c: &&ConnectionRecord| c.interrupted != Some(Interruption::NotStarted);
        for c in result.connections.iter().filter(|c| c.in_window).filter(tried) {
            self.connections += 1;
            self.start_lateness_us
                .push(c.actual_start_us.saturating_sub(c.planned_start_us));
            if let (Some(tcp), Some(assigned)) = (&c.tcp, c.assigned_rtt_us) {
                self.rtts_us.push((u64::from(tcp.rtt_us), assigned));
            }
            // A connection the window's end (or Ctrl-C) cut while it was
            // still connecting keeps status `Failed` in its record, but it
            // did not fail: its row says `interrupted`, as the report and
            // the claims count it (a connection scheduled within one RTT of
            // the window's end: one window in three of the reproduction of
            // connection structures at `--time-scale 0.5`).
            if c.interrupted.is_some() {
                continue;
            }
            if c.status == ConnectionStatus::Failed {
                self.failed += 1;
            } else {
                self.durations_ns.push(c.duration_us as f64 * 1000.0);
            }
        }
        self.responses_ns.extend(
            result
                .epochs
                .iter()
                .filter(|e| e.in_window)
                .map(|e| e.duration_us() as f64 * 1000.0),
        );
        let peak = result
            .active_connections
            .iter()
            .filter(|s| s.in_window)
            .map(|s| s.peak)
            .max()
            .unwrap_or(0);
        self.peak_active = self.peak_active.max(peak);
        for s in result.throughput.iter().filter(|s| s.in_window) {
            self.bytes += s.initiator_to_acceptor_bytes + s.acceptor_to_initiator_bytes;
            self.interval_ns += s.duration_us.saturating_mul(1000);
        }
    }

    /// The trial's summary, with its audit's `findings` (audit.rs).
    pub fn summary(mut self, skipped: usize, findings: Vec<Finding>) -> WorkloadSummary {
        let mut s = WorkloadSummary {
            findings,
            ..WorkloadSummary::default()
        };
        if self.connections == 0 && skipped == 0 {
            // Nothing replayed (interrupted before its first window, or no
            // connection in the measurement window): zeros would skew
            // `repeat until` and the trials' means.
            return s;
        }
        let mut put = |k: &str, v: f64| {
            s.metrics.insert(k.to_string(), v);
        };
        put("connections", self.connections as f64);
        if skipped > 0 {
            put("skipped_connections", skipped as f64);
        }
        put("failed_connections", self.failed as f64);
        put("active_connections", f64::from(self.peak_active));
        for (name, values) in [
            ("duration", &mut self.durations_ns),
            ("response_time", &mut self.responses_ns),
        ] {
            if values.is_empty() {
                continue;
            }
            values.sort_unstable_by(f64::total_cmp);
            put(name, values.iter().sum::<f64>() / values.len() as f64);
            for (suffix, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
                if let Some(v) = exp_stats::percentile(values, q) {
                    put(&format!("{name}_{suffix}"), v);
                }
            }
        }
        if self.interval_ns > 0 {
            put("throughput", self.bytes as f64 * 8.0 * 1e9 / self.interval_ns as f64);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use exp_results::validity::Bounds;
    use exp_traffic::replay::{ConnectionRecord, ConnectionStatus, Interruption, ReplayResult};

    use super::*;

    fn connection(id: u64, status: ConnectionStatus, interrupted: Option<Interruption>) -> ConnectionRecord {
        ConnectionRecord {
            id,
            structure: "blk_conc".into(),
            local: None,
            planned_start_us: 1000 * id,
            actual_start_us: 1000 * id,
            first_byte_us: None,
            last_byte_us: None,
            end_us: 1000 * id + 500,
            duration_us: 500,
            sent_bytes: 0,
            expected_sent_bytes: 100,
            received_bytes: 0,
            expected_received_bytes: 100,
            epochs: 0,
            assigned_rtt_us: None,
            status,
            error: None,
            tcp: None,
            in_window: true,
            interrupted,
        }
    }

    /// The window's end stops the replay: a connection still connecting
    /// then is `interrupted` in `traffic_connections`, not `failed`, and
    /// neither the audit (V0203) nor `failed_connections` may call it a
    /// failure; one that could not connect is one.
    #[test]
    fn a_connection_cut_while_connecting_is_not_a_failure() {
        let result = ReplayResult {
            origin: SystemTime::UNIX_EPOCH,
            connections: vec![
                connection(0, ConnectionStatus::Complete, None),
                connection(1, ConnectionStatus::Failed, None),
                connection(2, ConnectionStatus::Short, Some(Interruption::Cut)),
                // What `run_connection` records when the stop comes during `open`.
                connection(3, ConnectionStatus::Failed, Some(Interruption::Cut)),
                connection(4, ConnectionStatus::Failed, Some(Interruption::NotStarted)),
            ],
            epochs: Vec::new(),
            active_connections: Vec::new(),
            throughput: Vec::new(),
            nofile_limit: 1024,
        };
        let mut totals = Totals::default();
        totals.add(&result);
        assert_eq!((totals.connections, totals.failed), (4, 1), "tried, failed");
        assert_eq!(totals.durations_ns, [500_000.0], "only the complete one's duration");
        let findings = super::super::audit::findings(&mut totals, &Bounds::default());
        let summary = totals.summary(0, findings);
        assert_eq!(summary.metrics["failed_connections"], 1.0);
        let v0203: Vec<&str> = summary
            .findings
            .iter()
            .filter(|f| f.code == "V0203")
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(v0203, ["1 of 4 connections failed"]);
    }
}
