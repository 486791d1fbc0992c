//! The analytic derivatives the Newton fits rely on, against central
//! differences of their own values, and the asymptotic gaps against direct
//! evaluation where they take over.

use super::heavy::{f_derivatives, f_ln_pdf, t_derivatives};
use super::newton::Derivatives;
use super::sample::Sample;
use super::{gaps, optimize};

fn sample() -> Sample {
    // Positive, skewed, with ties: the shape of a parsed numeric path.
    let data: Vec<f64> = (1..=400)
        .map(|i| (f64::from(i) * 0.37).exp().ln_1p().round() / 4.0 + 0.25)
        .collect();
    Sample::new(&data).unwrap()
}

/// Central differences of `value` around `p` against the gradient and
/// Hessian of `derivatives`, relative to their scale.
fn assert_matches<const N: usize>(f: impl Fn(&[f64; N]) -> Derivatives<N>, p: [f64; N]) {
    let (_, grad, hess) = f(&p);
    let h = 1e-4;
    for i in 0..N {
        let shifted = |d: f64| {
            let mut q = p;
            q[i] += d;
            f(&q)
        };
        let (plus, minus) = (shifted(h), shifted(-h));
        let numeric = (plus.0 - minus.0) / (2.0 * h);
        let tol = 1e-5 * (grad[i].abs() + 1.0);
        assert!(
            (numeric - grad[i]).abs() < tol,
            "∂{i}: analytic {} numeric {numeric}",
            grad[i]
        );
        for (j, &analytic) in hess[i].iter().enumerate() {
            let numeric = (plus.1[j] - minus.1[j]) / (2.0 * h);
            let tol = 1e-5 * (analytic.abs() + 1.0);
            assert!(
                (numeric - analytic).abs() < tol,
                "at {p:?} ∂{i}∂{j}: analytic {analytic} numeric {numeric}"
            );
        }
    }
}

#[test]
fn student_t_derivatives_match_differences() {
    let s = sample();
    let s0 = 1.3;
    for p in [[0.1, -0.2, 1.5f64], [-0.4, 0.3, 0.2], [0.0, 0.0, 4.0]] {
        // Coordinates ((μ − 2)/s₀, ln(σ/s₀), ln ν), as `t_derivatives` takes them.
        assert_matches(
            |q: &[f64; 3]| t_derivatives(&s, (2.0 + q[0] * s0, s0 * q[1].exp(), q[2].exp()), s0),
            p,
        );
    }
}

#[test]
fn f_derivatives_match_differences() {
    let s = sample();
    // [12, 1] and [2, 10] put a resp. b past the gaps' series threshold.
    for p in [[1.0f64, 2.0], [3.0, 0.5], [12.0, 1.0], [2.0, 10.0]] {
        assert_matches(|q: &[f64; 2]| f_derivatives(&s, (q[0].exp(), q[1].exp())), p);
    }
}

#[test]
fn gaps_are_continuous_where_the_series_takes_over() {
    let x = 1e4;
    for h in [0.3, 2.0, 50.0] {
        let direct = statrs::function::gamma::ln_gamma(x + h) - statrs::function::gamma::ln_gamma(x);
        assert!(
            (gaps::ln_gamma(x, h) - direct).abs() < 1e-9 * direct.abs(),
            "ln Γ gap at h = {h}"
        );
        let direct = statrs::function::gamma::digamma(x + h) - statrs::function::gamma::digamma(x);
        assert!(
            (gaps::digamma(x, h) - direct).abs() < 1e-9 * direct.abs(),
            "ψ gap at h = {h}"
        );
        let direct = optimize::trigamma(x) - optimize::trigamma(x + h);
        assert!(
            (gaps::trigamma(x, h) - direct).abs() < 1e-7 * direct.abs(),
            "ψ′ gap at h = {h}"
        );
    }
}

#[test]
fn f_on_scaled_chi_squared_data_runs_d2_to_the_cap() {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    // χ²₃/3 is F(3, ∞): the likelihood rises all the way to the cap on d₂.
    let chi = ChiSquared::new(3.0).unwrap();
    let data: Vec<f64> = (0..2000)
        .map(|i| chi.inverse_cdf((f64::from(i) + 0.5) / 2000.0) / 3.0)
        .collect();
    let fit = super::fit(super::Family::F, &data).unwrap();
    let (d1, d2) = (fit.param("d1").unwrap(), fit.param("d2").unwrap());
    assert!(d2 > 1e6, "d2 = {d2}");
    assert!((d1 - 3.0).abs() < 0.1, "d1 = {d1}");
    // A maximum: no neighbour in d₁ does better (−ln L from the same formula).
    let s = Sample::new(&data).unwrap();
    let at = |d1: f64| -f_derivatives(&s, (d1, d2)).0;
    for nudged in [d1 * 0.99, d1 * 1.01] {
        assert!(at(nudged) < at(d1), "ln L({nudged}) ≥ ln L({d1})");
    }
    assert!((fit.log_likelihood - at(d1)).abs() < 1e-6 * fit.log_likelihood.abs());
}

/// The F log density the fit reports: statrs' where statrs' is finite, and
/// finite and normalised where statrs' `pdf().ln()` overflows (to −∞ or
/// NaN once d₁ + d₂ passes about 140).
#[test]
fn f_log_density_matches_statrs_and_stays_finite() {
    use statrs::distribution::{Continuous, FisherSnedecor};
    for (d1, d2) in [(1.0, 1.0), (3.0, 7.5), (12.0, 40.0), (20.0, 40.0)] {
        let (ours, theirs) = (f_ln_pdf(d1, d2), FisherSnedecor::new(d1, d2).unwrap());
        for x in [0.05, 0.3, 1.0, 2.5, 10.0] {
            let (a, b) = (ours(x), theirs.ln_pdf(x));
            assert!(
                (a - b).abs() < 1e-9 * b.abs().max(1.0),
                "F({d1}, {d2}) at {x}: {a} against {b}"
            );
        }
    }
    for (d1, d2) in [(60.0, 90.0), (300.0, 300.0), (5.0, 1e7), (1e6, 1e6)] {
        assert!(!FisherSnedecor::new(d1, d2).unwrap().ln_pdf(1.0).is_finite());
        let ln_pdf = f_ln_pdf(d1, d2);
        let h = 1e-4; // a Riemann sum over (0, 20)
        let total: f64 = (1..200_000).map(|i| ln_pdf(f64::from(i) * h).exp() * h).sum();
        assert!((total - 1.0).abs() < 1e-3, "F({d1}, {d2}) integrates to {total}");
    }
    assert_eq!(f_ln_pdf(3.0, 4.0)(0.0), f64::NEG_INFINITY);
}
