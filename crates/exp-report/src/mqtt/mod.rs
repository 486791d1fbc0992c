//! The MQTT fleet report: per trial and fleet, what became of the messages,
//! latency and lateness quantiles, and how closely the achieved gaps
//! followed the plan's gap distribution.
//!
//! Reads `mqtt_messages` and `mqtt_devices` (written by the fleet executor;
//! schemas in `exp_results::schemas`), the `trials` table's `contended`
//! column, `anomaly_timeline` (latency by anomaly phase, `phases.rs`), the
//! manifest (trial → point, time scale) and `plan.json` (the gap
//! distributions). Every statistic leaves out warm-up rows; the counts of
//! those are kept apart.
//!
//! Files are read in bounded chunks, a few passes per trial (`passes.rs`,
//! `achieved.rs`); a file that fails to read is left out of its trial, with a
//! [`Warning`], and the trial is computed again without it, so every number
//! of a trial covers the same files.

pub(crate) mod achieved;
pub(crate) mod gaps;
mod passes;
pub(crate) mod phases;
pub(crate) mod plan;
mod stats;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use gaps::{GapAccuracy, GapStats, GapTarget, KsTest};
pub use passes::{Connections, Counts, Loss};
pub use phases::{PhaseStats, NO_ANOMALY, NO_ANOMALY_AFTER};
pub use stats::{CdfPoint, Quantiles, CDF_PERCENTS};

use exp_results::schemas::{DEVICES_TABLE, MESSAGES_TABLE, TRIALS_TABLE};
use exp_results::{PartFile, ResultsError, RunView, Warning};

/// A file (by index in the list being read) and why it could not be read.
type Failure = (usize, ResultsError);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MqttReport {
    /// The run's `--time-scale`; fleet gaps are not scaled by it.
    pub time_scale: f64,
    pub trials: Vec<MqttTrial>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MqttTrial {
    pub trial: u32,
    /// From the manifest; `None` for a trial it does not list.
    pub point: Option<u32>,
    pub repetition: Option<u32>,
    /// The `trials` table's flag: a fleet's send lateness exceeded its bound.
    pub contended: Option<bool>,
    /// `mqtt_messages` files read (unreadable ones are in the warnings).
    pub files: u64,
    /// By fleet name.
    pub fleets: Vec<FleetReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    /// The fleet workload's name.
    pub fleet: String,
    /// Non-warm-up messages.
    pub counts: Counts,
    /// Warm-up messages, left out of every statistic.
    pub warmup: Counts,
    /// Completed non-warm-up messages per second of sending: (n − 1) over
    /// the span from their first to their last `sent_ns`.
    pub throughput_per_s: Option<f64>,
    /// `ack_latency_ns` of completed non-warm-up messages.
    pub ack_latency_ns: Option<Quantiles>,
    /// `delivery_latency_ns` of completed non-warm-up messages.
    pub delivery_latency_ns: Option<Quantiles>,
    /// `lateness_ns` (sent − scheduled) of sent non-warm-up messages.
    pub lateness_ns: Option<Quantiles>,
    /// From `mqtt_devices`; `None` when the trial has no such rows.
    pub connections: Option<Connections>,
    pub gaps: GapAccuracy,
    /// By the set of anomalies active at each message's `sent_ns`: no
    /// anomaly first, then in order of first occurrence. Empty (and absent
    /// from the JSON) when the trial has no anomaly activation that started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseStats>,
}

/// The MQTT report of a run, or `None` if it has no `mqtt_messages` table.
/// Files that cannot be read are reported in `warnings` and left out; so
/// are fleets that measured less than asked (devices that did not connect,
/// no message sent).
pub fn mqtt_report(run: &RunView, warnings: &mut Vec<Warning>) -> Option<MqttReport> {
    let messages = run.tables.get(MESSAGES_TABLE)?;
    let plan = plan::read_plan(&run.dir, warnings);
    let mut trials = Vec::with_capacity(messages.trials.len());
    for (&trial, parts) in &messages.trials {
        let record = run.manifest.trials.iter().find(|t| t.trial == trial);
        let point = record.map(|r| r.point);
        let target = |fleet: &str| plan.as_ref().zip(point).and_then(|(p, pt)| p.gap_target(pt, fleet));
        let phases = phases::read(run, trial, plan.as_ref().zip(point), warnings);
        let (mut fleets, files) = retry(&paths(parts), warnings, |files| {
            trial_fleets(files, &target, phases.as_ref())
        });
        let (mut connections, _) = retry(&trial_files(run, DEVICES_TABLE, trial), warnings, passes::connections);
        for fleet in &mut fleets {
            fleet.connections = connections.take(&fleet.fleet).map(passes::ConnectionsAcc::finish);
            warnings.extend(measured_less(&run.dir, trial, fleet));
        }
        let (contended, _) = retry(&trial_files(run, TRIALS_TABLE, trial), warnings, passes::contended);
        trials.push(MqttTrial {
            trial,
            point,
            repetition: record.map(|r| r.repetition),
            contended,
            files: files as u64,
            fleets,
        });
    }
    Some(MqttReport {
        time_scale: run.manifest.options.time_scale,
        trials,
    })
}

/// A fleet that measured less than its spec asked for: devices that never
/// connected, or no message sent at all (the interval ended during the
/// connect phase). The rows say what became of each; this says to look.
fn measured_less(dir: &Path, trial: u32, fleet: &FleetReport) -> Vec<Warning> {
    let at = |table: &str| dir.join("tables").join(table).join(format!("trial={trial}"));
    let name = &fleet.fleet;
    let mut found = Vec::new();
    if let Some(c) = fleet.connections.as_ref().filter(|c| c.connected < c.devices) {
        found.push(Warning {
            path: at(DEVICES_TABLE),
            message: format!(
                "fleet `{name}`: {} of {} devices did not connect (`status` says why); their messages are `dropped`",
                c.devices - c.connected,
                c.devices
            ),
        });
    }
    let scheduled = fleet.counts.scheduled + fleet.warmup.scheduled;
    if scheduled > 0 && fleet.counts.sent + fleet.warmup.sent == 0 {
        found.push(Warning {
            path: at(MESSAGES_TABLE),
            message: format!("fleet `{name}`: no message was sent; all {scheduled} are `dropped` (`reason` says why)"),
        });
    }
    found
}

/// Every pass over one trial's `mqtt_messages` files; fleets sorted by name.
fn trial_fleets(
    files: &[&Path],
    target: &dyn Fn(&str) -> Option<GapTarget>,
    phases: Option<&phases::Phases>,
) -> Result<Vec<FleetReport>, Failure> {
    let mut overview = passes::overview(files, phases)?;
    let mut names: Vec<String> = overview.names().map(str::to_string).collect();
    names.sort();
    let counts: Vec<(String, passes::OverviewResult)> = names
        .iter()
        .map(|n| (n.clone(), overview.take(n).unwrap_or_default().finish()))
        .collect();
    let count = |fleet: &str, of: fn(&passes::OverviewResult) -> u64| {
        let o = counts.iter().find(|(n, _)| n == fleet).map(|(_, o)| o);
        usize::try_from(o.map_or(0, of)).unwrap_or(usize::MAX)
    };
    let (quantiles, by_phase) = value_passes(files, phases, &names, &counts)?;
    let rows = |f: &str| count(f, |o| o.counts.scheduled + o.warmup.scheduled);
    let total = counts
        .iter()
        .map(|(_, o)| o.counts.scheduled + o.warmup.scheduled)
        .sum();
    let mut achieved = achieved::achieved(files, total, &rows)?;
    let per_fleet = counts.into_iter().zip(quantiles).zip(by_phase);
    Ok(per_fleet
        .map(|(((fleet, o), [ack, delivery, lateness]), phases)| {
            let mut gaps = achieved.take(&fleet).unwrap_or_default();
            FleetReport {
                counts: o.counts,
                warmup: o.warmup,
                throughput_per_s: o.throughput_per_s,
                ack_latency_ns: ack,
                delivery_latency_ns: delivery,
                lateness_ns: lateness,
                connections: None,
                gaps: gaps::accuracy(target(&fleet), &mut gaps),
                phases,
                fleet,
            }
        })
        .collect())
}

/// The quantiles of each fleet of `names` (ack latency, delivery latency,
/// lateness) and by phase, one pass over `files` per column: the phases'
/// values are grouped as they are read, and a fleet's are their union.
/// Each column is summarised as soon as it is read, so one column of the
/// trial is held at a time.
#[allow(clippy::type_complexity)]
fn value_passes(
    files: &[&Path],
    phases: Option<&phases::Phases>,
    names: &[String],
    counts: &[(String, passes::OverviewResult)],
) -> Result<(Vec<[Option<Quantiles>; 3]>, Vec<Vec<PhaseStats>>), Failure> {
    let mut quantiles = vec![[None, None, None]; names.len()];
    let mut by_phase: Vec<Vec<PhaseStats>> = counts
        .iter()
        .map(|(_, o)| phases.map(|p| phases::skeleton(p, &o.phases)).unwrap_or_default())
        .collect();
    let order = phases.map(phases::Phases::order).unwrap_or_default();
    for (k, pass) in passes::PASSES.iter().enumerate() {
        // Sizes each fleet's and phase's vector once (the last group, of
        // rows not sent, grows as needed).
        let expected = |fleet: &str, group: usize| {
            let o = counts.iter().find(|(n, _)| n == fleet).map(|(_, o)| o);
            let n = match phases {
                None => o.map_or(0, |o| (pass.fleet_count)(&o.counts)),
                Some(_) => o.and_then(|o| o.phases.get(group)).map_or(0, pass.phase_count),
            };
            usize::try_from(n).unwrap_or(usize::MAX)
        };
        let mut values = passes::values(files, pass.column, pass.taken, phases, &expected)?;
        for (i, name) in names.iter().enumerate() {
            let mut groups = values.take(name).unwrap_or_default();
            for (&p, stats) in order.iter().zip(by_phase[i].iter_mut()) {
                *(pass.phase_field)(stats) = groups.get_mut(p).and_then(Quantiles::of);
            }
            quantiles[i][k] = Quantiles::of_groups(&mut groups);
        }
    }
    // A phase in which a fleet sent nothing (the quiet instant after an
    // anomaly that ends with the trial) says nothing about it.
    for stats in &mut by_phase {
        stats.retain(|s| s.n > 0);
    }
    Ok((quantiles, by_phase))
}

/// Runs `compute` over `files`; a file it fails on is dropped with a warning
/// and the computation starts again, so the result covers the same files
/// throughout. Returns the result and how many files it covers.
fn retry<T: Default>(
    files: &[PathBuf],
    warnings: &mut Vec<Warning>,
    mut compute: impl FnMut(&[&Path]) -> Result<T, Failure>,
) -> (T, usize) {
    let mut files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    loop {
        match compute(&files) {
            Ok(value) => return (value, files.len()),
            // A failure always names one of the files; anything else would loop.
            Err((index, _)) if index >= files.len() => return (T::default(), 0),
            Err((index, error)) => warnings.push(Warning {
                path: files.remove(index).to_path_buf(),
                message: error.to_string(),
            }),
        }
    }
}

fn paths(parts: &[PartFile]) -> Vec<PathBuf> {
    parts.iter().map(|p| p.path.clone()).collect()
}

fn trial_files(run: &RunView, table: &str, trial: u32) -> Vec<PathBuf> {
    run.tables
        .get(table)
        .and_then(|t| t.trials.get(&trial))
        .map(|parts| paths(parts))
        .unwrap_or_default()
}
