//! `expc report` of a fleet run: the MQTT section, text and `--json`, on a
//! short run against the embedded broker.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SPEC: &str = r#"
experiment "report-mqtt" {
  duration = 5s
  fleet "sensors" {
    devices   = 20
    gap       = pareto(shape = 3, median = 100ms)
    payload   = json(size = 128B, fields = [temperature])
    qos       = 1
    subscribe = true
    warmup    = 10%
  }
}
"#;

/// A fleet beside a CPU anomaly in the middle of the trial.
const PHASES_SPEC: &str = r#"
experiment "report-phases" {
  duration = 8s
  fleet "sensors" {
    devices = 20
    gap     = 20ms
    qos     = 1
  }
  anomaly "cpu" {
    kind        = cpuoccupy
    utilization = 100%
    at          = 3s
    for         = 3s
  }
}
"#;

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// Runs `spec` with `expc run`; returns the run directory.
    fn run(&self, spec: &str, experiment: &str) -> PathBuf {
        let path = self.0.join("spec.exp");
        std::fs::write(&path, spec).unwrap();
        let out = self.0.join("runs");
        // The CPU anomaly of one run must not disturb the timing of another.
        let _alone = crate::common::one_at_a_time();
        expc(&["run".as_ref(), path.as_os_str(), "--out".as_ref(), out.as_os_str()]);
        run_dir(&out, experiment)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn expc(args: &[&std::ffi::OsStr]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_expc")).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "expc {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The one run directory under `out/<experiment>/`.
fn run_dir(out: &Path, experiment: &str) -> PathBuf {
    let experiment = out.join(experiment);
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&experiment)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs.remove(0)
}

#[test]
fn the_report_of_a_fleet_run_has_its_mqtt_statistics() {
    let scratch = Scratch::new("report-mqtt");
    let dir = scratch.run(SPEC, "report-mqtt");

    let json = expc(&["report".as_ref(), dir.as_os_str(), "--json".as_ref()]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let keys: Vec<&str> = report.as_object().unwrap().keys().map(String::as_str).collect();
    let (mqtt_at, tables_at) = (
        keys.iter().position(|k| *k == "mqtt"),
        keys.iter().position(|k| *k == "tables"),
    );
    assert!(mqtt_at.is_some() && mqtt_at < tables_at, "{keys:?}");
    let trial = &report["mqtt"]["trials"][0];
    assert!(trial["contended"].as_bool().is_some(), "{trial}");
    let fleet = &trial["fleets"][0];
    assert_eq!(fleet["fleet"], "sensors");
    let counts = &fleet["counts"];
    let sent = counts["sent"].as_u64().unwrap();
    assert!(sent > 100, "{counts}");
    assert_eq!(
        counts["acknowledged"], counts["sent"],
        "the embedded broker acknowledges everything"
    );
    assert_eq!(counts["lost"], 0);
    assert!(fleet["warmup"]["scheduled"].as_u64().unwrap() > 0, "10 % warm-up");
    assert!(fleet["throughput_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(fleet["ack_latency_ns"]["n"], counts["acknowledged"]);
    assert_eq!(fleet["ack_latency_ns"]["cdf"].as_array().unwrap().len(), 10);
    assert!(fleet["delivery_latency_ns"]["p99"].as_f64().unwrap() > 0.0);

    let gaps = &fleet["gaps"];
    assert_eq!(gaps["target"]["gap"]["family"], "pareto");
    let target = gaps["target"]["median"].as_f64().unwrap();
    assert!((target - 100e6).abs() < 1.0, "{target}");
    let median = gaps["achieved"]["median"].as_f64().unwrap();
    assert!(
        (median / target - 1.0).abs() < 0.2,
        "achieved median {median} vs {target}"
    );
    let p = gaps["ks"]["p_value"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&p), "{gaps}");

    let text = expc(&["report".as_ref(), dir.as_os_str()]);
    let text = String::from_utf8(text.stdout).unwrap();
    let mqtt = text.find("== MQTT fleets").unwrap();
    assert!(mqtt < text.find("== mqtt_messages").unwrap(), "{text}");
    assert!(text.contains("gap target   pareto(shape = 3, "), "{text}");
    assert!(fleet.get("phases").is_none(), "no anomaly: no phases");
}

#[test]
fn the_report_splits_latency_by_anomaly_phase() {
    let scratch = Scratch::new("report-phases");
    let dir = scratch.run(PHASES_SPEC, "report-phases");
    let json = expc(&["report".as_ref(), dir.as_os_str(), "--json".as_ref()]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let fleet = &report["mqtt"]["trials"][0]["fleets"][0];
    let phases = fleet["phases"].as_array().unwrap();
    let labels: Vec<&str> = phases.iter().filter_map(|p| p["label"].as_str()).collect();
    assert_eq!(labels, ["none", "cpu", "none (after)"], "{fleet}");
    let sent: u64 = phases.iter().filter_map(|p| p["n"].as_u64()).sum();
    assert_eq!(sent, fleet["counts"]["sent"].as_u64().unwrap());
    for phase in phases {
        assert!(phase["n"].as_u64().unwrap() > 0, "{phase}");
        // No timing assertions: only shown, for a human to compare.
        eprintln!("{}: ack p50 {} ns", phase["label"], phase["ack_latency_ns"]["p50"]);
    }
    let text = expc(&["report".as_ref(), dir.as_os_str()]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("    by phase  "), "{text}");
}
