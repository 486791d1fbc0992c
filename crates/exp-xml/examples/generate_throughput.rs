//! Generation throughput: MB/s of output (wall) and MB per CPU-second
//! (user + system time of the whole process, from `/proc/self/stat`) on the
//! event-log synthesis set, into a sink and into a file under /tmp (deleted
//! afterwards), with 1 and 2 worker threads.
//!
//! `cargo run --release -p exp-xml --example generate_throughput -- [MiB per run] [gzip]`

use std::io;
use std::time::Instant;

use exp_xml::generate::{generate_to_dir, generate_to_writer, Amount, GenerateOptions, Generator, Layout, Shard};

#[path = "support/eventlog.rs"]
mod eventlog;

/// User + system CPU seconds of this process (all threads, live or not),
/// through exp-host.
fn cpu_seconds() -> f64 {
    exp_host::process_cpu_ns().map_or(0.0, |ns| ns as f64 / 1e9)
}

fn report(label: &str, bytes: u64, wall: f64, cpu: f64) {
    let mb = bytes as f64 / 1e6;
    println!(
        "{label:<28} {mb:>8.0} MB  wall {wall:>6.2} s  {:>7.0} MB/s  cpu {cpu:>6.2} s  {:>7.0} MB/CPU-s",
        mb / wall,
        mb / cpu.max(1e-9)
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1024);
    let gzip = args.next().is_some_and(|a| a == "gzip");
    let events: u64 = std::env::var("EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let t = Instant::now();
    let set = eventlog::synthesis_set(events);
    println!("set built from {events} events in {:.1} s", t.elapsed().as_secs_f64());
    println!(
        "set: {} structures, {} paths ({} numeric), {} categorical values",
        set.structures.len(),
        set.paths.len(),
        set.numeric.len(),
        set.categorical.len()
    );
    let generator = Generator::new(&set, 42).expect("the event-log set compiles");
    println!("expected document size {:.0} bytes", generator.expected_document_len());
    let target = mib * 1024 * 1024;

    // The bare hot loop, one thread, no I/O.
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    let mut out = Vec::with_capacity(1 << 20);
    let (mut bytes, mut i) = (0u64, 0u64);
    while bytes < target {
        out.clear();
        generator.documents(i..i + 256, &mut out);
        i += 256;
        bytes += out.len() as u64;
    }
    report(
        "documents() loop, 1 thread",
        bytes,
        t0.elapsed().as_secs_f64(),
        cpu_seconds() - cpu0,
    );

    for threads in [1, 2] {
        let options = GenerateOptions {
            amount: Amount::Bytes(target),
            shard: Shard::default(),
            layout: Layout::Stream,
            gzip,
            threads,
        };
        let cpu0 = cpu_seconds();
        let stats = generate_to_writer(&generator, &options, io::sink()).expect("sink never fails");
        report(
            &format!("sink, {threads} thread(s)"),
            stats.bytes,
            stats.wall.as_secs_f64(),
            cpu_seconds() - cpu0,
        );

        let dir = std::env::temp_dir().join(format!("exp-xml-generate-{}", std::process::id()));
        let options = GenerateOptions {
            layout: Layout::DocumentsPerFile(1_000_000_000),
            ..options
        };
        let cpu0 = cpu_seconds();
        let stats = generate_to_dir(&generator, &options, &dir).expect("writing under /tmp");
        report(
            &format!("file, {threads} thread(s)"),
            stats.bytes,
            stats.wall.as_secs_f64(),
            cpu_seconds() - cpu0,
        );
        if gzip {
            println!("  compressed to {:.0} MB", stats.written as f64 / 1e6);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
