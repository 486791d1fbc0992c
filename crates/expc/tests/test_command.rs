//! `expc test` on a spec library as a researcher keeps one: a preset module
//! and the specs that import it, their plan snapshots, JUnit output, and
//! `--run`.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::Path;
use std::process::Output;

use crate::common::{expc, text, Scratch};

/// A module of presets and a spec that sweeps over one of them.
const PRESETS: &str = "\
let sizes = [512B, 1KiB]
let gap = 200ms
";

const SPEC: &str = "\
import \"./presets.exp\" as presets

experiment \"sizes\" {
  seed     = 7
  duration = 2s

  sweep {
    size = presets.sizes
  }

  fleet \"sensors\" {
    devices = 3
    gap     = presets.gap
    payload = json(size = size, fields = [temperature])
  }
}
";

fn library(name: &str) -> Scratch {
    let dir = Scratch::new(&format!("test-command-{name}"));
    write(&dir.0, "presets.exp", PRESETS);
    write(
        &dir.0,
        "iot/sizes.exp",
        &SPEC.replace("./presets.exp", "../presets.exp"),
    );
    dir
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn test_in(dir: &Path, args: &[&str]) -> Output {
    expc().current_dir(dir).arg("test").args(args).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_changed_preset_shows_what_changed_in_the_plan_and_accept_settles_it() {
    let lib = library("preset");
    // No snapshot yet: the spec fails until its plan is accepted.
    let first = test_in(&lib.0, &[]);
    assert_eq!(first.status.code(), Some(1), "{}", text(&first));
    assert!(
        stdout(&first).contains("test iot/sizes.exp ... FAILED (no snapshot)"),
        "{}",
        text(&first)
    );
    assert!(
        stdout(&first).contains("test presets.exp ... ok (module)"),
        "{}",
        text(&first)
    );

    let accepted = test_in(&lib.0, &["--accept"]);
    assert_eq!(accepted.status.code(), Some(0), "{}", text(&accepted));
    let snapshot = lib.0.join("iot/__snapshots__/sizes.plan.json");
    let stored = std::fs::read_to_string(&snapshot).unwrap();
    // What runs, without provenance: no compiler, no source hashes, no origins.
    let json: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert!(
        json.get("compiler").is_none() && json.get("source").is_none(),
        "{stored}"
    );
    assert!(!stored.contains("\"origin\""), "{stored}");
    assert_eq!(test_in(&lib.0, &[]).status.code(), Some(0));

    // The same library checked from another folder plans the same.
    let elsewhere = expc().current_dir(&lib.0).arg("test").arg("iot").output().unwrap();
    assert_eq!(elsewhere.status.code(), Some(0), "{}", text(&elsewhere));

    // A preset changes: the spec's plan changes, said in the spec's terms.
    write(
        &lib.0,
        "presets.exp",
        &PRESETS.replace("1KiB]", "2KiB]").replace("200ms", "100ms"),
    );
    let changed = test_in(&lib.0, &[]);
    assert_eq!(changed.status.code(), Some(1), "{}", text(&changed));
    let out = stdout(&changed);
    for line in [
        "test iot/sizes.exp ... FAILED (plan changed)",
        "sweep `size`: 512B, 1KiB → 512B, 2KiB",
        "sweep points: 1 point gone (size=1KiB); 1 point new (size=2KiB)",
        "fleet \"sensors\", every point: gap: constant(value = 200ms) → constant(value = 100ms)",
        "`expc test --accept` writes them",
    ] {
        assert!(out.contains(line), "missing `{line}` in:\n{out}");
    }
    // Nothing is written without --accept.
    assert_eq!(std::fs::read_to_string(&snapshot).unwrap(), stored);

    let accepted = test_in(&lib.0, &["--accept"]);
    assert!(
        stdout(&accepted).contains("test iot/sizes.exp ... ok (snapshot accepted)"),
        "{}",
        text(&accepted)
    );
    assert_eq!(test_in(&lib.0, &[]).status.code(), Some(0));
}

#[test]
fn unformatted_specs_broken_specs_and_orphaned_snapshots_fail_and_say_why() {
    let lib = library("broken");
    assert_eq!(test_in(&lib.0, &["--accept"]).status.code(), Some(0));
    write(&lib.0, "unformatted.exp", "let   x = 1\n");
    write(&lib.0, "broken.exp", "experiment \"b\" {\n  duration = 60 s\n}\n");
    // The spec goes; its snapshot stays behind.
    std::fs::rename(lib.0.join("iot/sizes.exp"), lib.0.join("iot/renamed.exp.txt")).unwrap();
    let output = test_in(&lib.0, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let out = stdout(&output);
    for line in [
        "test unformatted.exp ... FAILED (not formatted)",
        "   1 - let   x = 1",
        "   1 + let x = 1",
        "test broken.exp ... FAILED (diagnostics",
        "error[E",
        "test iot/__snapshots__/sizes.plan.json ... FAILED (snapshot without a spec)",
        "no experiment iot/sizes.exp plans to it",
        "expc test: FAILED. 1 of 4 specs passed, 3 failed",
    ] {
        assert!(out.contains(line), "missing `{line}` in:\n{out}");
    }
    // --accept removes the orphan; the other failures are the user's to fix.
    let accepted = test_in(&lib.0, &["--accept"]);
    assert!(
        !lib.0.join("iot/__snapshots__/sizes.plan.json").exists(),
        "{}",
        text(&accepted)
    );
    assert_eq!(accepted.status.code(), Some(1));
}

#[test]
fn nothing_to_test_is_exit_status_2() {
    let lib = Scratch::new("test-command-empty");
    let output = test_in(&lib.0, &[]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no `.exp` file under ."));
    let missing = test_in(&lib.0, &["no-such-folder"]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
}

#[test]
fn review_needs_a_terminal() {
    let lib = library("review");
    let output = test_in(&lib.0, &["--review"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("without one, use --accept"));
}

#[test]
#[cfg_attr(not(xmllint), ignore = "needs xmllint (Debian's libxml2-utils)")]
fn junit_output_validates_against_the_junit_schema() {
    let lib = library("junit");
    write(&lib.0, "broken.exp", "experiment \"b\" {\n  duration = <60s\n}\n");
    let report = lib.0.join("report.xml");
    let output = test_in(&lib.0, &["--junit", report.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let schema = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("tests/junit/junit.xsd");
    let lint = std::process::Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(&report)
        .output()
        .unwrap();
    assert!(
        lint.status.success(),
        "{}\n{}",
        text(&lint),
        std::fs::read_to_string(&report).unwrap()
    );
    let xml = std::fs::read_to_string(&report).unwrap();
    assert!(xml.contains("tests=\"3\" failures=\"2\""), "{xml}");
    assert!(xml.contains("<testcase name=\"presets.exp\" classname=\".\""), "{xml}");
    assert!(xml.contains("<failure message=\"no snapshot\""), "{xml}");
    assert!(
        xml.contains("<failure message=\"diagnostics\" type=\"diagnostics\">error[E"),
        "{xml}"
    );
}

/// A fleet on the embedded broker, sampled by the monitor; `first_send`
/// set to an hour makes the silent variant send nothing in its 2 s.
const RUNNABLE: &str = "\
experiment \"fleet\" {
  seed     = 1
  duration = 2s

  fleet \"sensors\" {
    devices    = 3
    gap        = 100ms
    first_send = FIRST
    payload    = json(size = 128B, fields = [temperature])
  }

  monitor {
    interval = 200ms
  }
}
";

#[test]
fn run_catches_a_workload_that_writes_no_rows() {
    let lib = Scratch::new("test-command-run");
    write(&lib.0, "good.exp", &RUNNABLE.replace("FIRST", "uniform"));
    write(&lib.0, "silent.exp", &RUNNABLE.replace("FIRST", "constant(1h)"));
    assert_eq!(test_in(&lib.0, &["--accept"]).status.code(), Some(0));
    let output = test_in(&lib.0, &["--run", "--time-scale", "1"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let out = stdout(&output);
    for line in [
        "test good.exp ... ok",
        "test silent.exp ... FAILED (run failed)",
        "workload `sensors` wrote no rows to `mqtt_messages`",
    ] {
        assert!(out.contains(line), "missing `{line}` in:\n{out}");
    }
    // The runs went to a temporary folder, removed afterwards.
    assert!(!lib.0.join("runs").exists());
}

/// `--run` reports the claims' verdicts over the first trial under the
/// spec's line, each claim with, per point, its verdict, quantity and value,
/// without failing the test for them: one shortened repetition has no
/// interval (docs/running.md, "Claims"). Which verdict depends on the host
/// (a busy one makes the trial invalid, and the claims inconclusive), so
/// any is accepted.
#[test]
fn run_reports_the_claims_over_the_first_trial() {
    let lib = Scratch::new("test-command-run-claims");
    let claims = "  expect \"delivery\" {
    p99(sensors.ack_latency) < 10s
    loss(sensors) > 50%
  }
}
";
    let spec = RUNNABLE.replace("FIRST", "uniform");
    let spec = format!("{}{claims}", spec.strip_suffix("}\n").unwrap());
    write(&lib.0, "claims.exp", &spec);
    assert_eq!(test_in(&lib.0, &["--accept"]).status.code(), Some(0));
    let output = test_in(&lib.0, &["--run", "--time-scale", "1"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let out = stdout(&output);
    let lines: Vec<&str> = out.lines().map(str::trim).collect();
    let at = lines
        .iter()
        .position(|l| *l == "test claims.exp ... ok")
        .unwrap_or_else(|| panic!("no result line in:\n{out}"));
    assert_eq!(lines.get(at + 1), Some(&"Claims"), "{out}");
    let verdict = |line: &str| {
        ["supported", "refuted", "inconclusive"]
            .into_iter()
            .find(|v| line.starts_with(&format!("{v} ")))
    };
    let mut next = at + 2;
    for (claim, quantity) in [
        (
            "[delivery] p99(sensors.ack_latency) < 10s",
            "p99(fleet.sensors.ack_latency) = ",
        ),
        ("[delivery] loss(sensors) > 50%", "loss(fleet.sensors) = "),
    ] {
        let line = lines[next];
        let said = verdict(line).unwrap_or_else(|| panic!("no verdict in `{line}`:\n{out}"));
        assert_eq!(line[said.len()..].trim_start(), claim, "{out}");
        let point = lines[next + 1];
        assert!(point.starts_with(&format!("{said} {quantity}")), "{out}");
        next += 2;
        while lines[next].starts_with("left out: ") {
            next += 1;
        }
    }
}

/// `--review` on a real terminal (`script` gives it one): each new plan is
/// shown and accepted or not, one answer each.
#[test]
fn review_asks_about_each_plan_on_a_terminal() {
    let lib = Scratch::new("test-command-review-tty");
    write(
        &lib.0,
        "a.exp",
        &RUNNABLE.replace("FIRST", "uniform").replace("\"fleet\"", "\"a\""),
    );
    write(
        &lib.0,
        "b.exp",
        &RUNNABLE.replace("FIRST", "uniform").replace("\"fleet\"", "\"b\""),
    );
    let command = format!("{} test --review", env!("CARGO_BIN_EXE_expc"));
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(&lib.0)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"y\nn\n").unwrap();
    let output = child.wait_with_output().unwrap();
    let out = stdout(&output);
    assert!(out.contains("==== a.exp ===="), "{out}");
    assert!(out.contains("accept? [y]es, [n]o, [a]ll the rest, [q]uit"), "{out}");
    assert!(out.contains("accepted: a.exp"), "{out}");
    assert!(!out.contains("accepted: b.exp"), "{out}");
    assert!(lib.0.join("__snapshots__/a.plan.json").exists());
    assert!(!lib.0.join("__snapshots__/b.plan.json").exists());
}

/// A changed data file (a trace) is a changed plan input: the snapshot
/// pins its content hash, so `expc test` fails and names the file, and
/// the trace's name alone (the plan) would not have shown it.
#[test]
fn a_changed_trace_shows_as_a_changed_plan_input() {
    let lib = Scratch::new("test-command-trace");
    let trace = "SEQ 1000 1 c0 c0\n> 300\n< 2000\n";
    write(&lib.0, "traffic/traces/link.cvec", trace);
    write(
        &lib.0,
        "traffic/replay.exp",
        "experiment \"replay\" {\n  duration = 5s\n\n  traffic \"t\" {\n    vectors = trace(\"traces/link.cvec\")\n  }\n}\n",
    );
    assert_eq!(test_in(&lib.0, &["--accept"]).status.code(), Some(0));
    let snapshot = std::fs::read_to_string(lib.0.join("traffic/__snapshots__/replay.plan.json")).unwrap();
    assert!(
        snapshot.contains("\"data_files\": {\n    \"traces/link.cvec\": \""),
        "{snapshot}"
    );
    assert_eq!(test_in(&lib.0, &[]).status.code(), Some(0));

    write(&lib.0, "traffic/traces/link.cvec", &trace.replace("2000", "4000"));
    let changed = test_in(&lib.0, &[]);
    assert_eq!(changed.status.code(), Some(1), "{}", text(&changed));
    let out = stdout(&changed);
    assert!(
        out.contains("test traffic/replay.exp ... FAILED (plan changed)"),
        "{out}"
    );
    assert!(out.contains("  data_files.traces/link.cvec: \""), "{out}");
}
