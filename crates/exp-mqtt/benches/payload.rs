//! ns per payload: 256 B JSON with five fields (all ten need 263 B), 2 KiB JSON
//! with all ten, 100 B raw.
//! Run: `cargo bench -p exp-mqtt --bench payload`.
#![allow(clippy::unwrap_used)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use exp_mqtt::PayloadGenerator;
use exp_plan::{Dist, DistValue, Payload, Unit};
use std::hint::black_box;

const ALL: [&str; 10] = [
    "temperature",
    "humidity",
    "vibration",
    "acceleration",
    "power",
    "pressure",
    "voltage",
    "current",
    "co2",
    "light",
];

fn bench(c: &mut Criterion) {
    let json = |size_bytes, fields: &[&str]| Payload::Json {
        size_bytes,
        fields: fields.iter().map(|f| f.to_string()).collect(),
    };
    let cases = [
        ("json_256B_5_fields", json(256, &ALL[..5])),
        ("json_2KiB_10_fields", json(2048, &ALL)),
        (
            "raw_100B",
            Payload::Raw {
                size: DistValue {
                    unit: Unit::Bytes,
                    dist: Dist::Constant { value: 100.0 },
                },
            },
        ),
    ];
    let mut group = c.benchmark_group("payload");
    group.throughput(Throughput::Elements(1));
    for (name, payload) in cases {
        let mut generator = PayloadGenerator::new(&payload, 1).unwrap();
        let mut out = Vec::with_capacity(4096);
        let mut seq = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                seq += 1;
                generator.build(black_box(1234), seq, 1_700_000_000_000_000_000 + seq, &mut out);
                black_box(out.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
