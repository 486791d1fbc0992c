//! The rows a statistic reads, per trial: which table and column a metric
//! of a workload kind is stored in, and which rows count, as the reports
//! count them: fleet messages after warm-up (`warmup` false or null) with
//! status `ok` (send lateness: every sent message); traffic rows inside the
//! measurement window (`in_window`), connection durations of connections
//! that connected (complete or short); an anomaly's activations.
//!
//! The monitor's metrics are columns of `system_metrics`, one row per
//! sample, every row counted; the unit follows the column's suffix (as the
//! compiler's catalogue, `exp-check/src/registry/monitor.rs`, states it).
//! A traffic workload's `window_throughput` has one row per active window,
//! made from the window's in-window intervals of `traffic_throughput`.
//!
//! A phase keeps the rows whose time (a message's `scheduled_ns`, a
//! connection's `actual_start_ns`, an exchange's `start_ns`) falls in the
//! anomaly's activations (`during`), before its first (`before`) or after
//! its last has ended (`after`). A row that stands for a span of time (a
//! monitor sample: its interval, ending at `t_ns`; a window) counts only
//! when the whole span lies in the phase, so no sample mixes two phases.

use std::collections::BTreeMap;
use std::path::PathBuf;

use exp_plan::claims::{Phase, PhaseRelation};
use exp_results::part_chunks::{for_each_chunk, Chunk};
use exp_results::schemas::{
    CONNECTIONS_TABLE, EPOCHS_TABLE, MESSAGES_TABLE, MESSAGE_OK, MONITOR_TABLE, STATUS_COMPLETE, STATUS_FAILED,
    STATUS_SHORT, TIMELINE_TABLE,
};
use exp_results::timeline::{self, Activation};
use exp_results::{ResultsError, RunView};

/// Which rows of a table a row metric takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Taken {
    /// Fleet messages after warm-up with status `ok`.
    MessageOk,
    /// Fleet messages after warm-up that were sent.
    MessageSent,
    /// Fleet messages after warm-up, whatever became of them.
    Measured,
    /// In-window connections that connected (complete or short).
    Connected,
    /// In-window rows.
    InWindow,
    /// Every row (an anomaly's activations).
    All,
}

/// Where a row metric is stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RowMetric<'m> {
    pub table: &'static str,
    /// The column naming the workload (`None`: the monitor's table, every row).
    pub owner: Option<&'static str>,
    pub column: &'m str,
    /// Multiplies the stored value into the plan's base unit (percent → ratio).
    pub scale: f64,
    pub taken: Taken,
    /// The column giving a row's time, for phases.
    pub time: &'static str,
    /// The column giving the length of the span a row stands for, ending
    /// at its time (a monitor sample's interval).
    pub span: Option<&'static str>,
}

/// The metric of the `system_metrics` column `column`, its scale read from
/// the suffix: `_pct` percent → ratio, `_bytes_per_s` bytes/s → bit/s.
fn monitor(column: &str) -> RowMetric<'_> {
    let scale = if column.ends_with("_pct") {
        0.01
    } else if column.ends_with("_bytes_per_s") {
        8.0
    } else {
        1.0
    };
    RowMetric {
        table: MONITOR_TABLE,
        owner: None,
        column,
        scale,
        taken: Taken::All,
        time: "t_ns",
        span: Some("interval_ns"),
    }
}

/// The row metric `metric` of workload kind `kind` (or of the monitor), if
/// it is one read row by row (`window_throughput` is not: [`window_throughputs`]).
pub(crate) fn row_metric<'m>(kind: &str, metric: &'m str) -> Option<RowMetric<'m>> {
    let fleet = |column, taken| RowMetric {
        table: MESSAGES_TABLE,
        owner: Some("fleet"),
        column,
        scale: 1.0,
        taken,
        time: "scheduled_ns",
        span: None,
    };
    let traffic = |table, column, taken, time| RowMetric {
        table,
        owner: Some("workload"),
        column,
        scale: 1.0,
        taken,
        time,
        span: None,
    };
    let anomaly = |column, scale| RowMetric {
        table: TIMELINE_TABLE,
        owner: Some("instance"),
        column,
        scale,
        taken: Taken::All,
        time: "actual_start_ns",
        span: None,
    };
    Some(match (kind, metric) {
        ("monitor", column) => monitor(column),
        ("fleet", "ack_latency") => fleet("ack_latency_ns", Taken::MessageOk),
        ("fleet", "delivery_latency") => fleet("delivery_latency_ns", Taken::MessageOk),
        ("fleet", "send_lateness") => fleet("lateness_ns", Taken::MessageSent),
        ("traffic", "duration") => traffic(CONNECTIONS_TABLE, "duration_ns", Taken::Connected, "actual_start_ns"),
        ("traffic", "rtt_achieved") => traffic(CONNECTIONS_TABLE, "tcp_rtt_ns", Taken::Connected, "actual_start_ns"),
        ("traffic", "response_time") => traffic(EPOCHS_TABLE, "response_time_ns", Taken::InWindow, "start_ns"),
        ("anomaly", "achieved_utilization") => anomaly("achieved_utilization_pct", 0.01),
        ("anomaly", "cpu_time") => anomaly("cpu_time_ns", 1.0),
        ("anomaly", "peak_rss") => anomaly("peak_rss_bytes", 1.0),
        // kind-list: row metrics
        _ => return None,
    })
}

/// The anomaly windows a phase selects by, per trial.
#[derive(Debug, Clone)]
pub(crate) struct PhaseWindows {
    relation: PhaseRelation,
    /// [start, end) of each activation of the anomaly.
    windows: Vec<(u64, u64)>,
}

impl PhaseWindows {
    /// The windows of `phase` in `trial`; `None` when the trial has no
    /// timeline or no activation of that anomaly started (no row is in
    /// any phase of it then).
    pub fn read(run: &RunView, trial: u32, phase: &Phase) -> Result<Option<PhaseWindows>, ResultsError> {
        let mut activations: Vec<Activation> = Vec::new();
        for path in files(run, TIMELINE_TABLE, trial) {
            timeline::activations(&path, &mut activations)?;
        }
        let windows: Vec<(u64, u64)> = activations
            .into_iter()
            .filter(|a| a.instance == phase.anomaly && a.start < a.end)
            .map(|a| (a.start, a.end))
            .collect();
        Ok((!windows.is_empty()).then_some(PhaseWindows {
            relation: phase.relation,
            windows,
        }))
    }

    pub fn holds(&self, t: u64) -> bool {
        match self.relation {
            PhaseRelation::During => self.windows.iter().any(|&(s, e)| s <= t && t < e),
            PhaseRelation::Before => self.windows.iter().all(|&(s, _)| t < s),
            PhaseRelation::After => self.windows.iter().all(|&(_, e)| t >= e),
        }
    }

    /// Whether the whole span [start, end] lies in the phase: inside one
    /// activation, ended by the first one's start, or begun after the last's end.
    pub fn covers(&self, start: u64, end: u64) -> bool {
        match self.relation {
            PhaseRelation::During => self.windows.iter().any(|&(s, e)| s <= start && end <= e),
            PhaseRelation::Before => self.windows.iter().all(|&(s, _)| end <= s),
            PhaseRelation::After => self.windows.iter().all(|&(_, e)| start >= e),
        }
    }
}

/// The complete part files of `table` in `trial` (every shard and split part).
pub(crate) fn files(run: &RunView, table: &str, trial: u32) -> Vec<PathBuf> {
    run.tables
        .get(table)
        .and_then(|t| t.trials.get(&trial))
        .map(|parts| parts.iter().map(|p| p.path.clone()).collect())
        .unwrap_or_default()
}

/// The values of `metric` in the rows of `workload` that count, from
/// `paths`, and with `phase` only those in it.
pub(crate) fn values(
    paths: &[PathBuf],
    metric: &RowMetric<'_>,
    workload: &str,
    phase: Option<&PhaseWindows>,
) -> Result<Vec<f64>, ResultsError> {
    let mut out = Vec::new();
    for path in paths {
        for_each_chunk(path, &required(metric, phase.is_some()), &[], |chunk| {
            let keep = kept(chunk, metric, workload, phase)?;
            let values = chunk.f64(metric.column)?;
            out.extend(
                values
                    .iter()
                    .zip(keep)
                    .filter_map(|(v, keep)| v.filter(|v| keep && v.is_finite()).map(|v| v * metric.scale)),
            );
            Ok(())
        })?;
    }
    Ok(out)
}

/// (rows that count, of them those that failed): a fleet's messages after
/// warm-up and those not `ok` (`loss`), or a traffic workload's in-window
/// connections and those `failed` (`failures`).
pub(crate) fn failures(
    paths: &[PathBuf],
    fleet: bool,
    workload: &str,
    phase: Option<&PhaseWindows>,
) -> Result<(u64, u64), ResultsError> {
    let metric = RowMetric {
        table: if fleet { MESSAGES_TABLE } else { CONNECTIONS_TABLE },
        owner: Some(if fleet { "fleet" } else { "workload" }),
        column: "status",
        scale: 1.0,
        taken: if fleet { Taken::Measured } else { Taken::InWindow },
        time: if fleet { "scheduled_ns" } else { "actual_start_ns" },
        span: None,
    };
    let (mut total, mut failed) = (0u64, 0u64);
    for path in paths {
        for_each_chunk(path, &required(&metric, phase.is_some()), &[], |chunk| {
            let keep = kept(chunk, &metric, workload, phase)?;
            for (status, keep) in chunk.str("status")?.iter().zip(keep) {
                if keep {
                    total += 1;
                    failed += u64::from(if fleet {
                        status != Some(MESSAGE_OK)
                    } else {
                        status == Some(STATUS_FAILED)
                    });
                }
            }
            Ok(())
        })?;
    }
    Ok((total, failed))
}

fn required<'m>(metric: &RowMetric<'m>, phase: bool) -> Vec<&'m str> {
    let mut required: Vec<&'m str> = Vec::new();
    if let Some(owner) = metric.owner {
        required.push(owner);
    }
    required.push(metric.column);
    required.extend(filter_columns(metric.taken));
    if phase {
        required.push(metric.time);
        if let Some(span) = metric.span {
            required.push(span);
        }
    }
    required.dedup();
    required
}

fn filter_columns(taken: Taken) -> &'static [&'static str] {
    match taken {
        Taken::MessageOk => &["warmup", "status"],
        Taken::MessageSent => &["warmup", "sent_ns"],
        Taken::Measured => &["warmup"],
        Taken::Connected => &["in_window", "status"],
        Taken::InWindow => &["in_window"],
        Taken::All => &[],
    }
}

/// Whether each row of `chunk` counts for `workload`.
fn kept(
    chunk: &Chunk,
    metric: &RowMetric<'_>,
    workload: &str,
    phase: Option<&PhaseWindows>,
) -> Result<Vec<bool>, ResultsError> {
    let mut keep: Vec<bool> = match metric.owner {
        Some(owner) => chunk.str(owner)?.iter().map(|o| o == Some(workload)).collect(),
        None => vec![true; chunk.height()],
    };
    let mut and = |other: Vec<bool>| keep.iter_mut().zip(other).for_each(|(k, o)| *k &= o);
    match metric.taken {
        Taken::MessageOk | Taken::MessageSent | Taken::Measured => {
            and(chunk.bool("warmup")?.iter().map(|w| w != Some(true)).collect());
            if metric.taken == Taken::MessageOk {
                and(chunk.str("status")?.iter().map(|s| s == Some(MESSAGE_OK)).collect());
            } else if metric.taken == Taken::MessageSent {
                and(chunk.u64("sent_ns")?.iter().map(|s| s.is_some()).collect());
            }
        }
        Taken::Connected | Taken::InWindow => {
            and(chunk.bool("in_window")?.iter().map(|w| w == Some(true)).collect());
            if metric.taken == Taken::Connected {
                let connected = |s: Option<&str>| s == Some(STATUS_COMPLETE) || s == Some(STATUS_SHORT);
                and(chunk.str("status")?.iter().map(connected).collect());
            }
        }
        Taken::All => {}
    }
    if let Some(phase) = phase {
        let times = chunk.u64(metric.time)?;
        match metric.span {
            Some(span) => and(times
                .iter()
                .zip(chunk.u64(span)?.iter())
                .map(|(t, d)| t.zip(d).is_some_and(|(t, d)| phase.covers(t.saturating_sub(d), t)))
                .collect()),
            None => and(times.iter().map(|t| t.is_some_and(|t| phase.holds(t))).collect()),
        }
    }
    Ok(keep)
}

/// A value of the `xml_generation` table for `workload` (its one row per trial).
pub(crate) fn generation(paths: &[PathBuf], column: &str, workload: &str) -> Result<Option<f64>, ResultsError> {
    let mut found = None;
    for path in paths {
        for_each_chunk(path, &["workload", column], &[], |chunk| {
            let values = chunk.f64(column)?;
            for (owner, value) in chunk.str("workload")?.iter().zip(values.iter()) {
                if owner == Some(workload) {
                    found = found.or(value.filter(|v| v.is_finite()));
                }
            }
            Ok(())
        })?;
    }
    Ok(found)
}

/// A traffic workload's throughput per active window, in bit/s: the bytes
/// of both directions in the window's in-window intervals over their time
/// (the trial metric `throughput`'s rule, per window). With `phase`, only
/// the windows whose whole span lies in it.
pub(crate) fn window_throughputs(
    paths: &[PathBuf],
    workload: &str,
    phase: Option<&PhaseWindows>,
) -> Result<Vec<f64>, ResultsError> {
    // window → (bytes, first interval's start, last interval's end): the
    // intervals of a window follow one another without a gap.
    let mut windows: BTreeMap<u64, (u64, u64, u64)> = BTreeMap::new();
    let columns = ["workload", "window", "t_ns", "duration_ns", "bytes", "in_window"];
    for path in paths {
        for_each_chunk(path, &columns, &[], |chunk| {
            let owners: Vec<bool> = chunk.str("workload")?.iter().map(|o| o == Some(workload)).collect();
            let in_window = chunk.bool("in_window")?;
            let (window, t, ns, bytes) = (
                chunk.u64("window")?,
                chunk.u64("t_ns")?,
                chunk.u64("duration_ns")?,
                chunk.u64("bytes")?,
            );
            let rows = owners
                .into_iter()
                .zip(in_window.iter())
                .zip(window.iter().zip(t.iter()));
            for (((mine, counted), (w, t)), (ns, bytes)) in rows.zip(ns.iter().zip(bytes.iter())) {
                let (true, Some(true), Some(w), Some(t), Some(ns)) = (mine, counted, w, t, ns) else {
                    continue;
                };
                let entry = windows.entry(w).or_insert((0, u64::MAX, 0));
                entry.0 = entry.0.saturating_add(bytes.unwrap_or(0));
                // Each interval has a row per direction: its time counts once.
                entry.1 = entry.1.min(t);
                entry.2 = entry.2.max(t.saturating_add(ns));
            }
            Ok(())
        })?;
    }
    Ok(windows
        .values()
        .filter(|&&(_, start, end)| end > start && phase.is_none_or(|p| p.covers(start, end)))
        .map(|&(bytes, start, end)| bytes as f64 * 8.0 * 1e9 / (end - start) as f64)
        .collect())
}
