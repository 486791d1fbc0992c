//! Every family against its analytic moments, CDF (KS) or pmf (chi-square), with fixed seeds so
//! the tests are deterministic: a failure is a bug, never bad luck.
#![allow(clippy::unwrap_used)]

use exp_plan::{Dist, DistValue, Unit};
use exp_stats::{ks_one_sample, ks_two_sample, Rng, SampleError, Sampler};
use statrs::function::gamma::checked_gamma_ur;

const N: usize = 100_000;

fn sampler(dist: Dist) -> Sampler {
    Sampler::new(&DistValue { unit: Unit::Ns, dist }).unwrap()
}

fn draws(s: &Sampler, seed: u64, n: usize) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| s.sample(&mut rng)).collect()
}

/// Sample mean within 5 standard errors of the analytic mean, and (when the fourth moment is
/// finite) sample variance within 5 standard errors √((m₄ − s⁴)/n) of the analytic variance.
fn check_moments(name: &str, s: &Sampler, xs: &[f64], fourth_moment_finite: bool) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let m4 = xs.iter().map(|x| (x - mean).powi(4)).sum::<f64>() / n;
    let (mu, sigma2) = (s.mean().unwrap(), s.variance().unwrap());
    let se_mean = (sigma2 / n).sqrt();
    assert!(
        (mean - mu).abs() <= 5.0 * se_mean,
        "{name}: mean {mean}, expected {mu} ± {se_mean}"
    );
    if fourth_moment_finite {
        let se_var = ((m4 - var * var) / n).sqrt();
        assert!(
            (var - sigma2).abs() <= 5.0 * se_var,
            "{name}: variance {var}, expected {sigma2} ± {se_var}"
        );
    }
}

fn check_ks(name: &str, s: &Sampler, xs: &[f64]) {
    let r = ks_one_sample(xs, s).unwrap();
    assert!(!r.rejects(0.001), "{name}: KS D = {}, p = {}", r.statistic, r.p_value);
}

fn pareto_median(shape: f64, median: f64) -> Dist {
    Dist::Pareto {
        shape,
        scale: median / 2f64.powf(1.0 / shape),
    }
}

#[test]
fn continuous_families_match_moments_and_cdf() {
    let cases: Vec<(&str, Dist, bool)> = vec![
        ("uniform", Dist::Uniform { min: 2.0, max: 5.0 }, true),
        ("normal", Dist::Normal { mean: 10.0, sd: 3.0 }, true),
        (
            "lognormal",
            Dist::Lognormal {
                shape: 0.5,
                scale: 1e6,
                location: 100.0,
            },
            true,
        ),
        ("exponential", Dist::Exponential { mean: 1e6 }, true),
        ("pareto5", Dist::Pareto { shape: 5.0, scale: 2.0 }, true),
        ("pareto3_median_100ms", pareto_median(3.0, 100e6), false),
        ("weibull1.5", Dist::Weibull { shape: 1.5, scale: 2.0 }, true),
        ("weibull0.5", Dist::Weibull { shape: 0.5, scale: 1.0 }, true),
        ("gamma2.5", Dist::Gamma { shape: 2.5, scale: 3.0 }, true),
        ("gamma1", Dist::Gamma { shape: 1.0, scale: 1.0 }, true),
        ("gamma0.3", Dist::Gamma { shape: 0.3, scale: 2.0 }, true),
        (
            "gamma50",
            Dist::Gamma {
                shape: 50.0,
                scale: 0.1,
            },
            true,
        ),
    ];
    for (i, (name, dist, fourth)) in cases.into_iter().enumerate() {
        let s = sampler(dist);
        assert!(s.is_continuous(), "{name}");
        let xs = draws(&s, 1000 + i as u64, N);
        check_moments(name, &s, &xs, fourth);
        check_ks(name, &s, &xs);
    }
}

#[test]
fn mqtt_pareto_gaps_pass_ks_at_one_percent() {
    // The MQTT acceptance criterion: Pareto(shape 3, median 100 ms) gaps, KS does not reject at α = 0.01.
    let s = sampler(pareto_median(3.0, 100e6));
    let mut rng = Rng::new(7).fork("mqtt").stream(3);
    let gaps: Vec<f64> = (0..10_000).map(|_| s.sample_u64(&mut rng) as f64).collect();
    let r = ks_one_sample(&gaps, &s).unwrap();
    assert!(!r.rejects(0.01), "D = {}, p = {}", r.statistic, r.p_value);
    // Median check: half the gaps below 100 ms.
    assert!((s.cdf(100e6) - 0.5).abs() < 1e-12);
}

#[test]
fn ks_has_power() {
    // Exponential draws with the same median are clearly not Pareto.
    let pareto = sampler(pareto_median(3.0, 100e6));
    let exp = sampler(Dist::Exponential {
        mean: 100e6 / std::f64::consts::LN_2,
    });
    let xs = draws(&exp, 5, 2000);
    assert!(ks_one_sample(&xs, &pareto).unwrap().rejects(1e-6));
    let ys = draws(&pareto, 6, 2000);
    assert!(ks_two_sample(&xs, &ys).unwrap().rejects(1e-6));
    // Two independent streams of the same distribution: not rejected.
    let zs = draws(&pareto, 8, 3000);
    let r = ks_two_sample(&ys, &zs).unwrap();
    assert!(!r.rejects(0.001), "p = {}", r.p_value);
}

/// Chi-square goodness of fit of integer-valued draws against the sampler's CDF, with bins of
/// expected count ≥ 20. Returns (p-value, degrees of freedom).
fn chi_square(s: &Sampler, xs: &[f64]) -> (f64, usize) {
    let n = xs.len() as f64;
    let mut edges = Vec::new();
    let (mut prev, mut k) = (0.0, xs.iter().copied().fold(f64::INFINITY, f64::min).min(0.0));
    loop {
        let c = s.cdf(k);
        if 1.0 - c < 20.0 / n {
            break;
        }
        if (c - prev) * n >= 20.0 {
            edges.push(k);
            prev = c;
        }
        k += 1.0;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut chi2 = 0.0;
    let (mut below_obs, mut below_exp) = (0usize, 0.0);
    for &e in edges.iter().chain(std::iter::once(&f64::INFINITY)) {
        let obs = sorted.partition_point(|&x| x <= e);
        let exp = if e.is_finite() { s.cdf(e) } else { 1.0 };
        let (o, ex) = ((obs - below_obs) as f64, (exp - below_exp) * n);
        chi2 += (o - ex).powi(2) / ex;
        (below_obs, below_exp) = (obs, exp);
    }
    let df = edges.len(); // bins − 1
    (checked_gamma_ur(df as f64 / 2.0, chi2 / 2.0).unwrap(), df)
}

#[test]
fn discrete_families_match_pmf_and_moments() {
    let cases = [
        ("poisson0.5", Dist::Poisson { mean: 0.5 }),
        ("poisson3", Dist::Poisson { mean: 3.0 }),
        ("poisson9.99", Dist::Poisson { mean: 9.99 }),
        ("poisson10", Dist::Poisson { mean: 10.0 }),
        ("poisson50", Dist::Poisson { mean: 50.0 }),
        ("poisson10000", Dist::Poisson { mean: 10_000.0 }),
        ("geometric0.3", Dist::Geometric { p: 0.3 }),
        ("geometric0.01", Dist::Geometric { p: 0.01 }),
        ("geometric0.9", Dist::Geometric { p: 0.9 }),
    ];
    for (i, (name, dist)) in cases.into_iter().enumerate() {
        let s = sampler(dist);
        assert!(!s.is_continuous());
        let xs = draws(&s, 2000 + i as u64, N);
        assert!(xs.iter().all(|x| x.fract() == 0.0 && *x >= 0.0), "{name}");
        check_moments(name, &s, &xs, true);
        let (p, df) = chi_square(&s, &xs);
        assert!(df >= 1 && p > 0.001, "{name}: chi-square p = {p} (df {df})");
    }
}

#[test]
fn degenerate_discrete_cases() {
    let zero = sampler(Dist::Poisson { mean: 0.0 });
    let certain = sampler(Dist::Geometric { p: 1.0 });
    let constant = sampler(Dist::Constant { value: 4.5 });
    let mut rng = Rng::new(1);
    for _ in 0..1000 {
        assert_eq!(zero.sample(&mut rng), 0.0);
        assert_eq!(certain.sample(&mut rng), 0.0);
        assert_eq!(constant.sample(&mut rng), 4.5);
    }
    assert_eq!(constant.sample_u64(&mut rng), 5); // 4.5 rounds away from zero
    assert_eq!((constant.cdf(4.4), constant.cdf(4.5)), (0.0, 1.0));
    assert!(ks_one_sample(&[1.0], &constant).is_err());
}

#[test]
fn empirical_alias_frequencies() {
    // 10 values with counts 3, 2, 4, 1: frequencies 0.3, 0.2, 0.4, 0.1.
    let values = vec![5.0, 1.0, 1.0, 2.0, 5.0, 5.0, 5.0, 9.0, 1.0, 2.0];
    let s = sampler(Dist::Empirical {
        file: "x.csv".into(),
        sha256: String::new(),
        values,
    });
    let xs = draws(&s, 3, N);
    for (v, p) in [(1.0, 0.3), (2.0, 0.2), (5.0, 0.4), (9.0, 0.1)] {
        let freq = xs.iter().filter(|&&x| x == v).count() as f64 / N as f64;
        let se = (p * (1.0 - p) / N as f64).sqrt();
        assert!((freq - p).abs() < 5.0 * se, "P({v}) = {freq}, expected {p}");
    }
    assert!(xs.iter().all(|x| [1.0, 2.0, 5.0, 9.0].contains(x)));
    let (p, _) = chi_square(&s, &xs);
    assert!(p > 0.001, "chi-square p = {p}");
    check_moments("empirical", &s, &xs, true);
}

#[test]
fn empirical_large_table_resamples_uniformly() {
    // 10k distinct values: resampling should reproduce the values' own distribution (two-sample KS).
    let mut rng = Rng::new(11);
    let values: Vec<f64> = (0..10_000).map(|_| rng.next_f64() * 1e3).collect();
    let s = sampler(Dist::Empirical {
        file: "big".into(),
        sha256: String::new(),
        values: values.clone(),
    });
    let xs = draws(&s, 12, 50_000);
    let r = ks_two_sample(&xs, &values).unwrap();
    assert!(!r.rejects(0.001), "p = {}", r.p_value);
    check_moments("empirical10k", &s, &xs, true);
}

#[test]
fn determinism_of_sampling() {
    let s = sampler(Dist::Gamma { shape: 0.7, scale: 5.0 });
    assert_eq!(draws(&s, 99, 1000), draws(&s, 99, 1000));
    assert_ne!(draws(&s, 99, 10), draws(&s, 100, 10));
}

#[test]
fn sample_u64_rounds_and_clamps() {
    let mut rng = Rng::new(1);
    let negative = sampler(Dist::Normal { mean: -1e9, sd: 1.0 });
    assert_eq!(negative.sample_u64(&mut rng), 0);
    let c = sampler(Dist::Constant { value: 1499.4 });
    assert_eq!(c.sample_u64(&mut rng), 1499);
    let huge = sampler(Dist::Constant { value: 1e300 });
    assert_eq!(huge.sample_u64(&mut rng), u64::MAX);
}

#[test]
fn infinite_moments_are_none() {
    let heavy = sampler(Dist::Pareto { shape: 1.0, scale: 1.0 });
    assert_eq!(heavy.mean(), None);
    let p2 = sampler(Dist::Pareto { shape: 2.0, scale: 3.0 });
    assert_eq!(p2.mean(), Some(6.0));
    assert_eq!(p2.variance(), None);
}

#[test]
fn invalid_parameters_are_typed_errors() {
    let bad = |dist: Dist| {
        Sampler::new(&DistValue {
            unit: Unit::Bytes,
            dist,
        })
        .unwrap_err()
    };
    let invalid = |e: SampleError| match e {
        SampleError::InvalidParameter { family, name, .. } => format!("{family}.{name}"),
        other => other.to_string(),
    };
    assert_eq!(invalid(bad(Dist::Normal { mean: 0.0, sd: -1.0 })), "normal.sd");
    assert_eq!(
        invalid(bad(Dist::Normal {
            mean: f64::NAN,
            sd: 1.0
        })),
        "normal.mean"
    );
    assert_eq!(invalid(bad(Dist::Gamma { shape: 0.0, scale: 1.0 })), "gamma.shape");
    assert_eq!(
        invalid(bad(Dist::Gamma {
            shape: 1.0,
            scale: -2.0
        })),
        "gamma.scale"
    );
    assert_eq!(
        invalid(bad(Dist::Pareto {
            shape: -1.0,
            scale: 1.0
        })),
        "pareto.shape"
    );
    assert_eq!(
        invalid(bad(Dist::Weibull {
            shape: 1.0,
            scale: f64::INFINITY
        })),
        "weibull.scale"
    );
    assert_eq!(
        invalid(bad(Dist::Lognormal {
            shape: 0.0,
            scale: 1.0,
            location: 0.0
        })),
        "lognormal.shape"
    );
    assert_eq!(invalid(bad(Dist::Exponential { mean: 0.0 })), "exponential.mean");
    assert_eq!(invalid(bad(Dist::Poisson { mean: -0.5 })), "poisson.mean");
    assert_eq!(invalid(bad(Dist::Geometric { p: 0.0 })), "geometric.p");
    assert_eq!(invalid(bad(Dist::Geometric { p: 1.5 })), "geometric.p");
    assert_eq!(invalid(bad(Dist::Constant { value: f64::NAN })), "constant.value");
    assert_eq!(
        bad(Dist::Uniform { min: 2.0, max: 1.0 }),
        SampleError::UniformRange { min: 2.0, max: 1.0 }
    );
    assert!(matches!(
        bad(Dist::Uniform {
            min: -f64::MAX,
            max: f64::MAX
        }),
        SampleError::UniformRange { .. }
    ));
    let empirical = |values: Vec<f64>| Dist::Empirical {
        file: "f".into(),
        sha256: String::new(),
        values,
    };
    assert_eq!(bad(empirical(vec![])), SampleError::EmptyEmpirical);
    assert!(matches!(
        bad(empirical(vec![1.0, f64::NAN])),
        SampleError::NonFiniteEmpirical { index: 1, .. }
    ));
    assert_eq!(
        bad(Dist::Normal { mean: 0.0, sd: -1.0 }).to_string(),
        "normal: `sd` must be finite and ≥ 0, got -1"
    );
}

/// Medians found by bisection on the CDF against their closed forms.
#[test]
fn medians_match_their_closed_forms() {
    let ln2 = std::f64::consts::LN_2;
    let cases = [
        (Dist::Constant { value: 2e8 }, 2e8),
        (Dist::Uniform { min: 2.0, max: 5.0 }, 3.5),
        (Dist::Normal { mean: -10.0, sd: 3.0 }, -10.0),
        (Dist::Exponential { mean: 1e6 }, 1e6 * ln2),
        // scale · 2^(1/shape), also where the mean is infinite.
        (Dist::Pareto { shape: 0.5, scale: 2.0 }, 2.0 * 4.0),
        (Dist::Weibull { shape: 1.5, scale: 2.0 }, 2.0 * ln2.powf(1.0 / 1.5)),
        // The smallest k with P(X ≤ k) ≥ ½: for p = 0.3, 1 − 0.7^(k+1) ≥ ½ at k = 1.
        (Dist::Geometric { p: 0.3 }, 1.0),
    ];
    for (dist, expected) in cases {
        let median = sampler(dist.clone()).median().unwrap();
        assert!(
            (median - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "{dist:?}: {median}, expected {expected}"
        );
    }
}
