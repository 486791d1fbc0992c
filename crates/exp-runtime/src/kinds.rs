//! Everything the runtime does by workload kind, in one place: running a
//! workload, its preflight, its plan limits and the table that shows it ran.
//! Adding a kind adds an arm to each match here and a module of its own
//! (docs/architecture.md, "Adding a workload kind").

use exp_plan::{Workload, WorkloadConfig};

use crate::executor::{ExecError, WorkloadContext, WorkloadSummary};
use crate::preflight::{Finding, Host};
use crate::{anomaly, fleet, plan_limits, traffic, xml};

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
                .join("xml")
                .join(xml::dir_name(&context.workload.name))
                .join(format!("trial-{}", context.tables.trial));
            xml::run(&context, &x, &out)
        })
        .await
        .unwrap_or_else(|join| Err(ExecError::lost("xml thread", join))),
        WorkloadConfig::Traffic(t) => traffic::run(context, *t).await,
    }
}

/// What the machine lacks for this workload (E10xx), checked before the run.
pub(crate) fn preflight(workload: &Workload, host: &Host) -> Vec<Finding> {
    let name = &workload.name;
    match &workload.config {
        WorkloadConfig::Fleet(fleet) => fleet::preflight(name, fleet, host),
        WorkloadConfig::Anomaly(anomaly) => anomaly::preflight(name, anomaly, host),
        WorkloadConfig::Traffic(traffic) => traffic::preflight(name, traffic, host),
        WorkloadConfig::Xml(xml) => xml::preflight(name, xml, host),
    }
}

/// What a compiled plan never has in this workload's settings (a plan
/// read from a file is checked as strictly as a compiled one).
pub(crate) fn limits(name: &str, config: &WorkloadConfig) -> Vec<Finding> {
    match config {
        WorkloadConfig::Fleet(fleet) => plan_limits::fleet_problems(name, fleet),
        WorkloadConfig::Anomaly(anomaly) => plan_limits::anomaly_problems(name, anomaly),
        WorkloadConfig::Traffic(traffic) => plan_limits::traffic_problems(name, traffic),
        WorkloadConfig::Xml(xml) => plan_limits::xml_problems(name, xml),
    }
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
    }
}
