//! Live counters of a run, for whoever watches it while it runs (`expc run
//! --metrics`, the terminal's progress line). Executors bump atomics where
//! they already count (one relaxed add per message, connection or
//! activation); readers load them whenever they like. Nothing here waits
//! for a reader, and a reader never waits for the runner but for the
//! instant it copies the run's state (updated once per trial event).
//!
//! Counters are summed over the run's trials, per workload name, so that
//! each only grows (as Prometheus counters must); gauges (connections
//! open, activations running, achieved utilization) say the moment.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use exp_traffic::replay::ConnectionCounts;

/// One workload's counters, summed over the run's trials.
#[derive(Debug, Default)]
pub struct WorkloadCounters {
    /// A workload of the trial running now.
    pub running: AtomicBool,
    /// Fleet messages by the `mqtt_messages` row each becomes: every row
    /// (scheduled), those with a `sent_ns`, those `ok`, those not `ok`;
    /// counted when the row is final, so at the end they equal the table.
    pub messages_scheduled: AtomicU64,
    pub messages_sent: AtomicU64,
    pub messages_acked: AtomicU64,
    pub messages_lost: AtomicU64,
    /// Acknowledgement latencies (QoS 1 and 2) of the final rows, summed.
    pub ack_latency_sum_ns: AtomicU64,
    pub ack_latency_count: AtomicU64,
    /// A traffic workload's connections (exp-traffic bumps them).
    pub connections: Arc<ConnectionCounts>,
    /// An xml workload's documents and bytes, counted when its generation
    /// of a trial ends (exp-xml reports no count while it generates).
    pub documents: AtomicU64,
    pub document_bytes: AtomicU64,
    /// An anomaly's activations: started, and ended (reaped).
    pub activations_started: AtomicU64,
    pub activations_ended: AtomicU64,
    /// The achieved utilization (CPU time over the pinned cores' wall
    /// time) of its latest sample, as `f64` bits; NaN before the first.
    achieved_utilization: AtomicU64,
}

impl WorkloadCounters {
    fn new() -> Self {
        let counters = WorkloadCounters::default();
        counters.achieved_utilization.store(f64::NAN.to_bits(), Relaxed);
        counters
    }

    /// One final `mqtt_messages` row: `sent` when it has a `sent_ns`,
    /// `ok` when its status is `ok`, with its acknowledgement latency.
    pub fn message(&self, sent: bool, ok: bool, ack_latency_ns: Option<u64>) {
        self.messages_scheduled.fetch_add(1, Relaxed);
        if sent {
            self.messages_sent.fetch_add(1, Relaxed);
        }
        if ok {
            self.messages_acked.fetch_add(1, Relaxed);
        } else {
            self.messages_lost.fetch_add(1, Relaxed);
        }
        if let Some(latency) = ack_latency_ns {
            self.ack_latency_sum_ns.fetch_add(latency, Relaxed);
            self.ack_latency_count.fetch_add(1, Relaxed);
        }
    }

    pub fn set_achieved_utilization(&self, ratio: f64) {
        self.achieved_utilization.store(ratio.to_bits(), Relaxed);
    }

    pub fn achieved_utilization(&self) -> f64 {
        f64::from_bits(self.achieved_utilization.load(Relaxed))
    }
}

/// The trial running now.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialNow {
    pub trial: u32,
    /// 1-based position among the selected trials.
    pub ordinal: u32,
    pub point: u32,
    pub repetition: u32,
    pub started: Instant,
    pub planned_ns: Option<u64>,
}

/// Where the run stands, from its events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunState {
    pub run_dir: Option<PathBuf>,
    /// Trials selected to run.
    pub trials_selected: u32,
    pub running: Option<TrialNow>,
    /// The trial that ran last (running or not), for the `trial` gauge.
    pub last_trial: Option<u32>,
    /// Finished trials by status (`complete`, `failed`, …).
    pub finished: BTreeMap<String, u64>,
    /// Finished trials by validity verdict.
    pub verdicts: BTreeMap<String, u64>,
    /// Validity findings of finished trials by (code, verdict).
    pub findings: BTreeMap<(String, String), u64>,
    /// Whether the run is stopping (Ctrl-C seen).
    pub stopping: bool,
}

/// A workload's name, kind and counters.
pub type Registered = (String, &'static str, Arc<WorkloadCounters>);

/// The live counters of one run; cloned handles share them.
#[derive(Clone, Default)]
pub struct Live {
    workloads: Arc<Mutex<Vec<Registered>>>,
    state: Arc<Mutex<RunState>>,
}

impl Live {
    /// The counters of workload `name` (of `kind`), made at its first trial.
    pub fn workload(&self, name: &str, kind: &'static str) -> Arc<WorkloadCounters> {
        let mut workloads = self.workloads.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, _, counters)) = workloads.iter().find(|(n, k, _)| n == name && *k == kind) {
            return counters.clone();
        }
        let counters = Arc::new(WorkloadCounters::new());
        workloads.push((name.to_string(), kind, counters.clone()));
        counters
    }

    /// Every workload seen so far, in the order their first trial named them.
    pub fn workloads(&self) -> Vec<Registered> {
        self.workloads.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// A copy of where the run stands.
    pub fn state(&self) -> RunState {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Changes where the run stands (events.rs, as each event is sent).
    pub(crate) fn update(&self, change: impl FnOnce(&mut RunState)) {
        change(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_keeps_its_counters_across_trials() {
        let live = Live::default();
        let first = live.workload("sensors", "fleet");
        first.message(true, true, Some(2_000));
        first.message(false, false, None);
        let again = live.workload("sensors", "fleet");
        again.message(true, true, Some(4_000));
        assert_eq!(live.workloads().len(), 1);
        assert_eq!(first.messages_scheduled.load(Relaxed), 3);
        assert_eq!(first.messages_sent.load(Relaxed), 2);
        assert_eq!(first.messages_acked.load(Relaxed), 2);
        assert_eq!(first.messages_lost.load(Relaxed), 1);
        assert_eq!(first.ack_latency_sum_ns.load(Relaxed), 6_000);
        assert!(first.achieved_utilization().is_nan());
    }
}
