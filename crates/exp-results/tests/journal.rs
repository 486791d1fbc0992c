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

/// The journal of [`started_run`] after trial 0 started and completed and
/// trial 1 started (lines 1–3), with `edit` applied to its lines; returns
/// the manifest read back and its warnings' messages.
fn read_edited(edit: impl FnOnce(&mut Vec<String>)) -> (Manifest, Vec<String>) {
    let (_root, run, mut manifest) = started_run();
    manifest.trials[0].status = TrialStatus::Running;
    run.record_trial(&manifest.trials[0]).unwrap();
    manifest.trials[0].status = TrialStatus::Complete;
    run.record_trial(&manifest.trials[0]).unwrap();
    manifest.trials[1].status = TrialStatus::Running;
    run.record_trial(&manifest.trials[1]).unwrap();
    let journal = run.path().join("manifest.journal");
    let mut lines: Vec<String> = fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    edit(&mut lines);
    fs::write(&journal, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let mut read = Manifest::read(run.path()).unwrap();
    let warnings = std::mem::take(&mut read.read_warnings)
        .into_iter()
        .map(|w| {
            assert_eq!(w.path, journal);
            w.message
        })
        .collect();
    (read, warnings)
}

fn statuses(manifest: &Manifest) -> Vec<TrialStatus> {
    manifest.trials.iter().map(|t| t.status).collect()
}

#[test]
fn a_line_that_cannot_be_applied_is_skipped_with_a_warning_and_the_rest_applied() {
    use TrialStatus::*;
    let (read, warnings) = read_edited(|_| {});
    assert_eq!((statuses(&read), read.journal_seq), (vec![Complete, Running], 3));
    assert!(warnings.is_empty());

    // Garbage first: later lines still count (the crashed trial 1 is still
    // seen running, so its files are set aside on resume).
    let (read, warnings) = read_edited(|l| l.insert(0, "garbage{{{".into()));
    assert_eq!(statuses(&read), [Complete, Running]);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].starts_with("line 1: not a journal line"), "{warnings:?}");

    let (read, warnings) = read_edited(|l| l.insert(2, "\u{0}\u{1} binary".into()));
    assert_eq!(statuses(&read), [Complete, Running]);
    assert!(warnings[0].starts_with("line 3: not a journal line"), "{warnings:?}");

    // Valid JSON of another shape, an empty change, a change of two.
    let trial = serde_json::to_string(&read.trials[0]).unwrap();
    let point = r#"{"point":0,"repetitions_run":1,"stop_reason":null}"#;
    let (read, warnings) = read_edited(|l| {
        l.insert(0, r#"{"seq":1,"hello":"world"}"#.into());
        l.insert(0, "[1,2,3]".into());
        l.push(r#"{"seq":9}"#.into());
        l.push(format!(r#"{{"seq":10,"trial":{trial},"point":{point}}}"#));
    });
    assert_eq!(statuses(&read), [Complete, Running]);
    assert_eq!(read.journal_seq, 3);
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(warnings[1].contains("unknown field `hello`"), "{warnings:?}");
    assert!(warnings[2].contains("changes one trial or one point"), "{warnings:?}");
}

#[test]
fn lines_about_trials_the_manifest_does_not_list_are_skipped() {
    use TrialStatus::*;
    let edit_trial = |l: &mut Vec<String>, change: &dyn Fn(&mut serde_json::Value)| {
        let mut line: serde_json::Value = serde_json::from_str(&l[2]).unwrap();
        change(&mut line);
        line["seq"] = 4.into();
        line["trial"]["status"] = "failed".into();
        l.push(line.to_string());
    };
    let (read, warnings) = read_edited(|l| edit_trial(l, &|v| v["trial"]["trial"] = 99.into()));
    assert_eq!(read.trials.len(), 2, "no record made up for trial 99");
    assert_eq!(statuses(&read), [Complete, Running]);
    assert_eq!(
        warnings,
        ["line 4: trial 99 is not one of the manifest's trials; skipped"]
    );

    let (read, warnings) = read_edited(|l| edit_trial(l, &|v| v["trial"]["seed"] = 1.into()));
    assert_eq!(statuses(&read), [Complete, Running]);
    assert!(
        warnings[0].contains("another point, repetition or seed"),
        "{warnings:?}"
    );

    let (read, warnings) = read_edited(|l| {
        l.push(r#"{"seq":4,"point":{"point":7,"repetitions_run":1,"stop_reason":null}}"#.into());
    });
    assert!(read.points.iter().all(|p| p.point != 7));
    assert_eq!(warnings, ["line 4: point 7 has no trial in the manifest; skipped"]);
}

#[test]
fn repeated_or_reordered_lines_never_undo_later_ones() {
    use TrialStatus::*;
    // Trial 0's `running` line again after its `complete` one.
    let (read, warnings) = read_edited(|l| {
        let first = l[0].clone();
        l.push(first);
    });
    assert_eq!(statuses(&read), [Complete, Running]);
    assert_eq!(read.journal_seq, 3);
    assert_eq!(
        warnings,
        ["line 4: seq 1 is not after the line before it (seq 3); skipped"]
    );

    // An empty journal, and blank lines, say nothing.
    let (read, warnings) = read_edited(Vec::clear);
    assert_eq!(statuses(&read), [Planned, Planned], "the manifest as written whole");
    assert!(warnings.is_empty());
    let (read, warnings) = read_edited(|l| l.insert(1, String::new()));
    assert_eq!(statuses(&read), [Complete, Running]);
    assert!(warnings.is_empty());
}
