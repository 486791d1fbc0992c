//! Summarising a run read back with `open_run`, on known data.
// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

#[path = "../../exp-results/tests/common/mod.rs"]
mod common;

use std::fs;

use exp_report::summarize;
use exp_results::*;

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

/// A run of one `latency` table with known values in trials 0 and 1, and
/// damage: a truncated file in trial 0 and one making up trial 2, an
/// unfinished file and a stray one.
fn known_run(root: &std::path::Path) -> std::path::PathBuf {
    let run = RunDir::create(root, "lat", "r").unwrap();
    run.write_manifest(&mut common::manifest("lat", "r")).unwrap();
    let store = Store::open(
        run.tables_dir(),
        StoreOptions {
            row_group_rows: 16,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let schema = Schema::new("latency")
        .column("t_ns", DType::U64)
        .column("latency_ms", DType::F64)
        .column("size_bytes", DType::U64)
        .column("ok", DType::Bool)
        .column("topic", DType::Str)
        .column("device", DType::U64);
    // Trial 0 over two shards: latency 1..=100, size only on even rows.
    for (shard, range) in [(0, 1..=50u64), (1, 51..=100)] {
        let mut batch = schema.batch();
        for i in range {
            let size = (i % 2 == 0).then_some(i * 1000);
            batch
                .push_row(vec![
                    i.into(),
                    (i as f64).into(),
                    size.into(),
                    true.into(),
                    "t".into(),
                    (i % 7).into(),
                ])
                .unwrap();
        }
        store.sink(&schema, 0, shard).write(batch).unwrap();
    }
    let mut one = schema.batch();
    one.push_row(vec![
        5u64.into(),
        (-2.5).into(),
        Cell::Null,
        false.into(),
        Cell::Null,
        3u64.into(),
    ])
    .unwrap();
    store.sink(&schema, 1, 0).write(one).unwrap();
    store.close().unwrap();

    // Damage: a truncated file in trial 0 and one making up trial 2, an
    // unfinished file and a stray one.
    let tables = run.tables_dir();
    let good = fs::read(tables.join("latency/trial=0/part-0.parquet")).unwrap();
    fs::write(tables.join("latency/trial=0/part-9.parquet"), &good[..good.len() / 2]).unwrap();
    fs::create_dir(tables.join("latency/trial=2")).unwrap();
    fs::write(tables.join("latency/trial=2/part-0.parquet"), &good[..good.len() - 10]).unwrap();
    fs::create_dir_all(tables.join(".partial/latency/trial=1")).unwrap();
    fs::write(tables.join(".partial/latency/trial=1/part-1.parquet"), b"PAR1").unwrap();
    fs::write(tables.join("latency/notes.txt"), b"hello").unwrap();
    run.finish().unwrap()
}

#[test]
fn summaries_of_known_data() {
    let root = tempfile::tempdir().unwrap();
    let dir = known_run(root.path());

    let view = open_run(&dir).unwrap();
    assert_eq!(view.manifest.run_id, "r");
    assert_eq!(
        view.tables["latency"].trials.keys().copied().collect::<Vec<_>>(),
        [0, 1, 2]
    );
    let summary = summarize(&view);
    assert_eq!(summary.tables.len(), 1);
    let trials = &summary.tables[0].trials;

    let t0 = &trials[0];
    assert_eq!(
        (t0.trial, t0.files, t0.rows),
        (0, 2, 100),
        "the truncated file is left out"
    );
    let names: Vec<&str> = t0.columns.iter().map(|c| c.column.as_str()).collect();
    assert_eq!(
        names,
        ["latency_ms", "size_bytes", "device"],
        "numeric columns except t_ns"
    );
    let latency = &t0.columns[0];
    assert_eq!((latency.count, latency.nan), (100, 0));
    assert!(close(latency.mean, 50.5) && close(latency.min, 1.0) && close(latency.max, 100.0));
    // Linear interpolation over 1..=100: h = 99 q.
    assert!(close(latency.p50, 50.5) && close(latency.p95, 95.05) && close(latency.p99, 99.01));
    let size = &t0.columns[1];
    assert_eq!(size.count, 50, "nulls are not counted");
    assert!(close(size.min, 2000.0) && close(size.max, 100_000.0) && close(size.mean, 51_000.0));
    // Even values 2..=100 (×1000): h = 49 · 0.5 = 24.5 → between 50 and 52.
    assert!(close(size.p50, 51_000.0));
    // An identifier: its extent, no mean or percentiles.
    let device = &t0.columns[2];
    assert_eq!((device.count, device.min, device.max), (100, Some(0.0), Some(6.0)));
    assert_eq!(
        (device.mean, device.p50, device.p95, device.p99),
        (None, None, None, None)
    );

    let t1 = &trials[1];
    assert_eq!((t1.rows, t1.columns[0].count), (1, 1));
    assert!(close(t1.columns[0].p99, -2.5));
    assert_eq!(t1.columns[1].count, 0);
    assert_eq!(t1.columns[1].mean, None);

    let t2 = &trials[2];
    assert_eq!((t2.files, t2.rows), (0, 0));

    let warned: Vec<String> = summary
        .warnings
        .iter()
        .map(|w| w.path.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    for expected in [
        "tables/latency/notes.txt",
        "tables/.partial/latency/trial=1/part-1.parquet",
        "tables/latency/trial=0/part-9.parquet",
        "tables/latency/trial=2/part-0.parquet",
    ] {
        assert!(warned.iter().any(|w| w == expected), "{expected} not in {warned:?}");
    }
    assert_eq!(summary.warnings.len(), 4, "{:?}", summary.warnings);

    let json = serde_json::to_value(&summary).unwrap();
    assert!(close(
        json["tables"][0]["trials"][0]["columns"][0]["p95"].as_f64(),
        95.05
    ));
    assert_eq!(json["status"], "running");
}
