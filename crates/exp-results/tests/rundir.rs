//! The run directory: creation, plan and manifest files, scratch, finish.
// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::time::{Duration, UNIX_EPOCH};

use exp_results::*;
use sha2::{Digest, Sha256};

fn plan() -> exp_plan::Plan {
    exp_plan::Plan {
        plan_version: exp_plan::PLAN_VERSION,
        compiler: "expc 0.1.0".into(),
        source: exp_plan::Source {
            root: "x.exp".into(),
            sha256: "00".repeat(32),
            files: Vec::new(),
        },
        experiment: exp_plan::Experiment {
            name: "fleet".into(),
            description: String::new(),
            seed: 7,
            duration_ns: Some(1_000_000_000),
            pause_ns: 0,
        },
        repeat: exp_plan::Repeat {
            max: 2,
            stop: None,
            order: exp_plan::Order::Sequential,
            until_decided: None,
        },
        parameters: vec![exp_plan::Parameter {
            name: "size".into(),
            ty: "size".into(),
            values: exp_plan::Values::Listed(
                [100, 200]
                    .map(|b| exp_plan::PointValue {
                        label: format!("{b}B"),
                        value: exp_plan::Value::Bytes(b),
                    })
                    .to_vec(),
            ),
        }],
        workloads: Vec::new(),
        monitor: None,
        claims: Vec::new(),
    }
}

#[test]
fn a_run_is_written_under_a_temporary_name_and_renamed() {
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "My fleet/v2", "20261121T183000Z-1a2b3c4d").unwrap();
    let parent = root.path().join("My_fleet_v2");
    assert_eq!(run.path(), parent.join(".20261121T183000Z-1a2b3c4d.partial"));
    assert_eq!(run.final_path(), parent.join("20261121T183000Z-1a2b3c4d"));
    assert!(run.tables_dir().is_dir());

    let sha = run.write_plan(&plan()).unwrap();
    assert_eq!(
        sha,
        plan_sha256(&plan()).unwrap(),
        "the run id can be made before the directory"
    );
    let bytes = fs::read(run.path().join("plan.json")).unwrap();
    let expected: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(sha, expected);
    assert_eq!(exp_plan::Plan::from_json(&bytes).unwrap(), plan());
    assert!(bytes.ends_with(b"}\n"), "formatted like `expc plan`");

    let scratch = run.scratch_dir("broker").unwrap();
    assert_eq!(scratch, run.path().join("scratch/broker"));
    fs::write(scratch.join("log"), b"x").unwrap();
    assert!(run.scratch_dir("../up").is_err());

    let done = run.finish().unwrap();
    assert_eq!(done, parent.join("20261121T183000Z-1a2b3c4d"));
    assert!(done.join("plan.json").is_file() && done.join("tables").is_dir());
    assert!(!done.join("scratch").exists(), "scratch is removed");
    assert!(!parent.join(".20261121T183000Z-1a2b3c4d.partial").exists());
}

#[test]
fn existing_runs_are_never_overwritten() {
    let root = tempfile::tempdir().unwrap();
    let first = RunDir::create(root.path(), "e", "r1").unwrap();
    // Still running (partial) …
    assert!(matches!(
        RunDir::create(root.path(), "e", "r1"),
        Err(ResultsError::RunExists { .. })
    ));
    first.finish().unwrap();
    // … or finished.
    assert!(matches!(
        RunDir::create(root.path(), "e", "r1"),
        Err(ResultsError::RunExists { .. })
    ));
    for bad in ["", ".hidden", "a/b", "trial=1", "x y"] {
        assert!(
            matches!(
                RunDir::create(root.path(), "e", bad),
                Err(ResultsError::InvalidName { .. })
            ),
            "{bad}"
        );
    }
}

#[test]
fn the_manifest_is_replaced_atomically() {
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "e", "r").unwrap();
    let mut manifest = common::manifest("e", "r");
    run.write_manifest(&mut manifest).unwrap();
    assert_eq!(Manifest::read(&run.path().join("manifest.json")).unwrap(), manifest);

    manifest.status = RunStatus::Interrupted;
    manifest.ended_at = Some("2026-11-21T18:31:00.000Z".into());
    manifest.ended_unix_ns = Some(1_795_285_860_000_000_000);
    manifest
        .tables
        .insert("mqtt_messages".into(), TableRecord { rows: 10, files: 2 });
    run.write_manifest(&mut manifest).unwrap();
    assert_eq!(
        Manifest::read(run.path()).unwrap(),
        manifest,
        "a directory means its manifest.json"
    );
    let names: Vec<String> = fs::read_dir(run.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.ends_with(".tmp")),
        "no temporary file left: {names:?}"
    );

    // Stable, readable field order.
    let text = fs::read_to_string(run.path().join("manifest.json")).unwrap();
    let order = [
        "\"manifest_version\": 1",
        "\"expc_version\"",
        "\"status\": \"interrupted\"",
        "\"started_at\"",
        "\"host\"",
        "\"tables\"",
    ];
    let positions: Vec<usize> = order.iter().map(|k| text.find(k).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text.contains("\"status\": \"complete\""), "trial status is snake_case");
}

#[test]
fn unsupported_manifests_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("manifest.json");
    fs::write(&path, br#"{"manifest_version": 2}"#).unwrap();
    assert!(matches!(
        Manifest::read(&path),
        Err(ResultsError::UnsupportedManifest { version: 2, .. })
    ));
    fs::write(&path, b"{ truncated").unwrap();
    assert!(matches!(Manifest::read(&path), Err(ResultsError::Json { .. })));
    assert!(matches!(
        Manifest::read(&root.path().join("missing.json")),
        Err(ResultsError::Io { .. })
    ));
}

#[test]
fn run_ids() {
    let t = UNIX_EPOCH + Duration::from_secs(1_795_285_800);
    assert_eq!(new_run_id(t, &"1a2b3c4d".repeat(8)), "20261121T183000Z-1a2b3c4d");
    let later = new_run_id(t + Duration::from_secs(1), "00");
    assert!(later > new_run_id(t, "ff"), "sortable by time first");
}

#[test]
fn a_manifest_from_a_plan() {
    let started = UNIX_EPOCH + Duration::from_millis(1_795_285_800_250);
    // Trials 1 and 2 of the plan's 4 (and 9, which it does not have).
    let mut manifest = Manifest::new(&plan(), [1, 2, 9], "r", "abc", started, common::manifest("e", "r").host);
    assert_eq!(
        (manifest.experiment.as_str(), manifest.seed, manifest.status),
        ("fleet", 7, RunStatus::Running)
    );
    assert_eq!(manifest.started_at, "2026-11-21T18:30:00.250Z");
    assert_eq!(manifest.started_unix_ns, 1_795_285_800_250_000_000);
    assert_eq!(
        manifest.spec,
        Some(SpecRecord {
            root: "x.exp".into(),
            sha256: "00".repeat(32)
        })
    );
    assert_eq!(
        manifest.options,
        OptionsRecord {
            time_scale: 1.0,
            trials_selected: None,
            forced: false,
            spec_dir: None,
            validity_bounds: None,
        }
    );
    let records: Vec<_> = manifest
        .trials
        .iter()
        .map(|t| (t.trial, t.point, t.repetition, t.seed, t.status))
        .collect();
    let seed = |label: &str| exp_plan::seeds::derive(7, label);
    assert_eq!(
        records,
        vec![
            (1, 0, 1, seed("trial/0/1"), TrialStatus::Planned),
            (2, 1, 0, seed("trial/1/0"), TrialStatus::Planned)
        ]
    );
    assert_eq!(
        manifest.trials[0].sweep,
        BTreeMap::from([("size".to_string(), "100B".to_string())])
    );
    assert_eq!(
        manifest.trials[1].sweep,
        BTreeMap::from([("size".to_string(), "200B".to_string())])
    );

    let summary = StoreSummary {
        tables: BTreeMap::from([("t".to_string(), TableRecord { rows: 5, files: 1 })]),
    };
    manifest.record_tables(&summary);
    manifest.finish(started + Duration::from_secs(60));
    assert_eq!(manifest.tables, summary.tables);
    assert_eq!(manifest.ended_at.as_deref(), Some("2026-11-21T18:31:00.250Z"));
    assert_eq!(manifest.ended_unix_ns, Some(1_795_285_860_250_000_000));
    assert_eq!(TrialStatus::Interrupted.as_str(), "interrupted");
    assert_eq!(RunStatus::Complete.as_str(), "complete");
    let json = serde_json::to_value(&manifest).unwrap();
    assert_eq!(json["trials"][0]["status"], TrialStatus::Planned.as_str());
}

/// The runner lock tells a running run from a crashed one, from outside:
/// held while the `RunDir` lives, free once it is dropped without
/// finishing (what a killed process leaves).
#[test]
fn the_runner_lock_tells_running_from_crashed() {
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "fleet", "20261121T183000Z-abcd").unwrap();
    let mut manifest = Manifest::new(
        &plan(),
        plan().trial_indices(),
        "20261121T183000Z-abcd",
        "00",
        UNIX_EPOCH,
        exp_host::facts(),
    );
    manifest.trials[0].status = TrialStatus::Running;
    run.write_manifest(&mut manifest).unwrap();
    let dir = run.path().to_path_buf();

    match runner::probe(&dir.join(LOCK_FILE)) {
        Some(runner::Runner::Running(info)) => assert_eq!(info.pid, std::process::id()),
        other => panic!("{other:?}"),
    }
    let view = open_run(&dir).unwrap();
    assert_eq!(view.manifest.status, RunStatus::Running);
    // A second writer is refused while the first holds the run.
    let refused = RunDir::reopen(&dir).map(|_| ()).unwrap_err();
    assert!(matches!(refused, ResultsError::RunLocked { .. }), "{refused}");
    assert!(
        refused.to_string().contains(&format!("pid {}", std::process::id())),
        "{refused}"
    );

    drop(run); // like a crash: not finished
    assert!(matches!(
        runner::probe(&dir.join(LOCK_FILE)),
        Some(runner::Runner::Gone(_))
    ));
    let view = open_run(&dir).unwrap();
    assert_eq!(view.manifest.status, RunStatus::Crashed);
    assert_eq!(view.manifest.trials[0].status, TrialStatus::Crashed);
    assert_eq!(
        Manifest::read(&dir).unwrap().status,
        RunStatus::Running,
        "readers never write"
    );

    // Taken over: locked again, and finished under its final name, lock gone.
    let again = RunDir::reopen(&dir).unwrap();
    assert!(matches!(
        runner::probe(&dir.join(LOCK_FILE)),
        Some(runner::Runner::Running(_))
    ));
    let finished = again.finish().unwrap();
    assert_eq!(finished, root.path().join("fleet/20261121T183000Z-abcd"));
    assert!(!finished.join(LOCK_FILE).exists());
    assert!(!finished.join("manifest.reserve").exists());
    // A finished run can be taken over too (it is moved back to `.partial`).
    let reopened = RunDir::reopen(&finished).unwrap();
    assert_eq!(reopened.path(), dir);
    assert!(!finished.exists());
}

/// An earlier attempt's files go aside, finished and unfinished; the
/// trial's places are empty for the next attempt.
#[test]
fn an_attempt_is_set_aside_not_deleted() {
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "fleet", "r1").unwrap();
    let store = Store::open(run.tables_dir(), StoreOptions::default()).unwrap();
    let schema = common::schema("events");
    store.sink(&schema, 0, 0).write(common::rows(&schema, 0, 10)).unwrap();
    store.sink(&schema, 1, 0).write(common::rows(&schema, 0, 3)).unwrap();
    store.finish_trial(0).unwrap();
    drop(store); // finishes trial 1 too
                 // A checkpoint a crash cut short: not data, not kept.
    let cut = run.tables_dir().join(".partial/events/trial=0");
    fs::create_dir_all(&cut).unwrap();
    fs::write(cut.join("part-0.open.parquet.tmp"), b"PAR1").unwrap();
    assert!(
        run.set_attempt_aside(5, 1, &["xml"]).unwrap().is_none(),
        "nothing of trial 5"
    );
    let moved = run.set_attempt_aside(0, 1, &["xml"]).unwrap().unwrap();
    assert_eq!(moved.dir, "attempts/trial=0/attempt-1");
    assert_eq!(moved.moved, 1, "the finished file; the cut write is not data");
    assert!(!run.tables_dir().join("events/trial=0").exists());
    assert!(!cut.exists(), "the emptied places are tidied");
    assert!(run.tables_dir().join("events/trial=1/part-0.parquet").exists());
    let kept = run
        .path()
        .join("attempts/trial=0/attempt-1/tables/events/part-0.parquet");
    assert_eq!(common::read(&kept).height(), 10);
    let (tables, unreadable) = run.count_tables();
    assert_eq!(
        tables["events"],
        TableRecord { rows: 3, files: 1 },
        "trial 1 alone is left"
    );
    assert!(unreadable.is_empty());
}

/// A split part sets aside its own files of a trial, never another part's.
#[test]
fn a_part_sets_aside_its_own_files_only() {
    let root = tempfile::tempdir().unwrap();
    let part1 = RunDir::create_shard(root.path(), "fleet", "r", 1, &agreement(PartMode::Split)).unwrap();
    let store = Store::open(part1.tables_dir(), StoreOptions::default()).unwrap();
    let schema = common::schema("events");
    store.sink(&schema, 0, 0).write(common::rows(&schema, 0, 4)).unwrap();
    store.sink(&schema, 0, 1).write(common::rows(&schema, 0, 6)).unwrap();
    drop(store);
    let moved = part1.set_attempt_aside(0, 1, &["xml"]).unwrap().unwrap();
    assert_eq!(moved.dir, "attempts/trial=0/attempt-1");
    let trial = part1.tables_dir().join("events/trial=0");
    assert_eq!(
        common::read(&trial.join("part-0.parquet")).height(),
        4,
        "part 0's file stays"
    );
    assert!(!trial.join("part-1.parquet").exists());
    let kept = part1
        .path()
        .join("attempts/trial=0/attempt-1/tables/events/part-1.parquet");
    assert_eq!(common::read(&kept).height(), 6);
}

/// What the parts of run `r` (2 of them, plan "cd") agree on.
fn agreement(mode: PartMode) -> PartsAgreement {
    PartsAgreement {
        mode,
        count: 2,
        plan_sha256: "cd".into(),
        time_scale: 1.0,
        trials_selected: None,
    }
}

/// A fragment of run `r` as shard or split part `index` of 2, its trials
/// ended with `status`, started at `start` (Unix ns).
fn fragment(
    root: &std::path::Path,
    index: u32,
    trials: std::ops::Range<u32>,
    split: bool,
    status: TrialStatus,
    start: u64,
) -> RunDir {
    let agreement = agreement(if split { PartMode::Split } else { PartMode::Shards });
    let run = RunDir::create_shard(root, "fleet", "r", index, &agreement).unwrap();
    let mut manifest = Manifest::new(&plan(), trials, "r", "cd", UNIX_EPOCH, exp_host::facts());
    let part = Some(ShardOf { index, count: 2 });
    if split {
        manifest.split = part;
    } else {
        manifest.shard = part;
    }
    for trial in &mut manifest.trials {
        trial.status = status;
        trial.started_at_unix_ns = Some(start);
        trial.ended_at_unix_ns = Some(start + 10);
    }
    manifest.status = RunStatus::Complete;
    run.write_manifest(&mut manifest).unwrap();
    run
}

#[test]
fn shards_merge_into_one_run_and_an_early_merge_lets_later_shards_start() {
    let root = tempfile::tempdir().unwrap();
    drop(fragment(root.path(), 0, 0..2, false, TrialStatus::Complete, 5));
    let dir = root.path().join("fleet/r");
    // Merged before shard 1 ran (a pending array task): incomplete, and
    // the merged manifest.json does not keep shard 1 from starting.
    let early = write_merged(&dir).unwrap().unwrap();
    assert_eq!(early.status, RunStatus::Incomplete);
    drop(fragment(root.path(), 1, 2..4, false, TrialStatus::Complete, 7));
    let merged = write_merged(&dir).unwrap().unwrap();
    assert_eq!(merged.status, RunStatus::Complete);
    let trials: Vec<u32> = merged.trials.iter().map(|t| t.trial).collect();
    assert_eq!(trials, [0, 1, 2, 3]);
    assert_eq!(merged.shards.len(), 2);
    // A run that is not sharded keeps its directory to itself.
    let whole = RunDir::create(root.path(), "fleet", "w").unwrap();
    let mut whole_manifest = Manifest::new(&plan(), 0..4, "w", "cd", UNIX_EPOCH, exp_host::facts());
    whole.write_manifest(&mut whole_manifest).unwrap();
    let whole_dir = whole.finish().unwrap();
    assert!(matches!(
        RunDir::create_shard(root.path(), "fleet", "w", 0, &agreement(PartMode::Shards)),
        Err(ResultsError::RunExists { .. })
    ));
    assert!(whole_dir.is_dir());
}

#[test]
fn split_parts_merge_each_trial_once_with_the_worse_status() {
    let root = tempfile::tempdir().unwrap();
    drop(fragment(root.path(), 0, 0..4, true, TrialStatus::Complete, 100));
    drop(fragment(root.path(), 1, 0..4, true, TrialStatus::Failed, 90));
    let merged = write_merged(&root.path().join("fleet/r")).unwrap().unwrap();
    assert_eq!(merged.trials.len(), 4, "each trial once, not once per part");
    for trial in &merged.trials {
        assert_eq!(trial.status, TrialStatus::Failed, "the worse of the parts");
        assert_eq!(trial.started_at_unix_ns, Some(90), "the earlier start");
        assert_eq!(trial.ended_at_unix_ns, Some(110), "the later end");
    }
    assert_eq!(merged.shards.len(), 2);
}

#[test]
fn a_run_without_a_manifest_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    assert!(matches!(open_run(root.path()), Err(ResultsError::Io { .. })));
}

#[test]
fn parts_that_ran_at_different_time_scales_do_not_merge_as_complete() {
    let root = tempfile::tempdir().unwrap();
    drop(fragment(root.path(), 0, 0..2, false, TrialStatus::Complete, 5));
    drop(fragment(root.path(), 1, 2..4, false, TrialStatus::Complete, 7));
    let dir = root.path().join("fleet/r");
    // Shard 1 as a run from before parts agreed would have written it.
    let path = dir.join("manifest-shard-1.json");
    let mut shard1 = Manifest::read(&path).unwrap();
    shard1.options.time_scale = 0.5;
    fs::write(&path, shard1.to_json().unwrap()).unwrap();
    let merged = write_merged(&dir).unwrap().unwrap();
    assert_eq!(merged.status, RunStatus::Failed);
    let error = merged.error.unwrap();
    assert!(
        error.contains("the parts disagree on --time-scale: part 0/2 1, part 1/2 0.5"),
        "{error}"
    );
}
