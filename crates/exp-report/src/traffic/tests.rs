//! The group readers on tables written through the store, with exact
//! expectations: in-window filtering, status counts, pooling.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use exp_results::schemas::{
    active_schema, connections_schema, epochs_schema, throughput_schema, CONNECTIONS_TABLE, STATUS_COMPLETE,
    STATUS_FAILED, STATUS_SHORT,
};
use exp_results::{Cell, DType, Schema, Store, StoreOptions};

use super::group::{self, Accumulator, GroupKey};
use super::*;

fn key_cells(structure: &str) -> Vec<Cell> {
    vec!["w".into(), structure.into(), "mean".into(), 0u64.into()]
}

fn write(dir: &Path, schema: &Schema, rows: Vec<Vec<Cell>>) -> PathBuf {
    let store = Store::open(dir.to_path_buf(), StoreOptions::default()).expect("store opens");
    let mut batch = schema.batch();
    for row in rows {
        batch.push_row(row).expect("row fits the schema");
    }
    store.sink(schema, 0, 0).write(batch).expect("batch written");
    store.close().expect("store closes");
    dir.join(&schema.name).join("trial=0").join("part-0.parquet")
}

/// A connection row: duration in ms, status, in the window or not.
fn connection(structure: &str, id: u64, duration_ms: u64, status: &str, in_window: bool) -> Vec<Cell> {
    let mut row = key_cells(structure);
    let ns = duration_ms * 1_000_000;
    row.extend::<[Cell; 21]>([
        id.into(),
        Cell::Null,
        0u64.into(),
        0u64.into(),
        Cell::Null,
        Cell::Null,
        ns.into(),
        ns.into(),
        100u64.into(),
        100u64.into(),
        1000u64.into(),
        1000u64.into(),
        1u64.into(),
        Cell::Null,
        Cell::Null,
        status.into(),
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Null,
        in_window.into(),
    ]);
    row
}

#[test]
fn connections_outside_the_window_and_failures_are_left_out_of_durations() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rows = vec![
        connection("ab", 0, 10, STATUS_COMPLETE, true),
        connection("ab", 1, 20, STATUS_SHORT, true),
        connection("ab", 2, 999, STATUS_FAILED, true),
        connection("ab", 3, 500, STATUS_COMPLETE, false),
        connection("atbt", 0, 40, STATUS_COMPLETE, true),
    ];
    let path = write(dir.path(), &connections_schema(), rows);
    let mut groups: BTreeMap<GroupKey, Accumulator> = BTreeMap::new();
    group::add_connections(&path, &mut groups).expect("file reads");
    let mut finished: Vec<TrafficGroup> = groups
        .into_iter()
        .map(|(k, a)| a.finish(k, Some(0), None, None))
        .collect();
    assert_eq!(finished.len(), 2);
    let atbt = finished.pop().expect("atbt group");
    let ab = finished.pop().expect("ab group");
    assert_eq!(
        (ab.connections, ab.complete, ab.short, ab.failed, ab.outside_window),
        (3, 1, 1, 1, 1)
    );
    let durations = ab.duration_ns.expect("durations");
    assert_eq!((durations.n, durations.min, durations.max), (2, 10e6, 20e6));
    assert_eq!((ab.sent_bytes, ab.received_bytes), (300, 3000));
    assert_eq!(atbt.duration_ns.expect("durations").p50, 40e6);
}

#[test]
fn peaks_rates_and_response_times_count_in_window_rows_and_pool_across_trials() {
    let dir = tempfile::tempdir().expect("temp dir");
    let active = |t: u64, peak: u64, inside: bool| {
        let mut row = key_cells("ab");
        row.extend::<[Cell; 4]>([t.into(), 0u64.into(), peak.into(), inside.into()]);
        row
    };
    let active_path = write(
        dir.path(),
        &active_schema(),
        vec![active(0, 9, false), active(1, 3, true), active(2, 4, true)],
    );
    let epoch = |rt_ms: u64, inside: bool| {
        let mut row = key_cells("ab");
        row.extend::<[Cell; 8]>([
            0u64.into(),
            0u64.into(),
            0u64.into(),
            (rt_ms * 1_000_000).into(),
            (rt_ms * 1_000_000).into(),
            1u64.into(),
            1u64.into(),
            inside.into(),
        ]);
        row
    };
    let epochs_path = write(
        dir.path(),
        &epochs_schema(),
        vec![epoch(1, true), epoch(3, true), epoch(100, false)],
    );
    let throughput = |direction: &str, bytes: u64, inside: bool| {
        let mut row = key_cells("ab");
        row.extend::<[Cell; 6]>([
            0u64.into(),
            1_000_000_000u64.into(),
            direction.into(),
            bytes.into(),
            (bytes as f64 * 8.0).into(),
            inside.into(),
        ]);
        row
    };
    let throughput_path = write(
        dir.path(),
        &throughput_schema(),
        vec![
            throughput("to_initiator", 1000, true),
            throughput("to_initiator", 3000, true),
            throughput("to_initiator", 99_999, false),
        ],
    );
    let mut trial: BTreeMap<GroupKey, Accumulator> = BTreeMap::new();
    group::add_active(&active_path, &mut trial).expect("active reads");
    group::add_epochs(&epochs_path, &mut trial).expect("epochs read");
    group::add_throughput(&throughput_path, &mut trial).expect("throughput reads");
    let (key, acc) = trial.into_iter().next().expect("one group");
    let mut pooled = Accumulator::default();
    pooled.merge(&acc);
    pooled.merge(&acc);
    let one = acc.finish(key.clone(), Some(0), None, None);
    assert_eq!(one.peak_active, 4, "the out-of-window peak of 9 is left out");
    let rt = one.response_time_ns.expect("response times");
    assert_eq!((rt.n, rt.max), (2, 3e6));
    // 4000 bytes over two 1 s intervals.
    assert_eq!(one.to_initiator_bit_per_s, Some(16_000.0));
    assert_eq!(one.to_acceptor_bit_per_s, None);
    let both = pooled.finish(key, None, None, None);
    assert_eq!((both.response_time_ns.expect("pooled").n, both.peak_active), (4, 4));
}

#[test]
fn a_file_without_the_columns_is_an_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let schema = Schema::new(CONNECTIONS_TABLE).column("workload", DType::Str);
    let path = write(dir.path(), &schema, vec![vec!["w".into()]]);
    let mut groups = BTreeMap::new();
    let error = group::add_connections(&path, &mut groups).expect_err("missing columns");
    assert!(error.to_string().contains("structure"), "{error}");
}
