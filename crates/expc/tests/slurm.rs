//! `expc slurm` on a real single-node Slurm (Debian's slurmctld, slurmd and
//! munge) that the test starts on free ports and stops (slurm/cluster.sh):
//! a study as a job array of trial shards, merged into one run that reads
//! like a local run of the same plan, and a fleet split across two `srun`
//! tasks that starts together and has, row for row, the devices and
//! messages of the same plan run whole.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::rows::assert_split_matches_whole;
use crate::common::{expc, measured_rows_by_trial, text, trial_frames, u64_values, Scratch};
use exp_parquet::Frame;
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};

/// A cluster of one node, stopped (daemons killed, files removed) on drop.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

impl Cluster {
    fn up(dir: PathBuf) -> Cluster {
        let free = || {
            std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        };
        let (ctld, slurmd) = (free(), free());
        let output = Command::new("timeout")
            .arg("120")
            .arg(script())
            .arg("up")
            .arg(&dir)
            .arg(ctld.to_string())
            .arg(slurmd.to_string())
            .output()
            .unwrap();
        let cluster = Cluster {
            conf: PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()),
            dir,
        };
        assert!(output.status.success(), "the cluster did not start: {}", text(&output));
        cluster
    }

    /// `expc slurm` with this cluster's configuration, stopped after five
    /// minutes whatever happens (a job that never runs fails the test).
    fn expc_slurm(&self) -> Command {
        let mut command = Command::new("timeout");
        command
            .arg("300")
            .arg(env!("CARGO_BIN_EXE_expc"))
            .arg("slurm")
            .env("SLURM_CONF", &self.conf);
        command
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("down").arg(&self.dir).status();
    }
}

fn script() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("tests/slurm/cluster.sh")
}

/// Four trials: two fleet sizes, two repetitions; every device sends five
/// messages, so the message and device tables have exact row counts.
const STUDY: &str = r#"
experiment "slurm-study" {
  duration = 3s
  repeat   = 2
  sweep {
    n = [4, 6]
  }
  fleet "plant" {
    devices  = n
    gap      = constant(200ms)
    messages = 5
    payload  = json(size = 128B, fields = [temperature])
  }
  monitor { interval = 500ms }
}
"#;

/// One fleet of ten devices, split across two tasks.
const SPLIT: &str = r#"
experiment "split-fleet" {
  duration = 3s
  repeat   = 2
  fleet "plant" {
    devices  = 10
    gap      = constant(200ms)
    messages = 5
    payload  = json(size = 128B, fields = [temperature])
  }
  monitor { interval = 500ms }
}
"#;

#[test]
#[cfg_attr(
    not(slurm),
    ignore = "needs root and Debian's slurmctld, slurmd, slurm-client and munge"
)]
fn a_study_runs_on_slurm_as_shards_and_split_across_tasks() {
    let scratch = Scratch::new("slurm");
    let cluster = Cluster::up(scratch.0.join("cluster"));
    let runs = scratch.0.join("runs");

    // A job array of four shards, merged: the same run as a local one.
    let spec = scratch.0.join("study.exp");
    std::fs::write(&spec, STUDY).unwrap();
    let job = cluster
        .expc_slurm()
        .arg(&spec)
        .args(["--shards", "4", "--run-id", "sharded", "--submit", "--wait", "--out"])
        .arg(&runs)
        .output()
        .unwrap();
    assert!(job.status.success(), "{}", text(&job));
    let sharded = runs.join("slurm-study/sharded");
    let merged = Manifest::read(&sharded.join("manifest.json")).unwrap();
    assert_eq!(merged.status, RunStatus::Complete, "{merged:?}");
    assert_eq!(merged.shards.len(), 4, "every shard wrote its fragment");
    let local = expc()
        .arg("run")
        .arg(sharded.join("plan.json"))
        .args(["--run-id", "local", "--out"])
        .arg(&runs)
        .output()
        .unwrap();
    assert!(local.status.success(), "{}", text(&local));
    let local_dir = runs.join("slurm-study/local");
    let alone = Manifest::read(&local_dir.join("manifest.json")).unwrap();
    assert_eq!(merged.plan_sha256, alone.plan_sha256);
    let trials = |m: &Manifest| {
        m.trials
            .iter()
            .map(|t| (t.trial, t.point, t.repetition, t.seed, t.status))
            .collect::<Vec<_>>()
    };
    assert_eq!(trials(&merged), trials(&alone));
    assert!(merged.trials.iter().all(|t| t.status == TrialStatus::Complete));
    let (sharded_rows, local_rows) = (measured_rows_by_trial(&sharded), measured_rows_by_trial(&local_dir));
    assert_eq!(
        sharded_rows.keys().collect::<Vec<_>>(),
        local_rows.keys().collect::<Vec<_>>(),
        "the same tables and trials"
    );
    for (key, &count) in &sharded_rows {
        let expected = local_rows[key];
        if key.0.starts_with("mqtt_") || key.0 == "trials" {
            assert_eq!(count, expected, "{key:?}: devices × messages, as planned");
        } else {
            // Monitor samples: as many as the trial's length gives, give or take.
            assert!(count.abs_diff(expected) <= 2, "{key:?}: {count} against {expected}");
        }
    }
    let report = expc().arg("report").arg(&sharded).arg("--json").output().unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(report["status"], "complete");

    split_fleet(&cluster, &scratch.0, &runs);
}

/// One fleet split across two srun tasks on the node: every device once,
/// the parts started together, and the rows of the plan run whole.
fn split_fleet(cluster: &Cluster, scratch: &Path, runs: &Path) {
    let spec = scratch.join("split.exp");
    std::fs::write(&spec, SPLIT).unwrap();
    let job = cluster
        .expc_slurm()
        .arg(&spec)
        .args([
            "--split", "2", "--nodes", "1", "--run-id", "split", "--submit", "--wait", "--out",
        ])
        .arg(runs)
        .output()
        .unwrap();
    assert!(job.status.success(), "{}", text(&job));
    let split = runs.join("split-fleet/split");
    let parts: Vec<Manifest> = (0..2)
        .map(|k| Manifest::read(&split.join(format!("manifest-shard-{k}.json"))).unwrap())
        .collect();
    for trial in 0..2u32 {
        let mut devices = u64_values(&trial_frames(&split, "mqtt_devices", trial), "device");
        devices.sort_unstable();
        assert_eq!(
            devices,
            (0..10).collect::<Vec<u64>>(),
            "trial {trial}: every device once"
        );
        let messages = trial_frames(&split, "mqtt_messages", trial);
        assert_eq!(messages.len(), 2, "one part file per task");
        for frame in &messages {
            let hosts = frame.column("host").unwrap().str().unwrap();
            assert!(
                hosts.iter().all(|h| h.is_some_and(|h| !h.is_empty())),
                "every row names its host"
            );
        }
        let sent: usize = messages.iter().map(Frame::height).sum();
        assert_eq!(sent, 50, "five messages from each of ten devices");
        let starts: Vec<u64> = parts
            .iter()
            .map(|m| m.trials[trial as usize].started_at_unix_ns.unwrap())
            .collect();
        let skew = starts[0].abs_diff(starts[1]);
        eprintln!("trial {trial}: the split parts started {skew} ns apart");
        assert!(skew < 50_000_000, "trial {trial}: the parts started {skew} ns apart");
    }
    let merged = Manifest::read(&split.join("manifest.json")).unwrap();
    assert_eq!(merged.status, RunStatus::Complete);
    assert_eq!(merged.trials.len(), 2, "each trial once in the merged manifest");

    // Row for row the same devices and messages as the plan run whole here.
    let whole = expc()
        .arg("run")
        .arg(split.join("plan.json"))
        .args(["--run-id", "whole", "--out"])
        .arg(runs)
        .output()
        .unwrap();
    assert!(whole.status.success(), "{}", text(&whole));
    for trial in 0..2u32 {
        let compared = assert_split_matches_whole(&runs.join("split-fleet/whole"), &split, trial);
        assert_eq!(compared, 50, "trial {trial}");
    }
}
