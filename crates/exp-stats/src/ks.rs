//! Kolmogorov–Smirnov goodness-of-fit tests.
//!
//! One sample x₁ ≤ … ≤ xₙ against a continuous CDF F:
//!
//! ```text
//! D = max_i max( i/n − F(xᵢ),  F(xᵢ) − (i − 1)/n )
//! ```
//!
//! Two samples of sizes n and m with empirical CDFs Fₙ, Gₘ:
//! `D = sup_x |Fₙ(x) − Gₘ(x)|`, evaluated after each distinct value so ties
//! are handled exactly.
//!
//! p-values use the asymptotic Kolmogorov distribution with Stephens' (1970)
//! small-sample correction, as in Numerical Recipes (3rd ed., §14.3.3):
//!
//! ```text
//! λ = (√nₑ + 0.12 + 0.11 / √nₑ) · D,   p = Q_KS(λ)
//! Q_KS(λ) = 2 Σ_{j≥1} (−1)^{j−1} e^{−2 j² λ²}
//!         = 1 − (√(2π) / λ) Σ_{j≥1} e^{−(2j−1)² π² / (8 λ²)}
//! ```
//!
//! with nₑ = n for one sample and nₑ = n·m/(n + m) for two. The second form
//! of Q_KS converges fast for small λ and is used below λ = 1.18. The
//! approximation is good to a few percent in p for n ≥ 4 and is accurate in
//! the tail, where accept/reject decisions are made; it is not the exact
//! finite-n distribution (Marsaglia, Tsang & Wang 2003).

use crate::sampler::Sampler;

/// A KS statistic and its p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KsResult {
    /// The statistic D, in [0, 1].
    pub statistic: f64,
    /// P(D ≥ observed) under the null hypothesis.
    pub p_value: f64,
    /// The effective sample size nₑ used for the p-value.
    pub effective_n: f64,
}

impl KsResult {
    /// Whether the null hypothesis is rejected at significance `alpha`.
    pub fn rejects(&self, alpha: f64) -> bool {
        self.p_value < alpha
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KsError {
    #[error("KS test needs at least one sample")]
    Empty,
    #[error("sample #{index} is not finite ({value})")]
    NonFinite { index: usize, value: f64 },
    #[error("the one-sample KS test needs a continuous distribution (this one has atoms)")]
    NotContinuous,
}

/// One-sample KS test of `samples` against the CDF of `sampler`, which must be
/// continuous ([`Sampler::is_continuous`]); for discrete families use a
/// chi-square test instead.
pub fn ks_one_sample(samples: &[f64], sampler: &Sampler) -> Result<KsResult, KsError> {
    if !sampler.is_continuous() {
        return Err(KsError::NotContinuous);
    }
    ks_one_sample_with(samples, |x| sampler.cdf(x))
}

/// One-sample KS test of `samples` against an arbitrary continuous `cdf`.
pub fn ks_one_sample_with(samples: &[f64], cdf: impl Fn(f64) -> f64) -> Result<KsResult, KsError> {
    let sorted = sorted_finite(samples)?;
    let n = sorted.len() as f64;
    let statistic = sorted.iter().enumerate().fold(0.0f64, |d, (i, &x)| {
        let f = cdf(x);
        let above = (i + 1) as f64 / n - f;
        let below = f - i as f64 / n;
        d.max(above).max(below)
    });
    Ok(result(statistic, n))
}

/// Two-sample KS test: are `a` and `b` drawn from the same distribution?
pub fn ks_two_sample(a: &[f64], b: &[f64]) -> Result<KsResult, KsError> {
    let a = sorted_finite(a)?;
    let b = sorted_finite(b)?;
    let (n, m) = (a.len(), b.len());
    let (mut i, mut j) = (0, 0);
    let mut statistic = 0.0f64;
    while i < n && j < m {
        // Step past every copy of the smaller current value in both samples.
        let x = a[i].min(b[j]);
        while i < n && a[i] <= x {
            i += 1;
        }
        while j < m && b[j] <= x {
            j += 1;
        }
        statistic = statistic.max((i as f64 / n as f64 - j as f64 / m as f64).abs());
    }
    let (nf, mf) = (n as f64, m as f64);
    Ok(result(statistic, nf * mf / (nf + mf)))
}

/// Q_KS(λ) = P(K > λ) for the Kolmogorov distribution K; see the module docs.
pub fn kolmogorov_survival(lambda: f64) -> f64 {
    if lambda.is_nan() {
        return f64::NAN;
    }
    if lambda <= 0.0 {
        return 1.0;
    }
    let q = if lambda < 1.18 {
        // Jacobi theta form; (2j−1)² π²/(8λ²) ≥ 0.88·(2j−1)² so 6 terms reach 1e-40.
        let y = -std::f64::consts::PI * std::f64::consts::PI / (8.0 * lambda * lambda);
        let sum: f64 = (1..=6).map(|j| f64::from(2 * j - 1).powi(2) * y).map(f64::exp).sum();
        1.0 - (std::f64::consts::TAU).sqrt() / lambda * sum
    } else {
        // Alternating series; 2 j² λ² ≥ 2.78 j², so 6 terms reach 1e-40.
        (1..=6)
            .map(|j| {
                let sign = if j % 2 == 1 { 1.0 } else { -1.0 };
                sign * (-2.0 * f64::from(j * j) * lambda * lambda).exp()
            })
            .sum::<f64>()
            * 2.0
    };
    q.clamp(0.0, 1.0)
}

fn result(statistic: f64, effective_n: f64) -> KsResult {
    let root = effective_n.sqrt();
    let lambda = (root + 0.12 + 0.11 / root) * statistic;
    KsResult {
        statistic,
        p_value: kolmogorov_survival(lambda),
        effective_n,
    }
}

fn sorted_finite(samples: &[f64]) -> Result<Vec<f64>, KsError> {
    if samples.is_empty() {
        return Err(KsError::Empty);
    }
    if let Some((index, &value)) = samples.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        return Err(KsError::NonFinite { index, value });
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    Ok(sorted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kolmogorov_distribution_reference_values() {
        // Critical values of the Kolmogorov distribution: Q(1.3581) = 0.05, Q(1.6276) = 0.01,
        // Q(1.9495) = 0.001 (tables, e.g. Smirnov 1948); Q(0.5) = 0.9639452 (scipy kstwobign.sf).
        for (lambda, q) in [(1.358_1, 0.05), (1.627_6, 0.01), (1.949_5, 0.001), (0.5, 0.963_945_2)] {
            let got = kolmogorov_survival(lambda);
            assert!((got - q).abs() < 2e-3 * q, "Q({lambda}) = {got}, expected {q}");
        }
        // Both series agree where they switch.
        let (a, b) = (kolmogorov_survival(1.18 - 1e-12), kolmogorov_survival(1.18));
        assert!((a - b).abs() < 1e-12);
        assert_eq!(kolmogorov_survival(0.0), 1.0);
        assert!(kolmogorov_survival(10.0) < 1e-80);
    }

    #[test]
    fn two_sample_statistic_by_hand() {
        // Fₙ and Gₘ after each distinct value: 1 → (1/3, 0), 2 → (2/3, 1/2), 3 → (2/3, 1), 4 → (1, 1).
        let r = ks_two_sample(&[1.0, 2.0, 4.0], &[3.0, 2.0]).unwrap();
        assert!((r.statistic - 1.0 / 3.0).abs() < 1e-15);
        assert!((r.effective_n - 1.2).abs() < 1e-15);
        let same = ks_two_sample(&[1.0, 1.0, 2.0], &[2.0, 1.0, 1.0]).unwrap();
        assert_eq!(same.statistic, 0.0);
        assert_eq!(same.p_value, 1.0);
    }

    #[test]
    fn one_sample_statistic_by_hand() {
        // Uniform(0,1) CDF at 0.1, 0.5, 0.9 with n = 3: max(1/3 − 0.1, 0.9 − 2/3, 0.5 − 1/3, …) = 0.2333….
        let r = ks_one_sample_with(&[0.9, 0.1, 0.5], |x| x.clamp(0.0, 1.0)).unwrap();
        assert!((r.statistic - (1.0 / 3.0 - 0.1)).abs() < 1e-12);
        assert_eq!(ks_one_sample_with(&[], |x| x), Err(KsError::Empty));
        assert!(matches!(
            ks_two_sample(&[1.0], &[f64::NAN]),
            Err(KsError::NonFinite { index: 0, .. })
        ));
    }
}
