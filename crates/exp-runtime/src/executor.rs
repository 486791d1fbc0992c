//! The contract between the orchestrator and workload executors.
//!
//! An executor gets its plan node, the trial's clock, its active intervals,
//! its seed, a cancellation handle and table sinks; it writes rows as it goes
//! and returns a summary of the metrics `repeat until` can use. Executors for
//! other workload kinds plug in here the same way.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use exp_plan::Workload;
use exp_results::{Schema, Store, TableSink};

use crate::cancel::Cancel;
use crate::clock::TrialClock;
use crate::schedule::Interval;

pub struct WorkloadContext {
    pub workload: Workload,
    pub seed: u64,
    pub clock: TrialClock,
    /// When the workload is active, already scaled by `--time-scale`.
    pub intervals: Vec<Interval>,
    /// The trial's end (scaled), when it has one.
    pub trial_end_ns: Option<u64>,
    /// The run's `--time-scale`, for spans inside an interval (a traffic
    /// measure window, a fleet's warm-up).
    pub time_scale: f64,
    /// Raised at the end of the trial and by Ctrl-C.
    pub cancel: Cancel,
    pub tables: Tables,
    pub processes: Processes,
    /// A directory of its own for files the workload creates; removed at the end.
    pub scratch: PathBuf,
    /// How often to record the workload's own samples.
    pub sample_interval: Duration,
    pub launcher: Arc<exp_anomaly::Launcher>,
    /// The run directory, for outputs a workload keeps (XML sets and documents).
    pub run_dir: PathBuf,
    /// With `--split K/N`: this process runs part K of the workload
    /// ([`crate::split::share`]).
    pub split: Option<crate::shard::ShardSpec>,
    /// What its audit holds it to (docs/running.md, "Validity").
    pub bounds: exp_results::validity::Bounds,
    /// Where a fleet records its broker's version, once per run and broker.
    pub brokers: crate::fleet::BrokerVersions,
    /// Its live counters (`crate::live`): bumped as it goes, read by watchers.
    pub live: Arc<crate::live::WorkloadCounters>,
}

/// Metrics of one workload in one trial, by the names the schema registry
/// declares (`achieved_utilization`, `ack_latency`, …).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadSummary {
    pub metrics: BTreeMap<String, f64>,
    /// What its audit found (docs/running.md, "Validity"); the trial fills
    /// in the workload's name.
    pub findings: Vec<exp_results::validity::Finding>,
    /// CPU time of the child processes it ran (anomaly kernels), so the
    /// host audit does not count the run's own processes as a neighbour's.
    pub child_cpu_ns: u64,
}

/// Why a workload (or the monitor) failed. The trial records it as the
/// trial's error in the manifest; the terminal shows the same text.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{0}")]
    Anomaly(#[from] exp_anomaly::AnomalyError),
    #[error("{0}")]
    Results(#[from] exp_results::ResultsError),
    #[error("{0}")]
    Row(#[from] exp_results::RowError),
    /// One step of a workload failed: `fleet `sensors`: broker: …`.
    #[error("{kind} `{workload}`: {step}: {reason}")]
    Step {
        kind: &'static str,
        workload: String,
        step: &'static str,
        reason: BoxError,
    },
    /// The monitor could not sample the host.
    #[error("monitor: {0}")]
    Monitor(#[from] exp_host::HostError),
    /// A thread or task of the runtime ended without its result.
    #[error("the {what} ended abnormally: {detail}")]
    Lost { what: &'static str, detail: String },
}

/// The cause of a failed step: the library's own error, or its message.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl ExecError {
    /// Step `step` of workload `workload` (of `kind`) failed with `reason`.
    pub fn step(kind: &'static str, workload: &str, step: &'static str, reason: impl Into<BoxError>) -> Self {
        ExecError::Step {
            kind,
            workload: workload.to_string(),
            step,
            reason: reason.into(),
        }
    }

    /// A thread or task that ended without its result: `what` it was.
    pub fn lost(what: &'static str, detail: impl std::fmt::Display) -> Self {
        ExecError::Lost {
            what,
            detail: detail.to_string(),
        }
    }
}

/// The monitor's table of system samples, one row per interval.
pub const MONITOR_TABLE: &str = exp_results::schemas::MONITOR_TABLE;

/// Opens table sinks for one trial.
#[derive(Clone)]
pub struct Tables {
    pub store: Arc<Store>,
    pub trial: u32,
    pub shard: u32,
}

impl Tables {
    pub fn sink(&self, schema: &Schema) -> TableSink {
        self.store.sink(schema, self.trial, self.shard)
    }
}

/// Processes that workloads run, so the monitor can sample them.
#[derive(Clone, Default)]
pub struct Processes {
    inner: Arc<Mutex<Vec<(String, u32)>>>,
}

impl Processes {
    pub fn add(&self, workload: &str, pid: u32) {
        if let Ok(mut list) = self.inner.lock() {
            list.push((workload.to_string(), pid));
        }
    }

    pub fn remove(&self, pid: u32) {
        if let Ok(mut list) = self.inner.lock() {
            list.retain(|(_, p)| *p != pid);
        }
    }

    pub fn list(&self) -> Vec<(String, u32)> {
        self.inner.lock().map(|l| l.clone()).unwrap_or_default()
    }
}
