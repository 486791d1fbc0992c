//! Generation throughput on an event-log-like synthesis set (see
//! `examples/support/eventlog.rs`): bytes per second into memory, through
//! `documents` (the path of every output layout) and document by document.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use exp_xml::generate::Generator;

#[path = "../examples/support/eventlog.rs"]
mod eventlog;

fn bench(c: &mut Criterion) {
    let set = eventlog::synthesis_set(4_000);
    let generator = Generator::new(&set, 1).expect("the event-log set compiles");
    let docs = 2_000u64;
    let mut out = Vec::new();
    generator.documents(0..docs, &mut out);
    let mut group = c.benchmark_group("generate");
    group.throughput(Throughput::Bytes(out.len() as u64));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("documents_into_memory", |b| {
        b.iter(|| {
            out.clear();
            generator.documents(black_box(0..docs), &mut out);
            black_box(out.len())
        })
    });
    group.bench_function("document_by_document", |b| {
        b.iter(|| {
            out.clear();
            for i in 0..docs {
                generator.document(black_box(i), &mut out);
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
