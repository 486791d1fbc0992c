//! Families without usable sufficient statistics: Cauchy, Student t and F,
//! fitted by damped Newton on the negative log-likelihood with analytic
//! gradients and Hessians ([`super::newton`]), falling back to the
//! Nelder–Mead simplex if Newton does not converge.
//!
//! Each evaluation is one pass over the sample's points without
//! allocation. Parameters are transformed to an unconstrained, well-scaled
//! space: locations standardised by a robust spread, scales by their
//! logarithm, and degrees of freedom that may legitimately be infinite
//! (Student t on normal data, F on chi-squared-like data) through w = 1/ν,
//! so the limit ν → ∞ is the bound w = 1e-8 instead of a direction that
//! never ends.

use std::f64::consts::PI;

use statrs::distribution::{Cauchy, Continuous, FisherSnedecor, StudentsT};
use statrs::function::gamma::ln_gamma;

use super::gaps;
use super::newton::{self, Derivatives};
use super::optimize::{nelder_mead, trigamma};
use super::sample::Sample;
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

/// Minimises the objective whose value and `derivatives` are given by
/// damped Newton from `start` within `[lower, upper]`, and by the
/// Nelder–Mead simplex on the value alone (+∞ outside the box) from the
/// same start if Newton does not converge. Returns the point and the
/// objective there.
fn minimise<const N: usize>(
    family: Family,
    derivatives: impl Fn(&[f64; N]) -> Derivatives<N>,
    start: [f64; N],
    (lower, upper): ([f64; N], [f64; N]),
    step: f64,
) -> Result<([f64; N], f64), FitError> {
    if let Some(optimum) = newton::minimize(&derivatives, start, lower, upper, FTOL, 100) {
        return Ok((optimum.point, optimum.value));
    }
    let inside = |p: &[f64; N]| (0..N).all(|i| (lower[i]..=upper[i]).contains(&p[i]));
    let objective = |p: &[f64; N]| if inside(p) { derivatives(p).0 } else { f64::INFINITY };
    let min = nelder_mead(objective, start, step, FTOL, XTOL, MAX_ITER);
    if min.converged {
        Ok((min.point, min.value))
    } else {
        Err(FitError::NoConvergence { family })
    }
}

fn df_from(w: f64) -> f64 {
    1.0 / w.abs().max(1.0 / MAX_DF)
}

/// Bounds of w = 1/ν for degrees of freedom in [`MIN_DF`, `MAX_DF`].
const W_BOUNDS: (f64, f64) = (1.0 / MAX_DF, 1.0 / MIN_DF);

/// Re-expresses derivatives taken in u = ln d for coordinate `i` in
/// w = 1/d (u = −ln w, so ∂u/∂w = −d and ∂²u/∂w² = d²).
fn log_to_inverse<const N: usize>((value, mut grad, mut hess): Derivatives<N>, i: usize, d: f64) -> Derivatives<N> {
    for (j, row) in hess.iter_mut().enumerate() {
        if j != i {
            row[i] *= -d;
        }
    }
    for (j, h) in hess[i].iter_mut().enumerate() {
        if j != i {
            *h *= -d;
        }
    }
    hess[i][i] = d * d * (hess[i][i] + grad[i]);
    grad[i] *= -d;
    (value, grad, hess)
}

/// Robust centre and spread for starting points and standardisation:
/// the median and the interquartile range (the standard deviation if the
/// IQR is zero).
fn centre_spread(s: &Sample) -> (f64, f64) {
    let iqr = s.quartile(3) - s.quartile(1);
    let spread = if iqr > 0.0 { iqr } else { s.var.sqrt() };
    (s.quartile(2), spread)
}

/// Cauchy (location μ, scale γ) on ℝ. Minimises
///
/// ```text
/// −ln L = n ln(π γ) + Σ ln(1 + ((xᵢ − μ)/γ)²)
/// ```
///
/// over (μ, ln γ), starting at the median and half the IQR (the exact values
/// for a Cauchy population). With z = (x − μ)/γ, each point's term
/// ln(1 + z²) has z-derivatives g₁ = 2z/(1 + z²) and g₂ = 2(1 − z²)/(1 + z²)²,
/// and ∂z/∂μ = −1/γ, ∂z/∂ln γ = −z give the gradient and Hessian below.
pub(crate) fn cauchy(s: &Sample) -> Result<Fit, FitError> {
    s.finite(Family::Cauchy)?;
    let (m, spread) = centre_spread(s);
    let s0 = 0.5 * spread;
    let n = s.nf;
    let decode = |p: &[f64; 2]| (m + p[0] * s0, s0 * p[1].exp());
    let derivatives = |p: &[f64; 2]| {
        let (loc, scale) = decode(p);
        let inv = 1.0 / scale;
        let (mut value, mut a, mut b, mut c, mut d, mut e) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for &(x, w) in &s.points {
            let z = (x - loc) * inv;
            let q = 1.0 + z * z;
            let (g1, g2) = (2.0 * z / q, 2.0 * (1.0 - z * z) / (q * q));
            value += w * (z * z).ln_1p();
            a += w * g1;
            b += w * g1 * z;
            c += w * g2;
            d += w * g2 * z;
            e += w * g2 * z * z;
        }
        // In the coordinates (p₀, p₁) = ((μ − m)/s₀, ln(γ/s₀)): ∂/∂p₀ = s₀ ∂/∂μ.
        let k = s0 * inv;
        (
            n * (PI * scale).ln() + value,
            [-a * k, n - b],
            [[c * k * k, (d + a) * k], [(d + a) * k, e + b]],
        )
    };
    let (point, value) = minimise(
        Family::Cauchy,
        derivatives,
        [0.0, 0.0],
        ([f64::NEG_INFINITY; 2], [f64::INFINITY; 2]),
        0.2,
    )?;
    let (loc, scale) = decode(&point);
    let d = Cauchy::new(loc, scale).map_err(|_| FitError::NoConvergence { family: Family::Cauchy })?;
    let ll = s.reported_ll(|| s.sum(|x| d.ln_pdf(x)), -value);
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
/// over (μ, ln σ, 1/ν) from the median, IQR/1.349 and ν = 5, with ν in
/// [0.02, 1e8]: 1e8 is numerically the normal distribution; a fit there is
/// valid, it just loses to the normal fit by the extra parameter's 2 AIC
/// points. The derivatives are those of h = ln(1 + z²/ν) per point (see
/// [`t_derivatives`]).
pub(crate) fn student_t(s: &Sample) -> Result<Fit, FitError> {
    s.finite(Family::StudentT)?;
    let (m, spread) = centre_spread(s);
    let s0 = spread / 1.349;
    let decode = |p: &[f64; 3]| (m + p[0] * s0, s0 * p[1].exp(), df_from(p[2]));
    let derivatives = |p: &[f64; 3]| {
        let (loc, scale, df) = decode(p);
        log_to_inverse(t_derivatives(s, (loc, scale, df), s0), 2, df)
    };
    let bounds = (
        [f64::NEG_INFINITY, f64::NEG_INFINITY, W_BOUNDS.0],
        [f64::INFINITY, f64::INFINITY, W_BOUNDS.1],
    );
    let start = [0.0, 0.0, 0.2];
    let (point, value) = minimise(Family::StudentT, derivatives, start, bounds, 0.2)?;
    let (loc, scale, df) = decode(&point);
    let d = StudentsT::new(loc, scale, df).map_err(|_| FitError::NoConvergence {
        family: Family::StudentT,
    })?;
    let ll = s.reported_ll(|| s.sum(|x| d.ln_pdf(x)), -value);
    Ok(Fit::new(
        Family::StudentT,
        vec![("location", loc), ("scale", scale), ("df", df)],
        ll,
        s.n,
    ))
}

/// −ln L of the Student t and its derivatives in (p₀, p₁, p₂) =
/// ((μ − m)/s₀, ln σ − ln s₀, ln ν). With a = (ν + 1)/2, z = (x − μ)/σ and
/// h = ln(1 + z²/ν):
///
/// ```text
/// −ln L = −n [ln Γ(a) − ln Γ(ν/2) − ½ ln(νπ)] + n ln σ + a Σ h
/// h_z = 2z/q, h_zz = 2(ν − z²)/q², h_ν = −z²/(νq), h_νν = z²(2ν + z²)/(νq)², h_zν = −2z/q²   (q = ν + z²)
/// ```
///
/// with ∂z/∂μ = −1/σ, ∂z/∂ln σ = −z, and the chain rule to ln ν.
pub(super) fn t_derivatives(s: &Sample, (loc, scale, df): (f64, f64, f64), s0: f64) -> Derivatives<3> {
    let (n, nu) = (s.nf, df);
    let a = 0.5 * (nu + 1.0);
    let inv = 1.0 / scale;
    // Σ w·(h, h_z, h_z z, h_zz, h_zz z, h_zz z², h_ν, h_νν, h_zν, h_zν z).
    let mut t = [0.0; 10];
    for &(x, w) in &s.points {
        let z = (x - loc) * inv;
        let z2 = z * z;
        let q = nu + z2;
        let (hz, hzz) = (2.0 * z / q, 2.0 * (nu - z2) / (q * q));
        let (hn, hnn, hzn) = (
            -z2 / (nu * q),
            z2 * (2.0 * nu + z2) / (nu * nu * q * q),
            -2.0 * z / (q * q),
        );
        let terms = [
            (z2 / nu).ln_1p(),
            hz,
            hz * z,
            hzz,
            hzz * z,
            hzz * z2,
            hn,
            hnn,
            hzn,
            hzn * z,
        ];
        for (acc, term) in t.iter_mut().zip(terms) {
            *acc += w * term;
        }
    }
    let [h, z1, z1z, zz, zzz, zzzz, n1, n2, m1, m1z] = t;
    let x = 0.5 * nu;
    let (r1, r2) = gaps::half_ratio_derivatives(x);
    let value = -n * (gaps::half_ratio(x) - 0.5 * (nu * PI).ln() - scale.ln()) + a * h;
    // In ν, and in (μ, ln σ); then μ → p₀ (× s₀) and ν → ln ν.
    let f_nu = -n * (0.5 * r1 - 0.5 / nu) + 0.5 * h + a * n1;
    let f_nunu = -n * (0.25 * r2 + 0.5 / (nu * nu)) + n1 + a * n2;
    let f_mu = -a * z1 * inv;
    let f_s = n - a * z1z;
    let f_mumu = a * zz * inv * inv;
    let f_mus = a * (zzz + z1) * inv;
    let f_ss = a * (zzzz + z1z);
    let f_munu = -(0.5 * z1 + a * m1) * inv;
    let f_snu = -(0.5 * z1z + a * m1z);
    let grad = [s0 * f_mu, f_s, nu * f_nu];
    let hess = [
        [s0 * s0 * f_mumu, s0 * f_mus, s0 * nu * f_munu],
        [s0 * f_mus, f_ss, nu * f_snu],
        [s0 * nu * f_munu, nu * f_snu, nu * nu * f_nunu + nu * f_nu],
    ];
    (value, grad, hess)
}

/// Fisher–Snedecor F (d₁, d₂) on x > 0. Minimises the negative of
///
/// ```text
/// ln L = n [(d₁/2) ln(d₁/d₂) − ln B(d₁/2, d₂/2)] + (d₁/2 − 1) Σ ln xᵢ − ((d₁+d₂)/2) Σ ln(1 + d₁xᵢ/d₂)
/// ```
///
/// over (1/d₁, 1/d₂), d in [0.02, 1e8] — either may legitimately run off to
/// infinity (d₁ → ∞ is the scaled inverse-χ² limit, d₂ → ∞ the χ²/d₁
/// limit), so both are capped — starting from the method of moments
/// (`d₂ = 2x̄/(x̄−1)` when x̄ > 1, d₁ from the variance when d₂ > 4) or
/// d₁ = d₂ = 5 otherwise. Derivatives: [`f_derivatives`].
pub(crate) fn f(s: &Sample) -> Result<Fit, FitError> {
    s.positive(Family::F)?;
    let (mut d1_0, mut d2_0) = (5.0, 5.0);
    if s.mean > 1.0 {
        let d2 = 2.0 * s.mean / (s.mean - 1.0);
        if d2 > 4.0 {
            let denom = s.var * (d2 - 2.0).powi(2) * (d2 - 4.0) - 2.0 * d2 * d2;
            let d1 = 2.0 * d2 * d2 * (d2 - 2.0) / denom;
            if d1.is_finite() && d1 > 0.0 {
                (d1_0, d2_0) = (d1.clamp(MIN_DF, MAX_DF), d2.clamp(MIN_DF, MAX_DF));
            }
        }
    }
    let decode = |p: &[f64; 2]| (df_from(p[0]), df_from(p[1]));
    let derivatives = |p: &[f64; 2]| {
        let (d1, d2) = decode(p);
        log_to_inverse(log_to_inverse(f_derivatives(s, (d1, d2)), 0, d1), 1, d2)
    };
    let bounds = ([W_BOUNDS.0; 2], [W_BOUNDS.1; 2]);
    let start = [1.0 / d1_0, 1.0 / d2_0];
    let (point, value) = minimise(Family::F, derivatives, start, bounds, 0.2)?;
    let (d1, d2) = decode(&point);
    FisherSnedecor::new(d1, d2).map_err(|_| FitError::NoConvergence { family: Family::F })?;
    let ll = s.reported_ll(|| s.sum(f_ln_pdf(d1, d2)), -value);
    Ok(Fit::new(Family::F, vec![("d1", d1), ("d2", d2)], ll, s.n))
}

/// The F density's logarithm, as a function of x: per point the terms of
/// [`f_derivatives`]' G, −a ln(1 + 1/y) − b ln(1 + y) − ln x − ln B(a, b)
/// with a = d₁/2, b = d₂/2, y = (d₁/d₂)x, each of one sign and none
/// growing with the degrees of freedom; ln B is computed once. statrs'
/// `ln_pdf` is `pdf().ln()`, whose powers overflow (to −∞ or NaN) once
/// d₁ + d₂ passes about 140 (the fits run to 1e8), and it computes B again
/// at every point.
pub(crate) fn f_ln_pdf(d1: f64, d2: f64) -> impl Fn(f64) -> f64 {
    let (a, b, ratio) = (0.5 * d1, 0.5 * d2, d1 / d2);
    let ln_b = ln_beta(a, b);
    move |x| {
        if !(x > 0.0 && x.is_finite()) {
            return f64::NEG_INFINITY; // statrs: density 0 off (0, ∞)
        }
        let y = ratio * x;
        -a * (1.0 / y).ln_1p() - b * y.ln_1p() - x.ln() - ln_b
    }
}

/// ln B(a, b) as ln Γ of the smaller argument less the gap from the larger
/// to the sum ([`gaps::ln_gamma`]), which does not cancel for large ones.
fn ln_beta(a: f64, b: f64) -> f64 {
    if a >= b {
        ln_gamma(b) - gaps::ln_gamma(a, b)
    } else {
        ln_gamma(a) - gaps::ln_gamma(b, a)
    }
}

/// −ln L of the F distribution and its derivatives in (ln d₁, ln d₂),
/// written so that no term grows with the degrees of freedom: with
/// a = d₁/2, b = d₂/2, y = (d₁/d₂)x and the sums (each of terms of one
/// sign, so accurate) A = Σ ln(1 + 1/y), L = Σ ln(1 + y), C = Σ 1/(1 + y),
/// P = Σ y/(1 + y) = n − C, D = Σ [ln(1 + y) − y/(1 + y)] = L − P and
/// Q = Σ y/(1 + y)², the log-likelihood
/// n [a ln(d₁/d₂) − ln B(a, b)] + (a − 1) Σ ln x − (a + b) L is
///
/// ```text
/// G   = −a A − b L − Σ ln x − n ln B(a, b)
/// G₁  = −a A − n b + (a+b) C + n a [ψ(a+b) − ψ(a)]     (= −a A + n a − (a+b) P + …, used when b > a)
/// G₂  = n b − (a+b) C − b L + n b [ψ(a+b) − ψ(b)]     (= −a C − b D + …, used when b > a)
/// G₁₁ = G₁ + b P + a C − n a² [ψ′(a) − ψ′(a+b)] − (a+b) Q
/// G₁₂ = −b P − a C + n a b ψ′(a+b) + (a+b) Q
/// G₂₂ = n b [ψ(a+b) − ψ(b)] − n b² [ψ′(b) − ψ′(a+b)] − b D + b P − (a+b) Q
/// ```
///
/// (∂a/∂ln d₁ = a, ∂b/∂ln d₂ = b), with the gaps of ln Γ, ψ and ψ′ from
/// their asymptotic series for large arguments ([`super::gaps`]). Of the
/// two equal forms of G₁ and G₂ the one whose sum (C or P) is the small one
/// is used. The textbook form subtracts terms of size n·a·ln a, which at
/// d₁ = 1e8 leaves the likelihood a few 1e-4 of noise and the gradient none
/// of its sign.
pub(super) fn f_derivatives(s: &Sample, (d1, d2): (f64, f64)) -> Derivatives<2> {
    let n = s.nf;
    let (a, b) = (0.5 * d1, 0.5 * d2);
    let ratio = d1 / d2;
    let [sa, l, c, p, d, q] = s.points.iter().fold([0.0; 6], |acc, &(x, w)| {
        let y = ratio * x;
        let inv = 1.0 / (1.0 + y);
        let (log, share) = (y.ln_1p(), y * inv);
        [
            acc[0] + w * (1.0 / y).ln_1p(),
            acc[1] + w * log,
            acc[2] + w * inv,
            acc[3] + w * share,
            acc[4] + w * (log - share),
            acc[5] + w * share * inv,
        ]
    });
    let g = -a * sa - b * l - s.points_sum_ln - n * ln_beta(a, b);
    let (psi_a, psi_b) = (gaps::digamma(a, b), gaps::digamma(b, a));
    let (tri_a, tri_b) = (gaps::trigamma(a, b), gaps::trigamma(b, a));
    let (g1, g2) = if a >= b {
        (
            -a * sa - n * b + (a + b) * c + n * a * psi_a,
            n * b - (a + b) * c - b * l + n * b * psi_b,
        )
    } else {
        (
            -a * sa + n * a - (a + b) * p + n * a * psi_a,
            -a * c - b * d + n * b * psi_b,
        )
    };
    let g11 = g1 + b * p + a * c - n * a * a * tri_a - (a + b) * q;
    let g12 = -b * p - a * c + n * a * b * trigamma(a + b) + (a + b) * q;
    let g22 = n * b * psi_b - n * b * b * tri_b - b * d + b * p - (a + b) * q;
    (-g, [-g1, -g2], [[-g11, -g12], [-g12, -g22]])
}
