//! Every anomaly spec and every IoT spec of the library run end to
//! end, shortened with `--time-scale` (0.01: a 17 min trial takes 10 s) and,
//! for specs with hundreds of trials, `--trials` (one repetition of every
//! sweep point): all selected trials complete and every table reads back.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::Command;

use exp_results::manifest::{Manifest, RunStatus, TrialStatus};
use exp_results::{open_run, summarize};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run_spec(relative: &str) {
    run_spec_with(relative, "0.01", None, "anomaly_timeline");
}

/// Runs `relative` with `--time-scale scale` (and `--trials` if given) and
/// checks that every selected trial completed and wrote rows to `table`.
fn run_spec_with(relative: &str, scale: &str, trials: Option<&str>, table: &str) {
    let out = std::env::temp_dir().join(format!(
        "expc-spec-run-{}-{}",
        relative.replace('/', "_"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_expc"))
        .current_dir(repo_root())
        .args(["run", relative, "--time-scale", scale])
        .args(trials.map(|t| ["--trials", t]).into_iter().flatten())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{relative}:\n{text}");
    let experiment = std::fs::read_dir(&out).unwrap().flatten().next().unwrap().path();
    let dir = std::fs::read_dir(experiment).unwrap().flatten().next().unwrap().path();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete, "{relative}");
    let ran = manifest
        .trials
        .iter()
        .filter(|t| t.status != TrialStatus::Skipped)
        .count();
    assert!(
        manifest
            .trials
            .iter()
            .all(|t| t.status == TrialStatus::Complete || (trials.is_some() && t.status == TrialStatus::Skipped)),
        "{relative}"
    );
    let summary = summarize(&open_run(&dir).unwrap()).unwrap();
    assert!(summary.warnings.is_empty(), "{relative}: {:?}", summary.warnings);
    let with_rows = summary
        .tables
        .iter()
        .filter(|t| t.table == table)
        .flat_map(|t| &t.trials)
        .filter(|t| t.rows > 0)
        .count();
    assert_eq!(with_rows, ran, "{relative}: {table} rows for every trial that ran");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn diagnosis_dataset_runs() {
    run_spec("specs/anomaly/diagnosis-dataset.exp");
}

#[test]
fn intensity_sweep_runs() {
    run_spec("specs/anomaly/intensity-sweep.exp");
}

/// 7 sizes × 30 repetitions: one repetition of each size (point-major trial
/// numbers), 2 min trials at 0.01 → 1.2 s each, ~12 s in all.
#[test]
fn message_size_runs() {
    run_spec_with(
        "specs/iot/message-size.exp",
        "0.01",
        Some("0,30,60,90,120,150,180"),
        "mqtt_messages",
    );
}

/// 12 gap distributions × 10 repetitions: one repetition of each, 5 min
/// trials at 0.005 → 1.5 s each, ~20 s in all. Gaps are not scaled, so the
/// 1 s-median points send only a message or two per device.
#[test]
fn gap_sweep_runs() {
    run_spec_with(
        "specs/iot/gap-sweep.exp",
        "0.005",
        Some("0,10,20,30,40,50,60,70,80,90,100,110"),
        "mqtt_messages",
    );
}

/// 4 loads × 5 repetitions: one repetition of each, 10 min trials at 0.005
/// → 3 s each. The connect ramp (100/s) is not scaled: 200 devices take 2 s
/// to connect, and sending starts once they have.
#[test]
fn hub_throttling_runs() {
    run_spec_with(
        "specs/iot/hub-throttling.exp",
        "0.005",
        Some("0,5,10,15"),
        "mqtt_messages",
    );
}

/// 4 fleet sizes × 10 repetitions: the smallest fleet only (1,000 devices ×
/// 5 msg/s), 3 min at 0.04 → 7.2 s, of which the unscaled connect ramp
/// (400/s) takes 2.5 s. The larger fleets (up to 20,000 msg/s) are what
/// `bench/fleet-scale.sh` measures in release builds; next to a debug build
/// and the other tests on a 2-core CI machine they would only measure the
/// machine being full.
#[test]
fn fleet_scaling_runs() {
    run_spec_with("specs/iot/fleet-scaling.exp", "0.04", Some("0"), "mqtt_messages");
}

/// Every IoT spec is covered by a test above.
#[test]
fn every_iot_spec_is_run() {
    assert_eq!(
        specs_in("specs/iot"),
        [
            "fleet-scaling.exp",
            "gap-sweep.exp",
            "hub-throttling.exp",
            "message-size.exp"
        ]
    );
}

/// Every anomaly spec is covered by a test above.
#[test]
fn every_anomaly_spec_is_run() {
    assert_eq!(
        specs_in("specs/anomaly"),
        ["diagnosis-dataset.exp", "intensity-sweep.exp"]
    );
}

/// The `.exp` files of a spec-library folder, sorted.
fn specs_in(dir: &str) -> Vec<String> {
    let mut specs: Vec<String> = std::fs::read_dir(repo_root().join(dir))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".exp"))
        .collect();
    specs.sort();
    specs
}
