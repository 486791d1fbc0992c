//! Runs that survive: `kill -9` of the runner mid-trial, Ctrl-C, a full
//! disk and a file system turning read-only, each asserted from outside the
//! process (exit code, manifest, Parquet read back, the files
//! left on disk), and `expc run --resume` finishing what was cut short.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::{
    expc, files, measured_rows_by_trial, read_parquet, rows_by_trial, run_dir, spawn_run, text, u64_values, wait_for,
    Scratch,
};
use exp_parquet::Frame;
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};

/// Waits until `trial` is running in the manifest; returns its start (Unix ns).
fn trial_started(out: &Path, trial: usize) -> u64 {
    wait_for(&format!("trial {trial} to start"), Duration::from_secs(120), || {
        let manifest = Manifest::read(&run_dir(out)?).ok()?;
        let record = manifest.trials.get(trial)?;
        (record.status == TrialStatus::Running).then_some(record.started_at_unix_ns?)
    })
}

fn unix_ns_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64
}

/// No empty, torn or temporary file anywhere in the run: every file has
/// bytes, no `.tmp` is left, and every Parquet file reads back.
fn assert_nothing_torn(dir: &Path) {
    for path in files(dir) {
        let name = path.to_string_lossy();
        assert!(!name.ends_with(".tmp"), "a write left {name}");
        let len = std::fs::metadata(&path).unwrap().len();
        if name.ends_with("runner.lock") {
            continue; // written with the pid; the run may have ended before
        }
        assert!(len > 0, "{name} is empty");
        if name.ends_with(".parquet") {
            read_parquet(&path);
        }
    }
}

/// Two trials of a memory leak, a 5-device fleet (50 messages each, so its
/// rows do not depend on timing) and the monitor.
const FLEET_AND_LEAK: &str = r#"
experiment "durable" {
  seed     = 4
  duration = 8s
  repeat   = 2
  anomaly "leak" {
    kind  = memleak
    size  = 1MiB
    rate  = 10/s
    limit = 64MiB
  }
  fleet "plant" {
    devices  = 5
    gap      = constant(100ms)
    messages = 50
    payload  = json(size = 128B, fields = [temperature])
  }
  monitor { interval = 250ms }
}
"#;

/// What a run killed at `killed_at` (ns into trial 1) has on disk under
/// `partial`: its monitor samples and messages up to 5 s before, with no gap.
fn assert_rows_on_disk(partial: &std::path::Path, killed_at: u64) {
    let frames = |table: &str| -> Vec<Frame> {
        files(&partial.join(table).join("trial=1"))
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
            .map(|p| read_parquet(p))
            .collect()
    };
    let newest = |table: &str, column: &str| -> u64 {
        frames(table)
            .iter()
            .filter_map(|f| {
                let c = f.column(column).unwrap().to_u64s().unwrap();
                c.iter().flatten().max()
            })
            .max()
            .unwrap_or(0)
    };
    let newest_sample = newest("system_metrics", "t_ns");
    assert!(
        newest_sample + 5_000_000_000 >= killed_at,
        "the newest monitor row on disk is from {newest_sample} ns, killed at {killed_at} ns"
    );
    // From the first sample on, none missing: samples every 250 ms (a
    // loaded machine may delay one, not skip it).
    let mut times = u64_values(&frames("system_metrics"), "t_ns");
    times.sort_unstable();
    // The bound is far above the 250 ms period, so a loaded machine's late
    // sample passes, while rows lost with a segment or a checkpoint (every
    // 2 s, a whole 65,536-row group) would leave gaps of seconds.
    assert!(times[0] <= 3_000_000_000, "first sample at {} ns", times[0]);
    assert!(
        times.windows(2).all(|w| w[1] - w[0] < 3_000_000_000),
        "a gap in the samples on disk: {times:?}"
    );
    let newest_send = newest("mqtt_messages", "sent_ns");
    assert!(
        newest_send + 5_000_000_000 >= killed_at,
        "the newest message row on disk was sent at {newest_send} ns, killed at {killed_at} ns"
    );
}

#[test]
fn kill_9_keeps_what_was_measured_and_resume_completes_the_run() {
    let scratch = Scratch::new("durable-kill");
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, FLEET_AND_LEAK).unwrap();

    // The reference: the same plan, uninterrupted.
    let reference_out = scratch.0.join("reference");
    let output = expc()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&reference_out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let reference = measured_rows_by_trial(&run_dir(&reference_out).unwrap());

    let out = scratch.0.join("runs");
    let mut child: Child = spawn_run(&spec, &out);
    let started = trial_started(&out, 1);
    // 6.5 s into the second trial: its fleet has sent for about 5 s.
    while unix_ns_now() < started + 6_500_000_000 {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    let killed_at = unix_ns_now() - started;
    child.wait().unwrap();
    let dir = run_dir(&out).unwrap();
    assert!(dir.file_name().unwrap().to_string_lossy().ends_with(".partial"));

    // Every row older than 5 s is on disk, in complete Parquet files.
    assert_rows_on_disk(&dir.join("tables/.partial"), killed_at);

    // Readers say the run crashed.
    let report = expc().arg("report").arg(&dir).arg("--json").output().unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(json["status"], "crashed");
    let report = expc().arg("report").arg(&dir).output().unwrap();
    assert!(
        String::from_utf8_lossy(&report.stdout).contains("is gone"),
        "{}",
        text(&report)
    );

    // Resumed: trial 0 kept, trial 1 run again; the dataset equals the reference.
    let output = expc().arg("run").arg("--resume").arg(&dir).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let dir = run_dir(&out).unwrap();
    assert!(!dir.file_name().unwrap().to_string_lossy().starts_with('.'));
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete);
    assert_eq!(manifest.resumes.len(), 1);
    assert_eq!(manifest.resumes[0].previous_status, RunStatus::Crashed);
    let statuses: Vec<TrialStatus> = manifest.trials.iter().map(|t| t.status).collect();
    assert_eq!(statuses, [TrialStatus::Complete, TrialStatus::Complete]);
    assert!(manifest.trials[0].attempts.is_empty());
    let attempt = &manifest.trials[1].attempts[..];
    assert!(
        matches!(attempt, [a] if a.status == TrialStatus::Crashed && a.files.is_some()),
        "{attempt:?}"
    );
    let rows = measured_rows_by_trial(&dir);
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        reference.keys().collect::<Vec<_>>(),
        "the same tables and trials"
    );
    for (key, &n) in &rows {
        let expected = reference[key];
        if key.0.ends_with("_metrics") || key.0 == "anomaly_samples" {
            // Sampled on a clock: one sample more or less at the end.
            assert!(n.abs_diff(expected) <= 2, "{key:?}: {n} rows, uninterrupted {expected}");
        } else {
            assert_eq!(n, expected, "{key:?}");
        }
    }
    assert_nothing_torn(&dir);
}

#[test]
fn ctrl_c_at_trial_2_of_4_then_resume_completes_each_trial_once() {
    let scratch = Scratch::new("durable-sigint");
    let spec = scratch.0.join("spec.exp");
    std::fs::write(
        &spec,
        r#"
experiment "four" {
  duration = 2s
  repeat   = 4
  anomaly "leak" {
    kind  = memleak
    size  = 1MiB
    rate  = 10/s
    limit = 8MiB
  }
  monitor { interval = 200ms }
}
"#,
    )
    .unwrap();
    let out = scratch.0.join("runs");
    let child = spawn_run(&spec, &out);
    trial_started(&out, 2);
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let dir = run_dir(&out).unwrap();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Interrupted);
    use TrialStatus::*;
    let statuses: Vec<TrialStatus> = manifest.trials.iter().map(|t| t.status).collect();
    assert_eq!(statuses, [Complete, Complete, Interrupted, Skipped]);

    let output = expc().arg("run").arg("--resume").arg(&dir).arg(&spec).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let dir = run_dir(&out).unwrap();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete);
    let statuses: Vec<TrialStatus> = manifest.trials.iter().map(|t| t.status).collect();
    assert_eq!(statuses, [Complete; 4]);
    let attempts: Vec<usize> = manifest.trials.iter().map(|t| t.attempts.len()).collect();
    assert_eq!(attempts, [0, 0, 1, 0], "only trial 2 had started before");
    // Trials 0–3, once each, in every table.
    let rows = rows_by_trial(&dir);
    for table in ["trials", "anomaly_timeline", "system_metrics"] {
        let trials: Vec<u32> = rows.keys().filter(|(t, _)| t == table).map(|(_, n)| *n).collect();
        assert_eq!(trials, [0, 1, 2, 3], "{table}");
    }
    for trial in 0..4 {
        assert_eq!(rows[&("trials".to_string(), trial)], 1);
        assert_eq!(rows[&("anomaly_timeline".to_string(), trial)], 1);
    }
    assert_nothing_torn(&dir);
}

#[test]
fn resume_refuses_another_plan() {
    let scratch = Scratch::new("durable-plan");
    let spec = scratch.0.join("spec.exp");
    let body = |seed: u32| {
        format!(
            "experiment \"p\" {{\n  seed = {seed}\n  duration = 200ms\n  anomaly \"leak\" {{\n    kind = memleak\n    size = 1MiB\n    limit = 2MiB\n  }}\n}}\n"
        )
    };
    std::fs::write(&spec, body(1)).unwrap();
    let out = scratch.0.join("runs");
    let output = expc().arg("run").arg(&spec).arg("--out").arg(&out).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    std::fs::write(&spec, body(2)).unwrap();
    let output = expc()
        .arg("run")
        .arg("--resume")
        .arg(run_dir(&out).unwrap())
        .arg(&spec)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not the one that started the run"), "{stderr}");
}

/// A tmpfs of `mib` MiB mounted at `dir`, unmounted (and the mount point
/// removed) when dropped, also when the test fails.
#[cfg(mounts)]
struct Tmpfs(PathBuf);

#[cfg(mounts)]
impl Tmpfs {
    fn mount(dir: PathBuf, mib: u32) -> Tmpfs {
        std::fs::create_dir_all(&dir).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "expc-test"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(status.success(), "mount tmpfs at {}", dir.display());
        Tmpfs(dir)
    }

    /// Remounts with `options`; retried while a file is open for writing
    /// (the runner writes a checkpoint now and then), which makes `ro` busy.
    fn remount(&self, options: &str) {
        wait_for(&format!("remount {options}"), Duration::from_secs(30), || {
            Command::new("mount")
                .args(["-o", &format!("remount,{options}")])
                .arg(&self.0)
                .stderr(Stdio::null())
                .status()
                .unwrap()
                .success()
                .then_some(())
        });
    }

    /// Writes a file until the file system is full.
    fn fill(&self) {
        use std::io::Write;
        let mut file = File::create(self.0.join("filler")).unwrap();
        let chunk = vec![0u8; 1 << 16];
        while file.write_all(&chunk).is_ok() {}
    }
}

#[cfg(mounts)]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A fleet and the monitor writing for 20 s into `out`; returns the runner
/// once its trial runs.
#[cfg(mounts)]
fn start_writing(scratch: &Scratch, out: &Path) -> Child {
    let spec = scratch.0.join("spec.exp");
    std::fs::write(
        &spec,
        r#"
experiment "disk" {
  duration = 20s
  fleet "plant" {
    devices = 20
    gap     = constant(20ms)
    payload = json(size = 512B, fields = [temperature])
  }
  monitor { interval = 100ms }
}
"#,
    )
    .unwrap();
    let child = expc()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    trial_started(out, 0);
    // Some rows reach their checkpoint before the disk goes.
    wait_for("the monitor's first checkpoint", Duration::from_secs(60), || {
        let partial = run_dir(out)?.join("tables/.partial/system_metrics/trial=0");
        files(&partial)
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "parquet"))
            .then_some(())
    });
    child
}

/// The run ends by itself, failed, with an error that names a table and
/// one of its files.
#[cfg(mounts)]
fn wait_failed(child: Child) -> String {
    let output = child.wait_with_output().unwrap();
    let log = text(&output);
    assert_eq!(output.status.code(), Some(1), "{log}");
    assert!(log.contains("table `"), "names the table: {log}");
    assert!(log.contains(".parquet"), "names the file: {log}");
    log
}

#[test]
#[cfg_attr(not(mounts), ignore = "needs root with CAP_SYS_ADMIN to mount a tmpfs")]
fn a_full_disk_fails_the_run_cleanly_and_loses_nothing_written() {
    #[cfg(not(mounts))]
    panic!("built without the `mounts` capability: this test cannot run here");
    #[cfg(mounts)]
    {
        let scratch = Scratch::new("durable-full");
        let disk = Tmpfs::mount(scratch.0.join("disk"), 70);
        let out = disk.0.join("runs");
        let child = start_writing(&scratch, &out);
        disk.fill();
        let log = wait_failed(child);
        std::fs::remove_file(disk.0.join("filler")).unwrap();
        let dir = run_dir(&out).unwrap();
        let manifest = Manifest::read(&dir).unwrap();
        assert_eq!(manifest.status, RunStatus::Failed, "{log}\n{manifest:?}");
        let error = manifest.error.unwrap_or_default();
        assert!(
            error.contains("No space left on device") && error.contains("table `"),
            "the manifest says why: {error}"
        );
        assert_eq!(manifest.trials[0].status, TrialStatus::Failed);
        assert_nothing_torn(&dir);
        // What reached its checkpoint before the disk filled is still there.
        let kept: usize = files(&dir.join("tables"))
            .iter()
            .filter(|p| p.to_string_lossy().contains("system_metrics"))
            .map(|p| read_parquet(p).height())
            .sum();
        assert!(kept > 0, "monitor rows were checkpointed before the disk filled");
    }
}

#[test]
#[cfg_attr(not(mounts), ignore = "needs root with CAP_SYS_ADMIN to mount a tmpfs")]
fn a_read_only_file_system_fails_the_run_cleanly() {
    #[cfg(not(mounts))]
    panic!("built without the `mounts` capability: this test cannot run here");
    #[cfg(mounts)]
    {
        let scratch = Scratch::new("durable-ro");
        let disk = Tmpfs::mount(scratch.0.join("disk"), 200);
        let out = disk.0.join("runs");
        let child = start_writing(&scratch, &out);
        disk.remount("ro");
        wait_failed(child);
        disk.remount("rw");
        let dir = run_dir(&out).unwrap();
        assert_nothing_torn(&dir);
        // The manifest could not record the end: readers see the runner gone.
        let report = expc().arg("report").arg(&dir).arg("--json").output().unwrap();
        let json: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
        assert_eq!(json["status"], "crashed", "{}", text(&report));
    }
}
