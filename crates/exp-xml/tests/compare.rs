//! `compare` on small in-memory corpora with hand-checked answers.

use exp_xml::compare::{PathMetric, ProbeRun};
use exp_xml::{compare, AttributePolicy, CompareConfig, Comparison, Config, ProbeQuery, Source};

fn memory(name: &str, text: &str) -> Vec<Source> {
    vec![Source::Memory {
        name: name.into(),
        data: text.as_bytes().to_vec(),
    }]
}

/// `<log>` of `events`, split at `event`.
fn log(events: &[String]) -> String {
    format!("<?xml version=\"1.0\"?>\n<log>\n{}\n</log>\n", events.join("\n"))
}

fn config() -> CompareConfig {
    CompareConfig {
        extraction: Config {
            split_at: Some("event".into()),
            policy: AttributePolicy::Keep,
            ..Config::default()
        },
        ..CompareConfig::default()
    }
}

fn run(original: &str, synthetic: &str, config: &CompareConfig) -> Comparison {
    compare(
        &memory("original.xml", original),
        &memory("synthetic.xml", synthetic),
        config,
    )
    .expect("compare")
}

/// 100 events: a categorical `status`, a numeric `temp` (100 distinct
/// values) and a sensor `name` attribute with 3 values.
fn sensor_log() -> String {
    let events: Vec<String> = (0..100)
        .map(|i| {
            format!(
                "<event><sensor name=\"{}\"><temp>{:.1}</temp></sensor><status>{}</status></event>",
                ["a", "b", "c"][i % 3],
                20.0 + i as f64 * 0.5,
                ["ok", "warn", "fail"][i % 7 % 3]
            )
        })
        .collect();
    log(&events)
}

#[test]
fn identical_corpora_do_not_differ() {
    let corpus = sensor_log();
    let c = run(&corpus, &corpus, &config());
    assert_eq!(c.counts.original, c.counts.synthetic);
    assert_eq!(c.counts.original.documents, 100);
    assert_eq!(c.counts.shared.paths, c.counts.original.paths);
    let d = &c.divergence;
    assert_eq!((d.skeleton, d.path, d.tag, d.attribute), (0.0, 0.0, 0.0, 0.0));
    assert_eq!(c.path_summary.numeric_paths, 3, "temp under each sensor name");
    assert_eq!(c.path_summary.categorical_paths, 1);
    assert_eq!(c.path_summary.max_total_variation, 0.0);
    assert_eq!(c.path_summary.max_ks, 0.0);
    assert!(c.only_in_original.is_empty() && c.only_in_synthetic.is_empty());
    for h in [&c.histograms.depth, &c.histograms.fan_out, &c.histograms.document_size] {
        assert_eq!(h.original, h.synthetic);
        assert_eq!(h.total_variation, 0.0);
    }
    assert_eq!(c.duplicates.copies, 100);
    assert_eq!(c.duplicates.rate, 1.0);
    assert_eq!(c.duplicates.original_repeat_rate, 0.0);
}

#[test]
fn disjoint_structures_have_divergence_one() {
    let original = log(&["<event><a k=\"1\"><x>1</x></a></event>".to_owned()]);
    let synthetic = log(&["<event><b j=\"1\"><y>1</y></b></event>".to_owned()]);
    let c = run(&original, &synthetic, &config());
    let d = &c.divergence;
    for jsd in [d.skeleton, d.path, d.attribute] {
        assert!((jsd - 1.0).abs() < 1e-12, "{jsd}");
    }
    // Only `<event>` is shared: tags e,a,x vs e,b,y, a third each; each of
    // the four one-sided tags adds ½ · ⅓ · log2(⅓ / ⅙).
    let expected_tag = 4.0 * 0.5 * (1.0 / 3.0);
    assert!((d.tag - expected_tag).abs() < 1e-12, "{}", d.tag);
    assert_eq!(c.counts.shared.paths, 0);
    assert_eq!(c.only_in_original[0].path, "<event><a k=\"1\"><x>");
    assert_eq!(c.only_in_synthetic[0].path, "<event><b j=\"1\"><y>");
    assert_eq!(c.duplicates.copies, 0);
}

#[test]
fn hand_computed_divergence_and_total_variation() {
    let a = "<event><s>ok</s></event>".to_owned();
    let b = "<event><s>warn</s><x/></event>".to_owned();
    let original = log(&[a.clone(), a.clone(), a.clone(), b.clone()]);
    let synthetic = log(&[a, b]);
    let c = run(&original, &synthetic, &config());
    // Skeletons P = (3/4, 1/4), Q = (1/2, 1/2), M = (5/8, 3/8):
    // ½[¾ log2(6/5) + ¼ log2(2/3)] + ½[½ log2(4/5) + ½ log2(4/3)].
    assert!((c.divergence.skeleton - 0.048_794_940_695_398_5).abs() < 1e-12);
    // `<s>` values ok/warn: (¾, ¼) against (½, ½).
    let s = c.paths.iter().find(|p| p.path == "<event><s>").expect("path <s>");
    assert_eq!((s.original_occurrences, s.synthetic_occurrences), (4, 2));
    match s.metric {
        PathMetric::Categorical { total_variation, .. } => assert!((total_variation - 0.25).abs() < 1e-12),
        PathMetric::Numeric { .. } => panic!("<s> is categorical"),
    }
    // `<x/>` has no text: its only "value" is the missing one, alike.
    let x = c.paths.iter().find(|p| p.path == "<event><x>").expect("path <x>");
    assert!(matches!(x.metric, PathMetric::Categorical { total_variation, .. } if total_variation == 0.0));
    assert_eq!(c.path_summary.max_total_variation, 0.25);
    assert_eq!(c.path_summary.worst_categorical[0].path, "<event><s>");
    let json = serde_json::to_value(s).expect("json");
    assert_eq!(json["kind"], "categorical");
    assert_eq!(json["total_variation"], 0.25);
    assert_eq!(json["original_occurrences"], 4);
    assert_eq!(c.duplicates.rate, 1.0);
    assert_eq!(c.duplicates.originals_copied, 2);
    assert_eq!(c.duplicates.original_repeat_rate, 0.5);
}

#[test]
fn numeric_paths_get_the_two_sample_ks_statistic() {
    let sample = |values: std::ops::RangeInclusive<u32>| {
        log(&values.map(|v| format!("<event><v>{v}</v></event>")).collect::<Vec<_>>())
    };
    let c = run(&sample(1..=40), &sample(21..=60), &config());
    let v = c.paths.iter().find(|p| p.path == "<event><v>").expect("path <v>");
    let a: Vec<f64> = (1..=40).map(f64::from).collect();
    let b: Vec<f64> = (21..=60).map(f64::from).collect();
    let expected = exp_stats::ks_two_sample(&a, &b).expect("ks");
    match v.metric {
        PathMetric::Numeric {
            ks_statistic,
            p_value,
            original_n,
            synthetic_n,
            synthetic_non_numeric,
        } => {
            // The ECDFs differ most at 20: 1/2 against 0.
            assert_eq!(ks_statistic, 0.5);
            assert_eq!(p_value, expected.p_value);
            assert_eq!((original_n, synthetic_n, synthetic_non_numeric), (40, 40, 0));
        }
        PathMetric::Categorical { .. } => panic!("40 distinct numbers are numeric"),
    }
    assert_eq!(c.path_summary.max_ks, 0.5);
    // The original decides the kind: words on the synthetic side are
    // counted, not compared, and 20 values under the threshold stay numeric.
    let mut words: Vec<String> = (1..=20).map(|v| format!("<event><v>{v}</v></event>")).collect();
    words.push("<event><v>n/a</v></event>".into());
    let c = run(&sample(1..=40), &log(&words), &config());
    match c.paths[0].metric {
        PathMetric::Numeric {
            ks_statistic,
            synthetic_n,
            synthetic_non_numeric,
            ..
        } => {
            assert_eq!((synthetic_n, synthetic_non_numeric), (20, 1));
            assert_eq!(ks_statistic, 0.5);
        }
        PathMetric::Categorical { .. } => panic!("the original's kind is kept"),
    }
}

#[test]
fn histograms_count_depth_fan_out_and_size() {
    let corpus = log(&[
        "<event><a/><b><c/></b></event>".to_owned(),
        "<event>  <a x='1'>t</a></event>".to_owned(),
    ]);
    let c = run(&corpus, &corpus, &config());
    let h = &c.histograms;
    assert_eq!(h.depth.bins[..3], ["1", "2", "3"]);
    assert_eq!(h.depth.original[..4], [2, 3, 1, 0]);
    assert_eq!(h.depth.original.iter().sum::<u64>(), c.counts.original.elements);
    // Children: event 2, a 0, b 1, c 0 | event 1, a 0.
    assert_eq!(h.fan_out.original[..4], [3, 2, 1, 0]);
    // Canonical forms `<event><a></a><b><c></c></b></event>` (36 bytes) and
    // `<event><a x="1">t</a></event>` (29 bytes): both in the first bin.
    assert_eq!(h.document_size.bins[0], "0–63");
    assert_eq!(h.document_size.original[0], 2);
    let big = log(&[format!("<event><v>{}</v></event>", "x".repeat(100))]);
    let c = run(&corpus, &big, &config());
    assert_eq!(
        c.histograms.document_size.synthetic[..3],
        [0, 1, 0],
        "122 bytes: 64–127 is bin 1"
    );
    assert_eq!(c.histograms.document_size.bins[1], "64–127");
}

#[test]
fn attribute_order_quoting_and_whitespace_do_not_hide_a_copy() {
    let original = log(&["<event b=\"2\" a=\"1\"><v> x &amp; y </v></event>".to_owned()]);
    let synthetic = log(&["<event  a='1'\n b='2'>\n  <v>x &#38; y</v>\n</event>".to_owned()]);
    let c = run(&original, &synthetic, &config());
    assert_eq!(c.duplicates.copies, 1);
    let changed = log(&["<event a=\"1\" b=\"2\"><v>x &amp; z</v></event>".to_owned()]);
    let c = run(&original, &changed, &config());
    assert_eq!(c.duplicates.copies, 0);
    assert_eq!(c.divergence.skeleton, 0.0, "same skeleton, different value");
}

fn probe_run(c: &Comparison) -> (&ProbeRun, &ProbeRun) {
    let p = c.probe.as_ref().expect("probe result");
    (&p.original, &p.synthetic)
}

#[test]
fn probe_counts_matching_elements_on_both_sides() {
    let original = sensor_log();
    let synthetic = log(&[
        "<event><sensor name=\"a\"/><sensor name=\"b\"/><sensor id=\"a\"/></event>".to_owned(),
        "<event><probe name=\"a\"/></event>".to_owned(),
    ]);
    let mut config = config();
    config.probe = Some(ProbeQuery {
        tag: "sensor".into(),
        attribute: "name".into(),
        value: Some("a".into()),
    });
    let c = run(&original, &synthetic, &config);
    let (o, s) = probe_run(&c);
    assert_eq!((o.matches, o.documents), (34, 100));
    assert_eq!((s.matches, s.documents), (1, 2));
    assert!(o.seconds >= 0.0 && s.seconds >= 0.0);
    config.probe = Some(ProbeQuery {
        tag: "sensor".into(),
        attribute: "name".into(),
        value: None,
    });
    let c = run(&original, &synthetic, &config);
    let (o, s) = probe_run(&c);
    assert_eq!((o.matches, s.matches), (100, 2));
}

#[test]
fn malformed_documents_are_skipped_and_counted_on_either_side() {
    let good = "<event><v>1</v></event>".to_owned();
    let broken = log(&[good.clone(), "<event><v>2</w></event>".to_owned(), good.clone()]);
    let truncated = "<log><event><v>1</v></event><event><v>2</v>".to_owned();
    let c = run(&broken, &truncated, &config());
    assert_eq!((c.counts.original.documents, c.counts.original.skipped), (2, 1));
    assert_eq!((c.counts.synthetic.documents, c.counts.synthetic.skipped), (1, 1));
    assert_eq!(c.skipped.original.len(), 1);
    assert!(c.skipped.synthetic[0].starts_with("synthetic.xml@"));
    let c = run(&truncated, "not xml at all <<<", &config());
    assert_eq!(c.counts.synthetic.documents, 0);
    assert_eq!(c.duplicates.rate, 0.0);
    assert_eq!(c.divergence.skeleton, 1.0, "nothing against something");
    let text = c.to_string();
    assert!(text.contains("documents"));
}

#[test]
fn deep_nesting_needs_no_stack_and_a_missing_file_is_an_error() {
    // As deep as a document may be (deeper ones are skipped: deep_documents.rs).
    let depth = exp_xml::MAX_DEPTH;
    let deep = format!("{}x{}", "<d>".repeat(depth), "</d>".repeat(depth));
    let c = compare(
        &memory("deep.xml", &deep),
        &memory("deep.xml", &deep),
        &CompareConfig::default(),
    )
    .expect("compare");
    assert_eq!(c.counts.original.elements, depth as u64);
    let last = c.histograms.depth.original.last().copied();
    assert_eq!(c.histograms.depth.bins.last().map(String::as_str), Some("32+"));
    assert_eq!(last, Some(depth as u64 - 31));
    assert_eq!(c.duplicates.rate, 1.0);
    let missing = vec![Source::File("/nonexistent/corpus.xml".into())];
    let err = compare(&missing, &memory("deep.xml", &deep), &CompareConfig::default());
    assert!(matches!(err, Err(exp_xml::XmlError::Open { .. })), "{err:?}");
}

#[test]
fn auto_policy_uses_the_original_census_for_both_sides() {
    // `ts` is unique per event in the original (dropped from the structure
    // with K = 5); the synthetic corpus repeats one value, which its own
    // census would keep, changing every skeleton.
    let events = |ts: &dyn Fn(usize) -> usize| {
        log(&(0..20)
            .map(|i| format!("<event ts=\"{}\"><v>{}</v></event>", ts(i), i % 2))
            .collect::<Vec<_>>())
    };
    let mut config = config();
    config.extraction.policy = AttributePolicy::Auto { max_distinct: 5 };
    let c = run(&events(&|i| 1000 + i), &events(&|_| 7), &config);
    assert_eq!(c.divergence.skeleton, 0.0);
    assert_eq!(c.counts.shared.paths, 2, "<event ts><v> and <event ts>@ts");
    let ts = c.paths.iter().find(|p| p.path == "<event ts>@ts").expect("pseudo path");
    assert!(matches!(ts.metric, PathMetric::Categorical { total_variation, .. } if total_variation == 1.0));
}

#[test]
fn report_text_and_json() {
    let corpus = sensor_log();
    let mut config = config();
    config.probe = Some(ProbeQuery {
        tag: "sensor".into(),
        attribute: "name".into(),
        value: None,
    });
    let c = run(&corpus, &log(&["<event><other/></event>".to_owned()]), &config);
    let text = c.to_string();
    for needle in [
        "documents: <event>; attributes: keep; categorical up to 30",
        "Jensen–Shannon",
        "Paths only in the original: 4",
        "<event><other>",
        "Element depth",
        "Exact duplicates",
        "Probe <sensor name>",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let json = serde_json::to_value(&c).expect("json");
    assert_eq!(json["counts"]["original"]["documents"], 100);
    assert_eq!(json["paths"].as_array().map(Vec::len), Some(0));
    assert_eq!(json["only_in_synthetic"][0]["path"], "<event><other>");
}
