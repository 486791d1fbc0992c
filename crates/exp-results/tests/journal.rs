//! The manifest's journal: trial and point records change by appending a
//! line, readers see them, and a crash at any moment leaves a manifest that
//! reads as the latest records written.
// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::io::Write;

use exp_results::manifest::{PointRecord, TrialStatus};
use exp_results::{Manifest, RunDir};

/// A manifest of two planned trials, written whole in a new run (in a
/// directory removed when the first value is dropped).
fn started_run() -> (tempfile::TempDir, RunDir, Manifest) {
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "e", "r").unwrap();
    let mut manifest = common::manifest("e", "r");
    let mut second = manifest.trials[0].clone();
    second.trial = 1;
    manifest.trials.push(second);
    for trial in &mut manifest.trials {
        trial.status = TrialStatus::Planned;
    }
    run.write_manifest(&mut manifest).unwrap();
    (root, run, manifest)
}

#[test]
fn records_reach_readers_without_rewriting_the_manifest() {
    let (_root, run, mut manifest) = started_run();
    let file = run.path().join("manifest.json");
    let written = fs::read(&file).unwrap();

    manifest.trials[1].status = TrialStatus::Running;
    run.record_trial(&manifest.trials[1]).unwrap();
    manifest.trials[1].status = TrialStatus::Complete;
    manifest.trials[1].metrics.insert("rows".into(), 3.0);
    run.record_trial(&manifest.trials[1]).unwrap();
    let point = PointRecord {
        point: 0,
        repetitions_run: 2,
        stop_reason: None,
    };
    run.record_point(&point).unwrap();
    manifest.points = vec![point];

    assert_eq!(fs::read(&file).unwrap(), written, "the manifest itself is untouched");
    let read = Manifest::read(run.path()).unwrap();
    assert_eq!(read.journal_seq, 3);
    manifest.journal_seq = 3;
    assert_eq!(read, manifest);
}

#[test]
fn a_torn_last_line_is_ignored() {
    let (_root, run, mut manifest) = started_run();
    manifest.trials[0].status = TrialStatus::Running;
    run.record_trial(&manifest.trials[0]).unwrap();
    manifest.journal_seq = 1;

    // What a process killed in the middle of its next append leaves.
    let journal = run.path().join("manifest.journal");
    let mut file = fs::OpenOptions::new().append(true).open(&journal).unwrap();
    file.write_all(br#"{"seq":2,"trial":{"trial":0,"point":0,"rep"#)
        .unwrap();
    assert_eq!(Manifest::read(run.path()).unwrap(), manifest);
}

#[test]
fn lines_left_behind_by_a_whole_write_are_skipped() {
    let (_root, run, mut manifest) = started_run();
    manifest.trials[0].status = TrialStatus::Running;
    run.record_trial(&manifest.trials[0]).unwrap();
    let journal = run.path().join("manifest.journal");
    let lines = fs::read(&journal).unwrap();

    manifest.trials[0].status = TrialStatus::Failed;
    run.write_manifest(&mut manifest).unwrap();
    assert!(!journal.exists(), "a whole write empties the journal");
    // A crash between the manifest's rename and the journal's removal.
    fs::write(&journal, lines).unwrap();
    assert_eq!(
        Manifest::read(run.path()).unwrap().trials[0].status,
        TrialStatus::Failed,
        "the older line does not undo the manifest"
    );
}

#[test]
fn a_resumed_run_numbers_its_lines_after_the_crashed_runs() {
    let (_root, run, mut manifest) = started_run();
    manifest.trials[0].status = TrialStatus::Running;
    run.record_trial(&manifest.trials[0]).unwrap();
    let dir = run.path().to_path_buf();
    drop(run); // the runner dies: its journal stays

    let resumed = RunDir::reopen(&dir).unwrap();
    let mut manifest = Manifest::read(resumed.path()).unwrap();
    assert_eq!(manifest.trials[0].status, TrialStatus::Running);
    manifest.trials[0].status = TrialStatus::Planned;
    resumed.write_manifest(&mut manifest).unwrap();
    manifest.trials[0].status = TrialStatus::Complete;
    resumed.record_trial(&manifest.trials[0]).unwrap();

    let read = Manifest::read(resumed.path()).unwrap();
    assert_eq!(read.trials[0].status, TrialStatus::Complete);
    assert_eq!(read.journal_seq, 2);
}
