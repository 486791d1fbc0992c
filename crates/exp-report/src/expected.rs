//! The tables a run's plan implies, and a [`Warning`] for each that a
//! completed trial has no rows of: every trial writes `trials`, a fleet
//! `mqtt_messages`, an anomaly `anomaly_timeline`, a traffic workload
//! `traffic_connections`, an xml workload `xml_generation` and a monitor
//! `system_metrics` (the tables `expc test --run` expects too). A table
//! deleted or never written otherwise vanished from the report without a
//! word: a fleet run without `mqtt_messages` printed no MQTT section.
//!
//! The plan is read leniently, as the MQTT report reads it: only each
//! workload's name and kind and whether there is a monitor, so runs of
//! other versions of expc are checked too.

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::IgnoredAny;
use serde::Deserialize;

use exp_results::schemas::{
    CONNECTIONS_TABLE, GENERATION_TABLE, MESSAGES_TABLE, MONITOR_TABLE, TIMELINE_TABLE, TRIALS_TABLE,
};
use exp_results::{RunView, TrialStatus, Warning};

/// Trial numbers listed in a warning before "and N more".
const LISTED_TRIALS: usize = 12;

#[derive(Deserialize)]
struct PlanKinds {
    #[serde(default)]
    workloads: Vec<VariantKinds>,
    /// Version 1 plans list every point with its workloads.
    #[serde(default)]
    points: Vec<PointKinds>,
    #[serde(default)]
    monitor: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct VariantKinds {
    variants: Vec<WorkloadKind>,
}

#[derive(Deserialize)]
struct PointKinds {
    workloads: Vec<WorkloadKind>,
}

#[derive(Deserialize)]
struct WorkloadKind {
    name: String,
    /// One key: the kind.
    config: BTreeMap<String, IgnoredAny>,
}

/// The table a workload of `kind` writes a row to in every trial it runs in.
fn table_of(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "fleet" => MESSAGES_TABLE,
        "anomaly" => TIMELINE_TABLE,
        "traffic" => CONNECTIONS_TABLE,
        "xml" => GENERATION_TABLE,
        // kind-list: activity tables by kind
        _ => return None,
    })
}

/// What the report is without the table's rows of `trials` (`trials 0–3`, `them`).
fn consequence(table: &str, trials: &str) -> String {
    match table {
        MESSAGES_TABLE => format!("the MQTT report leaves out {trials}"),
        CONNECTIONS_TABLE => format!("the traffic report leaves out {trials}"),
        TIMELINE_TABLE => format!("the anomaly windows of {trials} are unknown"),
        MONITOR_TABLE => format!("there are no system metrics of {trials}"),
        _ => format!("the summaries leave out {trials}"),
    }
}

/// Why the run's `plan.json` cannot be read; the warning names the file.
#[derive(Debug, thiserror::Error)]
enum PlanUnreadable {
    #[error("{0}")]
    Read(std::io::Error),
    #[error("{0}")]
    Parse(serde_json::Error),
}

/// Table → who writes it in every trial (`fleet "plant"`, `the monitor`),
/// from `dir/plan.json`, or why it cannot be read.
fn expected_tables(dir: &Path) -> Result<BTreeMap<&'static str, Vec<String>>, PlanUnreadable> {
    let bytes = std::fs::read(dir.join("plan.json")).map_err(PlanUnreadable::Read)?;
    let plan: PlanKinds = serde_json::from_slice(&bytes).map_err(PlanUnreadable::Parse)?;
    let workloads: Vec<&WorkloadKind> = match plan.workloads.is_empty() {
        false => plan.workloads.iter().filter_map(|w| w.variants.first()).collect(),
        true => plan
            .points
            .first()
            .map(|p| p.workloads.iter().collect())
            .unwrap_or_default(),
    };
    let mut tables: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    tables.insert(TRIALS_TABLE, vec!["the runtime".into()]);
    for workload in workloads {
        let Some(kind) = workload.config.keys().next() else {
            continue;
        };
        if let Some(table) = table_of(kind) {
            tables
                .entry(table)
                .or_default()
                .push(format!("{kind} \"{}\"", workload.name));
        }
    }
    if plan.monitor.is_some() {
        tables.entry(MONITOR_TABLE).or_default().push("the monitor".into());
    }
    Ok(tables)
}

/// A warning per table the plan implies that completed trials have no
/// rows of (no part file), naming who writes it and which trials lack it.
/// Without a readable plan, one warning that says so (the MQTT report's
/// own, for the same file, is then left out).
pub fn missing_tables(view: &RunView) -> Vec<Warning> {
    let expected = match expected_tables(&view.dir) {
        Ok(expected) => expected,
        Err(e) => {
            return vec![Warning {
                path: view.dir.join("plan.json"),
                message: format!(
                    "cannot read the plan ({e}): the report leaves out what needs it (the tables it implies are not checked, fleets have no gap targets)"
                ),
            }]
        }
    };
    let complete: Vec<u32> = view
        .manifest
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Complete)
        .map(|t| t.trial)
        .collect();
    let mut warnings = Vec::new();
    for (table, writers) in expected {
        let files = view.tables.get(table);
        let missing: Vec<u32> = complete
            .iter()
            .copied()
            .filter(|t| files.is_none_or(|f| !f.trials.contains_key(t)))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let writers = writers.join(", ");
        let message = match files {
            None => format!(
                "{writers} writes `{table}` rows in every trial, but the run has no `{table}` table \
                 (deleted, or never written): {}",
                consequence(table, &trial_list(&missing))
            ),
            Some(_) => format!(
                "{writers} writes `{table}` rows in every trial, but {} {} none (their files are missing): {}",
                trial_list(&missing),
                if missing.len() == 1 { "has" } else { "have" },
                consequence(table, "them")
            ),
        };
        warnings.push(Warning {
            path: view.dir.join("tables").join(table),
            message,
        });
    }
    warnings
}

/// `0–3, 7, 9` with runs as ranges, at most [`LISTED_TRIALS`] items, then
/// `and N more`; `trial 3` or `trials …`.
fn trial_list(trials: &[u32]) -> String {
    let mut items: Vec<String> = Vec::new();
    let mut shown = 0;
    let mut i = 0;
    while i < trials.len() && items.len() < LISTED_TRIALS {
        let mut j = i;
        while j + 1 < trials.len() && trials[j + 1] == trials[j] + 1 {
            j += 1;
        }
        items.push(match j - i {
            0 => trials[i].to_string(),
            _ => format!("{}–{}", trials[i], trials[j]),
        });
        shown += j - i + 1;
        i = j + 1;
    }
    let more = trials.len() - shown;
    let noun = if trials.len() == 1 { "trial" } else { "trials" };
    match more {
        0 => format!("{noun} {}", items.join(", ")),
        _ => format!("{noun} {} and {more} more", items.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::trial_list;

    #[test]
    fn trials_are_listed_as_ranges() {
        assert_eq!(trial_list(&[3]), "trial 3");
        assert_eq!(trial_list(&[0, 1, 2, 3, 7, 9, 10]), "trials 0–3, 7, 9–10");
        let every_other: Vec<u32> = (0..40).map(|t| t * 2).collect();
        assert_eq!(
            trial_list(&every_other),
            "trials 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22 and 28 more"
        );
    }
}
