//! `expc run` of MQTT fleets end to end: against the embedded broker and
//! against a Mosquitto process, read back through exp-results.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use crate::common;

use std::process::Command;

use crate::common::{Mosquitto, Scratch};
use exp_report::{summarize, RunSummary};
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};
use exp_results::open_run;

fn spec(broker: &str) -> String {
    format!(
        r#"
experiment "fleet" {{
  duration = 2s
  fleet "plant" {{
    devices   = 20
    gap       = constant(50ms)
    payload   = json(size = 256B, fields = [temperature, humidity])
    qos       = 1
    subscribe = true
    {broker}
  }}
  monitor {{
    interval = 500ms
  }}
}}
"#
    )
}

/// Runs the spec and checks what every fleet run must have; returns the summary.
fn run_fleet(scratch: &Scratch, text: &str) -> RunSummary {
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, text).unwrap();
    let out = scratch.0.join("runs");
    let output = Command::new(env!("CARGO_BIN_EXE_expc"))
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{log}");
    let experiment = std::fs::read_dir(&out).unwrap().flatten().next().unwrap().path();
    let dir = std::fs::read_dir(experiment).unwrap().flatten().next().unwrap().path();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete, "{log}");
    assert_eq!(manifest.trials[0].status, TrialStatus::Complete, "{log}");
    let metrics = &manifest.trials[0].metrics;
    for metric in [
        "ack_latency",
        "delivery_latency",
        "send_lateness",
        "throughput",
        "messages_lost",
    ] {
        assert!(metrics.contains_key(metric), "{metric} missing: {metrics:?}");
    }
    assert_eq!(metrics["messages_lost"], 0.0, "{metrics:?}");
    let summary = summarize(&open_run(&dir).unwrap());
    assert!(summary.warnings.is_empty(), "{:?}", summary.warnings);

    let trial = |table: &str| {
        summary
            .tables
            .iter()
            .find(|t| t.table == table)
            .unwrap_or_else(|| panic!("no {table} table"))
            .trials[0]
            .clone()
    };
    let messages = trial("mqtt_messages");
    // 20 devices × 40 sends in 2 s, less what setup and the end cut off:
    // sends start once every device is connected, which a loaded machine
    // can delay by a second or more, so only the upper bound is tight.
    assert!((20..=820).contains(&messages.rows), "{} messages", messages.rows);
    let count = |column: &str| messages.columns.iter().find(|c| c.column == column).unwrap().count;
    // Every message acknowledged (status is a string column: its count shows through the acks).
    assert_eq!(count("ack_latency_ns"), messages.rows);
    assert!(count("delivery_latency_ns") >= messages.rows * 9 / 10);
    assert_eq!(trial("mqtt_devices").rows, 20);
    assert!(trial("system_metrics").rows >= 2);
    summary
}

#[test]
fn a_fleet_runs_against_the_embedded_broker() {
    let scratch = Scratch::new("embedded");
    run_fleet(&scratch, &spec(""));
}

#[test]
fn a_fleet_runs_against_mosquitto() {
    let scratch = Scratch::new("mosquitto");
    let mosquitto = Mosquitto::start(&scratch.0);
    let broker = format!("broker {{\n      url = \"mqtt://127.0.0.1:{}\"\n    }}", mosquitto.port);
    run_fleet(&scratch, &spec(&broker));
}

#[test]
fn unusable_brokers_are_refused_before_anything_starts() {
    let scratch = Scratch::new("refused");
    let spec_path = scratch.0.join("spec.exp");
    let broker =
        "broker {\n      url = \"mqtts://127.0.0.1:8883\"\n      ca_file = \"missing-ca.pem\"\n      username_env = \"EXPC_TEST_SURELY_UNSET_USER\"\n    }";
    std::fs::write(&spec_path, spec(broker)).unwrap();
    let out = scratch.0.join("runs");
    let output = Command::new(env!("CARGO_BIN_EXE_expc"))
        .arg("run")
        .arg(&spec_path)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("E1006") && stderr.contains("missing-ca.pem"),
        "{stderr}"
    );
    assert!(stderr.contains("EXPC_TEST_SURELY_UNSET_USER"), "{stderr}");
    assert!(!out.exists());
}

/// `warmup = 500ms` under `--time-scale 2`: exactly the messages scheduled
/// in the trial's first second are warm-up, and the summary leaves them out.
#[test]
fn a_warmup_span_marks_the_messages_scheduled_in_it() {
    let scratch = Scratch::new("warmup-span");
    let spec = scratch.0.join("spec.exp");
    std::fs::write(
        &spec,
        r#"
experiment "warmup-span" {
  duration = 1500ms
  fleet "plant" {
    devices = 4
    gap     = constant(50ms)
    warmup  = 500ms
  }
}
"#,
    )
    .unwrap();
    let out = scratch.0.join("runs");
    let output = Command::new(env!("CARGO_BIN_EXE_expc"))
        .args(["run", "--time-scale", "2", "--out"])
        .arg(&out)
        .arg(&spec)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::text(&output));
    let dir = common::run_dir(&out).unwrap();
    let frames = common::trial_frames(&dir, "mqtt_messages", 0);
    let scheduled = common::u64_values(&frames, "scheduled_ns");
    let warmup: Vec<bool> = frames
        .iter()
        .flat_map(|f| f.column("warmup").unwrap().bool().unwrap().iter().collect::<Vec<_>>())
        .map(Option::unwrap)
        .collect();
    assert_eq!(scheduled.len(), warmup.len());
    let marked = |before: bool| {
        scheduled
            .iter()
            .zip(&warmup)
            .filter(move |(s, _)| (**s < 1_000_000_000) == before)
    };
    assert!(marked(true).count() > 0 && marked(false).count() > 0, "{scheduled:?}");
    assert!(
        marked(true).all(|(_, w)| *w),
        "a message of the first second not marked"
    );
    assert!(
        marked(false).all(|(_, w)| !*w),
        "a message after the first second marked"
    );

    let report = Command::new(env!("CARGO_BIN_EXE_expc"))
        .args(["report", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let fleet = &report["mqtt"]["trials"][0]["fleets"][0];
    assert_eq!(fleet["warmup"]["scheduled"], marked(true).count(), "{fleet}");
    assert_eq!(fleet["counts"]["scheduled"], marked(false).count(), "{fleet}");
}
