//! System-metric figures: per trial, CPU busy per core, memory in use, disk
//! and network rates over time from the monitor's `system_metrics`, each
//! anomaly window (`anomaly_timeline`) shaded and labelled: the ground
//! truth of an anomaly run at a glance.

use exp_results::schemas::MONITOR_TABLE;

use super::chart::{Axis, Chart, Marks, Series};
use super::frame::Frame;
use super::{Context, Figure};
use crate::ReportError;

const MB: f64 = 1e6;

/// A panel: its id, title, y axis and the series from the frame's columns.
struct Panel {
    id: &'static str,
    title: &'static str,
    y: &'static str,
    series: Vec<(String, Vec<f64>)>,
}

pub(super) fn figures(ctx: &Context) -> Result<Vec<Figure>, ReportError> {
    let Some(table) = ctx.run.tables.get(MONITOR_TABLE) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (&trial, parts) in table.trials.iter().take(super::MAX_TIMELINES) {
        let frame = match Frame::read(parts) {
            Ok(frame) => frame,
            Err((path, error)) => {
                ctx.warn(&path, &error);
                continue;
            }
        };
        let Some(t) = frame.f64("t_ns") else { continue };
        let seconds: Vec<f64> = t.iter().map(|ns| ns / 1e9).collect();
        let bands = ctx.windows(trial);
        for panel in panels(&frame) {
            let series: Vec<Series> = panel
                .series
                .into_iter()
                .map(|(name, values)| Series {
                    name,
                    marks: Marks::Line(seconds.iter().copied().zip(values).collect()),
                })
                .collect();
            if series.is_empty() {
                continue;
            }
            out.push(Figure::new(
                format!("{}-trial-{trial}", panel.id),
                Chart {
                    title: format!("{}, {}", panel.title, ctx.trial_label(trial)),
                    x: Axis::linear("time in trial (s)"),
                    y: Axis::linear(panel.y),
                    series,
                    bands: bands.clone(),
                },
                format!(
                    "{} from the monitor's samples; shaded: each anomaly activation from its actual start to its actual end.",
                    panel.title
                ),
            ));
        }
    }
    Ok(out)
}

fn panels(frame: &Frame) -> Vec<Panel> {
    let cores: Vec<(String, Vec<f64>)> = (0..)
        .map_while(|n| Some((format!("cpu{n}"), frame.f64(&format!("cpu{n}_idle_pct"))?)))
        .map(|(name, idle)| (name, idle.into_iter().map(|i| 100.0 - i).collect()))
        .collect();
    let scaled = |column: &str, name: &str| -> Option<(String, Vec<f64>)> {
        Some((
            name.to_string(),
            frame.f64(column)?.into_iter().map(|v| v / MB).collect(),
        ))
    };
    let used = frame
        .f64("mem_total_bytes")
        .zip(frame.f64("mem_available_bytes"))
        .map(|(total, available)| {
            let used = total.iter().zip(&available).map(|(t, a)| (t - a) / MB).collect();
            ("in use".to_string(), used)
        });
    vec![
        Panel {
            id: "cpu",
            title: "CPU busy per core",
            y: "busy (%)",
            series: cores,
        },
        Panel {
            id: "memory",
            title: "Memory in use",
            y: "MB (total − available)",
            series: used.into_iter().collect(),
        },
        Panel {
            id: "disk",
            title: "Disk throughput",
            y: "MB/s",
            series: [
                scaled("disk_read_bytes_per_s", "read"),
                scaled("disk_write_bytes_per_s", "write"),
            ]
            .into_iter()
            .flatten()
            .collect(),
        },
        Panel {
            id: "network",
            title: "Network throughput (all interfaces)",
            y: "MB/s",
            series: [
                scaled("net_rx_bytes_per_s", "received"),
                scaled("net_tx_bytes_per_s", "sent"),
            ]
            .into_iter()
            .flatten()
            .collect(),
        },
    ]
}
