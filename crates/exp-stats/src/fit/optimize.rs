//! Small numerical building blocks shared by the iterative estimators: the
//! trigamma function (statrs has digamma but not its derivative), a
//! safeguarded Newton root finder and a fixed-dimension Nelder–Mead simplex.
//!
//! Everything works on stack arrays so that the inner loops of the fits never
//! allocate.

/// The trigamma function ψ′(x) = d²/dx² ln Γ(x), for x > 0.
///
/// Shifts x up with the recurrence ψ′(x) = ψ′(x + 1) + 1/x² until x ≥ 12 and
/// then uses the asymptotic series
///
/// ```text
/// ψ′(x) ≈ 1/x + 1/(2x²) + 1/(6x³) − 1/(30x⁵) + 1/(42x⁷) − 1/(30x⁹) + 5/(66x¹¹)
/// ```
///
/// whose first omitted term is below 3e-15 there. Returns NaN for x ≤ 0 or NaN
/// (callers only ever pass positive shapes).
pub(crate) fn trigamma(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    let mut x = x;
    let mut acc = 0.0;
    while x < 12.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let r = 1.0 / x;
    let r2 = r * r;
    acc + r
        + 0.5 * r2
        + r * r2 * (1.0 / 6.0 - r2 * (1.0 / 30.0 - r2 * (1.0 / 42.0 - r2 * (1.0 / 30.0 - r2 * 5.0 / 66.0))))
}

/// Finds the root of a function that is strictly decreasing on (lo, hi) with
/// `f(lo) > 0 > f(hi)`, by Newton steps that fall back to bisection whenever a
/// step would leave the current bracket (so it cannot diverge).
///
/// `f` returns `(value, derivative)`. Stops when the bracket or the step is
/// below `tol` relative to x, or after `max_iter` iterations (→ `None`).
pub(crate) fn newton_decreasing(
    mut f: impl FnMut(f64) -> (f64, f64),
    mut lo: f64,
    mut hi: f64,
    start: f64,
    tol: f64,
    max_iter: usize,
) -> Option<f64> {
    let mut x = if start > lo && start < hi {
        start
    } else {
        0.5 * (lo + hi)
    };
    for _ in 0..max_iter {
        let (value, slope) = f(x);
        if !value.is_finite() {
            return None;
        }
        if value == 0.0 {
            return Some(x);
        }
        // Shrink the bracket: f is decreasing, so a positive value means the root is to the right.
        if value > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - value / slope;
        let next = if slope < 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - x).abs() <= tol * x.abs().max(1e-300) || (hi - lo) <= tol * x.abs() {
            return Some(next);
        }
        x = next;
    }
    None
}

/// Outcome of [`nelder_mead`]: the best point, its value and whether the
/// simplex actually converged.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Minimum<const N: usize> {
    pub point: [f64; N],
    pub value: f64,
    pub converged: bool,
}

/// Minimises `f` over ℝᴺ with the Nelder–Mead simplex (reflection 1,
/// expansion 2, contraction ½, shrink ½), starting from `start` with an
/// initial simplex of `step` along each axis.
///
/// Non-finite values of `f` count as +∞, so constraints can be expressed by
/// returning NaN/∞ outside the feasible set. Converges when the spread of
/// the simplex values is below `ftol · (|f_best| + 1e-10)` and its extent
/// below `xtol`. Because a simplex can collapse prematurely, one restart is
/// made from the converged point; the result counts as converged only if the
/// restart also converges.
pub(crate) fn nelder_mead<const N: usize>(
    mut f: impl FnMut(&[f64; N]) -> f64,
    start: [f64; N],
    step: f64,
    ftol: f64,
    xtol: f64,
    max_iter: usize,
) -> Minimum<N> {
    let mut eval = |x: &[f64; N]| {
        let v = f(x);
        if v.is_finite() {
            v
        } else {
            f64::INFINITY
        }
    };
    let first = simplex(&mut eval, start, step, ftol, xtol, max_iter);
    let second = simplex(&mut eval, first.point, step, ftol, xtol, max_iter);
    if second.value <= first.value {
        Minimum {
            converged: first.converged && second.converged,
            ..second
        }
    } else {
        Minimum {
            converged: first.converged && second.converged,
            ..first
        }
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "Nelder-Mead in one piece, step for step as published"
)]
fn simplex<const N: usize>(
    f: &mut impl FnMut(&[f64; N]) -> f64,
    start: [f64; N],
    step: f64,
    ftol: f64,
    xtol: f64,
    max_iter: usize,
) -> Minimum<N> {
    // N + 1 vertices; a Vec here is one allocation per call, outside the loop.
    let mut points: Vec<[f64; N]> = Vec::with_capacity(N + 1);
    let mut values: Vec<f64> = Vec::with_capacity(N + 1);
    points.push(start);
    values.push(f(&start));
    for i in 0..N {
        let mut p = start;
        p[i] += step;
        values.push(f(&p));
        points.push(p);
    }
    let mut converged = false;
    for _ in 0..max_iter {
        // Order vertices by value; index sort keeps it allocation free for small N.
        let (mut best, mut worst) = (0, 0);
        for i in 1..=N {
            if values[i] < values[best] {
                best = i;
            }
            if values[i] > values[worst] {
                worst = i;
            }
        }
        let mut second_worst = best;
        for i in 0..=N {
            if i != worst && values[i] >= values[second_worst] {
                second_worst = i;
            }
        }
        let spread = values[worst] - values[best];
        let mut extent: f64 = 0.0;
        for p in &points {
            for d in 0..N {
                extent = extent.max((p[d] - points[best][d]).abs());
            }
        }
        if spread.is_finite() && spread <= ftol * (values[best].abs() + 1e-10) && extent <= xtol {
            converged = true;
            break;
        }
        let mut centroid = [0.0; N];
        for (i, p) in points.iter().enumerate() {
            if i != worst {
                for d in 0..N {
                    centroid[d] += p[d] / N as f64;
                }
            }
        }
        let toward = |t: f64| {
            let mut q = [0.0; N];
            for d in 0..N {
                q[d] = centroid[d] + t * (points[worst][d] - centroid[d]);
            }
            q
        };
        let reflected = toward(-1.0);
        let fr = f(&reflected);
        if fr < values[best] {
            let expanded = toward(-2.0);
            let fe = f(&expanded);
            if fe < fr {
                points[worst] = expanded;
                values[worst] = fe;
            } else {
                points[worst] = reflected;
                values[worst] = fr;
            }
        } else if fr < values[second_worst] {
            points[worst] = reflected;
            values[worst] = fr;
        } else {
            // Outside contraction if the reflection improved on the worst, inside otherwise.
            let (contracted, fc) = if fr < values[worst] {
                let c = toward(-0.5);
                let v = f(&c);
                (c, v)
            } else {
                let c = toward(0.5);
                let v = f(&c);
                (c, v)
            };
            if fc < values[worst].min(fr) {
                points[worst] = contracted;
                values[worst] = fc;
            } else {
                let anchor = points[best];
                for i in 0..=N {
                    if i != best {
                        for d in 0..N {
                            points[i][d] = anchor[d] + 0.5 * (points[i][d] - anchor[d]);
                        }
                        values[i] = f(&points[i]);
                    }
                }
            }
        }
    }
    let mut best = 0;
    for i in 1..=N {
        if values[i] < values[best] {
            best = i;
        }
    }
    Minimum {
        point: points[best],
        value: values[best],
        converged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigamma_known_values() {
        // ψ′(1) = π²/6, ψ′(½) = π²/2, ψ′(10) = 0.10516633568168575 (mpmath).
        let pi2 = std::f64::consts::PI * std::f64::consts::PI;
        assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-12);
        assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-11);
        assert!((trigamma(10.0) - 0.105_166_335_681_685_75).abs() < 1e-13);
        assert!(trigamma(0.0).is_nan());
    }

    #[test]
    fn newton_finds_a_cube_root() {
        // f(x) = 10 − x³ is decreasing; root 10^(1/3).
        let root = newton_decreasing(|x| (10.0 - x * x * x, -3.0 * x * x), 0.0, 10.0, 1.0, 1e-14, 200).unwrap();
        assert!((root - 10f64.cbrt()).abs() < 1e-12);
    }

    #[test]
    fn nelder_mead_minimises_rosenbrock() {
        let m = nelder_mead(
            |p: &[f64; 2]| (1.0 - p[0]).powi(2) + 100.0 * (p[1] - p[0] * p[0]).powi(2),
            [-1.2, 1.0],
            0.5,
            1e-15,
            1e-10,
            5000,
        );
        assert!(m.converged);
        assert!(
            (m.point[0] - 1.0).abs() < 1e-6 && (m.point[1] - 1.0).abs() < 1e-6,
            "{:?}",
            m.point
        );
    }
}
