//! The traffic report: per trial and per (workload, structure, RTT mode),
//! connection durations, response times (epochs) and peak active
//! connections, bytes moved and failed connections; and the same pooled
//! over all trials by structure, the table a structure × RTT study reads.
//!
//! Reads the tables the traffic executor writes (`exp_results::schemas`). Rows
//! outside the `measure` window (`in_window == false`) are left out of
//! every statistic. A file that cannot be read is left out with a
//! [`Warning`].

mod group;
mod read;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use group::{GroupKey, TrafficGroup};

use exp_results::schemas::{ACTIVE_TABLE, CONNECTIONS_TABLE, EPOCHS_TABLE, THROUGHPUT_TABLE};
use exp_results::{RunView, Warning};
use group::Accumulator;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrafficReport {
    /// The run's `--time-scale` (connection schedules are not scaled by it;
    /// a scaled window replays only the connections that start within it).
    pub time_scale: f64,
    /// One entry per trial and group, by trial then key.
    pub trials: Vec<TrafficGroup>,
    /// Every trial's rows pooled, by key (`trial`, `point` and
    /// `repetition` are `None`).
    pub pooled: Vec<TrafficGroup>,
}

/// The traffic report of a run, or `None` if it has no connections table.
pub fn traffic_report(run: &RunView, warnings: &mut Vec<Warning>) -> Option<TrafficReport> {
    let connections = run.tables.get(CONNECTIONS_TABLE)?;
    let mut pooled: BTreeMap<GroupKey, Accumulator> = BTreeMap::new();
    let mut trials = Vec::new();
    for &trial in connections.trials.keys() {
        let record = run.manifest.trials.iter().find(|t| t.trial == trial);
        let mut groups: BTreeMap<GroupKey, Accumulator> = BTreeMap::new();
        for (table, add) in [
            (CONNECTIONS_TABLE, group::add_connections as group::Reader),
            (EPOCHS_TABLE, group::add_epochs),
            (ACTIVE_TABLE, group::add_active),
            (THROUGHPUT_TABLE, group::add_throughput),
        ] {
            for path in trial_files(run, table, trial) {
                if let Err(e) = add(&path, &mut groups) {
                    warnings.push(Warning {
                        path: path.clone(),
                        message: e.to_string(),
                    });
                }
            }
        }
        for (key, acc) in groups {
            pooled.entry(key.clone()).or_default().merge(&acc);
            trials.push(acc.finish(key, Some(trial), record.map(|r| r.point), record.map(|r| r.repetition)));
        }
    }
    Some(TrafficReport {
        time_scale: run.manifest.options.time_scale,
        trials,
        pooled: pooled
            .into_iter()
            .map(|(key, acc)| acc.finish(key, None, None, None))
            .collect(),
    })
}

fn trial_files(run: &RunView, table: &str, trial: u32) -> Vec<std::path::PathBuf> {
    run.tables
        .get(table)
        .and_then(|t| t.trials.get(&trial))
        .map(|parts| parts.iter().map(|p| p.path.clone()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
