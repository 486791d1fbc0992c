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
        repeat: exp_plan::Repeat { max: 1, stop: None },
        parameters: vec![exp_plan::Parameter {
            name: "size".into(),
            ty: "size".into(),
        }],
        points: vec![exp_plan::Point {
            index: 0,
            values: BTreeMap::from([(
                "size".to_string(),
                exp_plan::PointValue {
                    label: "100B".into(),
                    value: exp_plan::Value::Bytes(100),
                },
            )]),
            workloads: Vec::new(),
            monitor: None,
        }],
        trials: vec![
            exp_plan::Trial {
                trial: 0,
                point: 0,
                repetition: 0,
                seed: 11,
                seeds: BTreeMap::new(),
            },
            exp_plan::Trial {
                trial: 1,
                point: 0,
                repetition: 1,
                seed: 12,
                seeds: BTreeMap::new(),
            },
        ],
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
    assert_eq!(serde_json::from_slice::<exp_plan::Plan>(&bytes).unwrap(), plan());
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
    run.write_manifest(&manifest).unwrap();
    assert_eq!(Manifest::read(&run.path().join("manifest.json")).unwrap(), manifest);

    manifest.status = RunStatus::Interrupted;
    manifest.ended_at = Some("2026-11-21T18:31:00.000Z".into());
    manifest.ended_unix_ns = Some(1_795_285_860_000_000_000);
    manifest
        .tables
        .insert("mqtt_messages".into(), TableRecord { rows: 10, files: 2 });
    run.write_manifest(&manifest).unwrap();
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
    let mut manifest = Manifest::new(&plan(), "r", "abc", started, common::manifest("e", "r").host);
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
        RunOptions {
            time_scale: 1.0,
            trials_selected: None,
            forced: false
        }
    );
    assert_eq!(manifest.trials.len(), 2);
    let second = &manifest.trials[1];
    assert_eq!(
        (second.trial, second.repetition, second.seed, second.status),
        (1, 1, 12, TrialStatus::Planned)
    );
    assert_eq!(second.sweep, BTreeMap::from([("size".to_string(), "100B".to_string())]));

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
