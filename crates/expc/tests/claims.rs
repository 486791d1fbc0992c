//! Claims end to end, from outside: a fleet on the embedded broker run from
//! a plan file carrying claims (as the compiler will lower `expect`
//! blocks), then the manifest's verdicts, `expc run`'s exit status,
//! `expc report --check` (the same verdicts from the tables, the same
//! status), `--junit`, and `repeat = until_decided(…)`.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{expc, run_dir};
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

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-claims-{name}-{}", std::process::id()));
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

/// `p99(fleet.s.ack_latency) OP BOUND_NS`, as the plan holds it.
fn p99_claim(op: &str, bound_ns: f64) -> serde_json::Value {
    serde_json::json!({
        "text": format!("p99(fleet.s.ack_latency) {op} {bound_ns}ns"),
        "origin": {"file": "spec.exp", "line": 9, "column": 5},
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
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, SPEC).unwrap();
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
    let out = scratch.0.join("runs");
    let output = expc()
        .arg("run")
        .arg(plan)
        .arg("--include-invalid")
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    (output, run_dir(&out).unwrap())
}

fn verdicts(manifest: &Manifest) -> Vec<ClaimVerdict> {
    manifest.claims.iter().map(|c| c.verdict).collect()
}

#[test]
fn verdicts_reach_the_manifest_the_exit_status_check_and_junit() {
    let scratch = Scratch::new("verdicts");
    // Loopback acknowledgements take far less than 5 s, let alone 1000 s.
    let plan = plan_file(&scratch, vec![p99_claim("<", 5e9), p99_claim(">", 1e12)], None);
    let (output, dir) = run(&scratch, &plan);
    assert_eq!(output.status.code(), Some(3), "refuted: exit 3\n{}", text(&output));
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
