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
        let breaks = gap_breaks(&seconds);
        let bands = ctx.windows(trial);
        for panel in panels(&frame) {
            let series: Vec<Series> = panel
                .series
                .into_iter()
                .map(|(name, values)| Series {
                    name,
                    marks: Marks::Line(
                        seconds
                            .iter()
                            .copied()
                            .zip(values)
                            .chain(breaks.iter().copied())
                            .collect(),
                    ),
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
                    "{} from the monitor's samples; shaded: each anomaly activation from its actual start to its actual end{}.",
                    panel.title,
                    if breaks.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; the line breaks at {} sampling gap(s) longer than twice the usual interval",
                            breaks.len()
                        )
                    }
                ),
            ));
        }
    }
    Ok(out)
}

/// Where the monitor missed samples: a (time, NaN) point in the middle of
/// every interval longer than twice the median one (the interval asked
/// for, as sampled; V0501 audits the same at run time), so the lines break
/// there instead of drawing across what nobody measured.
fn gap_breaks(seconds: &[f64]) -> Vec<(f64, f64)> {
    let mut steps: Vec<f64> = seconds.windows(2).map(|w| w[1] - w[0]).collect();
    steps.sort_by(f64::total_cmp);
    let Some(&median) = steps.get(steps.len() / 2) else {
        return Vec::new();
    };
    seconds
        .windows(2)
        .filter(|w| w[1] - w[0] > 2.0 * median)
        .map(|w| ((w[0] + w[1]) / 2.0, f64::NAN))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampling_gap_breaks_the_line_in_its_middle() {
        let seconds = [0.1, 0.2, 0.3, 0.4, 1.4, 1.5, 1.6];
        let breaks = gap_breaks(&seconds);
        assert_eq!(breaks.len(), 1);
        assert!((breaks[0].0 - 0.9).abs() < 1e-9 && breaks[0].1.is_nan());
        assert!(gap_breaks(&[0.1, 0.2, 0.3]).is_empty());
        assert!(gap_breaks(&[]).is_empty() && gap_breaks(&[0.5]).is_empty());
    }
}
