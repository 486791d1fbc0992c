//! `sample`: one `SystemSampler::sample` with per-CPU columns, reading
//! /proc/stat, meminfo, vmstat, diskstats and net/dev.
//!
//! Run: `cargo bench -p exp-host --bench sample`

use criterion::{criterion_group, criterion_main, Criterion};
use exp_host::{SamplerOptions, SystemSampler};
use exp_results::Cell;

fn sample(c: &mut Criterion) {
    let mut sampler = SystemSampler::new(SamplerOptions { per_cpu: true }).expect("read /proc");
    let mut t_ns = 0u64;
    c.bench_function("system_sample_per_cpu", |b| {
        b.iter(|| {
            t_ns += 1;
            let row: Vec<Cell> = sampler.sample(t_ns).expect("read /proc");
            row
        })
    });
}

criterion_group!(benches, sample);
criterion_main!(benches);
