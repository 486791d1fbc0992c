//! `expc run` end to end, in its own process: a complete run, Ctrl-C once and
//! twice, `kill -9` of the runner, and a plan that fails preflight. Every
//! assertion reads what a user would read: the exit code, the manifest, the
//! Parquet tables (through exp-results, i.e. polars) and /proc.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use exp_results::manifest::{Manifest, RunStatus, TrialStatus};
use exp_results::{open_run, summarize};

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
fn run_dir(out: &Path) -> Option<PathBuf> {
    let experiment = std::fs::read_dir(out).ok()?.flatten().next()?.path();
    std::fs::read_dir(experiment).ok()?.flatten().next().map(|e| e.path())
}

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

fn wait_for<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

fn wait_exit(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    wait_for("expc to exit", timeout, || child.try_wait().unwrap())
}

/// Every table of the run reads back through polars without a warning.
fn assert_readable(dir: &Path) -> exp_results::RunSummary {
    let summary = summarize(&open_run(dir).unwrap()).unwrap();
    assert!(summary.warnings.is_empty(), "unreadable files: {:?}", summary.warnings);
    summary
}

fn rows(summary: &exp_results::RunSummary, table: &str) -> u64 {
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
    let statuses: Vec<TrialStatus> = manifest.trials.iter().map(|t| t.status).collect();
    use TrialStatus::*;
    assert_eq!(statuses, vec![Complete, Skipped, Skipped, Complete]);
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
    // Each trial's utilisation, measured from /proc, follows its target. Other
    // tests load the same cores, so only the order is certain, not the level
    // (`expc calibrate` measures accuracy).
    let achieved = |trial: usize| manifest.trials[trial].metrics["hog.achieved_utilization"];
    assert!(achieved(0) > 0.1 && achieved(0) < 0.5, "30% target: {}", achieved(0));
    assert!(
        achieved(3) > achieved(0) + 0.1,
        "70% target: {} vs 30%: {}",
        achieved(3),
        achieved(0)
    );
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

#[test]
fn ctrl_c_finishes_tables_and_marks_the_run_interrupted() {
    let scratch = Scratch::new("sigint");
    let (mut child, kernel) = start_long_run(&scratch);
    std::thread::sleep(Duration::from_millis(1500));
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
    std::thread::sleep(Duration::from_millis(1000));
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

#[test]
fn repeat_until_stops_once_the_interval_is_narrow_enough() {
    let scratch = Scratch::new("until");
    let spec = scratch.spec(
        r#"
experiment "until" {
  duration = 1s
  repeat   = until(ci = 90%, width = 300%, of = "achieved_utilization", max = 6)
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = 50%
    cores       = [1]
  }
}
"#,
    );
    let output = expc_run(&spec, &scratch.out(), &[]).output().unwrap();
    assert!(output.status.success(), "{}", output_text(&output));
    let manifest = Manifest::read(&run_dir(&scratch.out()).unwrap()).unwrap();
    // A steady 50 % meets so wide a rule at the minimum of 3 repetitions.
    let ran = manifest
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Complete)
        .count();
    assert_eq!(ran, 3, "{:?}", manifest.points);
    assert!(manifest.trials[3..].iter().all(|t| t.status == TrialStatus::Skipped));
    let reason = manifest.points[0].stop_reason.as_deref().unwrap();
    assert!(reason.contains("CI of `achieved_utilization`"), "{reason}");
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
