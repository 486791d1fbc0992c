//! Every anomaly spec of the library runs end to end, shortened with
//! `--time-scale 0.01` (a 17 min trial takes 10 s): all trials complete and
//! every table reads back.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::Command;

use exp_results::manifest::{Manifest, RunStatus, TrialStatus};
use exp_results::{open_run, summarize};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run_spec(relative: &str) {
    let out = std::env::temp_dir().join(format!(
        "expc-spec-run-{}-{}",
        relative.replace('/', "_"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_expc"))
        .current_dir(repo_root())
        .args(["run", relative, "--time-scale", "0.01", "--out"])
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
    assert!(
        manifest.trials.iter().all(|t| t.status == TrialStatus::Complete),
        "{relative}"
    );
    let summary = summarize(&open_run(&dir).unwrap()).unwrap();
    assert!(summary.warnings.is_empty(), "{relative}: {:?}", summary.warnings);
    let timeline: u64 = summary
        .tables
        .iter()
        .filter(|t| t.table == "anomaly_timeline")
        .flat_map(|t| &t.trials)
        .map(|t| t.rows)
        .sum();
    assert!(
        timeline as usize >= manifest.trials.len(),
        "{relative}: ground truth for every trial"
    );
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

/// Every anomaly spec is covered by a test above.
#[test]
fn every_anomaly_spec_is_run() {
    let mut specs: Vec<String> = std::fs::read_dir(repo_root().join("specs/anomaly"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".exp"))
        .collect();
    specs.sort();
    assert_eq!(specs, ["diagnosis-dataset.exp", "intensity-sweep.exp"]);
}
