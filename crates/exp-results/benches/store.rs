//! Throughput of the table store: rows per second through one `TableSink`
//! for a 4-column table (u64, u64, f64, str), row groups of 65 536 rows,
//! zstd, including the footer and fsync at the end.
//!
//!     cargo bench -p exp-results --bench store

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use exp_results::{Batch, ColumnData, DType, Schema, Store, StoreOptions};

const ROWS: u64 = 1_000_000;
/// Rows per `write`: what an executor flushing every few milliseconds hands over.
const BATCH: u64 = 4096;

fn schema() -> Schema {
    Schema::new("bench")
        .column("t_ns", DType::U64)
        .column("seq", DType::U64)
        .column("latency_ms", DType::F64)
        .column("topic", DType::Str)
}

/// Filled column by column, as hot executor paths do.
fn batch(start: u64, topics: &[String]) -> Batch {
    let range = start..start + BATCH;
    Batch {
        columns: vec![
            ColumnData::U64(range.clone().map(|i| Some(i * 1_000)).collect()),
            ColumnData::U64(range.clone().map(Some).collect()),
            ColumnData::F64(range.clone().map(|i| Some((i % 1000) as f64 * 0.125)).collect()),
            ColumnData::Str(range.map(|i| Some(topics[(i % 20) as usize].clone())).collect()),
        ],
    }
}

fn store_throughput(c: &mut Criterion) {
    let schema = schema();
    let topics: Vec<String> = (0..20).map(|d| format!("fleet/device-{d}/telemetry")).collect();
    // Batches are built before timing: the bench measures the store, not the executor.
    let batches: Vec<Batch> = (0..ROWS / BATCH).map(|k| batch(k * BATCH, &topics)).collect();
    let mut group = c.benchmark_group("store");
    group.throughput(Throughput::Elements(ROWS / BATCH * BATCH));
    group.sample_size(10);
    group.bench_function("table_sink_4_columns", |b| {
        b.iter_batched(
            || (tempfile::tempdir().expect("temporary directory"), batches.clone()),
            |(dir, batches)| {
                let store = Store::open(dir.path().join("tables"), StoreOptions::default()).expect("open");
                let sink = store.sink(&schema, 0, 0);
                for batch in batches {
                    sink.write(batch).expect("write");
                }
                black_box(store.close().expect("close"));
                dir
            },
            criterion::BatchSize::PerIteration,
        );
    });
    group.finish();
}

criterion_group!(benches, store_throughput);
criterion_main!(benches);
