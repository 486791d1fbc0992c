//! `expc run --metrics ADDR`: the run's live counters
//! (`exp_runtime::live`) in Prometheus' text exposition format 0.0.4, at
//! `/metrics` (and `/`). Each scrape loads the atomics the runner bumps and
//! copies the run's state; it never waits for the runner. The names and
//! their meaning are listed in docs/running.md, "Watching a run".

use std::fmt::Write;
use std::net::TcpListener;
use std::sync::atomic::Ordering::Relaxed;

use exp_runtime::live::{Live, Registered, WorkloadCounters};

use crate::http::{Request, Response};

const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Serves `live` on `listener` until the process ends.
pub fn serve(listener: TcpListener, live: Live) -> Result<(), String> {
    crate::http::serve(listener, "expc-metrics", move |request: &Request| {
        match request.path.as_str() {
            "/metrics" | "/" => Response::new(200, CONTENT_TYPE, exposition(&live)),
            _ => Response::text(404, "the metrics are at /metrics\n"),
        }
    })
    .map(drop)
}

/// One metric family: its `# HELP` and `# TYPE` lines, then its samples.
struct Family<'a> {
    out: &'a mut String,
}

impl Family<'_> {
    fn start<'a>(out: &'a mut String, name: &str, kind: &str, help: &str) -> Family<'a> {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        Family { out }
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.out.push_str(name);
        if !labels.is_empty() {
            let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
            let _ = write!(self.out, "{{{}}}", labels.join(","));
        }
        let _ = writeln!(self.out, " {}", number(value));
    }
}

/// A label value as the format writes it: `\`, `"` and newlines escaped.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// `NaN`, `+Inf`, `-Inf` as the format spells them; integers without a fraction.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        value.to_string()
    }
}

/// A workload counter's metric: name, type, help, which workloads have it
/// and its value.
struct Metric {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    of: &'static str,
    value: fn(&WorkloadCounters) -> f64,
}

fn load(counter: &std::sync::atomic::AtomicU64) -> f64 {
    counter.load(Relaxed) as f64
}

const WORKLOAD_METRICS: &[Metric] = &[
    Metric {
        name: "expc_fleet_messages_scheduled_total",
        kind: "counter",
        help: "Fleet messages whose row is final (every mqtt_messages row), over the run's trials.",
        of: "fleet",
        value: |c| load(&c.messages_scheduled),
    },
    Metric {
        name: "expc_fleet_messages_sent_total",
        kind: "counter",
        help: "Fleet messages sent (rows with a sent_ns), counted when final.",
        of: "fleet",
        value: |c| load(&c.messages_sent),
    },
    Metric {
        name: "expc_fleet_messages_acked_total",
        kind: "counter",
        help: "Fleet messages acknowledged (QoS 1/2) or written to the socket (QoS 0): status ok.",
        of: "fleet",
        value: |c| load(&c.messages_acked),
    },
    Metric {
        name: "expc_fleet_messages_lost_total",
        kind: "counter",
        help: "Fleet messages whose status is not ok (timeout, error, dropped).",
        of: "fleet",
        value: |c| load(&c.messages_lost),
    },
    Metric {
        name: "expc_traffic_connections_started_total",
        kind: "counter",
        help: "Traffic connections the replay started.",
        of: "traffic",
        value: |c| load(&c.connections.started),
    },
    Metric {
        name: "expc_traffic_connections_finished_total",
        kind: "counter",
        help: "Traffic connections recorded (complete, short, failed or cut).",
        of: "traffic",
        value: |c| load(&c.connections.finished),
    },
    Metric {
        name: "expc_traffic_connections_open",
        kind: "gauge",
        help: "Traffic connections started and not yet recorded.",
        of: "traffic",
        value: |c| {
            let started = c.connections.started.load(Relaxed);
            started.saturating_sub(c.connections.finished.load(Relaxed)) as f64
        },
    },
    Metric {
        name: "expc_xml_documents_written_total",
        kind: "counter",
        help: "XML documents generated, counted when a trial's generation ends.",
        of: "xml",
        value: |c| load(&c.documents),
    },
    Metric {
        name: "expc_xml_written_bytes_total",
        kind: "counter",
        help: "Uncompressed bytes of the XML documents generated, counted as the documents.",
        of: "xml",
        value: |c| load(&c.document_bytes),
    },
    Metric {
        name: "expc_anomaly_activations_total",
        kind: "counter",
        help: "Anomaly activations started (child processes spawned).",
        of: "anomaly",
        value: |c| load(&c.activations_started),
    },
    Metric {
        name: "expc_anomaly_activations_active",
        kind: "gauge",
        help: "Anomaly activations running now.",
        of: "anomaly",
        value: |c| {
            let started = c.activations_started.load(Relaxed);
            started.saturating_sub(c.activations_ended.load(Relaxed)) as f64
        },
    },
    Metric {
        name: "expc_anomaly_achieved_utilization_ratio",
        kind: "gauge",
        help: "The anomaly's achieved utilization at its latest sample: CPU time over its cores' wall time (NaN before one).",
        of: "anomaly",
        value: WorkloadCounters::achieved_utilization,
    },
];

/// The whole exposition of `live` now.
pub fn exposition(live: &Live) -> String {
    let mut out = String::new();
    let workloads = live.workloads();
    let mut family = Family::start(
        &mut out,
        "expc_workload_running",
        "gauge",
        "1 while the workload runs in the current trial, else 0.",
    );
    for (name, kind, counters) in &workloads {
        family.sample(
            "expc_workload_running",
            &[("workload", name), ("kind", kind)],
            f64::from(u8::from(counters.running.load(Relaxed))),
        );
    }
    for metric in WORKLOAD_METRICS {
        let of_kind: Vec<_> = workloads.iter().filter(|(_, kind, _)| *kind == metric.of).collect();
        if of_kind.is_empty() {
            continue;
        }
        let mut family = Family::start(&mut out, metric.name, metric.kind, metric.help);
        for (name, _, counters) in of_kind {
            family.sample(metric.name, &[("workload", name)], (metric.value)(counters));
        }
    }
    ack_latency(&mut out, &workloads);
    run_state(&mut out, live);
    out
}

/// The fleets' acknowledgement latency as a summary without quantiles:
/// its rate of `_sum` over its rate of `_count` is the mean of any window.
fn ack_latency(out: &mut String, workloads: &[Registered]) {
    let fleets: Vec<_> = workloads.iter().filter(|(_, kind, _)| *kind == "fleet").collect();
    if fleets.is_empty() {
        return;
    }
    let name = "expc_fleet_ack_latency_seconds";
    let mut family = Family::start(
        out,
        name,
        "summary",
        "Acknowledgement latency (QoS 1/2) of the fleet's final messages.",
    );
    for (workload, _, counters) in fleets {
        let labels = [("workload", workload.as_str())];
        family.sample(
            &format!("{name}_sum"),
            &labels,
            counters.ack_latency_sum_ns.load(Relaxed) as f64 / 1e9,
        );
        family.sample(&format!("{name}_count"), &labels, load(&counters.ack_latency_count));
    }
}

/// The trials: selected, the current one, finished by status, verdicts and findings.
fn run_state(out: &mut String, live: &Live) {
    let state = live.state();
    let gauge = |out: &mut String, name: &str, help: &str, value: f64| {
        Family::start(out, name, "gauge", help).sample(name, &[], value);
    };
    gauge(
        out,
        "expc_trials_selected",
        "Trials this run is to run (repeat until may stop earlier).",
        f64::from(state.trials_selected),
    );
    gauge(
        out,
        "expc_trial_index",
        "The number of the trial running now, or of the last one (NaN before the first).",
        state.last_trial.map_or(f64::NAN, f64::from),
    );
    gauge(
        out,
        "expc_trial_running",
        "1 while a trial runs, 0 between trials (pauses) and after the last.",
        f64::from(u8::from(state.running.is_some())),
    );
    let running = state.running.as_ref();
    gauge(
        out,
        "expc_trial_ordinal",
        "The running trial's position among the selected trials, 1-based (0 when none runs).",
        running.map_or(0.0, |t| f64::from(t.ordinal)),
    );
    gauge(
        out,
        "expc_trial_elapsed_seconds",
        "Seconds since the running trial started (0 when none runs).",
        running.map_or(0.0, |t| t.started.elapsed().as_secs_f64()),
    );
    gauge(
        out,
        "expc_trial_planned_seconds",
        "The running trial's planned length after --time-scale (NaN when none runs or it has none).",
        running
            .and_then(|t| t.planned_ns)
            .map_or(f64::NAN, |ns| ns as f64 / 1e9),
    );
    gauge(
        out,
        "expc_run_stopping",
        "1 once the run was asked to stop (Ctrl-C, SIGTERM).",
        f64::from(u8::from(state.stopping)),
    );
    let name = "expc_trials_finished_total";
    let mut family = Family::start(out, name, "counter", "Trials that ended, by status.");
    for status in ["complete", "interrupted", "failed"] {
        family.sample(
            name,
            &[("status", status)],
            *state.finished.get(status).unwrap_or(&0) as f64,
        );
    }
    for (status, n) in state
        .finished
        .iter()
        .filter(|(s, _)| !matches!(s.as_str(), "complete" | "interrupted" | "failed"))
    {
        family.sample(name, &[("status", status)], *n as f64);
    }
    let name = "expc_trials_verdict_total";
    let mut family = Family::start(out, name, "counter", "Trials that ended, by their validity verdict.");
    for verdict in ["valid", "degraded", "invalid"] {
        family.sample(
            name,
            &[("verdict", verdict)],
            *state.verdicts.get(verdict).unwrap_or(&0) as f64,
        );
    }
    let name = "expc_validity_findings_total";
    let mut family = Family::start(
        out,
        name,
        "counter",
        "Validity findings of the trials that ended, by code (expc explain CODE) and verdict.",
    );
    for ((code, verdict), n) in &state.findings {
        family.sample(name, &[("code", code), ("verdict", verdict)], *n as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_exposed_with_help_type_and_labels() {
        let live = Live::default();
        let fleet = live.workload("sen\"sors", "fleet");
        fleet.message(true, true, Some(1_500_000));
        fleet.message(false, false, None);
        live.workload("cpu", "anomaly").set_achieved_utilization(0.5);
        let text = exposition(&live);
        assert!(text.contains("# TYPE expc_fleet_messages_sent_total counter\n"));
        assert!(text.contains("expc_fleet_messages_sent_total{workload=\"sen\\\"sors\"} 1\n"));
        assert!(text.contains("expc_fleet_messages_scheduled_total{workload=\"sen\\\"sors\"} 2\n"));
        assert!(text.contains("expc_fleet_ack_latency_seconds_sum{workload=\"sen\\\"sors\"} 0.0015\n"));
        assert!(text.contains("expc_anomaly_achieved_utilization_ratio{workload=\"cpu\"} 0.5\n"));
        assert!(text.contains("expc_trial_index NaN\n"));
        assert!(
            !text.contains("expc_traffic"),
            "no family without a workload of its kind"
        );
        // Every sample line belongs to the family declared above it.
        let mut family = String::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                family = rest.split(' ').next().unwrap().to_string();
            } else if !line.starts_with('#') {
                assert!(line.starts_with(&family), "{line} outside its family {family}");
            }
        }
    }
}
