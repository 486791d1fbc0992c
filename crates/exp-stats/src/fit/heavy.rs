//! Families without usable sufficient statistics, fitted by Nelder–Mead on the
//! negative log-likelihood: Cauchy, Student t and F.
//!
//! Each objective is one O(n) pass without allocation. Parameters are
//! transformed so the simplex searches an unconstrained, well-scaled space:
//! locations standardised by a robust spread, scales by their logarithm, and
//! degrees of freedom that may legitimately be infinite (Student t on normal
//! data, F on chi-squared-like data) through w = 1/ν, so the limit ν → ∞ is
//! the finite point w = 0 instead of a direction the simplex never finishes
//! walking along. |w| is used, which keeps the objective defined everywhere.

use std::f64::consts::PI;

use statrs::distribution::{Cauchy, Continuous, FisherSnedecor, StudentsT};
use statrs::function::gamma::ln_gamma;

use super::optimize::nelder_mead;
use super::sample::{reported_ll, Sample};
use super::{Family, Fit, FitError};

const MAX_ITER: usize = 3000;
/// Relative spread of −ln L across the simplex at convergence: for n = 10⁴
/// (ln L ~ 10⁴) that is ~1e-6 absolute, far below what moves an AIC ranking.
const FTOL: f64 = 1e-10;
const XTOL: f64 = 1e-6;
/// Degrees of freedom above this are treated as infinite (statrs switches
/// Student t to the normal density at 1e8 as well).
const MAX_DF: f64 = 1e8;
/// Smallest degrees of freedom searched; heavier tails than this are not plausible fits.
const MIN_DF: f64 = 0.02;

fn df_from(w: f64) -> f64 {
    1.0 / w.abs().max(1.0 / MAX_DF)
}

/// ln Γ(x + ½) − ln Γ(x) without the cancellation of subtracting two huge
/// ln Γ values: direct below 1000, the asymptotic series
/// `½ ln x − 1/(8x) + 1/(192x³)` above (error < 1e-18 there).
fn ln_gamma_half_ratio(x: f64) -> f64 {
    if x < 1000.0 {
        ln_gamma(x + 0.5) - ln_gamma(x)
    } else {
        0.5 * x.ln() - 1.0 / (8.0 * x) + 1.0 / (192.0 * x * x * x)
    }
}

/// Robust centre and spread for starting points and standardisation:
/// the median and the interquartile range (the standard deviation if the
/// IQR is zero).
fn centre_spread(s: &Sample<'_>) -> (f64, f64) {
    let iqr = s.quantile(0.75) - s.quantile(0.25);
    let spread = if iqr > 0.0 { iqr } else { s.var.sqrt() };
    (s.quantile(0.5), spread)
}

/// Cauchy (location μ, scale γ) on ℝ. Minimises
///
/// ```text
/// −ln L = n ln(π γ) + Σ ln(1 + ((xᵢ − μ)/γ)²)
/// ```
///
/// over (μ, ln γ), starting at the median and half the IQR (the exact values
/// for a Cauchy population).
pub(crate) fn cauchy(s: &Sample<'_>) -> Result<Fit, FitError> {
    s.finite(Family::Cauchy)?;
    let (m, spread) = centre_spread(s);
    let s0 = 0.5 * spread;
    let n = s.nf;
    let objective = |p: &[f64; 2]| {
        let (loc, scale) = (m + p[0] * s0, s0 * p[1].exp());
        let inv = 1.0 / scale;
        let sum: f64 = s.data.iter().map(|&x| ((x - loc) * inv).powi(2).ln_1p()).sum();
        n * (PI * scale).ln() + sum
    };
    let min = nelder_mead(objective, [0.0, 0.0], 0.2, FTOL, XTOL, MAX_ITER);
    if !min.converged {
        return Err(FitError::NoConvergence { family: Family::Cauchy });
    }
    let (loc, scale) = (m + min.point[0] * s0, s0 * min.point[1].exp());
    let d = Cauchy::new(loc, scale).map_err(|_| FitError::NoConvergence { family: Family::Cauchy })?;
    let ll = reported_ll(s.data.iter().map(|&x| d.ln_pdf(x)).sum(), -min.value);
    Ok(Fit::new(
        Family::Cauchy,
        vec![("location", loc), ("scale", scale)],
        ll,
        s.n,
    ))
}

/// Student t (location μ, scale σ, degrees of freedom ν) on ℝ. Minimises
///
/// ```text
/// −ln L = −n [ln Γ((ν+1)/2) − ln Γ(ν/2) − ½ ln(νπ) − ln σ] + (ν+1)/2 Σ ln(1 + zᵢ²/ν),   zᵢ = (xᵢ − μ)/σ
/// ```
///
/// over (μ, ln σ, 1/ν) from the median, IQR/1.349 and ν = 5. ν is capped at
/// 1e8 (numerically the normal distribution); a fit there is valid, it just
/// loses to the normal fit by the extra parameter's 2 AIC points.
pub(crate) fn student_t(s: &Sample<'_>) -> Result<Fit, FitError> {
    s.finite(Family::StudentT)?;
    let (m, spread) = centre_spread(s);
    let s0 = spread / 1.349;
    let n = s.nf;
    let decode = |p: &[f64; 3]| (m + p[0] * s0, s0 * p[1].exp(), df_from(p[2]));
    let objective = |p: &[f64; 3]| {
        let (loc, scale, df) = decode(p);
        if df < MIN_DF {
            return f64::INFINITY;
        }
        let inv = 1.0 / scale;
        let inv_df = 1.0 / df;
        let sum: f64 = s
            .data
            .iter()
            .map(|&x| (((x - loc) * inv).powi(2) * inv_df).ln_1p())
            .sum();
        let half = 0.5 * df;
        -n * (ln_gamma_half_ratio(half) - 0.5 * (df * PI).ln() - scale.ln()) + (half + 0.5) * sum
    };
    let min = nelder_mead(objective, [0.0, 0.0, 0.2], 0.1, FTOL, XTOL, MAX_ITER);
    if !min.converged {
        return Err(FitError::NoConvergence {
            family: Family::StudentT,
        });
    }
    let (loc, scale, df) = decode(&min.point);
    let d = StudentsT::new(loc, scale, df).map_err(|_| FitError::NoConvergence {
        family: Family::StudentT,
    })?;
    let ll = reported_ll(s.data.iter().map(|&x| d.ln_pdf(x)).sum(), -min.value);
    Ok(Fit::new(
        Family::StudentT,
        vec![("location", loc), ("scale", scale), ("df", df)],
        ll,
        s.n,
    ))
}

/// Fisher–Snedecor F (d₁, d₂) on x > 0. Minimises the negative of
///
/// ```text
/// ln L = n [(d₁/2) ln(d₁/d₂) − ln B(d₁/2, d₂/2)] + (d₁/2 − 1) Σ ln xᵢ − ((d₁+d₂)/2) Σ ln(1 + d₁xᵢ/d₂)
/// ```
///
/// over (1/d₁, 1/d₂) — either may legitimately run off to infinity (d₁ → ∞
/// is the scaled inverse-χ² limit, d₂ → ∞ the χ²/d₁ limit) — starting from the method of moments
/// (`d₂ = 2x̄/(x̄−1)` when x̄ > 1, d₁ from the variance when d₂ > 4) or
/// d₁ = d₂ = 5 otherwise. Both are capped at 1e8.
pub(crate) fn f(s: &Sample<'_>) -> Result<Fit, FitError> {
    s.positive(Family::F)?;
    let n = s.nf;
    let (mut d1_0, mut d2_0) = (5.0, 5.0);
    if s.mean > 1.0 {
        let d2 = 2.0 * s.mean / (s.mean - 1.0);
        if d2 > 4.0 {
            let denom = s.var * (d2 - 2.0).powi(2) * (d2 - 4.0) - 2.0 * d2 * d2;
            let d1 = 2.0 * d2 * d2 * (d2 - 2.0) / denom;
            if d1.is_finite() && d1 > 0.0 {
                (d1_0, d2_0) = (d1, d2);
            }
        }
    }
    let decode = |p: &[f64; 2]| (df_from(p[0]), df_from(p[1]));
    let objective = |p: &[f64; 2]| {
        let (d1, d2) = decode(p);
        if d1 < MIN_DF || d2 < MIN_DF {
            return f64::INFINITY;
        }
        let ratio = d1 / d2;
        let sum: f64 = s.data.iter().map(|&x| (ratio * x).ln_1p()).sum();
        let (a, b) = (0.5 * d1, 0.5 * d2);
        let ln_beta = ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b);
        -(n * (a * ratio.ln() - ln_beta) + (a - 1.0) * s.sum_ln - (a + b) * sum)
    };
    let min = nelder_mead(objective, [1.0 / d1_0, 1.0 / d2_0], 0.1, FTOL, XTOL, MAX_ITER);
    if !min.converged {
        return Err(FitError::NoConvergence { family: Family::F });
    }
    let (d1, d2) = decode(&min.point);
    let d = FisherSnedecor::new(d1, d2).map_err(|_| FitError::NoConvergence { family: Family::F })?;
    let ll = reported_ll(s.data.iter().map(|&x| d.ln_pdf(x)).sum(), -min.value);
    Ok(Fit::new(Family::F, vec![("d1", d1), ("d2", d2)], ll, s.n))
}
