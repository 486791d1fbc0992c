//! Shared test fixtures.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use exp_parquet::Frame;
use exp_results::*;

pub fn manifest(experiment: &str, run_id: &str) -> Manifest {
    Manifest {
        manifest_version: MANIFEST_VERSION,
        expc_version: "0.1.0".into(),
        build: BuildRecord::default(),
        experiment: experiment.into(),
        run_id: run_id.into(),
        status: RunStatus::Running,
        error: None,
        started_at: "2026-11-21T18:30:00.000Z".into(),
        ended_at: None,
        started_unix_ns: 1_795_285_800_000_000_000,
        ended_unix_ns: None,
        spec: Some(SpecRecord {
            root: "x.exp".into(),
            sha256: "ab".repeat(32),
        }),
        plan_sha256: "cd".repeat(32),
        seed: 7,
        host: exp_host::HostFacts {
            hostname: "h".into(),
            kernel: "k".into(),
            arch: "x86_64".into(),
            cpu_model: "cpu".into(),
            cpus_online: 2,
            cpus_available: 2,
            caches: Vec::new(),
            memory_total_bytes: 1 << 30,
            memory_available_bytes: 1 << 29,
            ..Default::default()
        },
        brokers: BTreeMap::new(),
        options: OptionsRecord::default(),
        trials: vec![TrialRecord {
            trial: 0,
            point: 0,
            repetition: 0,
            seed: 11,
            sweep: BTreeMap::from([("size".to_string(), "100B".to_string())]),
            status: TrialStatus::Complete,
            started_at_unix_ns: Some(1),
            ended_at_unix_ns: Some(2),
            error: None,
            metrics: BTreeMap::from([("latency_ns".to_string(), 1.5)]),
            attempts: Vec::new(),
            validity: None,
        }],
        points: vec![PointRecord {
            point: 0,
            repetitions_run: 1,
            stop_reason: Some("max".into()),
        }],
        tables: BTreeMap::new(),
        resumes: Vec::new(),
        shard: None,
        split: None,
        shards: Vec::new(),
        journal_seq: 0,
        claims: Vec::new(),
        aborted_by: None,
        read_warnings: Vec::new(),
    }
}

/// t_ns u64, seq u64, value f64, name str: the bench's table too.
pub fn schema(name: &str) -> Schema {
    Schema::new(name)
        .column("t_ns", DType::U64)
        .column("seq", DType::U64)
        .column("value_ms", DType::F64)
        .column("name", DType::Str)
}

/// Rows `start..end` of [`schema`]: seq = i, value = i / 2, every 7th name null.
pub fn rows(schema: &Schema, start: u64, end: u64) -> Batch {
    let mut batch = schema.batch();
    for i in start..end {
        let name: Option<String> = (i % 7 != 0).then(|| format!("n{i}"));
        batch
            .push_row(vec![(i * 10).into(), i.into(), (i as f64 / 2.0).into(), name.into()])
            .unwrap();
    }
    batch
}

pub fn read(path: &Path) -> Frame {
    exp_parquet::Reader::new(File::open(path).unwrap())
        .and_then(|r| r.read_all())
        .unwrap()
}

/// Rows per row group, from the file's footer.
pub fn row_groups(path: &Path) -> Vec<usize> {
    exp_parquet::Reader::new(File::open(path).unwrap())
        .unwrap()
        .row_group_rows()
}
