//! Everything the runtime does by workload kind, in one place: running a
//! workload, its plan limits, its preflight, what it needs of the machine,
//! what it prepares for a whole plan, and the table that shows it ran.
//! Every kind has the same shape: a directory `<kind>/` whose `mod.rs` runs
//! it and whose `check.rs` holds its limits, preflight and needs; this file
//! is the only one that reaches them by kind. Adding a kind adds an arm to
//! each match here (before its `// kind-list:` marker, where `cargo xtask
//! new-kind` inserts them) and a directory of its own (docs/architecture.md,
//! "Adding a workload kind").

use exp_plan::{Plan, Workload, WorkloadConfig};

use crate::executor::{ExecError, WorkloadContext, WorkloadSummary};
use crate::findings::{Finding, Host};

use crate::anomaly;
use crate::fleet;
use crate::traffic;
use crate::xml;
// kind-list: runtime imports

/// Runs one workload with its kind's executor: blocking ones (anomalies
/// supervise a child, xml generates documents) on a thread of their own,
/// async ones (fleets, traffic) as tasks.
pub(crate) async fn execute(context: WorkloadContext) -> Result<WorkloadSummary, ExecError> {
    match context.workload.config.clone() {
        WorkloadConfig::Anomaly(a) => tokio::task::spawn_blocking(move || anomaly::run(context, &a))
            .await
            .unwrap_or_else(|join| Err(ExecError::lost("anomaly thread", join))),
        WorkloadConfig::Fleet(f) => fleet::run(context, *f).await,
        WorkloadConfig::Xml(x) => tokio::task::spawn_blocking(move || {
            let out = context
                .run_dir
                .join(xml::OUTPUT_DIR)
                .join(xml::dir_name(&context.workload.name))
                .join(format!("trial-{}", context.tables.trial));
            xml::run(&context, &x, &out)
        })
        .await
        .unwrap_or_else(|join| Err(ExecError::lost("xml thread", join))),
        WorkloadConfig::Traffic(t) => traffic::run(context, *t).await,
        // kind-list: execute
    }
}

/// What the machine lacks for this workload (E10xx), checked before the run.
pub(crate) fn preflight(workload: &Workload, host: &Host) -> Vec<Finding> {
    let name = &workload.name;
    match &workload.config {
        WorkloadConfig::Fleet(fleet) => fleet::check::preflight(name, fleet, host),
        WorkloadConfig::Anomaly(anomaly) => anomaly::check::preflight(name, anomaly, host),
        WorkloadConfig::Traffic(traffic) => traffic::check::preflight(name, traffic, host),
        WorkloadConfig::Xml(xml) => xml::check::preflight(name, xml, host),
        // kind-list: preflight
    }
}

/// What a compiled plan never has in this workload's settings (a plan
/// read from a file is checked as strictly as a compiled one).
pub(crate) fn limits(name: &str, config: &WorkloadConfig) -> Vec<Finding> {
    match config {
        WorkloadConfig::Fleet(fleet) => fleet::check::limits(name, fleet),
        WorkloadConfig::Anomaly(anomaly) => anomaly::check::limits(name, anomaly),
        WorkloadConfig::Traffic(traffic) => traffic::check::limits(name, traffic),
        WorkloadConfig::Xml(xml) => xml::check::limits(name, xml),
        // kind-list: limits
    }
}

/// Scratch space the workload needs in the run directory (an io anomaly
/// without a `dir` of its own).
pub(crate) fn scratch_need(workload: &Workload) -> u64 {
    match &workload.config {
        WorkloadConfig::Anomaly(anomaly) => anomaly::check::scratch_need(anomaly),
        WorkloadConfig::Fleet(_) | WorkloadConfig::Traffic(_) | WorkloadConfig::Xml(_) => 0,
        // kind-list: scratch needs
    }
}

/// The memory the workload may take, where its kind declares one (memory
/// anomalies); preflight sums it over the workloads that run together.
pub(crate) fn memory_need(workload: &Workload) -> Option<u64> {
    match &workload.config {
        WorkloadConfig::Anomaly(anomaly) => anomaly::check::memory_need(anomaly),
        WorkloadConfig::Fleet(_) | WorkloadConfig::Traffic(_) | WorkloadConfig::Xml(_) => None,
        // kind-list: memory needs
    }
}

/// Where kinds keep files of their own in the run directory, each as
/// `<dir>/<workload>/trial-<n>/`: a trial run again (resumed, or replaced by
/// `repeat until`) sets its earlier attempt's aside with its tables.
pub(crate) const KEPT_OUTPUT_DIRS: &[&str] = &[
    xml::OUTPUT_DIR,
    // kind-list: kept output directories
];

/// Prepares what the kinds share across a plan's trials before the first
/// starts: the embedded MQTT broker sized for the plan's largest fleet.
pub(crate) fn prepare_for_plan(plan: &Plan) {
    fleet::broker::size_for_plan(plan);
}

/// The table a workload of this kind writes a row to for everything it
/// does — a message, a connection, a document, an anomaly's phase: a trial
/// in which this table has no row measured nothing of the workload.
pub fn activity_table(config: &WorkloadConfig) -> &'static str {
    match config {
        WorkloadConfig::Fleet(_) => exp_results::schemas::MESSAGES_TABLE,
        WorkloadConfig::Anomaly(_) => anomaly::TIMELINE_TABLE,
        WorkloadConfig::Traffic(_) => exp_results::schemas::CONNECTIONS_TABLE,
        WorkloadConfig::Xml(_) => xml::GENERATION_TABLE,
        // kind-list: activity tables
    }
}
