//! `expc run --split K/N` without a scheduler: two processes on this host
//! run parts 0 and 1 of every trial into one run directory. Together they
//! replay every connection of a traffic workload once (with the whole
//! window's connection ids) and write an xml workload's documents once; a
//! fleet split two and three ways has, row for row, the devices and
//! messages of the same trials run whole. (The fleet's split on Slurm's
//! `srun` is in slurm.rs.)

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::rows::assert_split_matches_whole;
use crate::common::{expc, text, trial_frames, u64_values, wait_for, Scratch};
use exp_results::manifest::{Manifest, RunStatus};

fn spec(corpus: &Path) -> String {
    format!(
        r#"experiment "split-local" {{
  seed     = 5
  duration = 3s

  traffic "web" {{
    vectors = synthetic(
      connections = 21,
      arrival = constant(50ms),
      epochs = 1,
      request = 300B,
      response = 20KB,
      server_time = constant(1ms),
      think_time = constant(5ms),
    )
    interval = 200ms
  }}

  xml "docs" {{
    corpus    = "{}"
    split_at  = "event"
    documents = 31
  }}
}}
"#,
        corpus.display()
    )
}

#[test]
fn two_parts_replay_every_connection_and_write_every_document_once() {
    let scratch = Scratch::new("split-local");
    let corpus = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../specs/xml/corpus");
    let spec_path = scratch.0.join("spec.exp");
    std::fs::write(&spec_path, spec(&corpus.canonicalize().unwrap())).unwrap();
    let out = scratch.0.join("runs");
    let mut parts: Vec<_> = (0..2)
        .map(|k| {
            Command::new(env!("CARGO_BIN_EXE_expc"))
                .arg("run")
                .arg(&spec_path)
                .args(["--run-id", "split", "--split", &format!("{k}/2"), "--out"])
                .arg(&out)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for part in &mut parts {
        let status = wait_for("the parts to end", Duration::from_secs(300), || {
            part.try_wait().unwrap()
        });
        assert!(status.success(), "a part failed: {status:?}");
    }
    let run = out.join("split-local/split");
    for k in 0..2 {
        let fragment = Manifest::read(&run.join(format!("manifest-shard-{k}.json"))).unwrap();
        assert_eq!(fragment.status, RunStatus::Complete, "part {k}: {fragment:?}");
    }

    let connections = trial_frames(&run, "traffic_connections", 0);
    assert_eq!(connections.len(), 2, "a part file each");
    let mut ids = u64_values(&connections, "connection");
    ids.sort_unstable();
    assert_eq!(
        ids,
        (0..21).collect::<Vec<u64>>(),
        "every connection once, with its own id"
    );
    assert!(
        connections.iter().all(|f| f.column("host").is_some()),
        "rows say their host"
    );

    let generated = trial_frames(&run, "xml_generation", 0);
    let documents: u64 = u64_values(&generated, "documents").iter().sum();
    assert_eq!(documents, 31, "the parts' shares make the whole");
}

/// A fleet of ten devices, QoS 1, five messages each, two trials.
const FLEET: &str = r#"experiment "split-fleet-local" {
  seed     = 11
  duration = 3s
  repeat   = 2

  fleet "plant" {
    devices   = 10
    qos       = 1
    gap       = exponential(mean = 100ms)
    messages  = 5
    subscribe = true
    payload   = json(size = 128B, fields = [temperature])
  }
}
"#;

/// Runs `spec` as `--split k/parts` for every k at once, into run `id`.
fn run_split(spec: &Path, out: &Path, id: &str, parts: u32) {
    let mut children: Vec<_> = (0..parts)
        .map(|k| {
            Command::new(env!("CARGO_BIN_EXE_expc"))
                .arg("run")
                .arg(spec)
                .args(["--run-id", id, "--split", &format!("{k}/{parts}"), "--out"])
                .arg(out)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in &mut children {
        wait_for("the parts to end", Duration::from_secs(120), || {
            child.try_wait().unwrap()
        });
    }
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "a part failed: {}", text(&output));
    }
}

#[test]
fn a_split_fleet_has_the_rows_of_the_whole_fleet() {
    let scratch = Scratch::new("split-fleet-rows");
    let spec = scratch.0.join("fleet.exp");
    std::fs::write(&spec, FLEET).unwrap();
    let out = scratch.0.join("runs");
    let whole = expc()
        .arg("run")
        .arg(&spec)
        .args(["--run-id", "whole", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(whole.status.success(), "{}", text(&whole));
    let whole = out.join("split-fleet-local/whole");
    for parts in [2, 3] {
        let id = format!("split{parts}");
        run_split(&spec, &out, &id, parts);
        let split = out.join("split-fleet-local").join(&id);
        for trial in 0..2 {
            let compared = assert_split_matches_whole(&whole, &split, trial);
            assert_eq!(compared, 50, "ten devices, five messages each");
            let statuses = trial_frames(&split, "mqtt_messages", trial)
                .iter()
                .flat_map(|f| {
                    let status = f.column("status").unwrap().str().unwrap();
                    status.iter().map(|s| s.unwrap().to_string()).collect::<Vec<_>>()
                })
                .collect::<Vec<_>>();
            assert!(
                statuses.iter().all(|s| s == "ok"),
                "{parts} parts, trial {trial}: every message acknowledged: {statuses:?}"
            );
            let acked = u64_values(&trial_frames(&split, "mqtt_messages", trial), "acked_ns");
            assert_eq!(acked.len(), 50, "every message has its ack time");
            // Each part audited its share; the merged record keeps every finding.
            let verdicts: usize = trial_frames(&split, "trials", trial)
                .iter()
                .map(|f| f.column("verdict").unwrap().str().unwrap().iter().flatten().count())
                .sum();
            assert_eq!(verdicts, parts as usize, "a verdict per part");
        }
        let manifest = exp_results::open_run(&split).unwrap().manifest;
        assert!(
            manifest.trials.iter().all(|t| t.validity.is_some()),
            "{parts} parts: every trial audited"
        );
    }
}

/// Four devices sending twenty messages each over 2 s.
const SLOW_FLEET: &str = r#"experiment "split-resume" {
  duration = 4s
  fleet "f" {
    devices  = 4
    gap      = constant(100ms)
    messages = 20
    payload  = json(size = 128B, fields = [temperature])
  }
}
"#;

/// Part 0 killed mid-trial, part 1 completes its share: resumed together,
/// both run the trial again (a share run without the others is not the
/// trial), meet at its start, and keep both earlier shares in `attempts/`.
#[test]
fn a_split_part_killed_mid_trial_resumes_with_the_others() {
    let scratch = Scratch::new("split-resume");
    let spec = scratch.0.join("fleet.exp");
    std::fs::write(&spec, SLOW_FLEET).unwrap();
    let out = scratch.0.join("runs");
    let start = |k: u32| {
        Command::new(env!("CARGO_BIN_EXE_expc"))
            .arg("run")
            .arg(&spec)
            .args(["--run-id", "k", "--split", &format!("{k}/2"), "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let (mut part0, mut part1) = (start(0), start(1));
    let run = out.join("split-resume/k");
    let messages = run.join("tables/.partial/mqtt_messages/trial=0");
    wait_for("part 0's first rows", Duration::from_secs(60), || {
        std::fs::read_dir(&messages)
            .ok()?
            .flatten()
            .any(|f| {
                let name = f.file_name().to_string_lossy().into_owned();
                name.starts_with("part-0.") && name.ends_with(".parquet")
            })
            .then_some(())
    });
    part0.kill().unwrap();
    part0.wait().unwrap();
    let status = wait_for("part 1 to end", Duration::from_secs(60), || part1.try_wait().unwrap());
    assert!(status.success(), "part 1 completes its share: {status:?}");

    let mut resumed: Vec<_> = (0..2)
        .map(|k| {
            Command::new("timeout")
                .args(["120", env!("CARGO_BIN_EXE_expc"), "run", "--resume"])
                .arg(&run)
                .args(["--split", &format!("{k}/2")])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in &mut resumed {
        wait_for("the resumed parts", Duration::from_secs(150), || {
            child.try_wait().unwrap()
        });
    }
    for child in resumed {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "a resumed part: {}", text(&output));
    }
    let merge = expc().arg("run").arg("--merge").arg(&run).output().unwrap();
    assert!(merge.status.success(), "{}", text(&merge));
    let frames = trial_frames(&run, "mqtt_messages", 0);
    assert_eq!(frames.len(), 2, "a file per part");
    let mut devices = u64_values(&frames, "device");
    devices.sort_unstable();
    devices.dedup();
    assert_eq!(devices, [0, 1, 2, 3]);
    assert_eq!(frames.iter().map(|f| f.height()).sum::<usize>(), 80, "4 devices × 20");
    let attempt = run.join("attempts/trial=0/attempt-1");
    assert!(
        attempt.join("tables/mqtt_messages/part-1.parquet").is_file(),
        "part 1's complete share is kept"
    );
    let cut = common::files(&attempt.join("partial/mqtt_messages"));
    assert!(
        cut.iter()
            .any(|f| f.file_name().unwrap().to_string_lossy().starts_with("part-0.")),
        "part 0's checkpoint is kept: {cut:?}"
    );
}
