//! Comparing two generated sensor logs of ~10 MiB each (20 % of the events
//! differ in their values), with the attribute census and a probe query, as
//! `expc xml compare` does: the time a user waits for a comparison.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use exp_xml::{compare, AttributePolicy, CompareConfig, Config, ProbeQuery, Source};

/// A sensor log of about `bytes` bytes; `shift` changes the values a little.
fn big_log(bytes: usize, shift: u64) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ shift;
    let mut next = move || {
        // xorshift64*: deterministic, no dependency.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut s = String::from("<?xml version=\"1.0\"?>\n<log>\n");
    let mut i = 0u64;
    while s.len() < bytes {
        let r = next();
        s.push_str(&format!(
            "  <event ts=\"{}\" seq=\"{i}\"><device id=\"{:04}\"><sensor name=\"{}\" unit=\"C\"><temp>{:.2}</temp>\
             <humidity>{}</humidity></sensor></device><status code=\"{}\">{}</status></event>\n",
            1_700_000_000 + i * 10,
            r % 20,
            ["a", "b", "c", "d"][(r >> 8) as usize % 4],
            15.0 + (r >> 16) as f64 % 2000.0 / 100.0,
            30 + (r >> 32) % 50,
            200 + (r >> 40) % 3,
            ["ok", "warn", "fail"][(r >> 48) as usize % 3]
        ));
        i += 1;
    }
    s.push_str("</log>\n");
    s.into_bytes()
}

fn source(name: &str, data: Vec<u8>) -> Vec<Source> {
    vec![Source::Memory {
        name: name.into(),
        data,
    }]
}

fn two_ten_megabyte_corpora(c: &mut Criterion) {
    let original = source("original.xml", big_log(10 << 20, 0));
    let synthetic = source("synthetic.xml", big_log(10 << 20, 1));
    let config = CompareConfig {
        extraction: Config {
            split_at: Some("event".into()),
            policy: AttributePolicy::Auto { max_distinct: 30 },
            ..Config::default()
        },
        probe: Some(ProbeQuery {
            tag: "sensor".into(),
            attribute: "name".into(),
            value: Some("a".into()),
        }),
        ..CompareConfig::default()
    };
    let mut group = c.benchmark_group("compare");
    group.throughput(Throughput::Bytes(20 << 20));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("two 10 MiB sensor logs", |b| {
        b.iter(|| compare(black_box(&original), black_box(&synthetic), &config).expect("compare"))
    });
    group.finish();
}

criterion_group!(benches, two_ten_megabyte_corpora);
criterion_main!(benches);
