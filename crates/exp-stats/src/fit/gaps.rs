//! Differences of ln Γ, ψ and ψ′ at nearby arguments, which cancel when
//! computed directly for large arguments (the degrees of freedom of the
//! Student t and F fits run up to 1e8): the asymptotic series there.

use statrs::function::gamma::{digamma as psi, ln_gamma as lgamma};

use super::optimize::trigamma as psi1;

/// ln Γ(x + ½) − ln Γ(x) without the cancellation of subtracting two huge
/// ln Γ values: direct below 1000, the asymptotic series
/// `½ ln x − 1/(8x) + 1/(192x³)` above (error < 1e-18 there).
pub(crate) fn half_ratio(x: f64) -> f64 {
    if x < 1000.0 {
        lgamma(x + 0.5) - lgamma(x)
    } else {
        0.5 * x.ln() - 1.0 / (8.0 * x) + 1.0 / (192.0 * x * x * x)
    }
}

/// The first two derivatives of ln Γ(x + ½) − ln Γ(x): ψ(x + ½) − ψ(x) and
/// ψ′(x + ½) − ψ′(x), from the series of [`half_ratio`] above
/// 1000, where the differences would cancel.
pub(crate) fn half_ratio_derivatives(x: f64) -> (f64, f64) {
    if x < 1000.0 {
        (psi(x + 0.5) - psi(x), psi1(x + 0.5) - psi1(x))
    } else {
        let (x2, x3) = (x * x, x * x * x);
        (
            0.5 / x + 1.0 / (8.0 * x2) - 1.0 / (64.0 * x2 * x2),
            -0.5 / x2 - 1.0 / (4.0 * x3) + 1.0 / (16.0 * x3 * x2),
        )
    }
}

/// From here on the gaps below use the series (next terms below 1e-15
/// relative).
const LARGE: f64 = 1e4;

/// ln Γ(x + h) − ln Γ(x), by Stirling:
/// (x − ½) ln(1 + h/x) + h ln(x + h) − h − h / (12 x (x + h)).
pub(crate) fn ln_gamma(x: f64, h: f64) -> f64 {
    if x < LARGE {
        return lgamma(x + h) - lgamma(x);
    }
    (x - 0.5) * (h / x).ln_1p() + h * (x + h).ln() - h - h / (12.0 * x * (x + h))
}

/// ψ(x + h) − ψ(x) = ln(1 + h/x) + h/(2x(x + h)) + h(2x + h)/(12 x² (x + h)²) + …
pub(crate) fn digamma(x: f64, h: f64) -> f64 {
    if x < LARGE {
        return psi(x + h) - psi(x);
    }
    let y = x + h;
    (h / x).ln_1p() + h / (2.0 * x * y) + h * (2.0 * x + h) / (12.0 * x * x * y * y)
}

/// ψ′(x) − ψ′(x + h) = h/(x(x + h)) + h(2x + h)/(2 x² (x + h)²) + (1/x³ − 1/(x + h)³)/6 + …
pub(crate) fn trigamma(x: f64, h: f64) -> f64 {
    if x < LARGE {
        return psi1(x) - psi1(x + h);
    }
    let y = x + h;
    let cubes = h * (x * x + x * y + y * y) / (x * x * x * y * y * y);
    h / (x * y) + h * (2.0 * x + h) / (2.0 * x * x * y * y) + cubes / 6.0
}
