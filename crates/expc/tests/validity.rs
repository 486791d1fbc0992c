//! Every trial audits its own instrument (docs/running.md, "Validity"),
//! asserted from outside: the run's tables read back, the
//! manifest, `expc report` and `expc explain`. An anomaly that does no work
//! is `invalid` and its window is not ground truth; a runner stopped for a
//! second leaves a monitor gap, `degraded`, and the monitor figures break
//! their lines there.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{expc, run_dir, signal, spawn_run_captured, text, trial_frames, wait_for, Scratch};
use exp_parquet::Frame;
use exp_results::manifest::Manifest;
use exp_results::validity::Verdict;

/// Runs `spec` to its end with `extra` arguments; returns the run directory.
fn run(scratch: &Scratch, spec: &str, extra: &[&str]) -> (PathBuf, String) {
    let path = scratch.0.join("spec.exp");
    std::fs::write(&path, spec).unwrap();
    let out = scratch.0.join("runs");
    let output = expc()
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    (run_dir(&out).unwrap(), text(&output))
}

/// The strings of a column across frames, nulls as "".
fn strings(frames: &[Frame], column: &str) -> Vec<String> {
    frames
        .iter()
        .flat_map(|f| {
            let c = f.column(column).unwrap().str().unwrap().clone();
            c.iter().map(|v| v.unwrap_or("").to_string()).collect::<Vec<_>>()
        })
        .collect()
}

fn report(dir: &Path, args: &[&str]) -> String {
    let output = expc().arg("report").arg(dir).args(args).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn an_anomaly_that_does_no_work_is_invalid_and_not_ground_truth() {
    let scratch = Scratch::new("validity-no-work");
    // At a time scale of 1/10,000 the activation lasts 100 µs: the child is
    // told to stop before its kernel can leak a single block.
    let spec = r#"
experiment "no-work" {
  duration = 2s
  anomaly "leak" {
    kind  = memleak
    size  = 1MiB
    rate  = 10/s
    limit = 64MiB
    at    = 1s
    for   = 1s
  }
}
"#;
    let (dir, log) = run(&scratch, spec, &["--time-scale", "0.0001"]);
    assert!(log.contains("validity") && log.contains("V0301"), "{log}");

    let trials = trial_frames(&dir, "trials", 0);
    assert_eq!(strings(&trials, "verdict"), ["invalid"], "{log}");
    assert!(strings(&trials, "validity_codes")[0].split(',').any(|c| c == "V0301"));
    let findings = trial_frames(&dir, "trial_validity", 0);
    let codes = strings(&findings, "code");
    let at = codes.iter().position(|c| c == "V0301").unwrap();
    assert_eq!(strings(&findings, "workload")[at], "leak");
    assert_eq!(strings(&findings, "verdict")[at], "invalid");
    let timeline = trial_frames(&dir, "anomaly_timeline", 0);
    let ground_truth: Vec<Option<bool>> = timeline[0]
        .column("ground_truth")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(ground_truth, [Some(false)]);
    assert_eq!(common::u64_values(&timeline, "iterations"), [0]);

    let manifest = Manifest::read(&dir).unwrap();
    let validity = manifest.trials[0].validity.as_ref().unwrap();
    assert_eq!(validity.verdict, Verdict::Invalid);
    assert!(!exp_results::validity::counts(&manifest.trials[0], false));
    assert!(exp_results::validity::counts(&manifest.trials[0], true));

    let json: serde_json::Value = serde_json::from_str(&report(&dir, &["--json"])).unwrap();
    assert_eq!(json["validity"]["invalid"], 1, "{json:#}");
    assert_eq!(json["validity"]["trials"][0]["verdict"], "invalid");
    let text = report(&dir, &[]);
    assert!(
        text.contains("== validity") && text.contains("V0301 invalid `leak`"),
        "{text}"
    );
    let explained = expc().args(["explain", "V0301"]).output().unwrap();
    assert!(explained.status.success());
    assert!(String::from_utf8_lossy(&explained.stdout).contains("ground truth"));
}

/// Bounds are data a study may set: with steal and neighbours allowed the
/// whole machine, only the anomaly's own finding is left; the manifest
/// records the bounds; a bound that does not exist is refused, named.
#[test]
fn validity_bounds_are_set_on_the_command_line_and_recorded() {
    let scratch = Scratch::new("validity-bounds");
    let spec = r#"
experiment "bounds" {
  duration = 1s
  anomaly "leak" { kind = memleak  size = 1MiB  rate = 10/s  limit = 64MiB  at = 500ms }
}
"#;
    let bounds = [
        "--validity-bound",
        "others_cpu_share=1",
        "--validity-bound",
        "steal_share=1",
    ];
    let (dir, log) = run(&scratch, spec, &[&["--time-scale", "0.0001"][..], &bounds[..]].concat());
    let codes = strings(&trial_frames(&dir, "trial_validity", 0), "code");
    assert_eq!(codes, ["V0301"], "{log}");
    let manifest = Manifest::read(&dir).unwrap();
    let recorded = manifest.options.validity_bounds.unwrap();
    assert_eq!((recorded.others_cpu_share, recorded.steal_share), (1.0, 1.0));
    assert_eq!(recorded.monitor_gap_factor, 2.0, "the others keep their defaults");

    let spec_path = scratch.0.join("spec.exp");
    let output = expc()
        .arg("run")
        .arg(&spec_path)
        .args(["--out", "/nonexistent-never-made", "--validity-bound", "neighbours=1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--validity-bound neighbours=1") && stderr.contains("others_cpu_share"),
        "{stderr}"
    );
}

#[test]
fn a_stopped_runner_leaves_a_monitor_gap_that_degrades_and_breaks_the_line() {
    let scratch = Scratch::new("validity-gap");
    let spec = r#"
experiment "gap" {
  duration = 4s
  monitor { interval = 100ms }
}
"#;
    let path = scratch.0.join("spec.exp");
    std::fs::write(&path, spec).unwrap();
    let out = scratch.0.join("runs");
    let child = spawn_run_captured(&path, &out);
    // Once the trial has run a while, the whole runner stops for 1 s.
    wait_for("the run directory", Duration::from_secs(60), || run_dir(&out));
    std::thread::sleep(Duration::from_millis(1200));
    signal(&child, "STOP");
    std::thread::sleep(Duration::from_millis(1000));
    signal(&child, "CONT");
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let dir = run_dir(&out).unwrap();

    let findings = trial_frames(&dir, "trial_validity", 0);
    let codes = strings(&findings, "code");
    let at = codes
        .iter()
        .position(|c| c == "V0501")
        .unwrap_or_else(|| panic!("{codes:?}"));
    assert_eq!(strings(&findings, "verdict")[at], "degraded");
    let measured = findings[0].column("measured").unwrap().f64().unwrap().get(at).unwrap();
    assert!(measured >= 900e6, "the longest interval, ns: {measured}");
    let verdicts = strings(&trial_frames(&dir, "trials", 0), "verdict");
    assert_eq!(
        verdicts,
        ["degraded"],
        "a gap (and a neighbour) degrade; nothing here invalidates"
    );

    let html = scratch.0.join("report.html");
    let output = expc()
        .arg("report")
        .arg(&dir)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<section id=\"validity\">") && page.contains("V0501"),
        "{page}"
    );
    assert!(
        page.contains("the line breaks at"),
        "the monitor figures' captions say where they break"
    );
}

#[test]
fn explain_knows_every_validity_code() {
    for code in [
        "V0101", "V0102", "V0103", "V0104", "V0301", "V0302", "V0401", "V0501", "V0601", "V0602",
    ] {
        let output = expc().args(["explain", code]).output().unwrap();
        assert!(output.status.success(), "{code}: {}", text(&output));
        assert!(String::from_utf8_lossy(&output.stdout).contains("Validity"), "{code}");
    }
}

#[test]
fn an_xml_workload_cut_short_by_its_trial_is_degraded() {
    let scratch = Scratch::new("validity-xml-short");
    let corpus = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../specs/xml/corpus");
    // Ten million documents do not fit in a 2 s trial: the trial's end
    // stops generation, and the set is incomplete.
    let spec = format!(
        r#"
experiment "xml-short" {{
  duration = 2s
  xml "x" {{
    corpus    = "{}"
    split_at  = "event"
    documents = 10000000
  }}
}}
"#,
        corpus.display()
    );
    let (dir, log) = run(&scratch, &spec, &[]);
    let findings = trial_frames(&dir, "trial_validity", 0);
    let codes = strings(&findings, "code");
    let at = codes
        .iter()
        .position(|c| c == "V0401")
        .unwrap_or_else(|| panic!("{codes:?}\n{log}"));
    assert_eq!(strings(&findings, "workload")[at], "x");
    let column = |name: &str| findings[0].column(name).unwrap().f64().unwrap().get(at).unwrap();
    assert_eq!(column("bound"), 1e7);
    assert!(column("measured") < 1e7);
    assert_eq!(strings(&trial_frames(&dir, "trials", 0), "verdict"), ["degraded"]);
}
