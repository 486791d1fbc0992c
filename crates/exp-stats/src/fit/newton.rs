//! Damped Newton minimisation with analytic derivatives, for the families
//! whose likelihood has no closed-form maximiser (Cauchy, Student t, F).
//!
//! Each iteration solves H d = −g, adding μI to the Hessian until it is
//! positive definite (Levenberg), and backtracks along d until the Armijo
//! condition holds. Coordinates may be boxed: a coordinate at its bound
//! whose step points outward is held there, so a maximiser at infinity
//! (degrees of freedom of normal data) converges to the cap instead of
//! walking forever. Near the optimum the steps are full Newton steps and
//! converge quadratically: 5–10 passes over the data where the simplex took
//! hundreds.

/// One evaluation: the objective, its gradient and its Hessian.
pub(crate) type Derivatives<const N: usize> = (f64, [f64; N], [[f64; N]; N]);

/// Where [`minimize`] stopped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Optimum<const N: usize> {
    pub point: [f64; N],
    pub value: f64,
}

/// Minimises `f` from `start` within `[lower, upper]` (per coordinate).
/// Converges when the Newton decrement −g·d/2 falls below
/// `ftol · (|f| + 1)`; `None` when `max_iter` iterations do not get there,
/// when no step decreases f, or when f is not finite at the start.
pub(crate) fn minimize<const N: usize>(
    mut f: impl FnMut(&[f64; N]) -> Derivatives<N>,
    start: [f64; N],
    lower: [f64; N],
    upper: [f64; N],
    ftol: f64,
    max_iter: usize,
) -> Option<Optimum<N>> {
    let mut x = start;
    let (mut value, mut grad, mut hess) = f(&x);
    for _ in 0..max_iter {
        if !value.is_finite() {
            return None;
        }
        // Hold coordinates at a bound whose descent direction leaves the box.
        let mut free = [true; N];
        for i in 0..N {
            if (x[i] <= lower[i] && grad[i] > 0.0) || (x[i] >= upper[i] && grad[i] < 0.0) {
                free[i] = false;
            }
        }
        let step = newton_step(&grad, &hess, &free)?;
        let decrement = -dot(&grad, &step);
        if decrement <= 2.0 * ftol * (value.abs() + 1.0) {
            return Some(Optimum { point: x, value });
        }
        let mut t = 1.0;
        let mut moved = false;
        for _ in 0..50 {
            let mut candidate = x;
            for i in 0..N {
                candidate[i] = (x[i] + t * step[i]).clamp(lower[i], upper[i]);
            }
            let next = f(&candidate);
            // Armijo on the clamped step, measured along the direction actually taken.
            let taken: f64 = (0..N).map(|i| grad[i] * (candidate[i] - x[i])).sum();
            if next.0.is_finite() && next.0 <= value + 1e-4 * taken.min(0.0) {
                x = candidate;
                (value, grad, hess) = next;
                moved = true;
                break;
            }
            t *= 0.5;
        }
        if !moved {
            // No decrease along a descent direction: converged to rounding.
            return (decrement <= 1e-6 * (value.abs() + 1.0)).then_some(Optimum { point: x, value });
        }
    }
    None
}

fn dot<const N: usize>(a: &[f64; N], b: &[f64; N]) -> f64 {
    (0..N).map(|i| a[i] * b[i]).sum()
}

/// d = −(H + μI)⁻¹ g over the free coordinates (held ones get 0), with the
/// smallest μ ∈ {0, 1e-8·scale, 1e-6·scale, …} that makes the matrix
/// positive definite (tested by Cholesky).
fn newton_step<const N: usize>(grad: &[f64; N], hess: &[[f64; N]; N], free: &[bool; N]) -> Option<[f64; N]> {
    let scale = (0..N).map(|i| hess[i][i].abs()).fold(1e-300, f64::max);
    let mut mu = 0.0;
    for _ in 0..20 {
        let mut a = [[0.0; N]; N];
        let mut b = [0.0; N];
        for i in 0..N {
            for j in 0..N {
                a[i][j] = if free[i] && free[j] { hess[i][j] } else { 0.0 };
            }
            a[i][i] = if free[i] { a[i][i] + mu } else { 1.0 };
            b[i] = if free[i] { -grad[i] } else { 0.0 };
        }
        if let Some(d) = cholesky_solve(a, b) {
            return Some(d);
        }
        mu = if mu == 0.0 { 1e-8 * scale } else { mu * 100.0 };
    }
    None
}

/// Solves A x = b for symmetric positive definite A; `None` otherwise.
fn cholesky_solve<const N: usize>(a: [[f64; N]; N], b: [f64; N]) -> Option<[f64; N]> {
    let mut l = [[0.0; N]; N];
    for i in 0..N {
        for j in 0..=i {
            let sum = a[i][j] - l[i][..j].iter().zip(&l[j][..j]).map(|(x, y)| x * y).sum::<f64>();
            if i == j {
                if sum.is_nan() || sum <= 0.0 {
                    return None;
                }
                l[i][i] = sum.sqrt();
            } else {
                l[i][j] = sum / l[j][j];
            }
        }
    }
    let mut y = [0.0; N];
    for i in 0..N {
        y[i] = (b[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
    }
    let mut x = [0.0; N];
    for i in (0..N).rev() {
        x[i] = (y[i] - (i + 1..N).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimises_a_quadratic_in_one_step_and_respects_bounds() {
        // (x − 3)² + 2(y + 1)² + xy/2, minimum where the gradient vanishes.
        let f = |p: &[f64; 2]| {
            let (x, y) = (p[0], p[1]);
            (
                (x - 3.0).powi(2) + 2.0 * (y + 1.0).powi(2) + 0.5 * x * y,
                [2.0 * (x - 3.0) + 0.5 * y, 4.0 * (y + 1.0) + 0.5 * x],
                [[2.0, 0.5], [0.5, 4.0]],
            )
        };
        let free = minimize(f, [0.0, 0.0], [-10.0; 2], [10.0; 2], 1e-14, 20).unwrap();
        // Solve 2x + y/2 = 6, x/2 + 4y = −4.
        let det = 2.0 * 4.0 - 0.25;
        let (x, y) = ((6.0 * 4.0 + 0.5 * 4.0) / det, (2.0 * -4.0 - 0.5 * 6.0) / det);
        assert!((free.point[0] - x).abs() < 1e-9 && (free.point[1] - y).abs() < 1e-9);
        // With x ≤ 1 the optimum sits on the bound, y optimal given x = 1.
        let boxed = minimize(f, [0.0, 0.0], [-10.0; 2], [1.0, 10.0], 1e-14, 20).unwrap();
        assert_eq!(boxed.point[0], 1.0);
        assert!((boxed.point[1] - (-4.0 - 0.5) / 4.0).abs() < 1e-9);
    }

    #[test]
    fn a_non_convex_start_still_descends() {
        // Rosenbrock: the Hessian is indefinite away from the valley.
        let f = |p: &[f64; 2]| {
            let (x, y) = (p[0], p[1]);
            (
                (1.0 - x).powi(2) + 100.0 * (y - x * x).powi(2),
                [-2.0 * (1.0 - x) - 400.0 * x * (y - x * x), 200.0 * (y - x * x)],
                [[2.0 - 400.0 * (y - 3.0 * x * x), -400.0 * x], [-400.0 * x, 200.0]],
            )
        };
        let m = minimize(f, [-1.2, 1.0], [-10.0; 2], [10.0; 2], 1e-20, 200).unwrap();
        assert!(
            (m.point[0] - 1.0).abs() < 1e-6 && (m.point[1] - 1.0).abs() < 1e-6,
            "{:?}",
            m.point
        );
    }
}
