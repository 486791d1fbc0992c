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

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

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
fn run_dir(out: &Path) -> PathBuf {
    let experiment = out.join("report-mqtt");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&experiment)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs.remove(0)
}

#[test]
fn the_report_of_a_fleet_run_has_its_mqtt_statistics() {
    let scratch = Scratch(std::env::temp_dir().join(format!("expc-report-mqtt-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&scratch.0);
    std::fs::create_dir_all(&scratch.0).unwrap();
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let out = scratch.0.join("runs");
    expc(&["run".as_ref(), spec.as_os_str(), "--out".as_ref(), out.as_os_str()]);
    let dir = run_dir(&out);

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
}
