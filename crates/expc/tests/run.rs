//! `expc run` end to end, in its own process: a complete run, Ctrl-C once and
//! twice, `kill -9` of the runner, and a plan that fails preflight. Every
//! assertion reads what a user would read: the exit code, the manifest, the
//! Parquet tables (through exp-results and exp-parquet) and /proc.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::common::{run_dir, signal, wait_for};
use exp_report::summarize;
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};
use exp_results::open_run;

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-run-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn spec(&self, text: &str) -> PathBuf {
        let path = self.0.join("spec.exp");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn out(&self) -> PathBuf {
        self.0.join("runs")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn expc_run(spec: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_expc"));
    command.arg("run").arg(spec).arg("--out").arg(out).args(extra);
    command
}

fn output_text(output: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The one run directory under `out` (finished or still partial).
fn alive(pid: u32) -> bool {
    // A zombie has exited; only its parent's reaping is missing.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit(") ").next().is_some_and(|rest| !rest.starts_with('Z')))
        .unwrap_or(false)
}

/// Children of `pid` (through every thread of it).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

fn wait_exit(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    wait_for("expc to exit", timeout, || child.try_wait().unwrap())
}

/// Every table of the run reads back without a warning.
fn assert_readable(dir: &Path) -> exp_report::RunSummary {
    let summary = summarize(&open_run(dir).unwrap());
    assert!(summary.warnings.is_empty(), "unreadable files: {:?}", summary.warnings);
    summary
}

fn rows(summary: &exp_report::RunSummary, table: &str) -> u64 {
    summary
        .tables
        .iter()
        .filter(|t| t.table == table)
        .flat_map(|t| &t.trials)
        .map(|t| t.rows)
        .sum()
}

const LONG_CPU: &str = r#"
experiment "long" {
  duration = 60s
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = 50%
    cores       = [0]
  }
  monitor { interval = 200ms }
}
"#;

#[test]
fn a_complete_run_writes_every_table_and_a_manifest() {
    let scratch = Scratch::new("complete");
    let spec = scratch.spec(
        r#"
experiment "short" {
  seed     = 3
  duration = 3s
  repeat   = 2
  sweep { level = [30%, 70%] }
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = level
    cores       = [1]
    at          = 500ms
    for         = 2s
  }
  monitor { interval = 250ms }
}
"#,
    );
    let output = expc_run(&spec, &scratch.out(), &["--trials", "0,3", "--time-scale", "0.5"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", output_text(&output));
    let dir = run_dir(&scratch.out()).unwrap();
    assert!(
        !dir.file_name().unwrap().to_string_lossy().starts_with('.'),
        "renamed at the end: {dir:?}"
    );

    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete);
    // Only the selected trials are in the manifest.
    let statuses: Vec<(u32, TrialStatus)> = manifest.trials.iter().map(|t| (t.trial, t.status)).collect();
    assert_eq!(statuses, vec![(0, TrialStatus::Complete), (3, TrialStatus::Complete)]);
    assert_eq!(manifest.options.trials_selected.as_deref(), Some("0,3"));
    assert_eq!(manifest.options.time_scale, 0.5);

    let summary = assert_readable(&dir);
    for table in [
        "trials",
        "system_metrics",
        "process_metrics",
        "anomaly_timeline",
        "anomaly_samples",
    ] {
        assert!(rows(&summary, table) > 0, "table {table} has rows");
    }
    assert_eq!(rows(&summary, "trials"), 2);
    assert_eq!(rows(&summary, "anomaly_timeline"), 2);
    // The sweep's level reaches the kernel: the ground truth records each
    // trial's target, and the utilisation measured from /proc never runs
    // far above it. How close it comes depends on what else runs on the
    // core (other tests, a CI build), so that is not asserted here: `expc
    // calibrate` measures it.
    let timeline = summary.tables.iter().find(|t| t.table == "anomaly_timeline").unwrap();
    let targets: Vec<f64> = timeline
        .trials
        .iter()
        .map(|t| {
            let column = t.columns.iter().find(|c| c.column == "target_utilization_pct").unwrap();
            column.mean.unwrap()
        })
        .collect();
    assert_eq!(targets, vec![30.0, 70.0]);
    for (record, target) in manifest.trials.iter().zip([0.3, 0.7]) {
        let achieved = record.metrics["hog.achieved_utilization"];
        assert!(achieved > 0.0 && achieved < target + 0.2, "{target} target: {achieved}");
    }
}

/// Starts a run of [`LONG_CPU`]; returns the runner and its anomaly child.
fn start_long_run(scratch: &Scratch) -> (Child, u32) {
    let spec = scratch.spec(LONG_CPU);
    let child = expc_run(&spec, &scratch.out(), &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let kernel = wait_for("the anomaly child", Duration::from_secs(20), || {
        children(child.id()).first().copied()
    });
    (child, kernel)
}

/// Waits until the running trial's monitor rows have reached their first
/// checkpoint (written after about 2 s of samples every 250 ms).
fn wait_monitor_checkpoint(scratch: &Scratch) {
    wait_for("a system_metrics checkpoint", Duration::from_secs(30), || {
        let table = run_dir(&scratch.out())?.join("tables/.partial/system_metrics/trial=0");
        let checkpoint = std::fs::read_dir(table)
            .ok()?
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".parquet"));
        checkpoint.then_some(())
    });
}

#[test]
fn ctrl_c_finishes_tables_and_marks_the_run_interrupted() {
    let scratch = Scratch::new("sigint");
    let (mut child, kernel) = start_long_run(&scratch);
    wait_monitor_checkpoint(&scratch);
    signal(&child, "INT");
    let status = wait_exit(&mut child, Duration::from_secs(15));
    assert_eq!(status.code(), Some(130));
    assert!(!alive(kernel), "the anomaly process {kernel} was stopped");

    let dir = run_dir(&scratch.out()).unwrap();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Interrupted);
    assert_eq!(manifest.trials[0].status, TrialStatus::Interrupted);
    let summary = assert_readable(&dir);
    assert!(rows(&summary, "system_metrics") >= 3);
    assert_eq!(
        rows(&summary, "anomaly_timeline"),
        1,
        "the interrupted activation is in the ground truth"
    );
}

#[test]
fn a_second_ctrl_c_stops_at_once_and_still_leaves_readable_files() {
    let scratch = Scratch::new("sigint2");
    let (mut child, kernel) = start_long_run(&scratch);
    wait_monitor_checkpoint(&scratch);
    signal(&child, "INT");
    signal(&child, "INT");
    let status = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(130));
    assert!(!alive(kernel));
    let dir = run_dir(&scratch.out()).unwrap();
    assert_eq!(Manifest::read(&dir).unwrap().status, RunStatus::Interrupted);
    assert_readable(&dir);
}

#[test]
fn kill_9_of_the_runner_leaves_no_anomaly_process() {
    let scratch = Scratch::new("kill9");
    let (mut child, kernel) = start_long_run(&scratch);
    assert!(alive(kernel));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    wait_for(
        "the anomaly process to die with its parent",
        Duration::from_secs(5),
        || (!alive(kernel)).then_some(()),
    );
}

#[test]
fn memory_beyond_the_machine_fails_preflight_and_writes_nothing() {
    let scratch = Scratch::new("memory");
    let spec = scratch.spec(
        r#"
experiment "too-big" {
  duration = 10s
  anomaly "eater" {
    kind   = memeater
    buffer = 1GiB
    limit  = 4096GiB
  }
}
"#,
    );
    let output = expc_run(&spec, &scratch.out(), &[]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", output_text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("E1001"), "{stderr}");
    assert!(
        stderr.contains("4.0 TiB") && stderr.contains("MemAvailable"),
        "names the numbers: {stderr}"
    );
    assert!(stderr.contains("spec.exp:4:3"), "points at the workload: {stderr}");
    assert!(!scratch.out().exists(), "nothing written");
}

/// Preflight judges memory at each combination of the values the anomalies
/// name: 4.9 TiB is only reached where both take their larger limit.
#[test]
fn memory_of_swept_anomalies_is_summed_where_their_values_meet() {
    let scratch = Scratch::new("memory-swept");
    let spec = scratch.spec(
        r#"
experiment "too-big-together" {
  duration = 10s
  sweep {
    a = [1GiB, 3000GiB]
    b = [2000GiB, 1GiB]
  }
  anomaly "first" {
    kind   = memeater
    buffer = 1GiB
    limit  = a
  }
  anomaly "second" {
    kind   = memeater
    buffer = 1GiB
    limit  = b
  }
}
"#,
    );
    let output = expc_run(&spec, &scratch.out(), &["--dry-run"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", output_text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("E1001") && stderr.contains("4.9 TiB"), "{stderr}");
    assert!(!scratch.out().exists(), "nothing written");
}

/// A dry run shows the first 20 points with their trials as ranges and
/// counts the rest, whatever the size of the plan.
#[test]
fn a_dry_run_shows_the_first_points_and_counts_the_rest() {
    let scratch = Scratch::new("dry-run-many");
    let spec = scratch.spec(
        r#"
experiment "many" {
  duration = 1s
  repeat   = 3
  sweep { level = 1%..30% step 1% }
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = level
    cores       = [0]
  }
}
"#,
    );
    let all = expc_run(&spec, &scratch.out(), &["--dry-run"]).output().unwrap();
    assert!(all.status.success(), "{}", output_text(&all));
    let text = String::from_utf8_lossy(&all.stdout);
    let points: Vec<&str> = text.lines().filter(|l| l.starts_with("point ")).collect();
    assert_eq!(points.len(), 20, "{text}");
    assert_eq!(points[0], "point 0 (level=1%): trials 0-2");
    assert_eq!(points[19], "point 19 (level=20%): trials 57-59");
    assert!(text.contains("90 of 90 trials"), "{text}");
    assert!(text.contains("… and 10 more points (30 trials)"), "{text}");

    let some = expc_run(&spec, &scratch.out(), &["--dry-run", "--trials", "4,5,88,89"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&some.stdout);
    let points: Vec<&str> = text.lines().filter(|l| l.starts_with("point ")).collect();
    assert_eq!(
        points,
        vec!["point 1 (level=2%): trials 4,5", "point 29 (level=30%): trials 88,89"],
        "{text}"
    );
    assert!(
        text.contains("4 of 90 trials") && !text.contains("more points"),
        "{text}"
    );
    assert!(!scratch.out().exists(), "a dry run writes nothing");
}

#[test]
fn repeat_until_stops_once_the_interval_is_narrow_enough() {
    let scratch = Scratch::new("until");
    let spec = scratch.spec(
        r#"
experiment "until" {
  duration = 1s
  repeat   = until(ci = 90%, width = 1%, of = "bytes_touched", max = 6)
  anomaly "leak" {
    kind  = memleak
    size  = 1MiB
    rate  = 100/s
    limit = 4MiB
  }
}
"#,
    );
    let output = expc_run(&spec, &scratch.out(), &[]).output().unwrap();
    assert!(output.status.success(), "{}", output_text(&output));
    let manifest = Manifest::read(&run_dir(&scratch.out()).unwrap()).unwrap();
    // The leak reaches its limit in 30 ms of a 1 s trial, every time: the
    // same bytes in every repetition meet any width at the minimum of 3.
    let ran = manifest
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Complete)
        .count();
    assert_eq!(ran, 3, "{:?}", manifest.points);
    assert!(manifest.trials[3..].iter().all(|t| t.status == TrialStatus::Skipped));
    let reason = manifest.points[0].stop_reason.as_deref().unwrap();
    assert!(reason.contains("CI of `bytes_touched`"), "{reason}");
}

#[test]
fn a_plan_file_runs_like_its_spec_and_dry_run_starts_nothing() {
    let scratch = Scratch::new("plan");
    let spec = scratch.spec(
        r#"
experiment "from-plan" {
  duration = 500ms
  sweep { level = [20%, 40%] }
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = level
    cores       = [0]
  }
}
"#,
    );
    let plan = scratch.0.join("plan.json");
    let status = Command::new(env!("CARGO_BIN_EXE_expc"))
        .arg("plan")
        .arg(&spec)
        .arg("-o")
        .arg(&plan)
        .status()
        .unwrap();
    assert!(status.success());

    let dry = expc_run(&plan, &scratch.out(), &["--dry-run"]).output().unwrap();
    assert!(dry.status.success(), "{}", output_text(&dry));
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(
        text.contains("2 of 2 trials") && text.contains("preflight: ok"),
        "{text}"
    );
    assert!(!scratch.out().exists(), "a dry run writes nothing");

    let output = expc_run(&plan, &scratch.out(), &[]).output().unwrap();
    assert!(output.status.success(), "{}", output_text(&output));
    let dir = run_dir(&scratch.out()).unwrap();
    let summary = assert_readable(&dir);
    // The sweep parameter is a typed column of the trials table.
    let trials = summary.tables.iter().find(|t| t.table == "trials").unwrap();
    let level: Vec<f64> = trials
        .trials
        .iter()
        .map(|t| {
            t.columns
                .iter()
                .find(|c| c.column == "level_ratio")
                .unwrap()
                .mean
                .unwrap()
        })
        .collect();
    assert_eq!(level, vec![0.2, 0.4]);

    // A plan of another version is refused with both versions, before its
    // shape is looked at (a version 1 plan lists points and trials).
    let mut old: serde_json::Value = serde_json::from_slice(&std::fs::read(&plan).unwrap()).unwrap();
    old["plan_version"] = 1.into();
    old["points"] = serde_json::json!([]);
    std::fs::write(&plan, old.to_string()).unwrap();
    let refused = expc_run(&plan, &scratch.out(), &["--dry-run"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(1), "{}", output_text(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!(
            "plan version 1, but this expc reads version {}",
            exp_plan::PLAN_VERSION
        )),
        "{stderr}"
    );
}

#[test]
fn an_xml_workload_without_input_is_refused_before_anything_starts() {
    let scratch = Scratch::new("xml");
    let spec = scratch.spec(
        r#"
experiment "xml" {
  duration = 5s
  xml "docs" {
    documents = 2
  }
}
"#,
    );
    let output = expc_run(&spec, &scratch.out(), &[]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", output_text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("E1004") && stderr.contains("give `corpus`") && stderr.contains("`docs`"),
        "{stderr}"
    );
    assert!(!scratch.out().exists());
}

/// Sweep parameters named like the trials table's own columns (`seed`, a
/// duration `duration` that would be `duration_ns`) get columns of their
/// own, `sweep_seed` and `sweep_duration_ns`, and the run completes.
#[test]
fn sweep_parameters_named_like_trial_columns_get_their_own() {
    let scratch = Scratch::new("column-names");
    let spec = scratch.spec(
        r#"
experiment "names" {
  duration = 1s
  sweep {
    seed     = [2]
    duration = [500ms]
  }
  fleet "f" {
    devices = seed
    gap     = 100ms
    for     = duration
  }
}
"#,
    );
    let output = expc_run(&spec, &scratch.out(), &[]).output().unwrap();
    assert!(output.status.success(), "{}", output_text(&output));
    let dir = run_dir(&scratch.out()).unwrap();
    let frames = common::trial_frames(&dir, "trials", 0);
    let names: Vec<String> = frames[0].column_names().iter().map(|n| n.to_string()).collect();
    for column in ["seed", "sweep_seed", "duration_ns", "sweep_duration_ns"] {
        assert!(names.iter().any(|n| n == column), "{column} missing: {names:?}");
    }
    assert_eq!(common::u64_values(&frames, "sweep_duration_ns"), [500_000_000]);
    let sweep_seed = frames[0].column("sweep_seed").unwrap().i64().unwrap().get(0);
    assert_eq!(sweep_seed, Some(2));
}
