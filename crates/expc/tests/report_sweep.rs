//! The sweep table, figures and Methods paragraph of `expc report`, from
//! outside: a latency's interval never reaches below 0, `contended` is
//! counted, invalid trials are left out and said (`--include-invalid` puts
//! them back), the method is named in the text, JSON and captions, and a
//! run without a swept parameter gets a per-repetition view instead of a
//! sweep figure.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{expc, run_dir};
use serde_json::Value;

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-report-sweep-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(output: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs `spec` and returns its run directory.
fn run(scratch: &Scratch, spec: &str) -> PathBuf {
    let path = scratch.0.join("spec.exp");
    std::fs::write(&path, spec).unwrap();
    let out = scratch.0.join("runs");
    let output = expc().arg("run").arg(&path).arg("--out").arg(&out).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    run_dir(&out).unwrap()
}

fn report(dir: &Path, extra: &[&str]) -> Output {
    let output = expc().arg("report").arg(dir).args(extra).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    output
}

/// The sweep table's entry of `metric` at `point` in `expc report --json`.
fn entry<'a>(json: &'a Value, point: u64, metric: &str) -> &'a Value {
    json["sweep"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["point"] == point && p["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} at point {point}: {}", json["sweep"]))
}

const SWEEP: &str = r#"
experiment "sweep" {
  duration = 300ms
  repeat   = 4
  sweep { n = [2, 4] }
  fleet "meters" {
    devices = n
    gap     = constant(20ms)
  }
}
"#;

/// Sets trial metrics and validity in the run's manifest, as a run with a
/// wild latency, contended trials and an invalid one would have written them.
fn doctor(dir: &Path) {
    let path = dir.join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for trial in manifest["trials"].as_array_mut().unwrap() {
        let (point, repetition) = (trial["point"].as_u64().unwrap(), trial["repetition"].as_u64().unwrap());
        // Whatever this machine's audits found (a busy CI host flags real
        // trials): every trial valid but the one made invalid below.
        trial["validity"] = serde_json::json!({"verdict": "valid", "findings": []});
        let metrics = &mut trial["metrics"];
        if point == 0 {
            // 1 µs three times and 1 s once: the t interval reaches far below 0.
            metrics["meters.ack_latency"] = if repetition == 3 { 1e9 } else { 1e3 }.into();
            metrics["meters.contended"] = if repetition % 2 == 0 { 1.0 } else { 0.0 }.into();
        }
        if point == 1 && repetition == 2 {
            trial["validity"] = serde_json::json!({
                "verdict": "invalid",
                "findings": [{"code": "V0101", "workload": "meters", "verdict": "invalid", "message": "send lateness p99 2.8 s over its bound 2 ms"}],
            });
        }
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

#[test]
fn the_sweep_table_bounds_intervals_counts_flags_and_leaves_invalid_trials_out() {
    let scratch = Scratch::new("table");
    let dir = run(&scratch, SWEEP);
    doctor(&dir);
    let json: Value = serde_json::from_slice(&report(&dir, &["--json"]).stdout).unwrap();
    let latency = entry(&json, 0, "meters.ack_latency");
    // Four repetitions give a median no 95% interval: the mean, with t cut at 0.
    assert_eq!(latency["statistic"], "mean");
    assert_eq!(latency["method"], "t");
    assert_eq!(latency["low"], 0.0, "{latency}");
    assert!(latency["high"].as_f64().unwrap() > latency["value"].as_f64().unwrap());
    let contended = entry(&json, 0, "meters.contended");
    assert_eq!(
        (&contended["statistic"], &contended["yes"], &contended["n"]),
        (&"count".into(), &2.into(), &4.into())
    );
    assert_eq!(
        entry(&json, 1, "meters.throughput")["n"],
        3,
        "the invalid trial is left out"
    );
    let excluded = json["sweep"]["excluded_invalid"].as_array().unwrap();
    assert_eq!(excluded.len(), 1);
    assert_eq!(excluded[0]["reasons"], serde_json::json!(["V0101"]));
    let methods = json["methods"].as_str().unwrap();
    for said in [
        "2 sweep points",
        "repeated 4 times",
        "randomized interleaved order",
        "seed 1",
        "Student's t interval",
        "1 invalid trial left out (V0101: 1)",
    ] {
        assert!(methods.contains(said), "{said}: {methods}");
    }

    let all: Value = serde_json::from_slice(&report(&dir, &["--json", "--include-invalid"]).stdout).unwrap();
    assert_eq!(entry(&all, 1, "meters.throughput")["n"], 4);
    assert_eq!(all["sweep"]["included_invalid"], 1);

    let printed = String::from_utf8(report(&dir, &[]).stdout).unwrap();
    for said in [
        "== sweep points",
        "2 of 4 yes",
        "1 invalid trial left out (V0101: 1)",
        "Methods. Experiment \"sweep\"",
    ] {
        assert!(printed.contains(said), "{said}: {printed}");
    }
    assert!(!printed.contains("yes ± yes"));

    let html_path = scratch.0.join("report.html");
    report(&dir, &["--html", html_path.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("<h2>Methods</h2>") && html.contains("randomized interleaved order"));
    assert!(
        html.contains("Mean with its 95% Student&#39;s t interval of the mean of meters.ack_latency")
            || html.contains("Mean with its 95% Student's t interval of the mean of meters.ack_latency"),
        "the caption names the method"
    );
}

#[test]
fn repetitions_without_a_sweep_get_a_per_repetition_view_not_a_sweep_figure() {
    let scratch = Scratch::new("repetitions");
    let dir = run(
        &scratch,
        r#"
experiment "repeated" {
  duration = 300ms
  repeat   = 3
  fleet "meters" {
    devices = 2
    gap     = constant(20ms)
  }
}
"#,
    );
    let svg = scratch.0.join("svg");
    report(&dir, &["--svg", svg.to_str().unwrap()]);
    let names: Vec<String> = std::fs::read_dir(&svg)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("sweep-")), "{names:?}");
    assert!(
        names.iter().any(|n| n == "repetitions-meters-ack-latency.svg"),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.contains("contended")), "{names:?}");
}
