//! `expc run --split K/N` without a scheduler: two processes on this host
//! run parts 0 and 1 of every trial into one run directory. Together they
//! replay every connection of a traffic workload once (with the whole
//! window's connection ids) and write an xml workload's documents once.
//! (The fleet's split, on Slurm's `srun`, is in slurm.rs.)

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{read_parquet, Scratch};
use exp_results::manifest::{Manifest, RunStatus};
use polars::prelude::DataFrame;

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

fn frames(run: &Path, table: &str) -> Vec<DataFrame> {
    let dir = run.join("tables").join(table).join("trial=0");
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    parts.sort();
    parts.iter().map(|p| read_parquet(p)).collect()
}

#[test]
fn two_parts_replay_every_connection_and_write_every_document_once() {
    let scratch = Scratch::new("split-local");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../specs/xml/corpus");
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
    let started = Instant::now();
    for part in &mut parts {
        loop {
            if let Some(status) = part.try_wait().unwrap() {
                assert!(status.success(), "a part failed: {status:?}");
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(300), "the parts did not end");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let run = out.join("split-local/split");
    for k in 0..2 {
        let fragment = Manifest::read(&run.join(format!("manifest-shard-{k}.json"))).unwrap();
        assert_eq!(fragment.status, RunStatus::Complete, "part {k}: {fragment:?}");
    }

    let connections = frames(&run, "traffic_connections");
    assert_eq!(connections.len(), 2, "a part file each");
    let mut ids: Vec<u64> = connections
        .iter()
        .flat_map(|f| {
            f.column("connection")
                .unwrap()
                .u64()
                .unwrap()
                .iter()
                .flatten()
                .collect::<Vec<_>>()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        (0..21).collect::<Vec<u64>>(),
        "every connection once, with its own id"
    );
    assert!(
        connections.iter().all(|f| f.column("host").is_ok()),
        "rows say their host"
    );

    let generated = frames(&run, "xml_generation");
    let documents: u64 = generated
        .iter()
        .flat_map(|f| {
            f.column("documents")
                .unwrap()
                .u64()
                .unwrap()
                .iter()
                .flatten()
                .collect::<Vec<_>>()
        })
        .sum();
    assert_eq!(documents, 31, "the parts' shares make the whole");
}
