//! Extraction throughput over a generated event log (~12 MiB, 20k documents).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use exp_xml::{census_input, AttributeCensus, AttributePolicy, Config, Extractor};

fn corpus() -> Vec<u8> {
    let mut s = String::from("<?xml version=\"1.0\"?>\n<log>\n");
    for i in 0..20_000u64 {
        let sensor = ["temp", "hum", "press", "co2"][(i % 4) as usize];
        s.push_str(&format!(
            "  <event ts=\"{}\" seq=\"{i}\">\n    <device id=\"{:04}\" site=\"lab-{}\">\n",
            1_700_000_000_000 + i * 137,
            i % 16,
            i % 3
        ));
        for k in 0..6u64 {
            s.push_str(&format!(
                "      <sensor name=\"{sensor}{k}\"><value>{:.3}</value><unit>u{k}</unit><ok>{}</ok></sensor>\n",
                (i * 7919 + k * 104_729) % 100_000 / 1000,
                i % 7 != 0
            ));
        }
        s.push_str("    </device>\n    <message>status &amp; report for cycle</message>\n  </event>\n");
    }
    s.push_str("</log>\n");
    s.into_bytes()
}

fn bench(c: &mut Criterion) {
    let data = corpus();
    let mut group = c.benchmark_group("extract");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    for (label, policy) in [
        ("keep", AttributePolicy::Keep),
        ("auto", AttributePolicy::Auto { max_distinct: 30 }),
    ] {
        let config = Config {
            split_at: Some("event".into()),
            policy,
            ..Config::default()
        };
        group.bench_function(label, |b| {
            b.iter(|| {
                let census = match policy {
                    AttributePolicy::Auto { max_distinct } => {
                        let mut census = AttributeCensus::new(max_distinct);
                        census_input(&mut census, "bench", data.as_slice(), Some("event"));
                        Some(census)
                    }
                    _ => None,
                };
                let mut x = Extractor::new(&config, census.as_ref());
                x.feed("bench", data.as_slice());
                black_box(x.finish())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
