//! `expc report` says what it cannot report (issue 39): a table the plan
//! implies that completed trials have no rows of (a fleet run whose
//! `mqtt_messages` is gone used to exit 0 with no MQTT section and no
//! word), runs of another experiment compared metric by metric, and figures
//! that cannot be drawn. Each on runs made by the real `expc run`, then
//! damaged the way a user would, asserted from outside.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{expc, text, Scratch};

/// Two trials of a small fleet, with a monitor.
const FLEET: &str = r#"
experiment "warn-fleet" {
  duration = 1s
  repeat   = 2
  fleet "sensors" {
    devices = 4
    gap     = constant(100ms)
    payload = json(size = 128B, fields = [temperature])
  }
  monitor { interval = 200ms }
}
"#;

/// One trial of a small fleet, no monitor: fleet figures only.
const BARE_FLEET: &str = r#"
experiment "warn-bare-fleet" {
  duration = 1s
  fleet "sensors" {
    devices = 4
    gap     = constant(100ms)
  }
}
"#;

/// One trial of a CPU anomaly, with a monitor (MONITOR is replaced): its
/// figures are the monitor's; without one it has no table a figure is
/// drawn from.
const ANOMALY: &str = r#"
experiment "NAME" {
  duration = 1s
  anomaly "hog" {
    kind        = cpuoccupy
    utilization = 10%
    at          = 200ms
    for         = 500ms
  }
  MONITOR
}
"#;

fn anomaly(name: &str, monitor: bool) -> String {
    ANOMALY
        .replace("NAME", name)
        .replace("MONITOR", if monitor { "monitor { interval = 200ms }" } else { "" })
}

/// Runs `spec` under `scratch`; the run directory.
fn run(scratch: &Scratch, spec: &str, experiment: &str) -> PathBuf {
    let path = scratch.0.join(format!("{experiment}.exp"));
    std::fs::write(&path, spec).unwrap();
    let out = scratch.0.join("runs");
    // The anomaly must not disturb another test's fleet.
    let _alone = crate::common::one_at_a_time();
    let output = expc()
        .arg("run")
        .arg(&path)
        .args(["--run-id", "r", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    out.join(experiment).join("r")
}

fn report(args: &[&Path]) -> Output {
    expc().arg("report").args(args).output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_table_the_plan_implies_is_warned_about_when_missing() {
    let scratch = Scratch::new("report-missing-tables");
    let dir = run(&scratch, FLEET, "warn-fleet");
    let whole = report(&[&dir]);
    assert!(whole.status.success(), "{}", text(&whole));
    assert!(!stderr(&whole).contains("warning"), "an intact run: {}", text(&whole));
    assert!(
        String::from_utf8_lossy(&whole.stdout).contains("sensors"),
        "{}",
        text(&whole)
    );

    std::fs::remove_dir_all(dir.join("tables/mqtt_messages")).unwrap();
    std::fs::remove_dir_all(dir.join("tables/system_metrics/trial=1")).unwrap();
    let damaged = report(&[&dir]);
    assert_eq!(damaged.status.code(), Some(0), "still a report: {}", text(&damaged));
    let warnings = stderr(&damaged);
    assert!(
        warnings.contains(
            "fleet \"sensors\" writes `mqtt_messages` rows in every trial, but the run has no `mqtt_messages` table"
        ) && warnings.contains("the MQTT report leaves out trials 0–1"),
        "{}",
        text(&damaged)
    );
    assert!(
        warnings.contains("the monitor writes `system_metrics` rows in every trial, but trial 1 has none"),
        "{}",
        text(&damaged)
    );
    // The JSON report carries them too.
    let json = expc().arg("report").arg(&dir).arg("--json").output().unwrap();
    assert!(json.status.success(), "{}", text(&json));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let messages: Vec<String> = value["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect();
    assert!(messages.iter().any(|m| m.contains("`mqtt_messages`")), "{messages:?}");
    assert!(value.get("mqtt").is_none(), "no MQTT report without its table");

    // Without its plan, what the plan implies cannot be checked: said once.
    std::fs::remove_file(dir.join("plan.json")).unwrap();
    let planless = report(&[&dir]);
    assert_eq!(planless.status.code(), Some(0), "{}", text(&planless));
    let warnings = stderr(&planless);
    assert_eq!(
        warnings.matches("plan.json: cannot read the plan (").count(),
        1,
        "{}",
        text(&planless)
    );
    assert!(
        warnings.contains("the tables it implies are not checked"),
        "{}",
        text(&planless)
    );
}

#[test]
fn runs_of_another_experiment_and_figures_in_common_are_warned_about() {
    let scratch = Scratch::new("report-other-experiment");
    let fleet = run(&scratch, BARE_FLEET, "warn-bare-fleet");
    let monitored = run(&scratch, &anomaly("warn-anomaly", true), "warn-anomaly");
    let bare = run(&scratch, &anomaly("warn-bare-anomaly", false), "warn-bare-anomaly");

    let compared = report(&[&fleet, &monitored]);
    assert!(compared.status.success(), "{}", text(&compared));
    assert!(
        stderr(&compared).contains("although it ran experiment \"warn-anomaly\", not \"warn-bare-fleet\" and plan "),
        "{}",
        text(&compared)
    );
    // `--json` has no line saying nothing was compared: a warning does.
    let json = expc()
        .arg("report")
        .arg(&fleet)
        .arg(&monitored)
        .arg("--json")
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", text(&json));
    assert!(
        stderr(&json).contains("no metric at a point both runs have"),
        "{}",
        text(&json)
    );
    // Two runs of one plan compare without a word.
    let same = report(&[&fleet, &fleet]);
    assert!(same.status.success(), "{}", text(&same));
    assert!(!stderr(&same).contains("warning"), "{}", text(&same));

    // Overlaid figures are those every run has: these two have none.
    let page = scratch.0.join("both.html");
    let html = expc()
        .arg("report")
        .arg(&fleet)
        .arg(&monitored)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(html.status.success(), "{}", text(&html));
    let warnings = stderr(&html);
    assert!(
        warnings.contains("warning: no figures: runs are overlaid only in the figures every one has")
            && warnings.contains("warn-bare-fleet/r has fleet-")
            && warnings.contains("warn-anomaly/r has cpu-trial-0")
            && warnings.contains("(0 figures)"),
        "{}",
        text(&html)
    );
    assert!(page.is_file(), "the page is still written");

    // A run with no table a figure is drawn from says so.
    let alone = expc()
        .arg("report")
        .arg(&bare)
        .arg("--svg")
        .arg(scratch.0.join("svg"))
        .output()
        .unwrap();
    assert!(alone.status.success(), "{}", text(&alone));
    assert!(
        stderr(&alone).contains("warning: no figures: warn-bare-anomaly/r has no table a figure is drawn from"),
        "{}",
        text(&alone)
    );
}
