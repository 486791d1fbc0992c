//! Samplers for fitted families: each is checked against its distribution
//! (KS test against statrs' CDF for the continuous families, mean and
//! variance plus a pmf chi-squared for the discrete ones), with fixed seeds.

use exp_stats::fit::{param_names, DrawError, FittedSampler};
use exp_stats::{fit, ks_one_sample_with, Family, Rng};
use statrs::distribution::{
    Beta, Cauchy, ChiSquared, ContinuousCDF, Discrete, Exp, FisherSnedecor, Gamma, Geometric, LogNormal,
    NegativeBinomial, Normal, Poisson, StudentsT, Weibull,
};

const N: usize = 20_000;

fn draws(family: Family, params: &[f64], seed: u64) -> Vec<f64> {
    let sampler = FittedSampler::new(family, params).expect("valid parameters");
    let mut rng = Rng::new(seed);
    (0..N).map(|_| sampler.sample(&mut rng)).collect()
}

fn assert_ks(family: Family, params: &[f64], cdf: impl Fn(f64) -> f64) {
    let xs = draws(family, params, 42);
    assert!(xs.iter().all(|x| x.is_finite()), "{family}: non-finite draw");
    let ks = ks_one_sample_with(&xs, cdf).expect("finite samples");
    assert!(
        ks.p_value > 0.001,
        "{family} {params:?}: KS D = {}, p = {}",
        ks.statistic,
        ks.p_value
    );
}

#[test]
fn continuous_families_match_their_cdf() {
    let beta = Beta::new(2.0, 5.0).expect("beta");
    assert_ks(Family::Beta, &[2.0, 5.0], |x| beta.cdf(x));
    let beta_small = Beta::new(0.5, 0.7).expect("beta");
    assert_ks(Family::Beta, &[0.5, 0.7], |x| beta_small.cdf(x));
    let cauchy = Cauchy::new(3.0, 2.0).expect("cauchy");
    assert_ks(Family::Cauchy, &[3.0, 2.0], |x| cauchy.cdf(x));
    let chi = ChiSquared::new(3.5).expect("chi2");
    assert_ks(Family::ChiSquared, &[3.5], |x| chi.cdf(x));
    let exp = Exp::new(0.25).expect("exp");
    assert_ks(Family::Exponential, &[0.25], |x| exp.cdf(x));
    let f = FisherSnedecor::new(5.0, 12.0).expect("f");
    assert_ks(Family::F, &[5.0, 12.0], |x| f.cdf(x));
    let gamma = Gamma::new(2.5, 4.0).expect("gamma (shape, rate)");
    assert_ks(Family::Gamma, &[2.5, 4.0], |x| gamma.cdf(x));
    let gamma_small = Gamma::new(0.4, 0.5).expect("gamma");
    assert_ks(Family::Gamma, &[0.4, 0.5], |x| gamma_small.cdf(x));
    let ln = LogNormal::new(1.5, 0.6).expect("lognormal");
    assert_ks(Family::LogNormal, &[1.5, 0.6], |x| ln.cdf(x));
    let normal = Normal::new(-4.0, 2.5).expect("normal");
    assert_ks(Family::Normal, &[-4.0, 2.5], |x| normal.cdf(x));
    let t = StudentsT::new(10.0, 3.0, 4.5).expect("t");
    assert_ks(Family::StudentT, &[10.0, 3.0, 4.5], |x| t.cdf(x));
    let weibull = Weibull::new(1.7, 30.0).expect("weibull");
    assert_ks(Family::Weibull, &[1.7, 30.0], |x| weibull.cdf(x));
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    (mean, xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0))
}

/// Mean within 5 standard errors, variance within 10 %, and a chi-squared
/// test of the counts of 0..cells against the pmf (last cell = the tail).
fn assert_discrete(family: Family, params: &[f64], mean: f64, var: f64, pmf: impl Fn(u64) -> f64) {
    let xs = draws(family, params, 7);
    assert!(
        xs.iter().all(|x| *x >= 0.0 && x.fract() == 0.0),
        "{family}: not a count"
    );
    let (m, v) = mean_var(&xs);
    let se = (var / N as f64).sqrt();
    assert!((m - mean).abs() < 5.0 * se, "{family}: mean {m} vs {mean}");
    assert!((v / var - 1.0).abs() < 0.1, "{family}: variance {v} vs {var}");
    // Cells with expected count ≥ 20, the rest pooled in a tail cell.
    let mut cells = Vec::new();
    let mut k = 0u64;
    let mut covered = 0.0;
    while pmf(k) * N as f64 >= 20.0 || (k as f64) < mean {
        cells.push(pmf(k));
        covered += pmf(k);
        k += 1;
    }
    let mut observed = vec![0u64; cells.len() + 1];
    for x in &xs {
        let i = (*x as usize).min(cells.len());
        observed[i] += 1;
    }
    cells.push(1.0 - covered);
    let chi2: f64 = cells
        .iter()
        .zip(&observed)
        .filter(|(p, _)| **p * N as f64 > 1e-9)
        .map(|(p, &o)| {
            let e = p * N as f64;
            (o as f64 - e).powi(2) / e
        })
        .sum();
    let df = cells.len() as f64 - 1.0;
    // Generous bound: mean df, 5 sd of the chi-squared (sd = √(2 df)).
    assert!(
        chi2 < df + 5.0 * (2.0 * df).sqrt() + 10.0,
        "{family}: chi2 {chi2} with {df} df"
    );
}

#[test]
fn discrete_families_match_their_pmf() {
    let geometric = Geometric::new(0.3).expect("geometric");
    // statrs counts trials (≥ 1); ours counts failures (≥ 0).
    assert_discrete(Family::Geometric, &[0.3], 0.7 / 0.3, 0.7 / 0.09, |k| {
        geometric.pmf(k + 1)
    });
    let nb = NegativeBinomial::new(2.5, 0.4).expect("negative binomial");
    let (r, p) = (2.5, 0.4);
    assert_discrete(
        Family::NegativeBinomial,
        &[r, p],
        r * (1.0 - p) / p,
        r * (1.0 - p) / (p * p),
        |k| nb.pmf(k),
    );
    let poisson = Poisson::new(3.2).expect("poisson");
    assert_discrete(Family::Poisson, &[3.2], 3.2, 3.2, |k| poisson.pmf(k));
    let poisson_large = Poisson::new(40.0).expect("poisson");
    assert_discrete(Family::Poisson, &[40.0], 40.0, 40.0, |k| poisson_large.pmf(k));
}

#[test]
fn every_family_round_trips_through_fit() {
    // Draw from known parameters, fit, draw from the fit: the fitted
    // sampler accepts the fitter's parameter names for every family.
    let cases: [(Family, &[f64]); 13] = [
        (Family::Beta, &[2.0, 3.0]),
        (Family::Cauchy, &[0.0, 1.0]),
        (Family::ChiSquared, &[4.0]),
        (Family::Exponential, &[2.0]),
        (Family::F, &[6.0, 20.0]),
        (Family::Gamma, &[3.0, 1.5]),
        (Family::Geometric, &[0.2]),
        (Family::LogNormal, &[0.5, 0.4]),
        (Family::NegativeBinomial, &[3.0, 0.3]),
        (Family::Normal, &[10.0, 2.0]),
        (Family::Poisson, &[6.0]),
        (Family::StudentT, &[1.0, 2.0, 5.0]),
        (Family::Weibull, &[2.0, 5.0]),
    ];
    for (family, params) in cases {
        assert_eq!(param_names(family).len(), family.n_params());
        let xs = draws(family, params, 3);
        let fitted = fit(family, &xs[..5_000]).unwrap_or_else(|e| panic!("{family}: fit failed: {e}"));
        let sampler = FittedSampler::from_fit(&fitted).expect("fitted parameters are valid");
        assert_eq!(sampler.family(), family);
        for (&(name, value), &truth) in fitted.params.iter().zip(params) {
            let tolerance = 0.15 * truth.abs().max(1.0);
            assert!(
                (value - truth).abs() < tolerance,
                "{family} {name}: fitted {value}, true {truth}"
            );
        }
    }
}

#[test]
fn same_seed_same_draws() {
    assert_eq!(
        draws(Family::StudentT, &[0.0, 1.0, 3.0], 9),
        draws(Family::StudentT, &[0.0, 1.0, 3.0], 9)
    );
    assert_ne!(
        draws(Family::Gamma, &[2.0, 1.0], 9),
        draws(Family::Gamma, &[2.0, 1.0], 10)
    );
}

#[test]
fn invalid_parameters_are_typed_errors() {
    assert!(matches!(
        FittedSampler::new(Family::Normal, &[0.0]),
        Err(DrawError::ParamCount {
            expected: 2,
            got: 1,
            ..
        })
    ));
    assert!(matches!(
        FittedSampler::new(Family::Gamma, &[-1.0, 1.0]),
        Err(DrawError::Parameter { name: "shape", .. })
    ));
    assert!(matches!(
        FittedSampler::new(Family::Geometric, &[1.5]),
        Err(DrawError::Parameter { name: "p", .. })
    ));
    assert!(matches!(
        FittedSampler::new(Family::Cauchy, &[f64::NAN, 1.0]),
        Err(DrawError::Parameter { name: "location", .. })
    ));
    assert!(matches!(
        FittedSampler::from_named(Family::Weibull, &[("shape", 1.0)]),
        Err(DrawError::MissingParam { name: "scale", .. })
    ));
    // p = 1: no failures ever.
    let nb = FittedSampler::new(Family::NegativeBinomial, &[2.0, 1.0]).expect("p = 1 is valid");
    let mut rng = Rng::new(0);
    assert!((0..50).all(|_| nb.sample(&mut rng) == 0.0));
}
