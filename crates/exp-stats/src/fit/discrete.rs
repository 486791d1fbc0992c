//! Families on the counts {0, 1, 2, …}: Poisson, geometric, negative
//! binomial. Likelihoods are sums over the table of distinct values
//! ([`Sample::counts`]), so an iteration costs O(distinct values), not O(n).

use statrs::distribution::{Discrete, Geometric, NegativeBinomial, Poisson};
use statrs::function::gamma::{digamma, ln_gamma};

use super::optimize::{newton_decreasing, trigamma};
use super::sample::Sample;
use super::{Family, Fit, FitError};

/// Poisson: `lambda = x̄`.
pub(crate) fn poisson(s: &Sample) -> Result<Fit, FitError> {
    s.counts_domain(Family::Poisson)?;
    let lambda = s.mean;
    let d = Poisson::new(lambda).map_err(|_| FitError::Degenerate)?;
    let statrs_ll = || s.counts().map(|(k, c)| c * d.ln_pmf(k)).sum();
    let ours = s
        .counts()
        .map(|(k, c)| c * (k as f64 * lambda.ln() - lambda - ln_gamma(k as f64 + 1.0)))
        .sum();
    Ok(Fit::new(
        Family::Poisson,
        vec![("lambda", lambda)],
        s.reported_ll(statrs_ll, ours),
        s.n,
    ))
}

/// Geometric counting failures before the first success,
/// P(X = k) = (1 − p)ᵏ p for k = 0, 1, …: `p = 1 / (1 + x̄)`.
///
/// statrs' `Geometric` counts trials (support 1, 2, …), so its pmf is
/// evaluated at k + 1.
pub(crate) fn geometric(s: &Sample) -> Result<Fit, FitError> {
    s.counts_domain(Family::Geometric)?;
    let p = 1.0 / (1.0 + s.mean);
    let d = Geometric::new(p).map_err(|_| FitError::Degenerate)?;
    let statrs_ll = || s.counts().map(|(k, c)| c * d.ln_pmf(k + 1)).sum();
    let ours = s.nf * (p.ln() + s.mean * (-p).ln_1p());
    Ok(Fit::new(
        Family::Geometric,
        vec![("p", p)],
        s.reported_ll(statrs_ll, ours),
        s.n,
    ))
}

/// Negative binomial counting failures before the r-th success,
/// P(X = k) = Γ(r+k)/(Γ(r) k!) pʳ (1−p)ᵏ (statrs' parameterisation).
///
/// For fixed r the MLE of p is `r / (r + x̄)`; substituting it, r solves the
/// profile score equation
///
/// ```text
/// U(r) = Σᵢ ψ(r + xᵢ) − n ψ(r) + n ln(r / (r + x̄)) = 0
/// ```
///
/// which has a unique root exactly when the (divisor-n) variance exceeds the
/// mean; otherwise the likelihood increases all the way to the Poisson limit
/// r → ∞ and there is no MLE (`NoConvergence`). U(0⁺) = +∞ and U < 0 beyond
/// the root, so the root is bracketed by doubling from the method-of-moments
/// value `x̄² / (v − x̄)` and then found by safeguarded Newton (U′ uses
/// trigamma).
pub(crate) fn negative_binomial(s: &Sample) -> Result<Fit, FitError> {
    let family = Family::NegativeBinomial;
    s.counts_domain(family)?;
    if s.var <= s.mean {
        return Err(FitError::NoConvergence { family });
    }
    let (n, mean) = (s.nf, s.points_mean);
    let score = |r: f64| {
        let (mut u, mut du) = (0.0, 0.0);
        for (k, c) in s.counts() {
            u += c * digamma(r + k as f64);
            du += c * trigamma(r + k as f64);
        }
        (
            u - n * digamma(r) + n * (r / (r + mean)).ln(),
            du - n * trigamma(r) + n * mean / (r * (r + mean)),
        )
    };
    let start = mean * mean / (s.var - mean);
    let lo = 1e-10;
    let mut hi = start.max(1.0);
    // Doubling up to ~1e10 (about 33 steps) to find a point past the root.
    while score(hi).0 >= 0.0 {
        hi *= 2.0;
        if hi > 1e10 {
            return Err(FitError::NoConvergence { family });
        }
    }
    let r = newton_decreasing(score, lo, hi, start, 1e-12, 300).ok_or(FitError::NoConvergence { family })?;
    let p = r / (r + mean);
    let d = NegativeBinomial::new(r, p).map_err(|_| FitError::NoConvergence { family })?;
    let statrs_ll = || s.counts().map(|(k, c)| c * d.ln_pmf(k)).sum();
    let ours = s
        .counts()
        .map(|(k, c)| c * (ln_gamma(r + k as f64) - ln_gamma(r) - ln_gamma(k as f64 + 1.0)))
        .sum::<f64>()
        + n * (r * p.ln() + mean * (-p).ln_1p());
    Ok(Fit::new(
        family,
        vec![("r", r), ("p", p)],
        s.reported_ll(statrs_ll, ours),
        s.n,
    ))
}
