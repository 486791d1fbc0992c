//! Claims end to end, from outside: a fleet on the embedded broker run from
//! a plan file carrying claims (as the compiler will lower `expect`
//! blocks), then the manifest's verdicts, `expc run`'s exit status,
//! `expc report --check` (the same verdicts from the tables, the same
//! status), `--junit` (of `expc report` and of `expc run`), `repeat =
//! until_decided(…)`, and `scaled(…)` constants at `--time-scale`.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{expc, run_dir, text, Scratch};
use exp_results::claims::ClaimVerdict;
use exp_results::manifest::{Manifest, TrialStatus};

const SPEC: &str = r#"
experiment "claims" {
  duration = 500ms
  repeat   = 3
  sweep { n = [1, 2] }
  fleet "s" {
    devices = n
    gap     = constant(20ms)
    qos     = 1
  }
}
"#;

/// `p99(fleet.s.ack_latency) OP BOUND_NS`, as the plan holds it.
fn p99_claim(op: &str, bound_ns: f64) -> serde_json::Value {
    p99_claim_in(SPEC_CLAIM_LINE, op, bound_ns)
}

const SPEC_CLAIM_LINE: u32 = 9;

fn p99_claim_in(line: u32, op: &str, bound_ns: f64) -> serde_json::Value {
    serde_json::json!({
        "text": format!("p99(fleet.s.ack_latency) {op} {bound_ns}ns"),
        "origin": {"file": "spec.exp", "line": line, "column": 5},
        "claim": "compare",
        "left": {"term": "scaled", "factor": 1.0, "stat": {
            "function": {"function": "quantile", "q": 0.99},
            "workload": "s", "kind": "fleet", "metric": "ack_latency", "unit": "ns"}},
        "op": if op == "<" { "lt" } else { "gt" },
        "right": {"term": "constant", "value": bound_ns, "unit": "ns"},
    })
}

/// The spec's plan with `claims` (and `until_decided` if given), written as plan.json.
fn plan_file(scratch: &Scratch, claims: Vec<serde_json::Value>, until_decided: Option<(u32, u32)>) -> PathBuf {
    plan_file_of(scratch, SPEC, claims, until_decided)
}

fn plan_file_of(
    scratch: &Scratch,
    source: &str,
    claims: Vec<serde_json::Value>,
    until_decided: Option<(u32, u32)>,
) -> PathBuf {
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, source).unwrap();
    let output = expc().arg("plan").arg(&spec).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let mut plan: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    plan["claims"] = claims.into();
    if let Some((max, min)) = until_decided {
        plan["repeat"]["max"] = max.into();
        plan["repeat"]["until_decided"] = serde_json::json!({ "min": min });
    }
    let path = scratch.0.join("plan.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&plan).unwrap()).unwrap();
    path
}

/// Runs `plan`, counting every trial (`--include-invalid`): this test's
/// verdicts must not depend on how busy the host is.
fn run(scratch: &Scratch, plan: &Path) -> (Output, PathBuf) {
    run_with(scratch, plan, &[])
}

/// [`run`] with more options (`--junit FILE`, `--time-scale F`).
fn run_with(scratch: &Scratch, plan: &Path, more: &[&std::ffi::OsStr]) -> (Output, PathBuf) {
    let out = scratch.0.join("runs");
    let output = expc()
        .arg("run")
        .arg(plan)
        .arg("--include-invalid")
        .arg("--out")
        .arg(&out)
        .args(more)
        .output()
        .unwrap();
    (output, run_dir(&out).unwrap())
}

/// `expc report DIR --junit FILE`'s file, to compare `expc run --junit` with.
fn report_junit(scratch: &Scratch, dir: &Path) -> String {
    let junit = scratch.0.join("report.xml");
    let report = expc()
        .args(["report", "--include-invalid", "--junit"])
        .arg(&junit)
        .arg(dir)
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report));
    std::fs::read_to_string(&junit).unwrap()
}

fn verdicts(manifest: &Manifest) -> Vec<ClaimVerdict> {
    manifest.claims.iter().map(|c| c.verdict).collect()
}

#[test]
fn verdicts_reach_the_manifest_the_exit_status_check_and_junit() {
    let scratch = Scratch::new("verdicts");
    // Loopback acknowledgements take far less than 5 s, let alone 1000 s.
    let plan = plan_file(&scratch, vec![p99_claim("<", 5e9), p99_claim(">", 1e12)], None);
    let run_junit = scratch.0.join("run.xml");
    let (output, dir) = run_with(&scratch, &plan, &["--junit".as_ref(), run_junit.as_os_str()]);
    assert_eq!(output.status.code(), Some(3), "refuted: exit 3\n{}", text(&output));
    let written = std::fs::read_to_string(&run_junit).unwrap();
    assert_eq!(
        written,
        report_junit(&scratch, &dir),
        "expc run --junit writes what expc report --junit does"
    );
    assert_eq!(written.matches("<failure type=\"refuted\"").count(), 1, "{written}");
    assert!(
        text(&output).contains("refuted      p99(fleet.s.ack_latency) > 1000000000000ns"),
        "{}",
        text(&output)
    );
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(verdicts(&manifest), [ClaimVerdict::Supported, ClaimVerdict::Refuted]);
    let labels: Vec<&str> = manifest.claims[0].points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["n=1", "n=2"]);
    // Each point's estimate is over its complete trials (invalid ones included).
    for (point, p) in manifest.claims[0].points.iter().enumerate() {
        let counted = manifest
            .trials
            .iter()
            .filter(|t| t.point == point as u32 && t.status == TrialStatus::Complete)
            .count();
        assert_eq!(p.repetitions as usize, counted, "{p:?}");
    }

    let junit = scratch.0.join("claims.xml");
    let check = expc()
        .args(["report", "--check", "--include-invalid", "--json", "--junit"])
        .arg(&junit)
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(3), "{}", text(&check));
    let again: Vec<exp_results::claims::ClaimRecord> = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(
        again, manifest.claims,
        "--check gives the run's verdicts from the tables"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 2, "{xml}");
    assert_eq!(xml.matches("<failure type=\"refuted\"").count(), 1, "{xml}");

    let report = expc().args(["report", "--include-invalid"]).arg(&dir).output().unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let stdout = String::from_utf8_lossy(&report.stdout);
    assert!(
        stdout.starts_with("Claims\n  supported    p99(fleet.s.ack_latency) < 5000000000ns"),
        "{stdout}"
    );
}

#[test]
fn all_supported_exits_0_and_until_decided_stops_each_point_at_its_minimum() {
    let scratch = Scratch::new("decided");
    let plan = plan_file(&scratch, vec![p99_claim("<", 5e9)], Some((5, 2)));
    let (output, dir) = run(&scratch, &plan);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(verdicts(&manifest), [ClaimVerdict::Supported]);
    // Each point stops at its minimum, 2 repetitions: decided on an interval.
    for point in &manifest.points {
        let mut ran: Vec<_> = manifest
            .trials
            .iter()
            .filter(|t| t.point == point.point && t.status == TrialStatus::Complete)
            .collect();
        ran.sort_by_key(|t| t.started_at_unix_ns);
        assert_eq!((point.repetitions_run, ran.len()), (2, 2), "{point:?}");
        let reason = point.stop_reason.as_deref().unwrap_or_default();
        assert_eq!(reason, "every claim decided after 2 repetitions");
    }
    let check = expc()
        .args(["report", "--check", "--include-invalid"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
}

/// One long trial of a fleet sending every 10 ms: it would run 20 s.
const LONG: &str = r#"
experiment "abort" {
  duration = 20s
  repeat   = 1
  fleet "s" {
    devices = 2
    gap     = constant(10ms)
    qos     = 1
  }
}
"#;

#[test]
fn an_abort_threshold_stops_the_run_within_2_s_of_the_violation() {
    let scratch = Scratch::new("abort");
    // `p99(ack_latency) < 1ns abort(grace = 500ms)`: every acknowledgement
    // takes more than 1 ns, so once 42 of the at most 2 × (20 s / 10 ms + 1)
    // = 4002 messages are in, p99 ≥ 1 ns whatever comes (rank ⌊4001 × 0.99⌋ = 3960).
    let mut claim = p99_claim_in(3, "<", 1.0);
    claim["abort"] = serde_json::json!({ "grace_ns": 500_000_000u64 });
    let plan = plan_file_of(&scratch, LONG, vec![claim, p99_claim_in(4, "<", 5e9)], None);
    let started = std::time::Instant::now();
    let run_junit = scratch.0.join("run.xml");
    let (output, dir) = run_with(&scratch, &plan, &["--junit".as_ref(), run_junit.as_os_str()]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "stopped early\n{}",
        text(&output)
    );
    assert_eq!(
        output.status.code(),
        Some(3),
        "aborted: refuted, exit 3\n{}",
        text(&output)
    );
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status.as_str(), "interrupted");
    assert_eq!(manifest.aborted_by.as_deref(), Some("p99(fleet.s.ack_latency) < 1ns"));
    assert!(manifest
        .error
        .as_deref()
        .unwrap()
        .starts_with("aborted by claim `p99(fleet.s.ack_latency) < 1ns`: trial 0: "));
    assert_eq!(verdicts(&manifest)[0], ClaimVerdict::Refuted);

    // The violation's moment, from the table: the 42nd acknowledgement.
    let frames = common::trial_frames(&dir, "mqtt_messages", 0);
    let mut acked: Vec<u64> = Vec::new();
    for frame in &frames {
        let status = frame.column("status").unwrap().str().unwrap().clone();
        let warmup = frame.column("warmup").unwrap().bool().unwrap().clone();
        let at = frame.column("acked_ns").unwrap().to_u64s().unwrap();
        for ((status, warmup), at) in status.iter().zip(warmup.iter()).zip(at.iter()) {
            if let (Some("ok"), Some(false) | None, Some(at)) = (status, warmup, at) {
                acked.push(at);
            }
        }
    }
    acked.sort_unstable();
    assert!(acked.len() >= 42, "{} acknowledged", acked.len());
    let violated_ns = acked[41];
    let trial = &manifest.trials[0];
    let stopped_ns = trial.ended_at_unix_ns.unwrap() - trial.started_at_unix_ns.unwrap();
    let after = stopped_ns.saturating_sub(violated_ns) as f64 / 1e9;
    println!(
        "violation at {:.3} s, stop at {:.3} s: {after:.3} s later",
        violated_ns as f64 / 1e9,
        stopped_ns as f64 / 1e9
    );
    assert!(
        after >= 0.5,
        "the grace was kept: stopped {after:.3} s after the violation"
    );
    assert!(after <= 2.0, "stopped {after:.3} s after the violation");

    // A complete, readable directory, and the same verdicts from the tables.
    let report = expc().arg("report").arg(&dir).output().unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let check = expc()
        .args(["report", "--check", "--include-invalid", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(3), "{}", text(&check));
    let again: Vec<exp_results::claims::ClaimRecord> = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(again, manifest.claims);
    // `--junit` is written on abort too, the aborting claim a refuted case.
    let written = std::fs::read_to_string(&run_junit).unwrap();
    assert_eq!(written, report_junit(&scratch, &dir));
    assert!(
        written.contains("name=\"p99(fleet.s.ack_latency) &lt; 1ns\"><failure type=\"refuted\""),
        "{written}"
    );
}

/// A 4 s activation of cpuoccupy on one core: at `--time-scale 0.1` it
/// lasts 0.4 s, so its CPU time is above 50 ms (`scaled(500ms)`) and
/// below 600 ms (`scaled(6s)`), and below the unscaled 500 ms.
const SCALED: &str = r#"
experiment "scaled" {
  duration = 6s
  anomaly "cpu" {
    kind        = cpuoccupy
    utilization = 100%
    cores       = [0]
    at          = 1s
    for         = 4s
  }
  expect {
    max(anomaly.cpu.cpu_time) > scaled(500ms)
    max(anomaly.cpu.cpu_time) < scaled(6s)
  }
}
"#;

#[test]
fn scaled_constants_follow_the_runs_time_scale() {
    let scratch = Scratch::new("scaled");
    let spec = scratch.0.join("scaled.exp");
    std::fs::write(&spec, SCALED).unwrap();
    let plan = expc().arg("plan").arg(&spec).output().unwrap();
    assert!(plan.status.success(), "{}", text(&plan));
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    assert_eq!(plan["claims"][0]["right"]["time_scaled"], true, "{plan}");
    assert_eq!(plan["claims"][0]["right"]["value"], 5e8, "{plan}");

    let junit = scratch.0.join("run.xml");
    let more = [
        "--time-scale".as_ref(),
        "0.1".as_ref(),
        "--junit".as_ref(),
        junit.as_os_str(),
    ];
    let (output, dir) = run_with(&scratch, &spec, &more);
    assert_eq!(output.status.code(), Some(0), "both supported\n{}", text(&output));
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(verdicts(&manifest), [ClaimVerdict::Supported, ClaimVerdict::Supported]);
    let cpu_time = manifest.claims[0].points[0].estimate.unwrap();
    assert!(
        cpu_time > 0.05e9 && cpu_time < 0.5e9,
        "an unscaled 500 ms would refute it: {cpu_time} ns"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(
        (xml.matches("<testcase ").count(), xml.matches("<failure").count()),
        (2, 0),
        "{xml}"
    );
    let check = expc()
        .args(["report", "--check", "--include-invalid"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(0),
        "the same verdicts from the tables\n{}",
        text(&check)
    );
}

#[test]
fn run_junit_into_a_directory_is_refused_before_the_run() {
    let scratch = Scratch::new("junit-dir");
    let spec = scratch.0.join("scaled.exp");
    std::fs::write(&spec, SCALED).unwrap();
    let output = expc()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(scratch.0.join("runs"))
        .arg("--junit")
        .arg(&scratch.0)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(text(&output).contains("it is a directory"), "{}", text(&output));
    assert!(!scratch.0.join("runs").exists(), "nothing ran");
}

/// The compiler's catalogue of the monitor's metrics and the columns the
/// sampler writes agree: every metric is a column, and every column but
/// the time, the interval and the per-CPU ones is a metric.
#[test]
fn the_monitors_claim_metrics_are_the_samplers_columns() {
    let sampler = exp_host::SystemSampler::new(exp_host::SamplerOptions { per_cpu: true }).unwrap();
    let columns: Vec<String> = sampler.columns().into_iter().map(|c| c.name).collect();
    let catalogue: Vec<&str> = exp_check::registry::block("monitor")
        .unwrap()
        .row_metrics()
        .iter()
        .map(|m| m.name)
        .collect();
    for metric in &catalogue {
        assert!(
            columns.iter().any(|c| c == metric),
            "`{metric}` is not a column: {columns:?}"
        );
    }
    let per_cpu = |c: &str| c.starts_with("cpu") && c[3..].starts_with(|ch: char| ch.is_ascii_digit());
    for column in columns
        .iter()
        .filter(|c| !per_cpu(c) && !["t_ns", "interval_ns"].contains(&c.as_str()))
    {
        assert!(
            catalogue.contains(&column.as_str()),
            "column `{column}` is not a claim metric"
        );
    }
}
