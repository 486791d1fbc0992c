//! Extraction throughput over a generated event log (~13 MB, 20k documents
//! split at `event`).
//!
//! Besides criterion's wall-clock groups, `cargo bench` first prints MB per
//! CPU-second (user + system time of the process, through exp-host, all
//! threads), the figure the acceptance criterion is stated in: on a shared
//! machine wall time also counts the time other processes held the CPU.
//! Set `EXP_XML_BENCH_SKIP_CPU=1` to skip that report.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion, Throughput};
use exp_xml::{extract, AttributePolicy, Config, Source};

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

/// `keep` last: on this corpus it builds a path per document, and the
/// heap it leaves behind slows every case measured after it in the same
/// process.
const POLICIES: [(&str, AttributePolicy); 3] = [
    ("auto", AttributePolicy::Auto { max_distinct: 30 }),
    ("names", AttributePolicy::Names),
    ("keep", AttributePolicy::Keep),
];

fn config(policy: AttributePolicy, threads: usize) -> Config {
    Config {
        split_at: Some("event".into()),
        policy,
        threads,
        ..Config::default()
    }
}

/// One full extraction, as `expc xml extract` runs it.
fn run_once(sources: &[Source], config: &Config) {
    black_box(extract(sources, config).ok());
}

fn sources(data: &[u8]) -> Vec<Source> {
    vec![Source::Memory {
        name: "bench".into(),
        data: data.to_vec(),
    }]
}

fn bench(c: &mut Criterion) {
    let data = corpus();
    let mut group = c.benchmark_group("extract");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    let sources = sources(&data);
    for (label, policy) in POLICIES {
        let config = config(policy, 1);
        group.bench_function(label, |b| b.iter(|| run_once(&sources, &config)));
    }
    group.finish();
}

/// User + system CPU time of this process so far, in seconds (exp-host,
/// the one reader of /proc, in the kernel's clock ticks).
fn cpu_seconds() -> Option<f64> {
    exp_host::process_cpu_ns().map(|ns| ns as f64 / 1e9)
}

/// Runs `f` in `ROUNDS` rounds of at least `min_cpu` CPU-seconds each;
/// returns the best round's (MB per CPU-second, MB per wall second, runs).
/// The best round is the one least disturbed by other processes sharing
/// the cores and caches.
fn per_cpu_second(bytes: usize, min_cpu: f64, mut f: impl FnMut()) -> Option<(f64, f64, u32)> {
    const ROUNDS: usize = 3;
    f(); // warm-up
    let mut best: Option<(f64, f64, u32)> = None;
    for _ in 0..ROUNDS {
        let (cpu0, wall0) = (cpu_seconds()?, Instant::now());
        let mut runs = 0u32;
        while cpu_seconds()? - cpu0 < min_cpu {
            f();
            runs += 1;
        }
        let (cpu, wall) = (cpu_seconds()? - cpu0, wall0.elapsed().as_secs_f64());
        let mb = bytes as f64 * f64::from(runs) / 1e6;
        let round = (mb / cpu, mb / wall, runs);
        if best.is_none_or(|b| round.0 > b.0) {
            best = Some(round);
        }
    }
    best
}

fn cpu_report() {
    let data = corpus();
    let mb = data.len() as f64 / 1e6;
    println!("extraction per CPU-second, corpus {mb:.1} MB, 20000 documents (split at `event`):");
    let mut cases: Vec<(String, Box<dyn FnMut()>)> = Vec::new();
    for (label, policy) in POLICIES {
        let (sources, config) = (sources(&data), config(policy, 1));
        cases.push((
            format!("{label}, 1 thread"),
            Box::new(move || run_once(&sources, &config)),
        ));
    }
    let (sources, config2) = (sources(&data), config(AttributePolicy::Auto { max_distinct: 30 }, 2));
    cases.push(("auto, 2 threads".into(), Box::new(move || run_once(&sources, &config2))));
    for (label, mut f) in cases {
        match per_cpu_second(data.len(), 2.0, &mut f) {
            Some((cpu, wall, runs)) => {
                println!("  {label:<28} {cpu:7.1} MB/CPU-s  {wall:7.1} MB/s wall  (best of 3 rounds, {runs} runs)");
            }
            None => println!("  {label:<28} (CPU time unavailable)"),
        }
    }
}

criterion_group!(benches, bench);

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and
    // then only criterion's quick test mode runs.
    if std::env::args().any(|a| a == "--bench") && std::env::var_os("EXP_XML_BENCH_SKIP_CPU").is_none() {
        cpu_report();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
