//! Everything `expc report` prints for one run, read at once: the per-table
//! summaries on one thread, the MQTT and traffic reports on another. Each
//! holds one column of one trial at a time, so two threads at most double
//! that, and on a large run (`bench/report-scale.sh`) the wall time is
//! about the longer of the two instead of their sum.

use exp_results::{RunView, Warning};

use crate::{mqtt_report, summarize, traffic_report, MqttReport, RunSummary, TrafficReport};

#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    /// With every reader's warnings, each file once.
    pub summary: RunSummary,
    pub mqtt: Option<MqttReport>,
    pub traffic: Option<TrafficReport>,
}

pub fn run_report(view: &RunView) -> RunReport {
    let (mut summary, mqtt, traffic, warnings) = std::thread::scope(|scope| {
        let summary = scope.spawn(|| summarize(view));
        let mut warnings = crate::expected::missing_tables(view);
        let mqtt = mqtt_report(view, &mut warnings);
        let traffic = traffic_report(view, &mut warnings);
        // A panic on the summary's thread is the caller's, as if it ran here.
        let summary = summary.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (summary, mqtt, traffic, warnings)
    });
    merge_warnings(&mut summary.warnings, warnings);
    RunReport { summary, mqtt, traffic }
}

/// Several readers see a damaged file: each is warned about once.
fn merge_warnings(into: &mut Vec<Warning>, more: Vec<Warning>) {
    for warning in more {
        if !into.iter().any(|w| w.path == warning.path) {
            into.push(warning);
        }
    }
}
