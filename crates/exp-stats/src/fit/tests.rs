//! Tests: closed forms against hand computation, parameter recovery on
//! deterministic quantile samples (xᵢ = F⁻¹((i + ½)/n), whose MLE sits very
//! close to the truth), optimality against statrs' own likelihood, model
//! selection, and every error.

use statrs::distribution::{
    Beta, Cauchy, ChiSquared, Continuous, ContinuousCDF, Discrete, Exp, FisherSnedecor, Gamma, Geometric, LogNormal,
    NegativeBinomial, Normal, Poisson, StudentsT, Weibull,
};

use super::*;

const N: usize = 2000;

fn quantiles(d: &impl ContinuousCDF<f64, f64>, n: usize) -> Vec<f64> {
    (0..n).map(|i| d.inverse_cdf((i as f64 + 0.5) / n as f64)).collect()
}

/// Count quantiles by walking the pmf from `shift` upwards (statrs' generic
/// discrete `inverse_cdf` overflows for the negative binomial, whose maximum
/// is u64::MAX), returned as k − shift.
fn count_quantiles(d: &impl Discrete<u64, f64>, n: usize, shift: u64) -> Vec<f64> {
    let (mut k, mut cdf) = (shift, d.pmf(shift));
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let q = (i as f64 + 0.5) / n as f64;
        while cdf < q {
            k += 1;
            cdf += d.pmf(k);
        }
        out.push((k - shift) as f64);
    }
    out
}

/// Σ ln f(x; params) straight from statrs, independent of the fitting code.
fn statrs_ll(family: Family, p: &[f64], data: &[f64]) -> f64 {
    let cont = |d: &dyn Continuous<f64, f64>| data.iter().map(|&x| d.ln_pdf(x)).sum::<f64>();
    match family {
        Family::Beta => cont(&Beta::new(p[0], p[1]).unwrap()),
        Family::Cauchy => cont(&Cauchy::new(p[0], p[1]).unwrap()),
        Family::ChiSquared => cont(&ChiSquared::new(p[0]).unwrap()),
        Family::Exponential => cont(&Exp::new(p[0]).unwrap()),
        Family::F => cont(&FisherSnedecor::new(p[0], p[1]).unwrap()),
        Family::Gamma => cont(&Gamma::new(p[0], p[1]).unwrap()),
        Family::LogNormal => cont(&LogNormal::new(p[0], p[1]).unwrap()),
        Family::Normal => cont(&Normal::new(p[0], p[1]).unwrap()),
        Family::StudentT => cont(&StudentsT::new(p[0], p[1], p[2]).unwrap()),
        Family::Weibull => cont(&Weibull::new(p[0], p[1]).unwrap()),
        Family::Geometric => {
            let d = Geometric::new(p[0]).unwrap();
            data.iter().map(|&x| d.ln_pmf(x as u64 + 1)).sum()
        }
        Family::NegativeBinomial => {
            let d = NegativeBinomial::new(p[0], p[1]).unwrap();
            data.iter().map(|&x| d.ln_pmf(x as u64)).sum()
        }
        Family::Poisson => {
            let d = Poisson::new(p[0]).unwrap();
            data.iter().map(|&x| d.ln_pmf(x as u64)).sum()
        }
    }
}

/// Fits, checks each parameter against `truth` within relative `tol`, and
/// checks the fit is a maximum of statrs' likelihood: nudging any parameter
/// by ±0.1 % never increases it.
fn recover(family: Family, data: &[f64], truth: &[(&str, f64)], tol: f64) -> Fit {
    let fit = fit(family, data).unwrap_or_else(|e| panic!("{family}: {e}"));
    assert_eq!(fit.n, data.len());
    for &(name, want) in truth {
        let got = fit.param(name).unwrap();
        let err = (got - want).abs() / want.abs().max(1.0);
        assert!(err <= tol, "{family} {name}: got {got}, want {want} (rel err {err})");
    }
    let values: Vec<f64> = fit.params.iter().map(|p| p.1).collect();
    let at_fit = statrs_ll(family, &values, data);
    assert!(
        (at_fit - fit.log_likelihood).abs() < 1e-6 * at_fit.abs().max(1.0),
        "{family}: reported ll"
    );
    assert!((fit.aic - (2.0 * family.n_params() as f64 - 2.0 * at_fit)).abs() < 1e-6 * at_fit.abs().max(1.0));
    for i in 0..values.len() {
        for factor in [0.999, 1.001] {
            let mut nudged = values.clone();
            nudged[i] = if nudged[i] == 0.0 {
                factor - 1.0
            } else {
                nudged[i] * factor
            };
            if family == Family::Geometric || (family == Family::NegativeBinomial && i == 1) {
                nudged[i] = nudged[i].min(1.0);
            }
            let ll = statrs_ll(family, &nudged, data);
            assert!(
                ll <= at_fit + 1e-7 * at_fit.abs(),
                "{family}: param {i}×{factor} gives {ll} > {at_fit}"
            );
        }
    }
    fit
}

#[test]
fn closed_forms_match_hand_computation() {
    // Normal on 1..4: mean 2.5, MLE variance 5/4, ln L = −(n/2)(ln(2π·5/4) + 1).
    let f = fit(Family::Normal, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert!((f.param("mean").unwrap() - 2.5).abs() < 1e-15);
    assert!((f.param("sd").unwrap() - 1.25f64.sqrt()).abs() < 1e-15);
    let ll = -2.0 * ((2.0 * std::f64::consts::PI * 1.25).ln() + 1.0);
    assert!((f.log_likelihood - ll).abs() < 1e-12);
    assert!((f.aic - (4.0 - 2.0 * ll)).abs() < 1e-12);
    // Exponential on 1, 2, 3: rate 1/2, ln L = 3 ln ½ − ½·6.
    let f = fit(Family::Exponential, &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(f.params, vec![("rate", 0.5)]);
    assert!((f.log_likelihood - (3.0 * 0.5f64.ln() - 3.0)).abs() < 1e-12);
    // Log-normal on 1, e, e²: mu = 1, sigma² = 2/3.
    let e = std::f64::consts::E;
    let f = fit(Family::LogNormal, &[1.0, e, e * e]).unwrap();
    assert!((f.param("mu").unwrap() - 1.0).abs() < 1e-15);
    assert!((f.param("sigma").unwrap() - (2.0f64 / 3.0).sqrt()).abs() < 1e-15);
    // Poisson on 0..4: λ = 2, ln L = 10 ln 2 − 10 − ln(0!·1!·2!·3!·4!) = 10 ln 2 − 10 − ln 288.
    let counts = [0.0, 1.0, 2.0, 3.0, 4.0];
    let f = fit(Family::Poisson, &counts).unwrap();
    assert_eq!(f.params, vec![("lambda", 2.0)]);
    assert!((f.log_likelihood - (10.0 * 2f64.ln() - 10.0 - 288f64.ln())).abs() < 1e-12);
    // Geometric (failures) on 0..4: p = 1/(1 + 2) = 1/3, ln L = 5 ln(1/3) + 10 ln(2/3).
    let f = fit(Family::Geometric, &counts).unwrap();
    assert!((f.param("p").unwrap() - 1.0 / 3.0).abs() < 1e-15);
    assert!((f.log_likelihood - (5.0 * (1.0f64 / 3.0).ln() + 10.0 * (2.0f64 / 3.0).ln())).abs() < 1e-12);
}

#[test]
fn continuous_families_recover_their_parameters() {
    let data = quantiles(&Normal::new(3.0, 2.0).unwrap(), N);
    recover(Family::Normal, &data, &[("mean", 3.0), ("sd", 2.0)], 0.01);
    let data = quantiles(&Exp::new(0.25).unwrap(), N);
    recover(Family::Exponential, &data, &[("rate", 0.25)], 0.01);
    let data = quantiles(&LogNormal::new(1.0, 0.5).unwrap(), N);
    recover(Family::LogNormal, &data, &[("mu", 1.0), ("sigma", 0.5)], 0.01);
    let data = quantiles(&Gamma::new(2.5, 0.5).unwrap(), N);
    recover(Family::Gamma, &data, &[("shape", 2.5), ("rate", 0.5)], 0.02);
    let data = quantiles(&ChiSquared::new(4.0).unwrap(), N);
    recover(Family::ChiSquared, &data, &[("df", 4.0)], 0.02);
    let data = quantiles(&Weibull::new(1.5, 3.0).unwrap(), N);
    recover(Family::Weibull, &data, &[("shape", 1.5), ("scale", 3.0)], 0.02);
    let data = quantiles(&Beta::new(2.0, 5.0).unwrap(), N);
    recover(Family::Beta, &data, &[("alpha", 2.0), ("beta", 5.0)], 0.02);
}

#[test]
fn heavy_tailed_families_recover_their_parameters() {
    let data = quantiles(&Cauchy::new(-1.0, 0.5).unwrap(), N);
    recover(Family::Cauchy, &data, &[("location", -1.0), ("scale", 0.5)], 0.02);
    let data = quantiles(&StudentsT::new(2.0, 1.5, 4.0).unwrap(), N);
    recover(
        Family::StudentT,
        &data,
        &[("location", 2.0), ("scale", 1.5), ("df", 4.0)],
        0.05,
    );
    let data = quantiles(&FisherSnedecor::new(6.0, 20.0).unwrap(), N);
    recover(Family::F, &data, &[("d1", 6.0), ("d2", 20.0)], 0.1);
}

#[test]
fn student_t_on_normal_data_goes_to_large_df() {
    let data = quantiles(&Normal::new(0.0, 1.0).unwrap(), N);
    let t = fit(Family::StudentT, &data).unwrap();
    assert!(t.param("df").unwrap() > 50.0, "{:?}", t.params);
    let normal = fit(Family::Normal, &data).unwrap();
    // Nested models: t can only do as well as the normal, up to its extra parameter.
    assert!(t.log_likelihood >= normal.log_likelihood - 1e-6);
    assert!(t.aic > normal.aic);
}

#[test]
fn discrete_families_recover_their_parameters() {
    let data = count_quantiles(&Poisson::new(7.5).unwrap(), N, 0);
    recover(Family::Poisson, &data, &[("lambda", 7.5)], 0.01);
    let data = count_quantiles(&Geometric::new(0.2).unwrap(), N, 1);
    recover(Family::Geometric, &data, &[("p", 0.2)], 0.02);
    let data = count_quantiles(&NegativeBinomial::new(3.0, 0.3).unwrap(), N, 0);
    recover(Family::NegativeBinomial, &data, &[("r", 3.0), ("p", 0.3)], 0.05);
}

fn best_of(data: &[f64]) -> Selection {
    select(data, &Family::ALL).unwrap()
}

/// The chosen family is `want`, or `want` is within 2 AIC of the winner.
fn assert_selects(data: &[f64], want: Family) {
    let s = best_of(data);
    let want_aic = s
        .tried
        .iter()
        .find(|(f, _)| *f == want)
        .and_then(|(_, r)| r.as_ref().ok())
        .map(|f| f.aic);
    let ok = s.best.family == want || want_aic.is_some_and(|a| a - s.best.aic <= 2.0);
    assert!(
        ok,
        "wanted {want}, best {} (aic {}), {want} aic {want_aic:?}",
        s.best.family, s.best.aic
    );
}

#[test]
fn select_picks_the_generating_family() {
    assert_selects(&quantiles(&Normal::new(10.0, 2.0).unwrap(), N), Family::Normal);
    assert_selects(&quantiles(&Exp::new(2.0).unwrap(), N), Family::Exponential);
    assert_selects(&quantiles(&LogNormal::new(0.0, 1.0).unwrap(), N), Family::LogNormal);
    assert_selects(&quantiles(&Cauchy::new(0.0, 1.0).unwrap(), N), Family::Cauchy);
    assert_selects(&quantiles(&Beta::new(0.5, 0.5).unwrap(), N), Family::Beta);
    assert_selects(&count_quantiles(&Poisson::new(20.0).unwrap(), N, 0), Family::Poisson);
    assert_selects(
        &count_quantiles(&NegativeBinomial::new(2.0, 0.1).unwrap(), N, 0),
        Family::NegativeBinomial,
    );
}

#[test]
fn select_reports_winner_runner_up_and_every_attempt() {
    let data = quantiles(&Exp::new(1.0).unwrap(), 500);
    let s = best_of(&data);
    assert_eq!(s.tried.len(), Family::ALL.len());
    let runner = s.runner_up.clone().unwrap();
    assert!(s.best.aic <= runner.aic);
    assert_ne!(s.best.family, runner.family);
    for (_, r) in &s.tried {
        if let Ok(f) = r {
            assert!(f.aic >= s.best.aic);
        }
    }
    // Non-integer positive data: beta (values ≥ 1) and the three discrete families fail on their domain.
    assert_eq!(s.domain_failures(), 4);
    // Deterministic: the same input gives the same selection, bit for bit.
    assert_eq!(best_of(&data), s);
}

#[test]
fn domain_errors() {
    let negative = [-1.0, 0.5, 2.0];
    for family in [
        Family::Exponential,
        Family::Gamma,
        Family::LogNormal,
        Family::Weibull,
        Family::ChiSquared,
        Family::F,
    ] {
        assert!(
            matches!(fit(family, &negative), Err(FitError::Domain { family: f, .. }) if f == family),
            "{family}"
        );
    }
    // Zero is in the exponential's support but not in the log-based families'.
    assert!(fit(Family::Exponential, &[0.0, 1.0, 2.0]).is_ok());
    assert!(matches!(
        fit(Family::Gamma, &[0.0, 1.0, 2.0]),
        Err(FitError::Domain { .. })
    ));
    assert!(matches!(
        fit(Family::Beta, &[0.2, 0.5, 1.0]),
        Err(FitError::Domain { .. })
    ));
    assert!(matches!(
        fit(Family::Beta, &[0.0, 0.5, 0.7]),
        Err(FitError::Domain { .. })
    ));
    for family in [Family::Poisson, Family::Geometric, Family::NegativeBinomial] {
        assert!(
            matches!(fit(family, &[0.0, 1.5, 2.0, 3.0]), Err(FitError::Domain { .. })),
            "{family}"
        );
        assert!(
            matches!(fit(family, &[-1.0, 1.0, 2.0, 3.0]), Err(FitError::Domain { .. })),
            "{family}"
        );
    }
    for family in Family::ALL {
        assert!(
            matches!(fit(family, &[1.0, f64::NAN, 2.0, 3.0]), Err(FitError::Domain { .. })),
            "{family}"
        );
        assert!(
            matches!(
                fit(family, &[1.0, f64::INFINITY, 2.0, 3.0]),
                Err(FitError::Domain { .. })
            ),
            "{family}"
        );
    }
}

#[test]
fn size_and_degeneracy_errors() {
    assert_eq!(
        fit(Family::Normal, &[]),
        Err(FitError::TooFewValues { needed: 2, got: 0 })
    );
    assert_eq!(
        fit(Family::Normal, &[1.0]),
        Err(FitError::TooFewValues { needed: 2, got: 1 })
    );
    assert_eq!(
        fit(Family::Gamma, &[1.0, 2.0]),
        Err(FitError::TooFewValues { needed: 3, got: 2 })
    );
    assert_eq!(
        fit(Family::StudentT, &[1.0, 2.0, 3.0]),
        Err(FitError::TooFewValues { needed: 4, got: 3 })
    );
    assert_eq!(fit(Family::Normal, &[2.0, 2.0, 2.0]), Err(FitError::Degenerate));
    assert_eq!(select(&[5.0; 10], &Family::ALL), Err(FitError::Degenerate));
    assert_eq!(
        select(&[-1.0, 0.5, 2.0], &[Family::Gamma, Family::Poisson]),
        Err(FitError::NoCandidate)
    );
}

#[test]
fn negative_binomial_needs_overdispersion() {
    // Variance (2/3) below the mean (1): the likelihood rises towards the Poisson limit.
    let data = [0.0, 1.0, 2.0];
    assert_eq!(
        fit(Family::NegativeBinomial, &data),
        Err(FitError::NoConvergence {
            family: Family::NegativeBinomial
        })
    );
    let s = select(&data, &[Family::NegativeBinomial, Family::Poisson]).unwrap();
    assert_eq!(s.best.family, Family::Poisson);
    assert!(s.runner_up.is_none());
}

#[test]
fn family_names_and_metadata() {
    for family in Family::ALL {
        assert_eq!(Family::from_name(family.name()), Some(family));
        assert_eq!(family.to_string(), family.name());
    }
    assert_eq!(Family::NegativeBinomial.name(), "negative_binomial");
    assert_eq!(Family::StudentT.n_params(), 3);
    assert_eq!(Family::Poisson.n_params(), 1);
    let discrete: Vec<Family> = Family::ALL.into_iter().filter(|f| f.is_discrete()).collect();
    assert_eq!(
        discrete,
        vec![Family::Geometric, Family::NegativeBinomial, Family::Poisson]
    );
}

#[test]
fn select_ranks_only_discrete_fits_on_count_data() {
    // Geometric counts (failures from 0): the exponential density exceeds the
    // geometric pmf here, but densities and masses are not comparable.
    let data = count_quantiles(&Geometric::new(0.3).unwrap(), N, 1);
    let exp_fit = fit(Family::Exponential, &data).unwrap();
    let geo_fit = fit(Family::Geometric, &data).unwrap();
    assert!(exp_fit.aic < geo_fit.aic);
    let s = best_of(&data);
    assert!(s.best.family.is_discrete(), "picked {}", s.best.family);
    assert!(s.runner_up.unwrap().family.is_discrete());
    assert!(s.tried.iter().any(|(f, r)| *f == Family::Exponential && r.is_ok()));
    // Without any discrete candidate the continuous fits are ranked as before.
    let s = select(&data, &[Family::Normal, Family::Exponential]).unwrap();
    assert_eq!(s.best.family, Family::Exponential);
}
