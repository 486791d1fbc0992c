//! The count-data rule: integer counts with few distinct values compete as
//! discrete families, and a fitted family is closer to the law that made
//! the data than the sample's own table of values (issue 17's Poisson(12)
//! and geometric(0.3)); flags, zero-padded codes and small samples stay
//! categorical.

use exp_plan::{Dist, DistValue, Unit};
use exp_stats::fit::Family;
use exp_stats::{Rng, Sampler};
use exp_xml::set::{SetOptions, SynthesisSet};
use exp_xml::{extract, AttributePolicy, Config, Extraction, Source, ValueKind};

const DOCUMENTS: u64 = 2000;

fn sampler(dist: Dist) -> Sampler {
    Sampler::new(&DistValue {
        unit: Unit::Count,
        dist,
    })
    .expect("valid parameters")
}

/// `documents` readings: Poisson(12) and geometric(0.3) counts, a 0/1
/// flag, a zero-padded code with 5 values, and `few`, counts from only 40
/// documents.
fn extraction(documents: u64) -> Extraction {
    let mut rng = Rng::new(99);
    let (p, g, few) = (
        sampler(Dist::Poisson { mean: 12.0 }),
        sampler(Dist::Geometric { p: 0.3 }),
        sampler(Dist::Poisson { mean: 3.0 }),
    );
    let mut s = String::from("<readings>\n");
    for i in 0..documents {
        s.push_str(&format!(
            "<r><p>{}</p><g>{}</g><flag>{}</flag><code>00{}</code>",
            p.sample(&mut rng),
            g.sample(&mut rng),
            rng.below(2),
            rng.below(5)
        ));
        if i < 40 {
            s.push_str(&format!("<few>{}</few>", few.sample(&mut rng)));
        }
        s.push_str("</r>\n");
    }
    s.push_str("</readings>\n");
    let config = Config {
        split_at: Some("r".into()),
        policy: AttributePolicy::Auto { max_distinct: 30 },
        ..Config::default()
    };
    let source = Source::Memory {
        name: "readings.xml".into(),
        data: s.into_bytes(),
    };
    extract(&[source], &config).expect("well-formed corpus")
}

fn kind_of(x: &Extraction, leaf: &str) -> ValueKind {
    let info = x.paths.iter().find(|p| p.text.ends_with(leaf));
    info.unwrap_or_else(|| panic!("no path ending in {leaf}: {:?}", x.paths))
        .kind
}

/// Total variation distance between `pmf` and the empirical distribution of
/// `values`, and between `pmf` and `model`, over 0..200.
fn distances(values: &[f64], pmf: impl Fn(u64) -> f64, model: impl Fn(u64) -> f64) -> (f64, f64) {
    let n = values.len() as f64;
    let (mut empirical, mut fitted) = (0.0, 0.0);
    for k in 0..200u64 {
        let share = values.iter().filter(|&&v| v == k as f64).count() as f64 / n;
        empirical += (share - pmf(k)).abs();
        fitted += (model(k) - pmf(k)).abs();
    }
    (empirical / 2.0, fitted / 2.0)
}

fn ln_factorial(k: u64) -> f64 {
    (1..=k).map(|i| (i as f64).ln()).sum()
}

fn poisson_pmf(lambda: f64) -> impl Fn(u64) -> f64 {
    move |k| (k as f64 * lambda.ln() - lambda - ln_factorial(k)).exp()
}

fn negative_binomial_pmf(r: f64, p: f64) -> impl Fn(u64) -> f64 {
    // Γ(r + k) / (Γ(r) k!) as a product, stable for the k used here.
    move |k| {
        let ln_coefficient: f64 = (0..k).map(|i| ((r + i as f64) / (i as f64 + 1.0)).ln()).sum();
        (ln_coefficient + r * p.ln() + k as f64 * (1.0 - p).ln()).exp()
    }
}

/// The fitted pmf of a discrete fit.
fn fitted_pmf(family: Family, params: &[(String, f64)]) -> Box<dyn Fn(u64) -> f64> {
    let param = |name: &str| params.iter().find(|(n, _)| n == name).map(|p| p.1).expect("parameter");
    match family {
        Family::Poisson => Box::new(poisson_pmf(param("lambda"))),
        Family::Geometric => {
            let p = param("p");
            Box::new(move |k| p * (1.0 - p).powi(k as i32))
        }
        Family::NegativeBinomial => Box::new(negative_binomial_pmf(param("r"), param("p"))),
        other => panic!("a continuous family won count data: {other}"),
    }
}

#[test]
fn counts_with_enough_values_are_fitted_by_discrete_families() {
    let x = extraction(DOCUMENTS);
    assert_eq!(kind_of(&x, "<p>"), ValueKind::Numeric);
    assert_eq!(kind_of(&x, "<g>"), ValueKind::Numeric);
    assert_eq!(kind_of(&x, "<flag>"), ValueKind::Categorical);
    assert_eq!(kind_of(&x, "<code>"), ValueKind::Categorical);
    assert_eq!(kind_of(&x, "<few>"), ValueKind::Categorical);

    let hashes: Vec<_> = ["<p>", "<g>"]
        .iter()
        .map(|leaf| x.paths.iter().find(|p| p.text.ends_with(leaf)).map(|p| p.hash))
        .collect();
    let values: Vec<Vec<f64>> = hashes
        .iter()
        .map(|h| {
            x.numeric
                .iter()
                .find(|s| Some(s.path) == *h)
                .expect("numeric summary")
                .values
                .clone()
        })
        .collect();
    let set = SynthesisSet::from_extraction(x, &Config::default(), &SetOptions::default());
    let truths: [Box<dyn Fn(u64) -> f64>; 2] = [Box::new(poisson_pmf(12.0)), Box::new(|k| 0.3 * 0.7f64.powi(k as i32))];
    for ((hash, values), truth) in hashes.iter().zip(&values).zip(truths) {
        let path = set.numeric.iter().find(|p| Some(p.path) == *hash).expect("fitted path");
        let fit = path.fit.as_ref().expect("a family fits counts");
        assert!(fit.family.is_discrete(), "{:?}", fit.family);
        let (empirical, fitted) = distances(values, &truth, fitted_pmf(fit.family, &fit.params));
        eprintln!("{}: TV sample {empirical:.4}, fitted {fitted:.4}", fit.family);
        assert!(
            fitted < empirical,
            "{}: fitted TV {fitted} ≥ sample TV {empirical}",
            fit.family
        );
    }
}
