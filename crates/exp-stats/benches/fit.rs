//! Fitting speed:
//!
//! - `family/NAME`: `fit` of each family on 10,000 values of its own
//!   distribution (quantiles in a fixed shuffled order, so the data are not
//!   sorted), exact;
//! - `select/all_continuous_10k`, `select/all_counts_10k`: `select` over
//!   every family on log-normal and negative-binomial data;
//! - `select/sketched_100k`: `select_sketched` on 100,000 sorted log-normal
//!   values with 512 points, as `expc xml extract` fits a large path.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use exp_stats::fit::{fit, select, select_sketched, Family};
use statrs::distribution::{
    Beta, Cauchy, ChiSquared, ContinuousCDF, Discrete, Exp, FisherSnedecor, Gamma, Geometric, LogNormal,
    NegativeBinomial, Normal, Poisson, StudentsT, Weibull,
};

const N: usize = 10_000;

/// A fixed permutation of `sorted`, so fits do not see sorted input.
fn shuffled(sorted: &[f64]) -> Vec<f64> {
    (0..sorted.len()).map(|i| sorted[(i * 7919) % sorted.len()]).collect()
}

fn quantiles(d: &impl ContinuousCDF<f64, f64>, n: usize) -> Vec<f64> {
    let sorted: Vec<f64> = (0..n).map(|i| d.inverse_cdf((i as f64 + 0.5) / n as f64)).collect();
    shuffled(&sorted)
}

/// Count quantiles by walking the pmf from `shift` (statrs' generic discrete
/// inverse CDF overflows for the negative binomial), as k − shift.
fn count_quantiles(d: &impl Discrete<u64, f64>, shift: u64) -> Vec<f64> {
    let (mut k, mut cdf) = (shift, d.pmf(shift));
    let mut sorted = Vec::with_capacity(N);
    for i in 0..N {
        while cdf < (i as f64 + 0.5) / N as f64 {
            k += 1;
            cdf += d.pmf(k);
        }
        sorted.push((k - shift) as f64);
    }
    shuffled(&sorted)
}

#[allow(clippy::unwrap_used, reason = "constant, valid parameters")]
fn family_data(family: Family) -> Vec<f64> {
    match family {
        Family::Beta => quantiles(&Beta::new(2.0, 5.0).unwrap(), N),
        Family::Cauchy => quantiles(&Cauchy::new(-1.0, 0.5).unwrap(), N),
        Family::ChiSquared => quantiles(&ChiSquared::new(4.0).unwrap(), N),
        Family::Exponential => quantiles(&Exp::new(0.25).unwrap(), N),
        Family::F => quantiles(&FisherSnedecor::new(6.0, 20.0).unwrap(), N),
        Family::Gamma => quantiles(&Gamma::new(2.5, 0.5).unwrap(), N),
        Family::Geometric => count_quantiles(&Geometric::new(0.2).unwrap(), 1),
        Family::LogNormal => quantiles(&LogNormal::new(1.0, 0.6).unwrap(), N),
        Family::NegativeBinomial => count_quantiles(&NegativeBinomial::new(3.0, 0.05).unwrap(), 0),
        Family::Normal => quantiles(&Normal::new(3.0, 2.0).unwrap(), N),
        Family::Poisson => count_quantiles(&Poisson::new(7.5).unwrap(), 0),
        Family::StudentT => quantiles(&StudentsT::new(2.0, 1.5, 4.0).unwrap(), N),
        Family::Weibull => quantiles(&Weibull::new(1.5, 3.0).unwrap(), N),
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("family");
    group.sample_size(20);
    for family in Family::ALL {
        let data = family_data(family);
        group.bench_function(family.name(), |b| b.iter(|| fit(family, black_box(&data))));
    }
    group.finish();

    let positive = family_data(Family::LogNormal);
    let counts = family_data(Family::NegativeBinomial);
    #[allow(clippy::unwrap_used, reason = "constant, valid parameters")]
    let mut large = quantiles(&LogNormal::new(1.0, 0.6).unwrap(), 100_000);
    large.sort_by(f64::total_cmp);
    let mut group = c.benchmark_group("select");
    group.sample_size(10);
    group.bench_function("all_continuous_10k", |b| {
        b.iter(|| select(black_box(&positive), &Family::ALL))
    });
    group.bench_function("all_counts_10k", |b| {
        b.iter(|| select(black_box(&counts), &Family::ALL))
    });
    group.bench_function("sketched_100k", |b| {
        b.iter(|| select_sketched(black_box(&large), 512, &Family::ALL))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
