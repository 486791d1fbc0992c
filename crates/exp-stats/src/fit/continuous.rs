//! Continuous families with closed-form or one/two-dimensional Newton
//! estimators: normal, exponential, log-normal, gamma, chi-squared, Weibull,
//! beta.

use statrs::distribution::{Beta, ChiSquared, Continuous, Exp, Gamma, LogNormal, Normal, Weibull};
use statrs::function::gamma::{digamma, ln_gamma};

use super::optimize::{newton_decreasing, trigamma};
use super::sample::Sample;
use super::{Family, Fit, FitError};

/// Newton iteration bound; every root here is bracketed, so this is only a backstop.
const MAX_ITER: usize = 200;
const TOL: f64 = 1e-12;

fn sum_ln_pdf(s: &Sample, d: &impl Continuous<f64, f64>) -> f64 {
    s.sum(|x| d.ln_pdf(x))
}

fn no_convergence(family: Family) -> FitError {
    FitError::NoConvergence { family }
}

/// Normal: `mean = x̄`, `sd = √(Σ(xᵢ − x̄)²/n)` (the MLE divides by n, not n − 1).
pub(crate) fn normal(s: &Sample) -> Result<Fit, FitError> {
    s.finite(Family::Normal)?;
    let sd = s.var.sqrt();
    let d = Normal::new(s.mean, sd).map_err(|_| FitError::Degenerate)?;
    let ours = -0.5 * s.nf * ((2.0 * std::f64::consts::PI * s.var).ln() + 1.0);
    let ll = s.reported_ll(|| sum_ln_pdf(s, &d), ours);
    Ok(Fit::new(Family::Normal, vec![("mean", s.mean), ("sd", sd)], ll, s.n))
}

/// Exponential on x ≥ 0: `rate = 1 / x̄`.
pub(crate) fn exponential(s: &Sample) -> Result<Fit, FitError> {
    s.non_negative(Family::Exponential)?;
    let rate = 1.0 / s.mean;
    let d = Exp::new(rate).map_err(|_| FitError::Degenerate)?;
    let ours = s.nf * (rate.ln() - 1.0);
    let ll = s.reported_ll(|| sum_ln_pdf(s, &d), ours);
    Ok(Fit::new(Family::Exponential, vec![("rate", rate)], ll, s.n))
}

/// Log-normal on x > 0: the normal MLE of ln x, `mu = Σ ln xᵢ / n`,
/// `sigma = √(Σ(ln xᵢ − mu)²/n)`.
pub(crate) fn log_normal(s: &Sample) -> Result<Fit, FitError> {
    s.positive(Family::LogNormal)?;
    let mu = s.mean_ln();
    let var = s.var_ln;
    let sigma = var.sqrt();
    let d = LogNormal::new(mu, sigma).map_err(|_| FitError::Degenerate)?;
    let ours = -s.sum_ln - 0.5 * s.nf * ((2.0 * std::f64::consts::PI * var).ln() + 1.0);
    let ll = s.reported_ll(|| sum_ln_pdf(s, &d), ours);
    Ok(Fit::new(Family::LogNormal, vec![("mu", mu), ("sigma", sigma)], ll, s.n))
}

/// Gamma (shape a, rate β) on x > 0. The profile likelihood gives
/// `β = a / x̄` and the shape solves
///
/// ```text
/// ln a − ψ(a) = ln x̄ − mean(ln x) =: s     (s > 0 by Jensen unless all values are equal)
/// ```
///
/// by Newton with trigamma from Minka's start `a₀ = (3 − s + √((s − 3)² + 24 s)) / (12 s)`.
pub(crate) fn gamma(s: &Sample) -> Result<Fit, FitError> {
    s.positive(Family::Gamma)?;
    let gap = s.mean.ln() - s.mean_ln();
    if gap.is_nan() || gap <= 0.0 {
        return Err(FitError::Degenerate);
    }
    let start = (3.0 - gap + ((gap - 3.0).powi(2) + 24.0 * gap).sqrt()) / (12.0 * gap);
    let shape = newton_decreasing(
        |a| (a.ln() - digamma(a) - gap, 1.0 / a - trigamma(a)),
        1e-12,
        1e15,
        start,
        TOL,
        MAX_ITER,
    )
    .ok_or(no_convergence(Family::Gamma))?;
    let rate = shape / s.mean;
    let d = Gamma::new(shape, rate).map_err(|_| no_convergence(Family::Gamma))?;
    let ours = s.nf * (shape * rate.ln() - ln_gamma(shape)) + (shape - 1.0) * s.sum_ln - rate * s.mean * s.nf;
    let ll = s.reported_ll(|| sum_ln_pdf(s, &d), ours);
    Ok(Fit::new(Family::Gamma, vec![("shape", shape), ("rate", rate)], ll, s.n))
}

/// Chi-squared with k degrees of freedom (the standard one-parameter family:
/// a gamma with shape k/2 and rate ½, no location or scale) on x > 0.
/// Setting the score to zero gives
///
/// ```text
/// ψ(k/2) = mean(ln x) − ln 2
/// ```
///
/// solved by Newton on h = k/2 (ψ is increasing, so the root is unique) from
/// Minka's inverse-digamma start.
pub(crate) fn chi_squared(s: &Sample) -> Result<Fit, FitError> {
    s.positive(Family::ChiSquared)?;
    let target = s.mean_ln() - std::f64::consts::LN_2;
    // Minka: ψ⁻¹(y) ≈ exp(y) + ½ for y ≥ −2.22, −1/(y − ψ(1)) below.
    let start = if target >= -2.22 {
        target.exp() + 0.5
    } else {
        -1.0 / (target + 0.577_215_664_901_532_9)
    };
    let half = newton_decreasing(
        |h| (target - digamma(h), -trigamma(h)),
        1e-12,
        1e15,
        start,
        TOL,
        MAX_ITER,
    )
    .ok_or(no_convergence(Family::ChiSquared))?;
    let df = 2.0 * half;
    let d = ChiSquared::new(df).map_err(|_| no_convergence(Family::ChiSquared))?;
    let ours = -s.nf * (half * std::f64::consts::LN_2 + ln_gamma(half)) + (half - 1.0) * s.sum_ln - 0.5 * s.mean * s.nf;
    let ll = s.reported_ll(|| sum_ln_pdf(s, &d), ours);
    Ok(Fit::new(Family::ChiSquared, vec![("df", df)], ll, s.n))
}

/// Weibull (shape k, scale λ) on x > 0. Profiling out λ gives
/// `λ = (Σ xᵢᵏ / n)^(1/k)` and k solves
///
/// ```text
/// g(k) = 1/k + mean(ln x) − Σ xᵢᵏ ln xᵢ / Σ xᵢᵏ = 0
/// ```
///
/// g is strictly decreasing (its derivative is −1/k² minus a weighted
/// variance of ln x), so safeguarded Newton from `k₀ = π / (√6 · sd(ln x))`
/// finds the unique root. Powers are computed as exp(k (ln xᵢ − max ln x))
/// so large k cannot overflow; the ratios are unchanged by that scaling.
pub(crate) fn weibull(s: &Sample) -> Result<Fit, FitError> {
    s.positive(Family::Weibull)?;
    let logs: Vec<(f64, f64)> = s.points.iter().map(|&(x, w)| (x.ln(), w)).collect();
    let mean_ln = s.points_sum_ln / s.nf;
    let max_ln = s.max.ln();
    let sd_ln = s.var_ln.sqrt();
    if sd_ln.is_nan() || sd_ln <= 0.0 {
        return Err(FitError::Degenerate);
    }
    // Returns (Σ wᵢ, Σ wᵢ lᵢ, Σ wᵢ lᵢ²) with wᵢ = cᵢ exp(k (lᵢ − max ln x)), cᵢ the point's weight.
    let moments = |k: f64| {
        let (mut b, mut a, mut c) = (0.0, 0.0, 0.0);
        for &(l, count) in &logs {
            let w = count * (k * (l - max_ln)).exp();
            b += w;
            a += w * l;
            c += w * l * l;
        }
        (b, a, c)
    };
    let start = std::f64::consts::PI / (6f64.sqrt() * sd_ln);
    let shape = newton_decreasing(
        |k| {
            let (b, a, c) = moments(k);
            let (m1, m2) = (a / b, c / b);
            (1.0 / k + mean_ln - m1, -1.0 / (k * k) - (m2 - m1 * m1))
        },
        1e-6,
        1e9,
        start,
        TOL,
        MAX_ITER,
    )
    .ok_or(no_convergence(Family::Weibull))?;
    let (b, _, _) = moments(shape);
    let scale = max_ln.exp() * (b / s.nf).powf(1.0 / shape);
    let d = Weibull::new(shape, scale).map_err(|_| no_convergence(Family::Weibull))?;
    // At the MLE Σ (xᵢ/λ)ᵏ = n.
    let ours = s.nf * (shape.ln() - shape * scale.ln()) + (shape - 1.0) * s.points_sum_ln - s.nf;
    let ll = s.reported_ll(|| sum_ln_pdf(s, &d), ours);
    Ok(Fit::new(
        Family::Weibull,
        vec![("shape", shape), ("scale", scale)],
        ll,
        s.n,
    ))
}

/// Beta (α, β) on 0 < x < 1. The log-likelihood
///
/// ```text
/// ln L = n [ln Γ(α+β) − ln Γ(α) − ln Γ(β)] + (α−1) Σ ln xᵢ + (β−1) Σ ln(1−xᵢ)
/// ```
///
/// is concave in (α, β); two-dimensional Newton with the digamma gradient and
/// trigamma Hessian, halving steps that leave α, β > 0 or lower the
/// likelihood, from the method-of-moments start
/// `c = x̄(1−x̄)/v − 1, α₀ = x̄ c, β₀ = (1−x̄) c` (α₀ = β₀ = 1 when c ≤ 0).
pub(crate) fn beta(s: &Sample) -> Result<Fit, FitError> {
    s.unit_interval(Family::Beta)?;
    let (s1, s2, n) = (s.sum_ln, s.sum_ln1m, s.nf);
    let ll = |a: f64, b: f64| n * (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b)) + (a - 1.0) * s1 + (b - 1.0) * s2;
    let common = s.mean * (1.0 - s.mean) / s.var - 1.0;
    let (mut a, mut b) = if common > 0.0 {
        (s.mean * common, (1.0 - s.mean) * common)
    } else {
        (1.0, 1.0)
    };
    let mut current = ll(a, b);
    let mut converged = false;
    for _ in 0..MAX_ITER {
        let psi_ab = digamma(a + b);
        let (g1, g2) = (n * (psi_ab - digamma(a)) + s1, n * (psi_ab - digamma(b)) + s2);
        let t_ab = trigamma(a + b);
        let (h11, h12, h22) = (n * (t_ab - trigamma(a)), n * t_ab, n * (t_ab - trigamma(b)));
        let det = h11 * h22 - h12 * h12;
        // Newton step −H⁻¹g; H is negative definite, so det > 0.
        let (da, db) = ((h22 * g1 - h12 * g2) / det, (h11 * g2 - h12 * g1) / det);
        let (mut step, mut moved) = (1.0, false);
        for _ in 0..60 {
            let (na, nb) = (a - step * da, b - step * db);
            if na > 0.0 && nb > 0.0 {
                let candidate = ll(na, nb);
                if candidate >= current - 1e-12 * current.abs() {
                    (a, b, current, moved) = (na, nb, candidate, true);
                    break;
                }
            }
            step *= 0.5;
        }
        if !moved || (step * da).abs() <= TOL * a && (step * db).abs() <= TOL * b {
            converged = moved || (da.abs() <= 1e-8 * a && db.abs() <= 1e-8 * b);
            break;
        }
    }
    if !converged {
        return Err(no_convergence(Family::Beta));
    }
    let d = Beta::new(a, b).map_err(|_| no_convergence(Family::Beta))?;
    let reported = s.reported_ll(|| sum_ln_pdf(s, &d), current);
    Ok(Fit::new(Family::Beta, vec![("alpha", a), ("beta", b)], reported, s.n))
}
