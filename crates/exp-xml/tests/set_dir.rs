//! Synthesis sets: fitting, and the set directory round trip and its errors.

use std::fs;

use exp_stats::fit::Family;
use exp_xml::set::{read_set, write_set, FittingSummary, PolicyRecord, SetOptions, SkipKind, SynthesisSet, SET_FILES};
use exp_xml::{extract, AttributePolicy, Config, NumberFormat, Source, ValueKind, XmlError};

/// 200 events: a normal-ish temperature (numeric, 2 decimals), Poisson-like
/// counts (numeric, integers), a status (categorical), a unique `ts`
/// attribute (a pseudo path under `auto`), plus one malformed event.
fn corpus() -> Vec<Source> {
    let mut s = String::from("<log>\n");
    let mut state = 12345u64;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    for i in 0..200u32 {
        // Sum of uniforms: roughly normal around 20.
        let temp = 14.0 + 12.0 * (0..6).map(|_| uniform()).sum::<f64>() / 6.0;
        // 53 distinct values per sensor: numeric, not categorical.
        let count = (i * 7) % 53;
        s.push_str(&format!(
            "<event ts=\"{}\"><sensor name=\"{}\"><temp>{temp:.2}</temp><count>{count}</count></sensor><status>{}</status></event>\n",
            1_700_000_000 + i,
            ["a", "b"][(i % 2) as usize],
            ["ok", "warn", "fail"][(i % 3) as usize]
        ));
    }
    s.push_str("<event ts=\"1\"><sensor></event>\n</log>\n");
    vec![Source::Memory {
        name: "events.xml".into(),
        data: s.into_bytes(),
    }]
}

fn config() -> Config {
    Config {
        split_at: Some("event".into()),
        policy: AttributePolicy::Auto { max_distinct: 5 },
        ..Config::default()
    }
}

fn build(threads: usize) -> SynthesisSet {
    let x = extract(&corpus(), &config()).expect("extract");
    let options = SetOptions {
        threads,
        split_root: Some("log".into()),
        ..SetOptions::default()
    };
    SynthesisSet::from_extraction(x, &config(), &options)
}

#[test]
fn paths_with_more_distinct_values_than_the_sketch_are_counted_as_sketched() {
    let x = extract(&corpus(), &config()).expect("extract");
    let distinct = |v: &[f64]| 1 + v.windows(2).filter(|w| w[0] != w[1]).count();
    // 53 distinct counts per sensor path; temperatures and ts have more.
    let over = |points: usize| x.numeric.iter().filter(|s| distinct(&s.values) > points).count();
    for (points, want) in [(0, 0), (60, over(60)), (1000, 0)] {
        let options = SetOptions {
            sketch_points: points,
            ..SetOptions::default()
        };
        let set = SynthesisSet::from_extraction(x.clone(), &config(), &options);
        assert_eq!(set.info.fitting.sketch_points, points);
        assert_eq!(set.info.fitting.sketched_paths, want, "{points} points");
    }
    assert!(
        over(60) > 0 && over(60) < x.numeric.len(),
        "the corpus has paths on both sides of 60"
    );
}

#[test]
fn fits_every_numeric_path_deterministically() {
    let set = build(3);
    assert_eq!(set, build(1), "thread count must not change the set");
    // temp and count per sensor, and the ts pseudo path.
    assert_eq!(set.numeric.len(), 5);
    for n in set.numeric.iter().filter(|n| n.n == 100) {
        let fit = n.fit.as_ref().expect("every path here is fittable");
        let runner_up = n.runner_up.as_ref().expect("runner-up");
        assert!(fit.aic <= runner_up.aic);
        assert_eq!(fit.aic, 2.0 * fit.family.n_params() as f64 - 2.0 * fit.log_likelihood);
        assert_eq!(fit.params.len(), fit.family.n_params());
    }
    let temp = set
        .paths
        .iter()
        .find(|p| p.text.ends_with("<temp>"))
        .expect("temp path");
    assert_eq!(temp.kind, ValueKind::Numeric);
    let temp = set.numeric.iter().find(|n| n.path == temp.hash).expect("temp numeric");
    assert_eq!(temp.format, NumberFormat::Fixed { decimals: 2 });
    assert!(!temp.fit.as_ref().expect("fit").family.is_discrete());
    let count = set.paths.iter().find(|p| p.text.ends_with("<count>")).expect("count");
    let count = set
        .numeric
        .iter()
        .find(|n| n.path == count.hash)
        .expect("count numeric");
    assert!(count.is_integer);
    // Integer data: every family is scored by the probability it gives the
    // integers (continuous fits by the mass on [k − ½, k + ½)), so the
    // winner's and runner-up's log-likelihoods are logs of probabilities.
    // Counts spread evenly over 0..52 suit no discrete family here.
    let fit = count.fit.as_ref().expect("fit");
    assert!(fit.log_likelihood <= 0.0, "{fit:?}");
    let runner_up = count.runner_up.as_ref().expect("runner-up");
    assert!(
        runner_up.log_likelihood <= 0.0 && runner_up.aic >= fit.aic,
        "{runner_up:?}"
    );

    let info = &set.info;
    assert_eq!(info.corpus.documents, 200);
    assert_eq!(info.corpus.structures, set.structures.len());
    assert_eq!(info.corpus.structure_frequency.max, set.structures[0].count);
    assert_eq!(info.attribute_policy, PolicyRecord::Auto { max_distinct: 5 });
    assert_eq!(info.fitting.numeric_paths, 5);
    let without = set.numeric.iter().filter(|n| n.fit.is_none()).count();
    assert_eq!(info.fitting.without_fit, without);
    let shares: f64 = info.fitting.families.iter().map(|f| f.share).sum();
    assert!((shares + without as f64 / 5.0 - 1.0).abs() < 1e-12);
    assert_eq!(info.skipped.len(), 1);
    assert_eq!(info.skipped[0].input, "events.xml");
    assert_eq!(info.skipped[0].kind, SkipKind::Malformed);
    assert!(info.skipped[0].position > 0);
}

#[test]
fn set_directory_round_trips() {
    let set = build(2);
    let dir = tempfile::tempdir().expect("tempdir");
    write_set(&set, dir.path()).expect("write");
    for file in SET_FILES {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
    let back = read_set(dir.path()).expect("read");
    assert_eq!(back, set);

    // set.json has the published table's layout and the policy.
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("set.json")).expect("set.json")).expect("json");
    assert_eq!(json["corpus"]["documents"], 200);
    assert_eq!(json["corpus"]["unique_tags"], 5);
    assert!(json["corpus"]["path_frequency"]["median"].is_number());
    assert_eq!(json["attribute_policy"]["mode"], "auto");
    assert_eq!(json["attribute_policy"]["max_distinct"], 5);
    assert_eq!(json["split_at"], "event");
    assert_eq!(json["split_root"], "log");
    assert_eq!(json["obfuscated"], false);
    assert_eq!(json["skipped"][0]["kind"], "malformed");
    let family = json["fitting"]["families"][0]["family"].as_str().expect("family");
    assert!(Family::from_name(family).is_some());
}

#[test]
fn a_path_nothing_fits_round_trips_without_fit() {
    let mut set = build(1);
    set.numeric[0].fit = None;
    set.numeric[0].runner_up = None;
    set.numeric[1].format = NumberFormat::Exponent;
    set.info.fitting = FittingSummary {
        sketch_points: set.info.fitting.sketch_points,
        sketched_paths: set.info.fitting.sketched_paths,
        ..FittingSummary::of(&set.numeric)
    };
    let dir = tempfile::tempdir().expect("tempdir");
    write_set(&set, dir.path()).expect("write");
    assert_eq!(read_set(dir.path()).expect("read"), set);
}

#[test]
fn missing_and_corrupt_files_are_typed_errors_naming_the_file() {
    let set = build(1);
    let dir = tempfile::tempdir().expect("tempdir");
    write_set(&set, dir.path()).expect("write");
    let path = |f: &str| dir.path().join(f);

    fs::rename(path("numeric.parquet"), path("moved")).expect("move");
    match read_set(dir.path()) {
        Err(XmlError::Io { path: p, .. }) => assert_eq!(p, path("numeric.parquet")),
        other => panic!("expected Io, got {other:?}"),
    }
    fs::rename(path("moved"), path("numeric.parquet")).expect("move back");

    fs::write(path("paths.parquet"), b"not parquet").expect("corrupt");
    match read_set(dir.path()) {
        Err(e @ XmlError::Parquet { .. }) => assert!(e.to_string().contains("paths.parquet"), "{e}"),
        other => panic!("expected Parquet, got {other:?}"),
    }
    write_set(&set, dir.path()).expect("rewrite");

    // A valid Parquet file with the wrong columns.
    fs::copy(path("structures.parquet"), path("categorical.parquet")).expect("copy");
    match read_set(dir.path()) {
        Err(e @ XmlError::SetFormat { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("categorical.parquet") && text.contains("missing column"),
                "{text}"
            );
        }
        other => panic!("expected SetFormat, got {other:?}"),
    }
    write_set(&set, dir.path()).expect("rewrite");

    fs::write(path("set.json"), b"{\"version\": 1").expect("truncate json");
    match read_set(dir.path()) {
        Err(e @ XmlError::Json { .. }) => assert!(e.to_string().contains("set.json"), "{e}"),
        other => panic!("expected Json, got {other:?}"),
    }
}
