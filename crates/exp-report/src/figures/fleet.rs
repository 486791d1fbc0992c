//! Fleet figures from `mqtt_messages`: ack and delivery latency CDFs per
//! sweep point and fleet, and per trial the ack latency p50/p99 and the
//! throughput of every second, with the anomaly windows shaded.
//!
//! One pass over each trial's files, chunk by chunk, into log histograms
//! (`sketch.rs`): memory grows with the number of seconds, not of rows.
//! Warm-up rows and messages that did not complete (`status` ≠ `ok`) are
//! left out, as in the text report.

use std::collections::{BTreeMap, BTreeSet};

use exp_results::schemas::MESSAGES_TABLE;
use exp_results::ResultsError;

use super::chart::{Axis, Chart, Marks, Series};
use super::{Context, Figure, MAX_SECONDS, MAX_TIMELINES};
use crate::mqtt::phases::Phases;
use crate::part_chunks::Chunk;
use crate::sketch::LogHistogram;
use crate::ReportError;

const NS_PER_MS: f64 = 1e6;
const NS_PER_S: u64 = 1_000_000_000;

/// One fleet's latencies at one sweep point, over its repetitions.
#[derive(Default)]
struct Latencies {
    ack: LogHistogram,
    delivery: LogHistogram,
}

/// One second of one trial, all fleets together.
#[derive(Clone)]
struct Second {
    ok: u64,
    ack: LogHistogram,
}

impl Default for Second {
    fn default() -> Self {
        // Coarse: a day of seconds stays a few tens of MB.
        Second {
            ok: 0,
            ack: LogHistogram::coarse(),
        }
    }
}

/// Ack latencies by (point, fleet, phase), for trials with anomalies.
type ByPhase = BTreeMap<(String, String, String), LogHistogram>;

/// One fleet's values in one trial; the ack latencies per phase index.
#[derive(Default)]
struct FleetAcc {
    latencies: Latencies,
    by_phase: Vec<LogHistogram>,
}

/// What one trial's messages add to the figures. A trial has a handful of
/// fleets: they are found by a linear search with the last one cached, and
/// merged into the figures' maps once the trial is read (a map lookup per
/// row was most of the report's time on 27 million rows).
struct Trial {
    fleets: Vec<(String, FleetAcc)>,
    last: usize,
    phases: Option<Phases>,
    /// Per second, for the trials whose time series are drawn.
    seconds: Option<Vec<Second>>,
}

pub(super) fn figures(ctx: &Context) -> Result<Vec<Figure>, ReportError> {
    let Some(table) = ctx.run.tables.get(MESSAGES_TABLE) else {
        return Ok(Vec::new());
    };
    let mut latencies = BTreeMap::new();
    let mut by_phase = ByPhase::new();
    let mut timelines = Vec::new();
    for (n, (&trial, parts)) in table.trials.iter().enumerate() {
        // The text report warns about a timeline it cannot read.
        let phases = crate::mqtt::phases::read(ctx.run, trial, None, &mut Vec::new());
        let mut acc = Trial {
            fleets: Vec::new(),
            last: 0,
            phases,
            seconds: (n < MAX_TIMELINES).then(Vec::new),
        };
        for part in parts {
            let required = ["fleet", "status", "sent_ns"];
            let optional = ["ack_latency_ns", "delivery_latency_ns", "warmup"];
            ctx.each_chunk(&part.path, &required, &optional, |c| acc.add(c))?;
        }
        let point = ctx.point_label(trial);
        for (fleet, f) in acc.fleets {
            let entry: &mut Latencies = latencies.entry((point.clone(), fleet.clone())).or_default();
            entry.ack.merge(&f.latencies.ack);
            entry.delivery.merge(&f.latencies.delivery);
            for (p, h) in f.by_phase.iter().enumerate().filter(|(_, h)| !h.is_empty()) {
                let label = acc.phases.as_ref().map_or_else(String::new, |phases| phases.label(p));
                by_phase
                    .entry((point.clone(), fleet.clone(), label))
                    .or_default()
                    .merge(h);
            }
        }
        if let Some(seconds) = acc.seconds {
            timelines.push((trial, seconds));
        }
    }
    let mut out = cdfs(&latencies);
    out.extend(phase_cdf(&by_phase));
    for (trial, seconds) in timelines {
        out.extend(timeline(ctx, trial, &seconds));
    }
    Ok(out)
}

impl Trial {
    fn fleet(&mut self, name: &str) -> &mut FleetAcc {
        if self.fleets.get(self.last).is_none_or(|(n, _)| n != name) {
            self.last = match self.fleets.iter().position(|(n, _)| n == name) {
                Some(i) => i,
                None => {
                    self.fleets.push((name.to_string(), FleetAcc::default()));
                    self.fleets.len() - 1
                }
            };
        }
        &mut self.fleets[self.last].1
    }

    fn add(&mut self, c: &Chunk) -> Result<(), ResultsError> {
        let (fleet, status, sent) = (c.str("fleet")?, c.str("status")?, c.u64("sent_ns")?);
        let (ack, delivery) = (c.u64_or_null("ack_latency_ns")?, c.u64_or_null("delivery_latency_ns")?);
        for (i, warmup) in c.bool_or("warmup", false)?.into_iter().enumerate() {
            if warmup || status.get(i) != Some("ok") {
                continue;
            }
            let phase = self.phases.as_ref().zip(sent.get(i)).map(|(phases, s)| phases.of(s));
            let entry = self.fleet(fleet.get(i).unwrap_or_default());
            let ack = ack.get(i).map(|a| a as f64);
            if let Some(a) = ack {
                entry.latencies.ack.add(a);
                if let Some(p) = phase {
                    if p >= entry.by_phase.len() {
                        entry.by_phase.resize_with(p + 1, LogHistogram::default);
                    }
                    entry.by_phase[p].add(a);
                }
            }
            if let Some(d) = delivery.get(i) {
                entry.latencies.delivery.add(d as f64);
            }
            let second = sent.get(i).map(|s| usize::try_from(s / NS_PER_S).unwrap_or(usize::MAX));
            if let (Some(seconds), Some(second)) = (&mut self.seconds, second.filter(|&s| s < MAX_SECONDS)) {
                if second >= seconds.len() {
                    seconds.resize(second + 1, Second::default());
                }
                seconds[second].ok += 1;
                if let Some(a) = ack {
                    seconds[second].ack.add(a);
                }
            }
        }
        Ok(())
    }
}

/// The ack and the delivery latency CDFs, a series per point and fleet.
fn cdfs(latencies: &BTreeMap<(String, String), Latencies>) -> Vec<Figure> {
    let fleets: BTreeSet<&str> = latencies.keys().map(|(_, f)| f.as_str()).collect();
    let name = |point: &str, fleet: &str| match (point.is_empty(), fleets.len() == 1) {
        (true, _) => fleet.to_string(),
        (false, true) => point.to_string(),
        (false, false) => format!("{point} {fleet}"),
    };
    let mut out = Vec::new();
    for (which, title) in [("ack", "Ack latency"), ("delivery", "Delivery latency")] {
        let series: Vec<Series> = latencies
            .iter()
            .map(|((point, fleet), l)| (name(point, fleet), if which == "ack" { &l.ack } else { &l.delivery }))
            .filter(|(_, h)| !h.is_empty())
            .map(|(name, h)| Series {
                name,
                marks: Marks::Steps(h.cdf().into_iter().map(|(v, f)| (v / NS_PER_MS, f)).collect()),
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        let per = if fleets.len() == 1 {
            "sweep point"
        } else {
            "sweep point and fleet"
        };
        out.push(Figure::new(
            format!("fleet-{which}-latency-cdf"),
            Chart {
                title: title.into(),
                x: Axis::log(format!("{which} latency (ms)")),
                y: Axis::linear("fraction of messages").with_range(0.0..1.0),
                series,
                bands: Vec::new(),
            },
            format!(
                "CDF of the {which} latency of every message that completed (warm-up left out), per {per}; \
                 log buckets 0.27 % wide."
            ),
        ));
    }
    out
}

/// The ack latency CDF per phase (the anomalies active at the send), a
/// series per point, fleet and phase.
fn phase_cdf(by_phase: &ByPhase) -> Option<Figure> {
    let series: Vec<Series> = by_phase
        .iter()
        .map(|((point, fleet, phase), h)| {
            let name = [point.as_str(), fleet, phase]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>();
            Series {
                name: name.join(" "),
                marks: Marks::Steps(h.cdf().into_iter().map(|(v, f)| (v / NS_PER_MS, f)).collect()),
            }
        })
        .collect();
    (!series.is_empty()).then(|| {
        Figure::new(
            "fleet-ack-latency-by-phase-cdf".into(),
            Chart {
                title: "Ack latency by anomaly phase".into(),
                x: Axis::log("ack latency (ms)"),
                y: Axis::linear("fraction of messages").with_range(0.0..1.0),
                series,
                bands: Vec::new(),
            },
            "CDF of the ack latency of the messages sent while the same anomalies were active \
             (`none`: before any; `none (after)`: after one ended), as the text report's phases."
                .into(),
        )
    })
}

/// Ack latency quantiles and throughput per second of one trial.
fn timeline(ctx: &Context, trial: u32, seconds: &[Second]) -> Vec<Figure> {
    let at = |i: usize| i as f64 + 0.5;
    let quantile = |q: f64| -> Vec<(f64, f64)> {
        let values = seconds.iter().enumerate();
        values
            .filter_map(|(i, s)| Some((at(i), s.ack.quantile(q)? / NS_PER_MS)))
            .collect()
    };
    let mut out = Vec::new();
    let p50 = quantile(0.5);
    if !p50.is_empty() {
        let series = vec![
            Series {
                name: "p50".into(),
                marks: Marks::Line(p50),
            },
            Series {
                name: "p99".into(),
                marks: Marks::Line(quantile(0.99)),
            },
        ];
        out.push(Figure::new(
            format!("fleet-latency-over-time-trial-{trial}"),
            Chart {
                title: format!("Ack latency per second, {}", ctx.trial_label(trial)),
                x: Axis::linear("time in trial (s)"),
                y: Axis::log("ack latency (ms)"),
                series,
                bands: ctx.windows(trial),
            },
            "Median and 99th percentile of the ack latency of the messages sent in each second; \
             shaded: anomaly windows, from actual start to actual end."
                .into(),
        ));
    }
    if !seconds.is_empty() {
        let throughput = seconds.iter().enumerate().map(|(i, s)| (at(i), s.ok as f64)).collect();
        out.push(Figure::new(
            format!("fleet-throughput-trial-{trial}"),
            Chart {
                title: format!("Throughput, {}", ctx.trial_label(trial)),
                x: Axis::linear("time in trial (s)"),
                y: Axis::linear("messages completed per second"),
                series: vec![Series {
                    name: "messages/s".into(),
                    marks: Marks::Line(throughput),
                }],
                bands: ctx.windows(trial),
            },
            "Messages sent in each second that completed (status ok), all fleets; shaded: anomaly windows.".into(),
        ));
    }
    out
}
