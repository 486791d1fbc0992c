//! A broker outage in the middle of a fleet run: Mosquitto is killed and
//! restarted while devices publish. The run must finish on schedule, keep a
//! row for every scheduled message, and say in the manifest that the
//! connections broke.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::fs::File;
use std::time::{Duration, Instant};

use crate::common::{spawn_run_captured, Mosquitto, Scratch};
use exp_parquet::Frame;
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};
use exp_results::open_run;

const DEVICES: u64 = 10;
const MESSAGES: u64 = 120;

fn read_table(dir: &std::path::Path, table: &str) -> Frame {
    let view = open_run(dir).unwrap();
    let parts = &view.tables[table].trials[&0];
    assert_eq!(parts.len(), 1, "{parts:?}");
    exp_parquet::Reader::new(File::open(&parts[0].path).unwrap())
        .and_then(|r| r.read_all())
        .unwrap()
}

/// Established TCP connections accepted on 127.0.0.1:`port`, from /proc/net/tcp.
fn established_to(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let local = format!("0100007F:{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&"01")
        })
        .count()
}

#[test]
fn a_broker_restart_mid_run_loses_no_row() {
    let scratch = Scratch::new("faults");
    let mut mosquitto = Mosquitto::start(&scratch.0);
    // 120 messages 50 ms apart: 6 s of sending, with the broker down for about 1 s in the middle.
    let spec = format!(
        r#"
experiment "outage" {{
  fleet "plant" {{
    devices     = {DEVICES}
    gap         = constant(50ms)
    messages    = {MESSAGES}
    payload     = json(size = 128B, fields = [temperature])
    qos         = 1
    ack_timeout = 3s
    broker {{
      url = "mqtt://127.0.0.1:{}"
    }}
  }}
}}
"#,
        mosquitto.port
    );
    let spec_path = scratch.0.join("spec.exp");
    std::fs::write(&spec_path, spec).unwrap();
    let out = scratch.0.join("runs");
    let started = Instant::now();
    let run = spawn_run_captured(&spec_path, &out);
    // Sends start once every device is connected; the broker goes down a
    // second into them, for about a second.
    let deadline = Instant::now() + Duration::from_secs(60);
    while established_to(mosquitto.port) < DEVICES as usize {
        assert!(Instant::now() < deadline, "the devices never all connected");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(1));
    mosquitto.restart_after(Duration::from_secs(1));
    let output = run.wait_with_output().unwrap();
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{log}");
    // On schedule: the sends take 6 s, the ack timeout bounds the rest.
    assert!(started.elapsed() < Duration::from_secs(30), "{log}");

    let experiment = std::fs::read_dir(&out).unwrap().flatten().next().unwrap().path();
    let dir = std::fs::read_dir(experiment).unwrap().flatten().next().unwrap().path();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete, "{log}");
    let trial = &manifest.trials[0];
    assert_eq!(trial.status, TrialStatus::Complete, "{log}");
    // The outage is in the manifest: every device lost its connection, for about a second.
    assert!(trial.metrics["disconnects"] >= DEVICES as f64, "{:?}", trial.metrics);
    let outage_s = trial.metrics["outage"] / 1e9;
    assert!((0.5..10.0).contains(&outage_s), "outage {outage_s} s");

    // Every scheduled message has exactly one row, whatever became of it.
    let messages = read_table(&dir, "mqtt_messages");
    assert_eq!(messages.height() as u64, DEVICES * MESSAGES);
    let device = messages.column("device").unwrap().u64().unwrap();
    let seq = messages.column("seq").unwrap().u64().unwrap();
    let keys: BTreeSet<(u64, u64)> = device
        .iter()
        .map(Option::unwrap)
        .zip(seq.iter().map(Option::unwrap))
        .collect();
    assert_eq!(keys.len() as u64, DEVICES * MESSAGES);
    assert!(keys.iter().all(|&(d, s)| d < DEVICES && s < MESSAGES));

    // The gap is recorded: some messages did not come through cleanly or were acked
    // late, and the statuses are the documented ones.
    let status = messages.column("status").unwrap().str().unwrap();
    let statuses: Vec<&str> = status.iter().flatten().collect();
    assert!(statuses
        .iter()
        .all(|s| ["ok", "timeout", "error", "dropped"].contains(s)));
    let ack = messages.column("ack_latency_ns").unwrap().i64().unwrap();
    let disturbed = statuses
        .iter()
        .zip(ack.iter())
        .filter(|(s, a)| **s != "ok" || a.is_some_and(|a| a > 200_000_000))
        .count();
    assert!(disturbed >= DEVICES as usize, "{disturbed} messages show the outage");
    // Most messages made it: the broker was down for 1 s of 6.
    let ok = statuses.iter().filter(|s| **s == "ok").count();
    let count = |want: &str| statuses.iter().filter(|s| **s == want).count();
    eprintln!(
        "outage {outage_s:.2} s, {} disconnects; messages: {ok} ok, {} timeout, {} error, {} dropped; {disturbed} disturbed",
        trial.metrics["disconnects"],
        count("timeout"),
        count("error"),
        count("dropped"),
    );
    assert!(ok as u64 >= DEVICES * MESSAGES / 2, "{ok} ok");

    let devices = read_table(&dir, "mqtt_devices");
    assert_eq!(devices.height() as u64, DEVICES);
    let reconnects = devices.column("reconnects").unwrap().u64().unwrap();
    assert!(reconnects.iter().map(Option::unwrap).all(|r| r >= 1), "{devices:?}");
}
