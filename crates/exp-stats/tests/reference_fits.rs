//! Fitting accuracy against an independent reference, and model selection on
//! large samples.
//!
//! `reference_fits_agree_with_scipy` reads the fixtures written by
//! `tests/reference/gen_fits.py` (seeded numpy samples plus the maximum-
//! likelihood parameters scipy.stats / statsmodels found for them), fits the
//! very same samples with [`exp_stats::fit`] and requires every parameter to
//! agree within 1 % relative or 1e-6 absolute. Regenerate the fixtures with
//! `python3 tests/reference/gen_fits.py` from the repository root.
//!
//! `selection_picks_the_true_family` draws seeded samples of size 10,000 from
//! every family (with exp-stats' own [`Rng`]/[`Sampler`]) and requires
//! [`exp_stats::select`] over all 13 families to pick the true family on at
//! least 95 % of them. A pick counts as correct when it is the true family or
//! a family that contains the true distribution exactly (a nested family at
//! the parameters that reduce it to the true one); the likelihood of the
//! larger family is then at least as high, and it wins AIC whenever the extra
//! parameter buys more than 1 log-likelihood unit, which chance alone does on
//! ~16 % of samples. The tie sets (true family → also accepted) are:
//!
//! - exponential → gamma (shape 1), Weibull (shape 1);
//! - chi-squared → gamma (shape df/2, rate ½);
//! - geometric → negative binomial (r = 1);
//! - Poisson → negative binomial (r → ∞);
//! - normal → Student t (ν → ∞);
//! - Cauchy → Student t (ν = 1).
//!
//! The parameters drawn avoid accidental coincidences outside these sets
//! (e.g. chi-squared with 2 df is the exponential with rate ½).
//!
//! The number of samples per family is 20 in release builds and 5 in debug
//! builds (one `select` on 10⁴ values is ~4 ms in release, much slower in
//! debug); set `EXPC_SELECT_K` to override. Run with `--nocapture` to see the
//! confusion counts.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::path::PathBuf;

use exp_plan::{Dist, DistValue, Unit};
use exp_stats::{fit, select, Family, Rng, Sampler};

fn fixtures_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../tests/reference/fits")
}

/// The Rust value of the reference parameter `name` (the fixtures use the
/// Rust names, except the negative binomial, which is (size, mu) there and
/// (r, p) here: size = r, mu = r (1 − p) / p).
fn rust_param(f: &exp_stats::Fit, name: &str) -> f64 {
    match (f.family, name) {
        (Family::NegativeBinomial, "size") => f.param("r").unwrap(),
        (Family::NegativeBinomial, "mu") => {
            let (r, p) = (f.param("r").unwrap(), f.param("p").unwrap());
            r * (1.0 - p) / p
        }
        _ => f
            .param(name)
            .unwrap_or_else(|| panic!("{}: no parameter {name}", f.family)),
    }
}

#[test]
fn reference_fits_agree_with_scipy() {
    let mut seen = Vec::new();
    let mut failures = Vec::new();
    for family in Family::ALL {
        let path = fixtures_dir().join(format!("{}.json", family.name()));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["family"].as_str(), Some(family.name()));
        let mut worst = (0.0_f64, 0.0_f64, String::new());
        for case in doc["cases"].as_array().unwrap() {
            let seed = case["seed"].as_u64().unwrap();
            let data: Vec<f64> = case["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let got = match fit(family, &data) {
                Ok(f) => f,
                Err(e) => {
                    failures.push(format!("{family} seed {seed}: {e}"));
                    continue;
                }
            };
            for (name, want) in case["fit"].as_object().unwrap() {
                let want = want.as_f64().unwrap();
                let have = rust_param(&got, name);
                let abs = (have - want).abs();
                let rel = abs / want.abs();
                if rel > worst.0 {
                    worst = (rel, abs, format!("seed {seed} {name}"));
                }
                if !(rel <= 0.01 || abs <= 1e-6) {
                    failures.push(format!(
                        "{family} seed {seed} {name}: rust {have}, reference {want} (rel err {rel:.3e})"
                    ));
                }
            }
        }
        eprintln!(
            "{:<18} max relative error {:.3e} (absolute {:.3e}, {})",
            family.name(),
            worst.0,
            worst.1,
            worst.2
        );
        seen.push(family);
    }
    assert_eq!(seen.len(), 13);
    assert!(failures.is_empty(), "disagreements:\n{}", failures.join("\n"));
}

fn sampler(dist: Dist) -> Sampler {
    Sampler::new(&DistValue { unit: Unit::Ns, dist }).unwrap()
}

/// Draws `n` values of `family` at fixed, representative parameters.
fn draw(family: Family, rng: &mut Rng, n: usize) -> Vec<f64> {
    let gamma = |shape: f64, scale: f64| sampler(Dist::Gamma { shape, scale });
    let mut out = Vec::with_capacity(n);
    match family {
        Family::Beta => {
            let (a, b) = (gamma(2.0, 1.0), gamma(5.0, 1.0));
            for _ in 0..n {
                let (x, y) = (a.sample(rng), b.sample(rng));
                out.push(x / (x + y));
            }
        }
        Family::Cauchy => {
            for _ in 0..n {
                out.push(3.0 + 2.0 * (PI * (rng.open01() - 0.5)).tan());
            }
        }
        Family::ChiSquared => {
            let c = gamma(2.5, 2.0); // 5 df
            out.extend((0..n).map(|_| c.sample(rng)));
        }
        Family::Exponential => {
            let e = sampler(Dist::Exponential { mean: 4.0 });
            out.extend((0..n).map(|_| e.sample(rng)));
        }
        Family::F => {
            let (c1, c2) = (gamma(2.5, 2.0), gamma(5.0, 2.0)); // d1 = 5, d2 = 10
            for _ in 0..n {
                out.push((c1.sample(rng) / 5.0) / (c2.sample(rng) / 10.0));
            }
        }
        Family::Gamma => {
            let g = gamma(2.5, 3.0);
            out.extend((0..n).map(|_| g.sample(rng)));
        }
        Family::Geometric => {
            // Failures before the first success, p = 0.3.
            let ln_q = (-0.3_f64).ln_1p();
            out.extend((0..n).map(|_| (rng.open01().ln() / ln_q).floor()));
        }
        Family::LogNormal => {
            let z = sampler(Dist::Normal { mean: 1.0, sd: 0.5 });
            out.extend((0..n).map(|_| z.sample(rng).exp()));
        }
        Family::NegativeBinomial => {
            // Gamma–Poisson mixture: size 3, mean 5.
            let g = gamma(3.0, 5.0 / 3.0);
            for _ in 0..n {
                let lambda = g.sample(rng);
                let u = rng.open01();
                let (mut k, mut pmf) = (0.0, (-lambda).exp());
                let mut cdf = pmf;
                while cdf < u && k < 1e6 {
                    k += 1.0;
                    pmf *= lambda / k;
                    cdf += pmf;
                }
                out.push(k);
            }
        }
        Family::Normal => {
            let z = sampler(Dist::Normal { mean: 10.0, sd: 2.0 });
            out.extend((0..n).map(|_| z.sample(rng)));
        }
        Family::Poisson => {
            let p = sampler(Dist::Poisson { mean: 6.0 });
            out.extend((0..n).map(|_| p.sample(rng)));
        }
        Family::StudentT => {
            let (z, c) = (sampler(Dist::Normal { mean: 0.0, sd: 1.0 }), gamma(2.0, 2.0)); // ν = 4
            for _ in 0..n {
                out.push(1.0 + 0.5 * z.sample(rng) / (c.sample(rng) / 4.0).sqrt());
            }
        }
        Family::Weibull => {
            let w = sampler(Dist::Weibull { shape: 1.5, scale: 2.0 });
            out.extend((0..n).map(|_| w.sample(rng)));
        }
    }
    out
}

/// Families that contain `truth` exactly at some parameters (see the module
/// documentation); a pick of one of them is a tie, not an error.
fn ties(truth: Family) -> &'static [Family] {
    match truth {
        Family::Exponential => &[Family::Gamma, Family::Weibull],
        Family::ChiSquared => &[Family::Gamma],
        Family::Geometric | Family::Poisson => &[Family::NegativeBinomial],
        Family::Normal => &[Family::StudentT],
        Family::Cauchy => &[Family::StudentT],
        _ => &[],
    }
}

#[test]
fn selection_picks_the_true_family() {
    let k: usize = std::env::var("EXPC_SELECT_K")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 5 } else { 20 });
    let n = 10_000;
    let mut confusion: BTreeMap<(Family, Family), usize> = BTreeMap::new();
    let (mut exact, mut tied, mut total) = (0, 0, 0);
    for (fi, truth) in Family::ALL.into_iter().enumerate() {
        for i in 0..k {
            let mut rng = Rng::new(0x5e1e_c700 + 1000 * fi as u64 + i as u64);
            let data = draw(truth, &mut rng, n);
            let picked = select(&data, &Family::ALL).unwrap().best.family;
            *confusion.entry((truth, picked)).or_default() += 1;
            total += 1;
            if picked == truth {
                exact += 1;
            } else if ties(truth).contains(&picked) {
                tied += 1;
            }
        }
    }
    eprintln!("selection over {k} samples of {n} per family (true -> picked: count):");
    for truth in Family::ALL {
        let row: Vec<String> = confusion
            .iter()
            .filter(|((t, _), _)| *t == truth)
            .map(|((_, p), c)| format!("{p}: {c}"))
            .collect();
        eprintln!("  {:<18} -> {}", truth.name(), row.join(", "));
    }
    let correct = exact + tied;
    let rate = correct as f64 / total as f64;
    eprintln!(
        "exact {exact}, documented ties {tied}, total {total}: {:.1} % correct",
        100.0 * rate
    );
    assert!(rate >= 0.95, "selection correct on only {:.1} %", 100.0 * rate);
}
