//! The processes of one sharded or split run must agree on how it is
//! divided, its plan and its options, or be refused before they write
//! anything; a merge names the parts that never ran, a shard's dry run
//! lists its own trials, and a split part that waits for the others says so.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use crate::common::{expc, signal, text, wait_for, Scratch};

/// Four short trials of an anomaly (`repeat = 4`): nothing to split but trials.
const SPEC: &str = r#"experiment "parts" {
  duration = 300ms
  repeat   = 4
  anomaly "cpu" {
    kind        = cpuoccupy
    utilization = 10%
  }
}
"#;

fn run(spec: &Path, out: &Path, args: &[&str]) -> Output {
    expc()
        .arg("run")
        .arg(spec)
        .arg("--out")
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn shards_of_one_run_must_agree_on_count_and_time_scale() {
    let scratch = Scratch::new("parts-shards");
    let spec = scratch.0.join("parts.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let out = scratch.0.join("runs");
    let first = run(&spec, &out, &["--run-id", "r", "--shard", "0/2"]);
    assert!(first.status.success(), "{}", text(&first));
    let dir = out.join("parts/r");
    let files_before = common::files(&dir).len();

    let other_count = run(&spec, &out, &["--run-id", "r", "--shard", "1/3"]);
    assert_eq!(other_count.status.code(), Some(1), "{}", text(&other_count));
    let said = String::from_utf8_lossy(&other_count.stderr);
    assert!(
        said.contains("--shard K/3 but the run's parts run --shard K/2"),
        "{said}"
    );

    let other_scale = run(&spec, &out, &["--run-id", "r", "--shard", "1/2", "--time-scale", "0.5"]);
    assert_eq!(other_scale.status.code(), Some(1), "{}", text(&other_scale));
    let said = String::from_utf8_lossy(&other_scale.stderr);
    assert!(said.contains("--time-scale 0.5, the run's parts at 1"), "{said}");

    let split_instead = run(&spec, &out, &["--run-id", "r", "--split", "1/2"]);
    assert_eq!(split_instead.status.code(), Some(1), "{}", text(&split_instead));
    assert!(String::from_utf8_lossy(&split_instead.stderr).contains("--split K/2 but the run's parts run --shard K/2"));
    assert!(
        !dir.join("manifest-shard-1.json").exists(),
        "a refused part leaves no fragment"
    );
    assert_eq!(common::files(&dir).len(), files_before, "a refused part writes nothing");
    let again = run(&spec, &out, &["--run-id", "r", "--shard", "0/2"]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        said.contains("`--shard 0/2` of this run has already started")
            && said.contains(&format!(
                "resume it with `expc run --resume {} --shard 0/2`",
                dir.display()
            )),
        "{said}"
    );

    // The shard that never ran is named, with its trials.
    let merge = expc().arg("run").arg("--merge").arg(&dir).output().unwrap();
    assert_eq!(merge.status.code(), Some(1), "{}", text(&merge));
    let said = String::from_utf8_lossy(&merge.stdout);
    assert!(said.contains("run r incomplete"), "{said}");
    let shard1 = shard_dry_run(&spec, "1/2");
    assert!(
        said.contains(&format!(
            "--shard 1/2 never started (no manifest-shard-1.json): its trials {shard1} have not run"
        )),
        "{said}"
    );

    // The right shard joins, and the run completes.
    let second = run(&spec, &out, &["--run-id", "r", "--shard", "1/2"]);
    assert!(second.status.success(), "{}", text(&second));
    let merge = expc().arg("run").arg("--merge").arg(&dir).output().unwrap();
    assert!(merge.status.success(), "{}", text(&merge));
    assert!(!String::from_utf8_lossy(&merge.stdout).contains("never started"));
}

/// The trials `expc run --dry-run --shard K/N` lists, as written (`0,2`).
fn shard_dry_run(spec: &Path, shard: &str) -> String {
    let output = expc()
        .arg("run")
        .arg(spec)
        .args(["--dry-run", "--shard", shard])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(stdout.contains("experiment \"parts\": 2 of 4 trials"), "{stdout}");
    let listed: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.split_once(": trials ").map(|(_, t)| t))
        .collect();
    assert_eq!(listed.len(), 1, "one point: {stdout}");
    listed[0].to_string()
}

#[test]
fn a_shards_dry_run_lists_its_own_trials() {
    let scratch = Scratch::new("parts-dry-run");
    let spec = scratch.0.join("parts.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let trials = |listed: String| -> Vec<u32> {
        listed
            .split(',')
            .flat_map(|part| match part.split_once('-') {
                Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<u32>>(),
                None => vec![part.parse().unwrap()],
            })
            .collect()
    };
    let (a, b) = (trials(shard_dry_run(&spec, "0/2")), trials(shard_dry_run(&spec, "1/2")));
    let mut all = [a.clone(), b.clone()].concat();
    all.sort_unstable();
    assert_eq!(
        all,
        [0, 1, 2, 3],
        "the shards' trials together, each once: {a:?} and {b:?}"
    );
}

#[test]
fn split_parts_must_agree_and_a_waiting_part_says_what_it_waits_for() {
    let scratch = Scratch::new("parts-split");
    let spec = scratch.0.join("parts.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let out = scratch.0.join("runs");
    let mut part0 = expc()
        .arg("run")
        .arg(&spec)
        .args(["--run-id", "s", "--split", "0/2", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(part0.stderr.take().unwrap());
    let waiting = wait_for("part 0 to say it waits", Duration::from_secs(60), || {
        let mut line = String::new();
        match stderr.read_line(&mut line) {
            Ok(0) | Err(_) => Some(None),
            Ok(_) => line.contains("waiting").then_some(Some(line)),
        }
    });
    let waiting = waiting.expect("part 0 ended before saying it waits");
    assert!(
        waiting.contains("trial #0: waiting") && waiting.contains("for split part 1/2 to be ready"),
        "{waiting}"
    );
    let refused = run(&spec, &out, &["--run-id", "s", "--split", "1/3"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--split K/3 but the run's parts run --split K/2"));
    signal(&part0, "INT");
    let status = wait_for("part 0 to stop", Duration::from_secs(30), || part0.try_wait().unwrap());
    assert_eq!(status.code(), Some(130), "interrupted while waiting");
}
