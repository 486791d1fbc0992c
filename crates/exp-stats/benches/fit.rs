//! `select` over every family on 10,000 values: positive continuous data
//! (log-normal quantiles) and count data (negative-binomial quantiles).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use exp_stats::fit::{select, Family};
use statrs::distribution::{ContinuousCDF, Discrete, LogNormal, NegativeBinomial};

const N: usize = 10_000;

fn continuous() -> Vec<f64> {
    let d = LogNormal::new(1.0, 0.6).expect("valid parameters");
    // A fixed permutation of the quantiles, so the data are not sorted.
    (0..N)
        .map(|i| d.inverse_cdf(((i * 7919) % N) as f64 / N as f64 + 0.5 / N as f64))
        .collect()
}

fn counts() -> Vec<f64> {
    let d = NegativeBinomial::new(3.0, 0.05).expect("valid parameters");
    // Walk the pmf (statrs' generic discrete inverse CDF overflows for the negative binomial).
    let (mut k, mut cdf) = (0u64, d.pmf(0));
    let mut sorted = Vec::with_capacity(N);
    for i in 0..N {
        while cdf < (i as f64 + 0.5) / N as f64 {
            k += 1;
            cdf += d.pmf(k);
        }
        sorted.push(k as f64);
    }
    (0..N).map(|i| sorted[(i * 7919) % N]).collect()
}

fn bench(c: &mut Criterion) {
    let positive = continuous();
    let integers = counts();
    let mut group = c.benchmark_group("fit");
    group.sample_size(10);
    group.bench_function("select_all_continuous_10k", |b| {
        b.iter(|| select(black_box(&positive), &Family::ALL))
    });
    group.bench_function("select_all_counts_10k", |b| {
        b.iter(|| select(black_box(&integers), &Family::ALL))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
