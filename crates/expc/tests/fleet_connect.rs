//! Fleets whose window ends during the connect phase: a connect ramp longer
//! than the trial, a broker that stops answering CONNECTs, Ctrl-C while
//! devices connect, and a split run's part. Nothing is sent in them, yet
//! every device and every scheduled message keeps a row with its fate, and
//! the trial is not `complete` (it fails, or is `interrupted` by Ctrl-C).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{expc, run_dir, signal, text, trial_frames, u64_values, wait_for, Scratch};
use exp_parquet::Frame;
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};

/// 30 devices at 2/s take 15 s to connect; the trial lasts 5 s. Each sends
/// every second from a uniform offset in its first second: 5 messages each
/// in any 5 s from the interval's start.
const RAMP_SPEC: &str = r#"
experiment "ramp" {
  seed     = 11
  duration = 5s
  fleet "plant" {
    devices      = 30
    connect_rate = 2/s
    gap          = constant(1s)
  }
}
"#;

fn write_spec(scratch: &Scratch, spec: &str) -> PathBuf {
    let path = scratch.0.join("spec.exp");
    std::fs::write(&path, spec).unwrap();
    path
}

fn run(spec: &Path, out: &Path, extra: &[&str]) -> Output {
    expc()
        .arg("run")
        .arg(spec)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// Every value of a string column across `frames`, nulls as `None`.
fn strings(frames: &[Frame], column: &str) -> Vec<Option<String>> {
    frames
        .iter()
        .flat_map(|f| {
            let values = f.column(column).unwrap().str().unwrap();
            values.iter().map(|v| v.map(str::to_string)).collect::<Vec<_>>()
        })
        .collect()
}

/// Each device's status, from `mqtt_devices`.
fn device_status(run: &Path) -> BTreeMap<u64, String> {
    let devices = trial_frames(run, "mqtt_devices", 0);
    let numbers = u64_values(&devices, "device");
    let status = strings(&devices, "status").into_iter().map(Option::unwrap);
    let by_device: BTreeMap<u64, String> = numbers.iter().copied().zip(status).collect();
    assert_eq!(by_device.len(), numbers.len(), "one row per device: {numbers:?}");
    by_device
}

/// The `mqtt_messages` rows as (device, seq) → (scheduled_ns, status, reason).
type Messages = BTreeMap<(u64, u64), (u64, String, Option<String>)>;

fn messages(run: &Path) -> Messages {
    let frames = trial_frames(run, "mqtt_messages", 0);
    let keys = u64_values(&frames, "device")
        .into_iter()
        .zip(u64_values(&frames, "seq"));
    let fates = u64_values(&frames, "scheduled_ns")
        .into_iter()
        .zip(strings(&frames, "status").into_iter().map(Option::unwrap))
        .zip(strings(&frames, "reason"))
        .map(|((at, status), reason)| (at, status, reason));
    let rows: Messages = keys.zip(fates).collect();
    assert_eq!(
        rows.len(),
        frames.iter().map(Frame::height).sum::<usize>(),
        "one row per message"
    );
    rows
}

/// Every message is `dropped`, with the reason its device's status implies.
fn assert_all_dropped_by_fate(rows: &Messages, status: &BTreeMap<u64, String>) {
    for ((device, seq), (_, fate, reason)) in rows {
        let want = match status[device].as_str() {
            "connected" => "send_not_started",
            "connecting" | "not_started" => "connect_pending",
            failed => {
                assert!(failed.starts_with("failed: "), "{failed}");
                "not_connected"
            }
        };
        assert_eq!(
            (fate.as_str(), reason.as_deref()),
            ("dropped", Some(want)),
            "device {device} seq {seq}"
        );
    }
}

/// Each device's messages are its schedule's: seq 0, 1, … a gap apart.
fn assert_scheduled_every(rows: &Messages, gap_ns: u64) {
    let mut previous: Option<(u64, u64, u64)> = None;
    for (&(device, seq), &(at, _, _)) in rows {
        match previous {
            Some((d, s, before)) if d == device => {
                assert_eq!(seq, s + 1, "device {device}: seqs without a gap");
                assert_eq!(at - before, gap_ns, "device {device} seq {seq}");
            }
            _ => assert_eq!(seq, 0, "device {device} starts at seq 0"),
        }
        previous = Some((device, seq, at));
    }
}

fn manifest_of(out: &Path) -> (PathBuf, Manifest) {
    let dir = run_dir(out).unwrap();
    let manifest = Manifest::read(&dir).unwrap();
    (dir, manifest)
}

#[test]
fn a_ramp_longer_than_the_trial_fails_it_and_keeps_every_row() {
    let scratch = Scratch::new("connect-ramp");
    let spec = write_spec(&scratch, RAMP_SPEC);
    let checked = expc().arg("check").arg(&spec).output().unwrap();
    assert!(checked.status.success(), "{}", text(&checked));
    assert!(
        String::from_utf8_lossy(&checked.stderr).contains("W0803"),
        "{}",
        text(&checked)
    );

    let out = scratch.0.join("runs");
    let output = run(&spec, &out, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let (dir, manifest) = manifest_of(&out);
    assert_eq!(manifest.status, RunStatus::Failed);
    let trial = &manifest.trials[0];
    assert_eq!(trial.status, TrialStatus::Failed);
    let error = trial.error.as_deref().unwrap();
    assert!(
        error.contains("nothing was sent") && error.contains("connect_rate"),
        "{error}"
    );

    // Every device: those whose place in the ramp came in the 5 s connected
    // (the last of them, at 4.5 s, may still have been connecting), the others never started.
    let status = device_status(&dir);
    assert_eq!(
        status.keys().copied().collect::<Vec<_>>(),
        (0..30).collect::<Vec<u64>>()
    );
    assert!((0..9).all(|d| status[&d] == "connected"), "{status:?}");
    assert!((11..30).all(|d| status[&d] == "not_started"), "{status:?}");
    assert!(status
        .values()
        .all(|s| ["connected", "connecting", "not_started"].contains(&s.as_str())));

    // Every scheduled message: 5 per device in the 5 s from the interval's start.
    let rows = messages(&dir);
    assert_eq!(rows.len(), 150);
    assert!(rows.values().all(|(at, _, _)| *at < 5_000_000_000));
    assert_all_dropped_by_fate(&rows, &status);
    assert_scheduled_every(&rows, 1_000_000_000);

    let report = expc().arg("report").arg(&dir).output().unwrap();
    let warnings = String::from_utf8_lossy(&report.stderr);
    assert!(warnings.contains("no message was sent"), "{}", text(&report));
    assert!(warnings.contains("devices did not connect"), "{}", text(&report));
}

/// A broker on 127.0.0.1 that answers the first `answered` CONNECTs and
/// then none: it accepts every connection and holds it, silent, until the
/// client goes. Connections that send no CONNECT (preflight's reachability
/// probe) do not count.
struct StallingBroker {
    port: u16,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl StallingBroker {
    fn start(answered: usize) -> StallingBroker {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (accepted, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let connacks = Arc::new(AtomicUsize::new(0));
        let (count, done) = (accepted.clone(), stop.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        count.fetch_add(1, Ordering::SeqCst);
                        let connacks = connacks.clone();
                        std::thread::spawn(move || hold(stream, &connacks, answered));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        StallingBroker { port, accepted, stop }
    }
}

/// Answers a CONNECT if fewer than `answered` were, then reads until the client goes.
fn hold(mut stream: TcpStream, connacks: &AtomicUsize, answered: usize) {
    stream.set_nonblocking(false).unwrap();
    let mut buffer = [0u8; 1024];
    let first = stream.read(&mut buffer).unwrap_or(0);
    if first > 0 && buffer[0] == 0x10 && connacks.fetch_add(1, Ordering::SeqCst) < answered {
        let _ = stream.write_all(&[0x20, 0x02, 0x00, 0x00]);
    }
    while matches!(stream.read(&mut buffer), Ok(n) if n > 0) {}
}

impl Drop for StallingBroker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn stalling_spec(port: u16, duration: &str) -> String {
    format!(
        r#"
experiment "stall" {{
  seed     = 3
  duration = {duration}
  fleet "plant" {{
    devices      = 10
    connect_rate = 100/s
    gap          = constant(500ms)
    first_send   = lockstep
    broker {{
      url = "mqtt://127.0.0.1:{port}"
    }}
  }}
}}
"#
    )
}

#[test]
fn a_broker_that_stalls_after_three_connects_fails_the_trial_and_keeps_every_row() {
    let scratch = Scratch::new("connect-stall");
    let broker = StallingBroker::start(3);
    let spec = write_spec(&scratch, &stalling_spec(broker.port, "4s"));
    let out = scratch.0.join("runs");
    let started = Instant::now();
    let output = run(&spec, &out, &[]);
    // The trial's 4 s, the devices' aborts, and the tables: no 10 s connect timeout.
    assert!(started.elapsed() < Duration::from_secs(30), "{}", text(&output));
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let (dir, manifest) = manifest_of(&out);
    let trial = &manifest.trials[0];
    assert_eq!(trial.status, TrialStatus::Failed);
    let error = trial.error.as_deref().unwrap();
    assert!(
        error.contains("3 connected") && error.contains("7 were still waiting"),
        "{error}"
    );

    let status = device_status(&dir);
    assert_eq!(status.len(), 10);
    let count = |want: &str| status.values().filter(|s| *s == want).count();
    assert_eq!((count("connected"), count("connecting")), (3, 7), "{status:?}");
    // Lockstep sends every 500 ms from the interval's start: 8 each in 4 s.
    let rows = messages(&dir);
    assert_eq!(rows.len(), 80);
    assert_all_dropped_by_fate(&rows, &status);
    assert_scheduled_every(&rows, 500_000_000);
}

#[test]
fn ctrl_c_while_devices_connect_interrupts_the_trial_and_keeps_every_row() {
    let scratch = Scratch::new("connect-interrupt");
    let broker = StallingBroker::start(0);
    let spec = write_spec(&scratch, &stalling_spec(broker.port, "60s"));
    let out = scratch.0.join("runs");
    let mut child: Child = expc()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Preflight's probe, then every device's connection.
    wait_for("every device to connect its socket", Duration::from_secs(30), || {
        (broker.accepted.load(Ordering::SeqCst) >= 11).then_some(())
    });
    std::thread::sleep(Duration::from_millis(1200));
    signal(&child, "INT");
    let status = wait_for("expc to end", Duration::from_secs(30), || child.try_wait().unwrap());
    assert_eq!(status.code(), Some(130));
    let (dir, manifest) = manifest_of(&out);
    assert_eq!(manifest.status, RunStatus::Interrupted);
    let trial = &manifest.trials[0];
    assert_eq!(trial.status, TrialStatus::Interrupted, "{:?}", trial.error);

    let status = device_status(&dir);
    assert!(
        status.len() == 10 && status.values().all(|s| s == "connecting"),
        "{status:?}"
    );
    // The messages scheduled before the stop: lockstep, every 500 ms from
    // the start, so at least 0, 0.5 s and 1 s, and none after the trial's end.
    let rows = messages(&dir);
    let per_device = rows.len() / 10;
    assert_eq!(rows.len(), per_device * 10, "as many for each device");
    assert!(per_device >= 3, "{per_device}");
    let length_ns = trial.ended_at_unix_ns.unwrap() - trial.started_at_unix_ns.unwrap();
    assert!(rows.values().all(|(at, _, _)| *at < length_ns));
    assert_all_dropped_by_fate(&rows, &status);
    assert_scheduled_every(&rows, 500_000_000);
}

#[test]
fn a_split_part_records_its_own_devices_by_their_fleet_numbers() {
    let scratch = Scratch::new("connect-split");
    let spec = write_spec(&scratch, RAMP_SPEC);
    let whole_out = scratch.0.join("whole");
    assert_eq!(run(&spec, &whole_out, &[]).status.code(), Some(1));
    let whole = messages(&run_dir(&whole_out).unwrap());

    let out = scratch.0.join("runs");
    let mut parts: Vec<Child> = (0..2)
        .map(|k| {
            Command::new(env!("CARGO_BIN_EXE_expc"))
                .arg("run")
                .arg(&spec)
                .args(["--run-id", "split", "--split", &format!("{k}/2"), "--out"])
                .arg(&out)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for part in &mut parts {
        let status = wait_for("the parts to end", Duration::from_secs(120), || {
            part.try_wait().unwrap()
        });
        assert_eq!(status.code(), Some(1), "each part's trial fails");
    }
    let dir = out.join("ramp/split");
    // Each part connects 15 devices at 1/s: devices 0-4 and 15-19 in the 5 s.
    let status = device_status(&dir);
    assert_eq!(
        status.keys().copied().collect::<Vec<_>>(),
        (0..30).collect::<Vec<u64>>()
    );
    assert!((0..4).chain(15..19).all(|d| status[&d] == "connected"), "{status:?}");
    assert!((6..15).chain(21..30).all(|d| status[&d] == "not_started"), "{status:?}");
    // The same messages as the whole fleet's, each at the same time.
    let rows = messages(&dir);
    assert_eq!(
        rows.iter().map(|(k, v)| (*k, v.0)).collect::<Vec<_>>(),
        whole.iter().map(|(k, v)| (*k, v.0)).collect::<Vec<_>>()
    );
    assert_all_dropped_by_fate(&rows, &status);
}
