//! The table store: Parquet round trips, row groups, layout, failures.
// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::path::Path;
use std::sync::Arc;

use common::{read, row_groups, rows, schema};
use exp_parquet::{Kind, Values};
use exp_results::*;

fn store(dir: &Path, row_group_rows: usize) -> Store {
    Store::open(
        dir.join("tables"),
        StoreOptions {
            row_group_rows,
            ..StoreOptions::default()
        },
    )
    .unwrap()
}

/// Times are filled as u64 and stored as Int64: a difference of two time
/// columns is a signed duration in polars (UInt64 would wrap), and only a
/// saturated value past i64::MAX becomes null.
#[test]
fn times_are_stored_as_int64_so_differences_compute() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), 1000);
    let schema = Schema::new("times")
        .column("scheduled_ns", DType::Ns)
        .column("sent_ns", DType::Ns);
    let sink = store.sink(&schema, 0, 1);
    let mut batch = schema.batch();
    batch.push_row(vec![5u64.into(), 3u64.into()]).unwrap();
    batch.push_row(vec![u64::MAX.into(), Cell::Null]).unwrap();
    sink.write(batch).unwrap();
    store.close().unwrap();
    let frame = read(&dir.path().join("tables/times/trial=0/part-1.parquet"));
    let kinds: Vec<Kind> = frame.fields().iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [Kind::I64, Kind::I64]);
    let sent = frame.column("sent_ns").unwrap().i64().unwrap();
    let scheduled = frame.column("scheduled_ns").unwrap().i64().unwrap();
    assert_eq!(
        sent.get(0).unwrap() - scheduled.get(0).unwrap(),
        -2,
        "sent 2 ns before schedule, not 2^64 − 2"
    );
    assert_eq!(scheduled.get(1), None, "past i64::MAX: null");
}

#[test]
fn round_trip_keeps_values_nulls_and_types() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), 1000);
    let schema = Schema::new("mixed_values")
        .column("t_ns", DType::U64)
        .column("delta_ns", DType::I64)
        .column("size_bytes", DType::F64)
        .column("ok", DType::Bool)
        .column("topic", DType::Str);
    let sink = store.sink(&schema, 3, 1);
    let mut batch = schema.batch();
    batch
        .push_row(vec![1u64.into(), (-5i64).into(), 2.5.into(), true.into(), "a/b".into()])
        .unwrap();
    batch
        .push_row(vec![Cell::Null, Cell::Null, Cell::Null, Cell::Null, Cell::Null])
        .unwrap();
    batch
        .push_row(vec![
            u64::MAX.into(),
            i64::MIN.into(),
            f64::NAN.into(),
            false.into(),
            "".into(),
        ])
        .unwrap();
    sink.write(batch).unwrap();
    let summary = store.close().unwrap();
    assert_eq!(summary.tables["mixed_values"], TableRecord { rows: 3, files: 1 });

    let path = dir.path().join("tables/mixed_values/trial=3/part-1.parquet");
    let frame = read(&path);
    let names = frame.column_names();
    assert_eq!(
        names,
        ["t_ns", "delta_ns", "size_bytes", "ok", "topic"],
        "no trial column inside the file"
    );
    let kinds: Vec<Kind> = frame.fields().iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [Kind::U64, Kind::I64, Kind::F64, Kind::Bool, Kind::Str]);
    let column = |name: &str| frame.column(name).unwrap().clone();
    assert_eq!(column("t_ns"), Values::U64(vec![Some(1), None, Some(u64::MAX)]));
    assert_eq!(column("delta_ns"), Values::I64(vec![Some(-5), None, Some(i64::MIN)]));
    let Values::F64(sizes) = column("size_bytes") else {
        panic!("floats")
    };
    assert_eq!(sizes[..2], [Some(2.5), None]);
    assert!(sizes[2].is_some_and(f64::is_nan));
    assert_eq!(column("ok"), Values::Bool(vec![Some(true), None, Some(false)]));
    let topics = Values::Str([Some("a/b"), None, Some("")].into_iter().collect());
    assert_eq!(column("topic"), topics);
}

#[test]
fn large_tables_are_written_in_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), 65_536);
    let schema = schema("big");
    let sink = store.sink(&schema, 0, 0);
    // Batches of 1000 rows do not divide 65 536: row groups are cut across batches.
    for start in (0..200_000).step_by(1000) {
        sink.write(rows(&schema, start, start + 1000)).unwrap();
    }
    // And one batch bigger than two row groups on its own, in another file.
    store.sink(&schema, 0, 1).write(rows(&schema, 0, 150_000)).unwrap();
    store.finish_trial(0).unwrap();

    let part0 = dir.path().join("tables/big/trial=0/part-0.parquet");
    assert_eq!(row_groups(&part0), [65_536, 65_536, 65_536, 3_392]);
    let part1 = dir.path().join("tables/big/trial=0/part-1.parquet");
    assert_eq!(row_groups(&part1), [65_536, 65_536, 18_928]);

    let frame = read(&part0);
    assert_eq!(frame.height(), 200_000);
    let seq = frame.column("seq").unwrap().u64().unwrap();
    assert!(
        seq.iter().enumerate().all(|(i, v)| v == Some(i as u64)),
        "rows keep their order"
    );
    assert_eq!(frame.column("name").unwrap().null_count(), 200_000 / 7 + 1);

    // zstd, for every column of every row group.
    let codecs = exp_parquet::Reader::new(fs::File::open(&part0).unwrap())
        .unwrap()
        .codecs();
    assert!(codecs.len() == 1 && codecs[0].starts_with("ZSTD"), "{codecs:?}");
    assert_eq!(
        store.close().unwrap().tables["big"],
        TableRecord {
            rows: 350_000,
            files: 2
        }
    );
}

/// What a progress line shows while a trial runs: the rows each table has
/// taken so far, per trial, forgotten once the trial is finished.
#[test]
fn rows_taken_so_far_are_counted_per_trial_and_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), 1000);
    let (a, b) = (schema("messages"), schema("samples"));
    store.sink(&a, 0, 0).write(rows(&a, 0, 10)).unwrap();
    store.sink(&a, 0, 1).write(rows(&a, 0, 5)).unwrap();
    store.sink(&b, 0, 0).write(rows(&b, 0, 3)).unwrap();
    store.sink(&a, 1, 0).write(rows(&a, 0, 7)).unwrap();
    let trial0 = store.trial_rows(0);
    assert_eq!((trial0["messages"], trial0["samples"]), (15, 3));
    assert_eq!(store.trial_rows(1)["messages"], 7);
    store.finish_trial(0).unwrap();
    assert!(store.trial_rows(0).is_empty());
    assert_eq!(store.trial_rows(1)["messages"], 7);
}

#[test]
fn hive_layout_and_empty_trials() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), 10);
    let a = schema("alpha");
    let b = Schema::new("beta_events").column("t_ns", DType::U64);
    store.sink(&a, 0, 0).write(rows(&a, 0, 5)).unwrap();
    store.sink(&a, 0, 2).write(rows(&a, 0, 25)).unwrap();
    // Full row groups are sealed on disk at once, each a complete file, but
    // the table directory holds finished files only.
    let sealed = dir.path().join("tables/.partial/alpha/trial=0/part-2.000001.parquet");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !sealed.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(read(&sealed).height(), 10);
    assert!(!dir.path().join("tables/alpha").exists());
    store.sink(&a, 12, 0).write(rows(&a, 0, 1)).unwrap();
    // Sinks that never see rows (or only empty batches) create nothing.
    store.sink(&b, 1, 0).write(b.batch()).unwrap();
    let _unused = store.sink(&a, 5, 0);
    store.finish_trial(1).unwrap();
    store.finish_trial(5).unwrap();
    store.close().unwrap();
    assert!(
        !dir.path().join("tables/.partial").exists(),
        "nothing unfinished is left"
    );

    let mut files: Vec<String> = Vec::new();
    collect(&dir.path().join("tables"), &dir.path().join("tables"), &mut files);
    files.sort();
    assert_eq!(
        files,
        [
            "alpha/trial=0/part-0.parquet",
            "alpha/trial=0/part-2.parquet",
            "alpha/trial=12/part-0.parquet"
        ]
    );
    assert_eq!(
        row_groups(&dir.path().join("tables/alpha/trial=0/part-2.parquet")),
        [10, 10, 5]
    );
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, out);
        } else {
            out.push(path.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
}

#[test]
fn dropping_the_store_finishes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema("interrupted");
    let sink = {
        let store = store(dir.path(), 100);
        let sink = store.sink(&schema, 0, 0);
        sink.write(rows(&schema, 0, 250)).unwrap();
        sink
        // No close: the store is dropped here, as on an early return or a panic unwinding.
    };
    let path = dir.path().join("tables/interrupted/trial=0/part-0.parquet");
    assert_eq!(read(&path).height(), 250);
    assert_eq!(row_groups(&path), [100, 100, 50]);
    assert!(matches!(
        sink.write(rows(&schema, 0, 1)),
        Err(ResultsError::StoreClosed)
    ));
}

#[test]
fn batches_that_do_not_fit_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), 100);
    let schema = schema("checked");
    let sink = store.sink(&schema, 0, 0);

    let short = Batch {
        columns: vec![ColumnData::U64(vec![Some(1)])],
    };
    assert!(matches!(
        sink.write(short),
        Err(ResultsError::BatchArity {
            expected: 4,
            got: 1,
            ..
        })
    ));

    let mut wrong = schema.batch();
    wrong.columns[2] = ColumnData::Str(vec![]);
    assert!(matches!(
        sink.write(wrong),
        Err(ResultsError::BatchType { ref column, expected: DType::F64, got: DType::Str, .. }) if column == "value_ms"
    ));

    let mut ragged = rows(&schema, 0, 3);
    if let ColumnData::Str(v) = &mut ragged.columns[3] {
        v.pop();
    }
    assert!(matches!(
        sink.write(ragged),
        Err(ResultsError::RaggedBatch {
            expected: 3,
            got: 2,
            ..
        })
    ));

    let other = Schema::new("checked").column("t_ns", DType::U64);
    let conflicting = store.sink(&other, 1, 0);
    assert!(matches!(
        conflicting.write(other.batch()),
        Err(ResultsError::SchemaConflict { .. })
    ));

    let twice = Schema::new("twice").column("a", DType::U64).column("a", DType::F64);
    assert!(matches!(
        store.sink(&twice, 0, 0).write(twice.batch()),
        Err(ResultsError::DuplicateColumn { .. })
    ));
    let bad = Schema::new("../escape").column("a", DType::U64);
    assert!(matches!(
        store.sink(&bad, 0, 0).write(bad.batch()),
        Err(ResultsError::InvalidName { .. })
    ));

    // None of that harmed the store.
    sink.write(rows(&schema, 0, 3)).unwrap();
    store.finish_trial(0).unwrap();
    assert!(matches!(
        sink.write(rows(&schema, 3, 4)),
        Err(ResultsError::TrialFinished { trial: 0, .. })
    ));
    store.finish_trial(0).unwrap();
    assert_eq!(
        store.close().unwrap().tables["checked"],
        TableRecord { rows: 3, files: 1 }
    );
}

#[test]
fn a_failed_writer_fails_every_later_write_and_keeps_finished_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), 10);
    let good = schema("good");
    let bad = schema("bad");
    store.sink(&good, 0, 0).write(rows(&good, 0, 15)).unwrap();
    store.finish_trial(0).unwrap();
    let good_file = dir.path().join("tables/good/trial=0/part-0.parquet");
    assert_eq!(read(&good_file).height(), 15);

    // A file where the table's directory must go: creating the part fails,
    // like a full or read-only disk would.
    fs::create_dir_all(dir.path().join("tables/.partial")).unwrap();
    fs::write(dir.path().join("tables/.partial/bad"), b"in the way").unwrap();
    let sink = store.sink(&bad, 1, 0);
    sink.write(rows(&bad, 0, 20)).unwrap(); // queued; the writer fails on it
    let unrelated = store.sink(&good, 2, 0);
    unrelated.write(rows(&good, 0, 3)).unwrap_or(()); // may already see the failure

    let failure = store.finish_trial(1).unwrap_err();
    assert!(matches!(failure, ResultsError::StoreFailed(_)), "{failure}");
    assert!(
        failure.to_string().contains("table `bad`") && failure.to_string().contains("/bad/trial=1"),
        "{failure}"
    );
    assert!(matches!(
        sink.write(rows(&bad, 0, 1)),
        Err(ResultsError::StoreFailed(_))
    ));
    assert!(matches!(
        unrelated.write(rows(&good, 0, 1)),
        Err(ResultsError::StoreFailed(_))
    ));
    let (written, result) = store.close_with_summary();
    let Err(ResultsError::StoreFailed(failure)) = result else {
        panic!("{result:?}")
    };
    assert!(
        matches!(&*failure, ResultsError::Table { table, source } if table == "bad" && matches!(**source, ResultsError::Io { .. })),
        "{failure}"
    );
    assert_eq!(
        written.tables["good"],
        TableRecord { rows: 15, files: 1 },
        "rows queued behind the failure are dropped"
    );
    assert!(!written.tables.contains_key("bad"));
    assert_eq!(
        read(&good_file).height(),
        15,
        "files finished before the failure stay readable"
    );
}

#[test]
fn sinks_are_shared_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(store(dir.path(), 4096));
    let schema = schema("threads");
    let sink = store.sink(&schema, 0, 0);
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let sink = sink.clone();
            let schema = &schema;
            scope.spawn(move || {
                for k in 0..50 {
                    let start = (t * 50 + k) * 100;
                    sink.write(rows(schema, start, start + 100)).unwrap();
                }
            });
        }
    });
    drop(sink);
    let store = Arc::into_inner(store).unwrap();
    assert_eq!(store.close().unwrap().tables["threads"].rows, 20_000);
    let frame = read(&dir.path().join("tables/threads/trial=0/part-0.parquet"));
    let mut seq: Vec<u64> = frame
        .column("seq")
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .map(Option::unwrap)
        .collect();
    seq.sort_unstable();
    assert!(
        seq.iter().enumerate().all(|(i, &v)| v == i as u64),
        "every row exactly once"
    );
}

#[test]
fn handles_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Store>();
    send_sync::<TableSink>();
    send_sync::<ResultsError>();
}

#[test]
fn close_reports_success_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path(), 10);
    let schema = schema("s");
    store.sink(&schema, 0, 0).write(rows(&schema, 0, 3)).unwrap();
    let (written, result) = store.close_with_summary();
    result.unwrap();
    assert_eq!(written.tables["s"], TableRecord { rows: 3, files: 1 });
}

/// Polls `what` until it holds; fails after 10 s.
fn wait_until(what: &str, mut holds: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !holds() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Rows of a running trial reach a complete Parquet file within the
/// checkpoint interval, without the trial finishing: what survives a kill.
#[test]
fn rows_of_a_running_trial_are_checkpointed_and_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions {
        row_group_rows: 100,
        checkpoint: std::time::Duration::from_millis(50),
        seal_after: std::time::Duration::from_millis(600),
        host_column: None,
    };
    let store = Store::open(dir.path().join("tables"), options).unwrap();
    let schema = schema("live");
    let sink = store.sink(&schema, 3, 0);
    let partial = dir.path().join("tables/.partial/live/trial=3");
    let rows_on_disk = || -> usize {
        fs::read_dir(&partial)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
            .map(|p| read(&p).height())
            .sum()
    };
    sink.write(rows(&schema, 0, 7)).unwrap();
    wait_until("7 rows checkpointed", || rows_on_disk() == 7);
    assert!(partial.join("part-0.open.parquet").exists());
    // More rows: the checkpoint is rewritten with all of them.
    sink.write(rows(&schema, 7, 12)).unwrap();
    wait_until("12 rows checkpointed", || rows_on_disk() == 12);
    // Rows waiting longer than `seal_after` get a segment of their own.
    wait_until("a sealed segment", || partial.join("part-0.000000.parquet").exists());
    assert_eq!(read(&partial.join("part-0.000000.parquet")).height(), 12);
    assert_eq!(rows_on_disk(), 12, "the checkpoint went with the seal");
    assert!(!dir.path().join("tables/live").exists(), "nothing final yet");

    // Finishing assembles segments and rest, in order, and removes them.
    sink.write(rows(&schema, 12, 162)).unwrap();
    store.finish_trial(3).unwrap();
    let part = dir.path().join("tables/live/trial=3/part-0.parquet");
    assert_eq!(row_groups(&part), [100, 62]);
    let frame = read(&part);
    let seq = frame.column("seq").unwrap().u64().unwrap();
    assert!(seq.iter().enumerate().all(|(i, v)| v == Some(i as u64)), "in order");
    assert!(!partial.exists());
    store.close().unwrap();
}
