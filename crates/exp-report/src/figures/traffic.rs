//! Traffic figures, the connection-structure study's: CDFs of connection
//! duration and of response time per structure × RTT mode on one plot;
//! per trial, active connections and throughput over time; and each
//! connection's throughput against its start, which shows periodic bulk
//! transfers one point each over the run. Only rows inside `measure`.

use std::collections::BTreeMap;

use exp_results::schemas::{
    ACTIVE_TABLE as ACTIVE, CONNECTIONS_TABLE as CONNECTIONS, EPOCHS_TABLE as EPOCHS, THROUGHPUT_TABLE as THROUGHPUT,
};

use super::chart::{Axis, Chart, Marks, Series};
use super::{Context, Figure};
use crate::sketch::LogHistogram;
use crate::ReportError;

const NS_PER_MS: f64 = 1e6;
const NS_PER_S: f64 = 1e9;
/// Connections drawn one point each, at most (the first of each trial).
const MAX_POINTS: usize = 20_000;

pub(super) fn figures(ctx: &Context) -> Result<Vec<Figure>, ReportError> {
    let mut out = Vec::new();
    let durations = cdfs(ctx, CONNECTIONS, "duration_ns")?;
    out.extend(cdf_figure(
        "traffic-connection-duration-cdf",
        "Connection duration",
        "connection duration (ms)",
        durations,
    ));
    let responses = cdfs(ctx, EPOCHS, "response_time_ns")?;
    out.extend(cdf_figure(
        "traffic-response-time-cdf",
        "Response time",
        "response time (ms)",
        responses,
    ));
    out.extend(transfers(ctx)?);
    for trial in ctx.timeline_trials(ACTIVE) {
        // Connections shorter than an interval show in its peak, not at its start.
        let mut series = Vec::new();
        for (column, what) in [("at_start", "at interval start"), ("peak", "peak in interval")] {
            series.extend(over_time(ctx, ACTIVE, trial, column, 1.0)?.into_iter().map(|mut s| {
                s.name = format!("{} {what}", s.name);
                s
            }));
        }
        out.extend(time_figure(
            ctx,
            trial,
            "traffic-active-connections",
            "Active connections",
            "connections open",
            series,
        ));
    }
    for trial in ctx.timeline_trials(THROUGHPUT) {
        let series = over_time(ctx, THROUGHPUT, trial, "bit_per_s", 1e-6)?;
        out.extend(time_figure(
            ctx,
            trial,
            "traffic-throughput",
            "Throughput per interval",
            "Mbit/s",
            series,
        ));
    }
    Ok(out)
}

/// The structure × RTT mode a row belongs to.
fn group(structure: Option<&str>, rtt: Option<&str>) -> String {
    format!("{} / {}", structure.unwrap_or("?"), rtt.unwrap_or("?"))
}

fn cdfs(ctx: &Context, table: &str, column: &str) -> Result<BTreeMap<String, LogHistogram>, ReportError> {
    let mut out: BTreeMap<String, LogHistogram> = BTreeMap::new();
    for part in ctx.parts(table) {
        ctx.each_chunk(&part.path, &["structure", "rtt_mode", column], &["in_window"], |c| {
            let (s, r, v) = (c.str("structure")?, c.str("rtt_mode")?, c.u64(column)?);
            for (i, inside) in c.bool_or("in_window", true)?.into_iter().enumerate() {
                if let (Some(v), true) = (v.get(i), inside) {
                    out.entry(group(s.get(i), r.get(i))).or_default().add(v as f64);
                }
            }
            Ok(())
        })?;
    }
    Ok(out)
}

fn cdf_figure(id: &str, title: &str, x: &str, groups: BTreeMap<String, LogHistogram>) -> Option<Figure> {
    let series: Vec<Series> = groups
        .into_iter()
        .filter(|(_, h)| !h.is_empty())
        .map(|(name, h)| Series {
            name,
            marks: Marks::Steps(h.cdf().into_iter().map(|(v, f)| (v / NS_PER_MS, f)).collect()),
        })
        .collect();
    (!series.is_empty()).then(|| {
        Figure::new(
            id.to_string(),
            Chart {
                title: title.to_string(),
                x: Axis::log(x),
                y: Axis::linear("fraction").with_range(0.0..1.0),
                series,
                bands: Vec::new(),
            },
            format!(
                "CDF of {} per structure / RTT mode, all trials, rows inside `measure`.",
                title.to_lowercase()
            ),
        )
    })
}

/// Each connection's throughput (sent bytes over its duration) at its start.
fn transfers(ctx: &Context) -> Result<Option<Figure>, ReportError> {
    let mut points: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut kept = 0usize;
    for part in ctx.parts(CONNECTIONS) {
        ctx.each_chunk(
            &part.path,
            &["structure", "rtt_mode", "actual_start_ns", "duration_ns", "sent_bytes"],
            &["in_window"],
            |c| {
                let (s, r) = (c.str("structure")?, c.str("rtt_mode")?);
                let (start, duration, sent) = (c.u64("actual_start_ns")?, c.u64("duration_ns")?, c.u64("sent_bytes")?);
                for (i, inside) in c.bool_or("in_window", true)?.into_iter().enumerate() {
                    if kept >= MAX_POINTS {
                        break;
                    }
                    if let (Some(t), Some(d), Some(b), true) = (start.get(i), duration.get(i), sent.get(i), inside) {
                        if d > 0 && b > 0 {
                            let rate = b as f64 * 8.0 / (d as f64 / NS_PER_S) / 1e6;
                            points
                                .entry(group(s.get(i), r.get(i)))
                                .or_default()
                                .push((t as f64 / NS_PER_S, rate));
                            kept += 1;
                        }
                    }
                }
                Ok(())
            },
        )?;
    }
    let series: Vec<Series> = points
        .into_iter()
        .map(|(name, p)| Series {
            name,
            marks: Marks::Points(p),
        })
        .collect();
    Ok((!series.is_empty()).then(|| {
        Figure::new(
            "traffic-connection-throughput".into(),
            Chart {
                title: "Throughput per connection".into(),
                x: Axis::linear("start in trial (s)"),
                y: Axis::log("Mbit/s (sent bytes / duration)"),
                series,
                bands: Vec::new(),
            },
            format!("One point per connection that sent data, at its actual start (all trials; at most {MAX_POINTS} points): periodic transfers show as a row of points over the run."),
        )
    }))
}

/// `column` of `table` against time for one trial, a series per
/// structure / RTT mode (and per `direction` where the table has one),
/// scaled by `scale`. One read of the trial's files.
fn over_time(ctx: &Context, table: &str, trial: u32, column: &str, scale: f64) -> Result<Vec<Series>, ReportError> {
    let mut groups: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for part in ctx.trial_parts(table, trial) {
        ctx.each_chunk(
            &part.path,
            &["structure", "rtt_mode", "t_ns", column],
            &["direction"],
            |c| {
                let (s, r, t, v) = (c.str("structure")?, c.str("rtt_mode")?, c.u64("t_ns")?, c.f64(column)?);
                let direction = c.str_or_null("direction")?;
                for i in 0..c.height() {
                    if let (Some(t), Some(v)) = (t.get(i), v.get(i)) {
                        let mut name = group(s.get(i), r.get(i));
                        if let Some(d) = direction.get(i) {
                            name = format!("{name} {}", d.replace('_', " "));
                        }
                        groups.entry(name).or_default().push((t as f64 / NS_PER_S, v * scale));
                    }
                }
                Ok(())
            },
        )?;
    }
    let series = groups.into_iter().map(|(name, p)| Series {
        name,
        marks: Marks::Line(p),
    });
    Ok(series.collect())
}

fn time_figure(ctx: &Context, trial: u32, id: &str, title: &str, y: &str, series: Vec<Series>) -> Option<Figure> {
    (!series.is_empty()).then(|| {
        Figure::new(
            format!("{id}-trial-{trial}"),
            Chart {
                title: format!("{title}, {}", ctx.trial_label(trial)),
                x: Axis::linear("time in trial (s)"),
                y: Axis::linear(y),
                series,
                bands: ctx.windows(trial),
            },
            format!("{title} per structure / RTT mode over the trial; shaded: anomaly windows."),
        )
    })
}
