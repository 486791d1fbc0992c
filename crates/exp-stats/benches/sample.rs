//! ns per draw for the families the executors use most.
//! Run: `cargo bench -p exp-stats --bench sample`.
#![allow(clippy::unwrap_used)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use exp_plan::{Dist, DistValue, Unit};
use exp_stats::{Rng, Sampler};
use std::hint::black_box;

fn sampler(dist: Dist) -> Sampler {
    Sampler::new(&DistValue { unit: Unit::Ns, dist }).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut empirical_rng = Rng::new(7);
    let values: Vec<f64> = (0..10_000)
        .map(|_| (empirical_rng.next_f64() * 1000.0).round())
        .collect();
    let cases = [
        ("rng_next_f64", None),
        ("exponential", Some(Dist::Exponential { mean: 1e6 })),
        (
            "pareto",
            Some(Dist::Pareto {
                shape: 3.0,
                scale: 1e8 / 2f64.powf(1.0 / 3.0),
            }),
        ),
        ("normal", Some(Dist::Normal { mean: 0.0, sd: 1.0 })),
        (
            "lognormal",
            Some(Dist::Lognormal {
                shape: 0.5,
                scale: 1e6,
                location: 0.0,
            }),
        ),
        ("gamma_2.5", Some(Dist::Gamma { shape: 2.5, scale: 1e3 })),
        ("gamma_0.5", Some(Dist::Gamma { shape: 0.5, scale: 1e3 })),
        ("poisson_4", Some(Dist::Poisson { mean: 4.0 })),
        ("poisson_1000", Some(Dist::Poisson { mean: 1000.0 })),
        (
            "empirical_10k",
            Some(Dist::Empirical {
                file: "bench".into(),
                sha256: String::new(),
                values,
            }),
        ),
    ];
    let mut group = c.benchmark_group("draw");
    group.throughput(Throughput::Elements(1));
    for (name, dist) in cases {
        let mut rng = Rng::new(42);
        match dist {
            None => group.bench_function(name, |b| b.iter(|| black_box(rng.next_f64()))),
            Some(dist) => {
                let s = sampler(dist);
                group.bench_function(name, |b| b.iter(|| black_box(s.sample(&mut rng))))
            }
        };
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
