//! The acceptance round trip: a corpus drawn from a known model → extract →
//! fit → generate as many documents → compare. Structure frequencies,
//! categorical values and numeric distributions must survive.

use exp_stats::{Family, FittedSampler, Rng};
use exp_xml::compare::PathMetric;
use exp_xml::generate::{generate_to_writer, Amount, GenerateOptions, Generator, Layout};
use exp_xml::set::{SetOptions, SynthesisSet};
use exp_xml::{compare, extract, AttributePolicy, CompareConfig, Config, Source};

const DOCUMENTS: u64 = 20_000;

/// Picks index i with probability weights[i] / sum.
fn pick(rng: &mut Rng, weights: &[f64]) -> usize {
    let total: f64 = weights.iter().sum();
    let mut u = rng.next_f64() * total;
    for (i, w) in weights.iter().enumerate() {
        if u < *w {
            return i;
        }
        u -= w;
    }
    weights.len() - 1
}

/// An event log: `type` (3 values, kept in the structure by `auto`), a host
/// (6 values), a gamma latency with 2 decimals, a Poisson byte count, an
/// optional error block (code from 3 values, message) on error events, and
/// a normal temperature on some events. Five skeletons in all.
fn corpus(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let latency = FittedSampler::new(Family::Gamma, &[2.0, 0.05]).expect("gamma");
    let bytes = FittedSampler::new(Family::Poisson, &[400.0]).expect("poisson");
    let temperature = FittedSampler::new(Family::Normal, &[21.5, 3.0]).expect("normal");
    let types = ["login", "logout", "error"];
    let hosts = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
    let codes = ["E404", "E500", "E503"];
    let mut out = String::from("<?xml version=\"1.0\"?>\n<log>\n");
    for _ in 0..DOCUMENTS {
        let kind = types[pick(&mut rng, &[0.5, 0.3, 0.2])];
        let host = hosts[pick(&mut rng, &[0.3, 0.25, 0.15, 0.1, 0.1, 0.1])];
        out.push_str(&format!(
            "<event type=\"{kind}\"><host>{host}</host><latency>{:.2}</latency><bytes>{}</bytes>",
            latency.sample(&mut rng),
            bytes.sample(&mut rng)
        ));
        if kind == "error" {
            let code = codes[pick(&mut rng, &[0.6, 0.3, 0.1])];
            out.push_str(&format!(
                "<error><code>{code}</code><message>request failed</message></error>"
            ));
        } else if rng.next_f64() < 0.4 {
            out.push_str(&format!(
                "<temperature>{:.1}</temperature>",
                temperature.sample(&mut rng)
            ));
        }
        out.push_str("</event>\n");
    }
    out.push_str("</log>\n");
    out
}

fn memory(name: &str, data: Vec<u8>) -> Vec<Source> {
    vec![Source::Memory {
        name: name.into(),
        data,
    }]
}

#[test]
fn extract_generate_compare_preserves_structure_values_and_distributions() {
    let config = Config {
        split_at: Some("event".into()),
        policy: AttributePolicy::Auto { max_distinct: 16 },
        ..Config::default()
    };
    let original = memory("corpus.xml", corpus(7).into_bytes());
    let extraction = extract(&original, &config).expect("extract");
    assert_eq!(extraction.summary.documents, DOCUMENTS);
    assert_eq!(extraction.structures.len(), 5, "{:#?}", extraction.structures);
    let set = SynthesisSet::from_extraction(
        extraction,
        &config,
        &SetOptions {
            split_root: Some("log".into()),
            ..SetOptions::default()
        },
    );
    let fitted: Vec<_> = set
        .numeric
        .iter()
        .filter_map(|p| p.fit.as_ref().map(|f| f.family))
        .collect();
    // Paths carry the kept `type` value: latency and bytes under three
    // types, temperature under two.
    assert_eq!(set.numeric.len(), 8, "latency, bytes and temperature are numeric");
    assert_eq!(fitted.len(), 8, "every numeric path was fitted");

    let generator = Generator::new(&set, 11).expect("generator");
    let mut synthetic = Vec::new();
    let options = GenerateOptions {
        amount: Amount::Documents(DOCUMENTS),
        shard: Default::default(),
        layout: Layout::Stream,
        gzip: false,
        threads: 2,
    };
    let stats = generate_to_writer(&generator, &options, &mut synthetic).expect("generate");
    assert_eq!(stats.documents, DOCUMENTS);
    // The stream is wrapped in the corpus's root, like the original.
    assert!(synthetic.starts_with(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<log>"));

    let comparison = compare(
        &original,
        &memory("synthetic.xml", synthetic),
        &CompareConfig {
            extraction: config,
            ..CompareConfig::default()
        },
    )
    .expect("compare");
    eprintln!(
        "structure JSD {:.5}, max TV {:.4}, max KS {:.4}",
        comparison.divergence.skeleton, comparison.path_summary.max_total_variation, comparison.path_summary.max_ks
    );
    assert_eq!(comparison.counts.synthetic.documents, DOCUMENTS);
    assert_eq!(comparison.counts.synthetic.skipped, 0);
    assert!(
        comparison.divergence.skeleton < 0.01,
        "structure JSD {}",
        comparison.divergence.skeleton
    );
    assert!(comparison.only_in_original.is_empty() && comparison.only_in_synthetic.is_empty());
    let (mut categorical, mut numeric) = (0, 0);
    for path in &comparison.paths {
        match &path.metric {
            PathMetric::Categorical { total_variation, .. } => {
                categorical += 1;
                assert!(
                    *total_variation < 0.02,
                    "{}: total variation {total_variation}",
                    path.path
                );
            }
            PathMetric::Numeric { ks_statistic, .. } => {
                numeric += 1;
                assert!(*ks_statistic < 0.05, "{}: KS {ks_statistic}", path.path);
            }
        }
    }
    assert_eq!(
        (categorical, numeric),
        (5, 8),
        "host ×3, code, message; latency ×3, bytes ×3, temperature ×2"
    );
    assert_eq!(comparison.duplicates.rate, comparison.duplicates.rate.clamp(0.0, 1.0));
}
