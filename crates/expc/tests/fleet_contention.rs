//! A fleet that cannot keep up must degrade without falling apart: every
//! scheduled message has exactly one row with its fate, nothing is dropped
//! (a send that cannot be made on time goes out late, and its lateness says
//! so), memory stays bounded, and `contended` agrees with the lateness the
//! trial measured. Two ways to fall behind: CPU hogs on every online CPU,
//! and a broker that stops reading for two seconds.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{read_parquet, run_dir, spawn_run_captured, Mosquitto, Scratch};
use exp_results::manifest::{Manifest, RunStatus};
use exp_results::open_run;

const DEVICES: u64 = 200;
const MESSAGES: u64 = 100;

/// Busy loops, one per online CPU, killed when dropped.
struct Hogs(Vec<Child>);

impl Hogs {
    fn start() -> Hogs {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        Hogs(
            (0..cpus)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdout(Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for hog in &mut self.0 {
            let _ = hog.kill();
            let _ = hog.wait();
        }
    }
}

/// The peak resident memory of a running process (kB), from /proc.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// What a fleet run left: its manifest metrics, the fate of each message,
/// and the runner's peak RSS (kB).
struct Outcome {
    metrics: std::collections::BTreeMap<String, f64>,
    /// The trial's audit: the `trials` table's verdict and the codes of
    /// its `trial_validity` rows.
    verdict: String,
    codes: Vec<String>,
    statuses: Vec<String>,
    peak_kb: u64,
    log: String,
}

impl Outcome {
    fn count(&self, status: &str) -> usize {
        self.statuses.iter().filter(|s| *s == status).count()
    }
}

/// Runs `DEVICES` × `MESSAGES` of 2 KiB every 50 ms to `mosquitto`, calling
/// `meanwhile` once the run has started; checks that it completes with
/// exactly one row per scheduled message.
fn run_fleet(scratch: &Scratch, mosquitto: &Mosquitto, max_inflight: u32, meanwhile: impl FnOnce()) -> Outcome {
    let spec = format!(
        r#"
experiment "contention" {{
  fleet "plant" {{
    devices      = {DEVICES}
    gap          = constant(50ms)
    messages     = {MESSAGES}
    payload      = raw(size = 2KiB)
    qos          = 1
    connect_rate = 1000/s
    ack_timeout  = 20s
    broker {{
      url          = "mqtt://127.0.0.1:{}"
      max_inflight = {max_inflight}
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
    let mut run = spawn_run_captured(&spec_path, &out);
    meanwhile();
    // The peak RSS, read while the runner lives (it is gone after `wait`).
    let mut peak_kb = 0;
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        peak_kb = peak_kb.max(peak_rss_kb(run.id()).unwrap_or(0));
        if started.elapsed() > Duration::from_secs(240) {
            let _ = run.kill();
            panic!("the run did not end within 240 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = run.wait_with_output().unwrap();
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(status.success(), "{log}");

    let dir = run_dir(&out).unwrap();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete, "{log}");
    let view = open_run(&dir).unwrap();
    let messages = read_parquet(&view.tables["mqtt_messages"].trials[&0][0].path);
    assert_eq!(messages.height() as u64, DEVICES * MESSAGES, "{log}");
    let device = messages.column("device").unwrap().u64().unwrap();
    let seq = messages.column("seq").unwrap().u64().unwrap();
    let keys: BTreeSet<(u64, u64)> = device
        .iter()
        .map(Option::unwrap)
        .zip(seq.iter().map(Option::unwrap))
        .collect();
    assert_eq!(keys.len() as u64, DEVICES * MESSAGES, "one row per message");
    let statuses = messages.column("status").unwrap().str().unwrap();
    let trials = read_parquet(&view.tables["trials"].trials[&0][0].path);
    let verdict = trials
        .column("verdict")
        .unwrap()
        .str()
        .unwrap()
        .get(0)
        .unwrap()
        .to_string();
    let codes = view.tables.get("trial_validity").map_or_else(Vec::new, |t| {
        let findings = read_parquet(&t.trials[&0][0].path);
        let codes = findings.column("code").unwrap().str().unwrap().clone();
        codes.iter().flatten().map(str::to_string).collect()
    });
    Outcome {
        verdict,
        codes,
        metrics: manifest.trials[0].metrics.clone().into_iter().collect(),
        statuses: statuses.iter().flatten().map(str::to_string).collect(),
        peak_kb,
        log,
    }
}

/// Late, not lost: every message `ok`, nothing dropped by the runner or lost by the broker.
fn assert_all_ok(o: &Outcome) {
    let fates = [o.count("dropped"), o.count("timeout"), o.count("error")];
    assert_eq!(
        o.count("ok"),
        o.statuses.len(),
        "dropped, timeout, error: {fates:?}; {:?}",
        o.metrics
    );
    assert_eq!(o.metrics["messages_lost"], 0.0);
}

/// `contended` says what the lateness says: a constant 50 ms gap allows a
/// p99 of 5 ms; and a contended trial is `invalid` with V0101.
fn assert_contended_agrees(o: &Outcome) {
    let p99 = o.metrics["send_lateness_p99"];
    assert_eq!(
        o.metrics["contended"],
        f64::from(u8::from(p99 > 5e6)),
        "{:?}",
        o.metrics
    );
    let late = o.codes.iter().any(|c| c == "V0101");
    assert_eq!(late, p99 > 5e6, "{:?}", o.codes);
    if late {
        assert_eq!(o.verdict, "invalid");
    }
}

#[test]
fn a_fleet_beside_cpu_hogs_keeps_every_row_and_bounded_memory() {
    // One at a time: the hogs would disturb another test's fleet.
    let _serial = crate::common::one_at_a_time();
    let scratch = Scratch::new("contention-hogs");
    let mosquitto = Mosquitto::start(&scratch.0);
    let hogs = Hogs::start();
    let o = run_fleet(&scratch, &mosquitto, 100, || {});
    drop(hogs);
    assert_all_ok(&o);
    assert_contended_agrees(&o);
    // Memory stays bounded. What the sending fleet added (collector,
    // writer, queues) stays below what its queues may hold at most (64 KiB
    // queued and 100 messages in flight per device, 53 MB here) plus room
    // for the rest; before the bounds, a starved runner grew to 937 MB.
    let added_mb = o.metrics["runner_rss_per_device"] * DEVICES as f64 / 1e6;
    assert!(added_mb < 128.0, "{added_mb} MB added; {:?}", o.metrics);
    assert!(o.peak_kb < 512 * 1024, "peak RSS {} kB", o.peak_kb);
    // Hogs on every core: the trial is flagged, whether its sends were late
    // (V0101) or only the neighbours' CPU shows (V0602).
    assert_ne!(o.verdict, "valid", "{:?} {:?}", o.codes, o.metrics);
    assert!(
        o.codes.iter().any(|c| c == "V0101" || c == "V0602"),
        "{:?} {:?}",
        o.codes,
        o.metrics
    );
    eprintln!(
        "beside {} hogs: {} rows, all ok; send lateness p99 {:.2} ms, contended {}; \
         runner {:.0} µs CPU per message, {added_mb:.1} MB added by the fleet, peak RSS {} MB; others {:.2} cores",
        std::thread::available_parallelism().map_or(1, usize::from),
        o.statuses.len(),
        o.metrics["send_lateness_p99"] / 1e6,
        o.metrics["contended"],
        o.metrics["runner_cpu_per_message"] / 1e3,
        o.peak_kb / 1024,
        o.metrics["others_cpu_ratio"],
    );
}

/// A broker that stops reading for 2 s: with 5 messages in flight and
/// 64 KiB (32 messages) queued per device, 40 sends per device fall due
/// meanwhile, so the pacer must hold sends back. They go out late once the
/// broker reads again: no row dropped, the trial marked contended.
#[test]
fn a_stalled_broker_makes_sends_late_not_lost() {
    // One at a time: the hogs would disturb another test's fleet.
    let _serial = crate::common::one_at_a_time();
    let scratch = Scratch::new("contention-stall");
    let mosquitto = Mosquitto::start(&scratch.0);
    let o = run_fleet(&scratch, &mosquitto, 5, || {
        // Sends start once all 200 devices are connected (0.2 s at 1000/s).
        std::thread::sleep(Duration::from_secs(2));
        mosquitto.stall_for(Duration::from_secs(2));
    });
    assert_all_ok(&o);
    assert_contended_agrees(&o);
    assert_eq!(o.metrics["contended"], 1.0, "{:?}\n{}", o.metrics, o.log);
    assert_eq!(o.verdict, "invalid", "{:?}", o.codes);
    eprintln!(
        "broker stalled 2 s: {} rows, all ok; send lateness p99 {:.0} ms; peak RSS {} MB",
        o.statuses.len(),
        o.metrics["send_lateness_p99"] / 1e6,
        o.peak_kb / 1024,
    );
}
