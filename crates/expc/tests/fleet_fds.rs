//! A fleet with more devices than the process has file descriptors for:
//! `ulimit -n 256` (soft and hard) and 500 devices on the embedded broker,
//! two descriptors each. The devices that do not fit fail at once, their
//! rows saying why; the others measure; the run ends on time without a
//! core spinning on EMFILE, and `expc run` warns that the trial measured fewer devices.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{run_dir, text, trial_frames, u64_values, Scratch};
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};

const DEVICES: u64 = 500;

/// The CPU time (user + system, all threads) of process `pid` so far, in
/// seconds; `None` once it is gone. /proc counts in USER_HZ, 100 on Linux.
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

#[test]
fn devices_without_file_descriptors_fail_at_once_and_nothing_spins() {
    let scratch = Scratch::new("fds");
    let spec = scratch.0.join("spec.exp");
    std::fs::write(
        &spec,
        format!(
            r#"
experiment "fds" {{
  duration = 10s
  fleet "plant" {{
    devices = {DEVICES}
    gap     = constant(1s)
  }}
}}
"#
        ),
    )
    .unwrap();
    let out = scratch.0.join("runs");
    let started = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 256 && exec "$0" run "$1" --out "$2""#)
        .arg(env!("CARGO_BIN_EXE_expc"))
        .arg(&spec)
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `exec` keeps the pid: sample its CPU time until it ends.
    let mut cpu = 0.0;
    while child.try_wait().unwrap().is_none() {
        cpu = cpu_seconds(child.id()).unwrap_or(cpu);
        assert!(started.elapsed() < Duration::from_secs(90), "expc did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
    let wall = started.elapsed().as_secs_f64();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    // Spinning on EMFILE took a core for the whole trial (0.65 of the wall
    // time in all); the fleet itself needs a fraction of that.
    assert!(cpu < 0.45 * wall, "{cpu:.2} s of CPU in {wall:.2} s");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("devices did not connect"),
        "{}",
        text(&output)
    );

    let dir = run_dir(&out).unwrap();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete);
    let trial = &manifest.trials[0];
    assert_eq!(trial.status, TrialStatus::Complete);

    // Every device has its row: the first ones in the ramp connected, and
    // each of the rest failed at once, naming the limit.
    let devices = trial_frames(&dir, "mqtt_devices", 0);
    let numbers = u64_values(&devices, "device");
    assert_eq!(numbers, (0..DEVICES).collect::<Vec<u64>>());
    let status: Vec<String> = devices
        .iter()
        .flat_map(|f| {
            let status = f.column("status").unwrap().str().unwrap();
            status.iter().map(|s| s.unwrap().to_string()).collect::<Vec<_>>()
        })
        .collect();
    let connected = status.iter().take_while(|s| *s == "connected").count();
    assert!(connected >= 50, "{connected} connected");
    for s in &status[connected..] {
        assert!(s.contains("no file descriptor left") && s.contains("ulimit -n"), "{s}");
    }
    let failed = DEVICES as usize - connected;
    assert_eq!(trial.metrics["plant.devices_not_connected"], failed as f64);

    // Every message has its row: a connected device's were sent, a failed one's dropped.
    let messages = trial_frames(&dir, "mqtt_messages", 0);
    let device = u64_values(&messages, "device");
    let reasons: Vec<Option<String>> = messages
        .iter()
        .flat_map(|f| {
            let reason = f.column("reason").unwrap().str().unwrap();
            reason.iter().map(|r| r.map(str::to_string)).collect::<Vec<_>>()
        })
        .collect();
    let sent = u64_values(&messages, "sent_ns").len();
    let mut per_device: BTreeMap<u64, u64> = BTreeMap::new();
    for (d, reason) in device.iter().zip(&reasons) {
        *per_device.entry(*d).or_default() += 1;
        let of_failed = *d >= connected as u64;
        assert_eq!(
            of_failed,
            reason.as_deref() == Some("not_connected"),
            "device {d}: {reason:?}"
        );
    }
    assert_eq!(per_device.len() as u64, DEVICES, "every device's messages");
    // Sending starts after the ramp (1.25 s): 8 or 9 messages a device.
    assert!(per_device.values().all(|n| (7..=10).contains(n)), "{per_device:?}");
    assert!(sent > 0 && sent < device.len(), "{sent} of {} sent", device.len());
}
