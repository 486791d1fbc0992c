//! Kendall's rank correlation τ-b between two samples with ties, and its
//! asymptotic one-sided test (the normal approximation with the variance
//! corrected for ties in both samples, as scipy's `kendalltau(…,
//! method="asymptotic")`). Claims use it for trends over a sweep parameter,
//! where the parameter's values are heavily tied (every repetition of a
//! point shares its value). Pairs are compared directly, O(n²): a run's
//! trials number thousands at most.

use statrs::distribution::{ContinuousCDF, Normal};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kendall {
    /// τ-b, in [−1, 1].
    pub tau: f64,
    /// The standardised statistic: (concordant − discordant) / its standard error.
    pub z: f64,
    /// One-sided p-value of "τ > 0" (increasing).
    pub p_increasing: f64,
    /// One-sided p-value of "τ < 0" (decreasing).
    pub p_decreasing: f64,
    pub n: usize,
}

/// τ-b of `x` against `y` (same length), `None` with fewer than 3 pairs, a
/// non-finite value, or either sample constant (τ undefined).
pub fn kendall_tau(x: &[f64], y: &[f64]) -> Option<Kendall> {
    let n = x.len();
    if n != y.len() || n < 3 || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let mut score = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            let sx = sign(x[j] - x[i]);
            let sy = sign(y[j] - y[i]);
            score += sx * sy;
        }
    }
    let (xtie, x0, x1) = ties(x);
    let (ytie, y0, y1) = ties(y);
    let nf = n as f64;
    let total = nf * (nf - 1.0) / 2.0;
    if total - xtie <= 0.0 || total - ytie <= 0.0 {
        return None;
    }
    let s = score as f64;
    let tau = s / (total - xtie).sqrt() / (total - ytie).sqrt();
    let m = nf * (nf - 1.0);
    let variance = (m * (2.0 * nf + 5.0) - x1 - y1) / 18.0 + (2.0 * xtie * ytie) / m + x0 * y0 / (9.0 * m * (nf - 2.0));
    if variance <= 0.0 {
        return None;
    }
    let z = s / variance.sqrt();
    let normal = Normal::new(0.0, 1.0).ok()?;
    Some(Kendall {
        tau,
        z,
        p_increasing: normal.sf(z),
        p_decreasing: normal.cdf(z),
        n,
    })
}

fn sign(d: f64) -> i64 {
    if d > 0.0 {
        1
    } else if d < 0.0 {
        -1
    } else {
        0
    }
}

/// Over the groups of tied values (sizes t > 1): Σ t(t−1)/2, Σ t(t−1)(t−2)
/// and Σ t(t−1)(2t+5), the terms of the tie-corrected variance.
fn ties(values: &[f64]) -> (f64, f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (mut pairs, mut cubic, mut quadratic) = (0.0, 0.0, 0.0);
    let mut start = 0;
    while start < sorted.len() {
        let end = start + sorted[start..].iter().take_while(|v| **v == sorted[start]).count();
        let t = (end - start) as f64;
        if t > 1.0 {
            pairs += t * (t - 1.0) / 2.0;
            cubic += t * (t - 1.0) * (t - 2.0);
            quadratic += t * (t - 1.0) * (2.0 * t + 5.0);
        }
        start = end;
    }
    (pairs, cubic, quadratic)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
    }

    #[test]
    fn tau_and_p_values_equal_scipy() {
        // A sweep of 3 values × 4 repetitions, the statistic rising with noise.
        let x = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 4.0, 4.0, 4.0, 4.0];
        let y = [3.1, 2.9, 3.4, 3.0, 3.3, 3.8, 3.6, 3.2, 4.1, 3.9, 4.4, 3.7];
        // scipy.stats.kendalltau(x, y, method="asymptotic", alternative="greater")
        //   -> statistic 0.7462025072446365, pvalue 0.0010557455033353008
        // scipy.stats.kendalltau(x, y, method="asymptotic", alternative="less").pvalue
        //   -> 0.9989442544966647
        let k = kendall_tau(&x, &y).unwrap();
        assert!(close(k.tau, 0.7462025072446365), "{}", k.tau);
        assert!(close(k.p_increasing, 0.0010557455033353008), "{}", k.p_increasing);
        assert!(close(k.p_decreasing, 0.9989442544966647), "{}", k.p_decreasing);
        // Ties in both samples.
        let x = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0];
        let y = [5.0, 5.0, 4.0, 4.0, 4.0, 1.0, 2.0];
        // scipy.stats.kendalltau(x, y, method="asymptotic", alternative="less")
        //   -> statistic -0.7058823529411764, pvalue 0.022422119790292544
        let k = kendall_tau(&x, &y).unwrap();
        assert!(close(k.tau, -0.7058823529411764), "{}", k.tau);
        assert!(close(k.p_decreasing, 0.022422119790292544), "{}", k.p_decreasing);
    }

    #[test]
    fn undefined_cases() {
        assert_eq!(kendall_tau(&[1.0, 2.0], &[1.0, 2.0]), None);
        assert_eq!(kendall_tau(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(kendall_tau(&[1.0, 2.0, f64::NAN], &[1.0, 2.0, 3.0]), None);
        assert_eq!(kendall_tau(&[1.0, 2.0, 3.0], &[1.0, 2.0]), None);
    }
}
