//! `expc report A B` on two real runs whose plans differ: the plan
//! difference in the spec's terms, the point only one run has, points in
//! the order of their values, Welch's test and the equivalence verdict per
//! metric (in text, JSON and HTML), the margin flag, environment
//! differences, and invalid trials left out with their count.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use crate::common::{expc, run_dir, text, Scratch};
use serde_json::Value;

/// A CPU hog at two levels, listed out of order, three repetitions each.
const BASELINE: &str = r#"
experiment "report-compare" {
  duration = 1s
  repeat   = 3
  sweep { level = [10%, 9%] }
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = level
    cores       = [0]
  }
}
"#;

/// The same with a third level, listed in order.
const THREE_LEVELS: &str = r#"
experiment "report-compare" {
  duration = 1s
  repeat   = 3
  sweep { level = [9%, 10%, 20%] }
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = level
    cores       = [0]
  }
}
"#;

fn run(scratch: &Scratch, name: &str, spec: &str) -> PathBuf {
    let spec_path = scratch.0.join(format!("{name}.exp"));
    std::fs::write(&spec_path, spec).unwrap();
    let out = scratch.0.join(name);
    let output = expc()
        .arg("run")
        .arg(&spec_path)
        .arg("--out")
        .arg(&out)
        .args(["--time-scale", "0.5"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    run_dir(&out).unwrap()
}

fn report(runs: &[&Path], extra: &[&str]) -> std::process::Output {
    expc().arg("report").args(runs).args(extra).output().unwrap()
}

fn stdout(output: &std::process::Output) -> String {
    assert!(output.status.success(), "{}", text(output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Rewrites a run's manifest (a copy of a run) as another machine, or an
/// audit, would have written it.
fn edit_manifest(run: &Path, edit: impl FnOnce(&mut Value)) {
    let path = run.join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut manifest);
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

#[test]
fn runs_with_different_plans_say_what_differs_and_test_each_metric() {
    let scratch = Scratch::new("report-compare-plans");
    let a = run(&scratch, "a", BASELINE);
    let b = run(&scratch, "b", THREE_LEVELS);

    let shown = stdout(&report(&[&a, &b], &[]));
    assert!(shown.contains("plans: differ (2):"), "{shown}");
    assert!(shown.contains("sweep points: 1 point new (level=20%)"), "{shown}");
    assert!(shown.contains("sweep `level`: 10%, 9% → 9%, 10%, 20%"), "{shown}");
    assert!(shown.contains("points only in report-compare/"), "{shown}");
    assert!(shown.contains("(1): level=20%"), "{shown}");
    assert!(shown.contains("environment: no recorded fact differs"), "{shown}");
    // Points by value: 9 % before 10 % (as strings, and in A's plan, 10 % comes first).
    let row = |level: &str| {
        shown
            .lines()
            .position(|l| l.trim_start().starts_with(&format!("level={level} ")))
            .unwrap_or_else(|| panic!("no row at {level}: {shown}"))
    };
    assert!(row("9%") < row("10%"), "{shown}");
    let rows: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("hog.achieved_utilization"))
        .collect();
    assert_eq!(rows.len(), 2, "one row per common point: {shown}");
    for row in rows {
        assert!(
            ["equivalent", "different", "inconclusive"]
                .iter()
                .any(|v| row.contains(v)),
            "{row}"
        );
        assert!(row.trim_end().ends_with("3/3"), "{row}");
    }
    assert!(shown.contains("within ±5% of the baseline's mean"), "{shown}");

    let json: Value = serde_json::from_str(&stdout(&report(&[&a, &b], &["--json", "--margin", "2.5%"]))).unwrap();
    let c = &json[0];
    assert_eq!(c["plans"]["status"], "differ", "{c}");
    assert_eq!(c["only_in_compared"], serde_json::json!(["level=20%"]));
    assert_eq!(c["only_in_baseline"], serde_json::json!([]));
    assert_eq!(c["margin"], 0.025);
    let metrics = c["metrics"].as_array().unwrap();
    let points: Vec<&str> = metrics.iter().map(|m| m["point"].as_str().unwrap()).collect();
    let first_ten = points.iter().position(|p| *p == "level=10%").unwrap();
    assert!(points[..first_ten].iter().all(|p| *p == "level=9%"), "{points:?}");
    for m in metrics.iter().filter(|m| m["metric"] == "hog.achieved_utilization") {
        let verdict = m["verdict"].as_str().unwrap();
        assert!(["equivalent", "different", "inconclusive"].contains(&verdict), "{m}");
        assert!(
            m["p_value"].as_f64().is_some() && m["equivalence_p"].as_f64().is_some(),
            "{m}"
        );
    }

    let page = scratch.0.join("page.html");
    let html = report(&[&a, &b], &["--html", page.to_str().unwrap()]);
    assert!(html.status.success(), "{}", text(&html));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("sweep `level`: 10%, 9% → 9%, 10%, 20%"),
        "plan diff in the page"
    );
    assert!(
        html.contains("<th class=\"l\">verdict</th>"),
        "verdict column in the page"
    );

    let bad = report(&[&a, &b], &["--margin", "0.05"]);
    assert!(!bad.status.success());
    assert!(
        text(&bad).contains("write the margin as a percentage"),
        "{}",
        text(&bad)
    );
}

#[test]
fn another_machine_and_invalid_trials_are_said() {
    let scratch = Scratch::new("report-compare-host");
    let a = run(&scratch, "a", BASELINE);
    // A copy of the run as another kernel, whose audit found trial 0 invalid.
    let b = scratch.0.join("copy");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(&a)
        .arg(&b)
        .status()
        .unwrap();
    assert!(copied.success());
    edit_manifest(&b, |m| {
        m["run_id"] = "copy".into();
        m["host"]["kernel"] = "0.0.0-other".into();
        m["host"]["kernel_cmdline"] = Value::Null;
        m["trials"][0]["validity"] = serde_json::json!({
            "verdict": "invalid",
            "findings": [{"code": "V0101", "verdict": "invalid", "message": "send lateness over its bound"}]
        });
    });

    // The run recorded its host and build: each fact read, or null (unknown).
    let manifest: Value = serde_json::from_slice(&std::fs::read(a.join("manifest.json")).unwrap()).unwrap();
    let host = &manifest["host"];
    assert!(host["kernel_cmdline"].is_string(), "{host}");
    // Facts a container may hide are a number or null, never 0.
    for fact in [&host["cpu"]["cores"], &host["memory"]["numa_nodes"]] {
        assert!(fact.is_null() || fact.as_u64().unwrap() >= 1, "{host}");
    }
    let sysctls = host["network"]["sysctls"].as_object().unwrap();
    assert!(sysctls["net.ipv4.tcp_congestion_control"].is_string(), "{host}");
    let lo = host["network"]["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "lo");
    assert!(lo.unwrap()["offloads"]["tso"].is_boolean(), "{host}");
    assert!(host["virtualization"]["machine"].is_string(), "{host}");
    let build = &manifest["build"];
    assert!(build["c_compiler"].as_str().unwrap().contains("cc"), "{build}");
    assert!(build["c_flags"].as_str().unwrap().contains("-O2"), "{build}");

    let shown = stdout(&report(&[&a, &b], &[]));
    assert!(shown.contains("plans: the same"), "{shown}");
    let kernel = host["kernel"].as_str().unwrap();
    assert!(
        shown.contains(&format!("host.kernel: {kernel} → 0.0.0-other")),
        "{shown}"
    );
    let cmdline = host["kernel_cmdline"].as_str().unwrap();
    assert!(
        shown.contains(&format!("host.kernel_cmdline: {cmdline} → unknown")),
        "{shown}"
    );
    assert!(shown.contains("environment: 2 facts differ:"), "{shown}");
    assert!(
        shown.contains("left out of report-compare/copy: 1 invalid trial (V0101 ×1)"),
        "{shown}"
    );
    // Trial 0 is the first repetition of the first point (level=10%).
    let row = shown
        .lines()
        .find(|l| l.contains("level=10%") && l.contains("achieved_utilization"));
    assert!(row.unwrap().trim_end().ends_with("3/2"), "{shown}");

    let back = stdout(&report(&[&a, &b], &["--include-invalid"]));
    assert!(!back.contains("left out of"), "{back}");
    let row = back
        .lines()
        .find(|l| l.contains("level=10%") && l.contains("achieved_utilization"));
    assert!(row.unwrap().trim_end().ends_with("3/3"), "{back}");
}

/// `--points A B`: two points of one run, compared as two runs are; the
/// means are the manifest's, the verdict one of the three.
#[test]
fn two_points_of_one_run_are_compared_like_two_runs() {
    let scratch = Scratch::new("report-compare-points");
    let a = run(&scratch, "a", BASELINE);
    let json: Value = serde_json::from_str(&stdout(&report(&[&a], &["--points", "0", "1", "--json"]))).unwrap();
    assert!(
        json["baseline"].as_str().unwrap().ends_with("point 0 (level=10%)"),
        "{json}"
    );
    assert!(
        json["compared"].as_str().unwrap().ends_with("point 1 (level=9%)"),
        "{json}"
    );
    assert_eq!(json["plans"]["status"], "same");
    assert_eq!(json["environment"], serde_json::json!([]));
    let manifest: Value = serde_json::from_slice(&std::fs::read(a.join("manifest.json")).unwrap()).unwrap();
    let mean_at = |point: u64| {
        let values: Vec<f64> = manifest["trials"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["point"] == point)
            .map(|t| t["metrics"]["hog.achieved_utilization"].as_f64().unwrap())
            .collect();
        values.iter().sum::<f64>() / values.len() as f64
    };
    let m = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "hog.achieved_utilization")
        .unwrap_or_else(|| panic!("{json}"));
    assert_eq!(
        (m["baseline"]["n"].as_u64(), m["other"]["n"].as_u64()),
        (Some(3), Some(3))
    );
    assert!(
        (m["baseline"]["mean"].as_f64().unwrap() - mean_at(0)).abs() < 1e-12,
        "{m}"
    );
    assert!((m["other"]["mean"].as_f64().unwrap() - mean_at(1)).abs() < 1e-12, "{m}");
    assert!(
        ["equivalent", "different", "inconclusive"].contains(&m["verdict"].as_str().unwrap()),
        "{m}"
    );

    let shown = stdout(&report(&[&a], &["--points", "1", "0"]));
    assert!(shown.contains("hog.achieved_utilization"), "{shown}");
    let missing = report(&[&a], &["--points", "0", "5"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing).contains("no trial at point 5") && text(&missing).contains("1 (level=9%)"),
        "{}",
        text(&missing)
    );
    let two_runs = report(&[&a, &a], &["--points", "0", "1"]);
    assert_eq!(two_runs.status.code(), Some(1));
    assert!(
        text(&two_runs).contains("give one run directory"),
        "{}",
        text(&two_runs)
    );
}
