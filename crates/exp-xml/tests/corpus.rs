//! Extraction on a small corpus with known structure.

use exp_xml::{extract, md5_of, policy_counts, AttributePolicy, Config, NumberFormat, Source, ValueKind};

/// 120 events; `ts` is unique per event, sensor `name` has 3 values, the
/// device id 1, and every 5th event has no `<status>`.
fn corpus() -> Vec<u8> {
    let mut s = String::from("<?xml version=\"1.0\"?>\n<log>\n");
    for i in 0..120u32 {
        let name = ["a", "b", "c"][(i % 3) as usize];
        s.push_str(&format!(
            "  <event ts=\"{}\"><device id=\"0001\"><sensor name=\"{name}\"><temp>{:.2}</temp></sensor></device>",
            1_700_000_000 + i,
            20.0 + f64::from(i) * 0.25
        ));
        if i % 5 != 0 {
            s.push_str(&format!("<status>{}</status>", ["ok", "warn"][(i % 2) as usize]));
        }
        s.push_str("</event>\n");
    }
    s.push_str("</log>\n");
    s.into_bytes()
}

fn sources() -> Vec<Source> {
    vec![Source::Memory {
        name: "corpus.xml".into(),
        data: corpus(),
    }]
}

fn config(policy: AttributePolicy) -> Config {
    Config {
        split_at: Some("event".into()),
        policy,
        ..Config::default()
    }
}

#[test]
fn auto_policy_structures_paths_and_values() {
    let x = extract(&sources(), &config(AttributePolicy::Auto { max_distinct: 5 })).expect("extract");
    assert_eq!(x.summary.documents, 120);
    assert!(x.summary.skipped.is_empty());
    assert_eq!(x.summary.unique_tags, 5);
    assert_eq!(x.summary.unique_attributes, 3);
    // 3 sensor names × with/without status.
    assert_eq!(x.summary.structures, 6);
    let a_with =
        "<event ts><device id=\"0001\"><sensor name=\"a\"><temp></temp></sensor></device><status></status></event>";
    let s = x
        .structures
        .iter()
        .find(|s| s.skeleton == a_with)
        .expect("skeleton a with status");
    assert_eq!(s.count, 32);
    assert_eq!(s.hash, md5_of(a_with));
    let total: u64 = x.structures.iter().map(|s| s.count).sum();
    assert_eq!(total, 120);

    let texts: Vec<&str> = x.paths.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        // Sorted by text.
        [
            "<event ts><device id=\"0001\"><sensor name=\"a\"><temp>",
            "<event ts><device id=\"0001\"><sensor name=\"b\"><temp>",
            "<event ts><device id=\"0001\"><sensor name=\"c\"><temp>",
            "<event ts><status>",
            "<event ts>@ts",
        ]
    );
    // Hashes checked against `printf '%s' '<path>' | md5sum`.
    assert_eq!(x.paths[0].hash.to_string(), "030cce6e69eed4cfb158c0a027443cf9");
    assert_eq!(x.paths[4].hash.to_string(), "ff9dd3b5a1e70c731ebc83b2a4a457de");

    let kinds: Vec<ValueKind> = x.paths.iter().map(|p| p.kind).collect();
    use ValueKind::{Categorical as C, Numeric as N};
    assert_eq!(kinds, [N, N, N, C, N]);

    let status = x.paths[3].hash;
    let rows: Vec<(&str, u64)> = x
        .categorical
        .iter()
        .filter(|r| r.path == status)
        .map(|r| (r.value.as_str(), r.count))
        .collect();
    assert_eq!(rows, [("ok", 48), ("warn", 48)]);

    let temp_a = x
        .numeric
        .iter()
        .find(|n| n.path == x.paths[0].hash)
        .expect("numeric temp a");
    assert_eq!(temp_a.n, 40);
    assert_eq!(temp_a.min, 20.0);
    assert_eq!(temp_a.max, 20.0 + 117.0 * 0.25);
    assert!(!temp_a.is_integer);
    assert_eq!(temp_a.format, NumberFormat::Fixed { decimals: 2 });
    let ts = x
        .numeric
        .iter()
        .find(|n| n.path == x.paths[4].hash)
        .expect("numeric ts");
    assert!(ts.is_integer);
    assert_eq!(ts.format, NumberFormat::Integer);
    assert_eq!(ts.values.len(), 120);
}

#[test]
fn threshold_makes_small_numeric_paths_categorical() {
    let cfg = Config {
        categorical_threshold: 200,
        ..config(AttributePolicy::Names)
    };
    let x = extract(&sources(), &cfg).expect("extract");
    assert!(x.numeric.is_empty());
    assert!(x.paths.iter().all(|p| p.kind == ValueKind::Categorical));
}

#[test]
fn policy_counts_keep_names_auto() {
    let counts = policy_counts(
        &sources(),
        &config(AttributePolicy::Keep),
        &[
            AttributePolicy::Keep,
            AttributePolicy::Names,
            AttributePolicy::Auto { max_distinct: 5 },
            AttributePolicy::Auto { max_distinct: 2 },
        ],
    )
    .expect("counts");
    let got: Vec<(usize, usize)> = counts.iter().map(|c| (c.structures, c.paths)).collect();
    assert_eq!(
        got,
        [
            // Every timestamp is its own structure; 120 temp + 96 status paths.
            (120, 216),
            // Names only: with/without status; temp, status, @ts, @id, @name.
            (2, 5),
            // ts dropped, names kept: 3 × 2; 3 temp + status + @ts.
            (6, 5),
            // K = 2 drops the 3-valued name too; id (1 value) stays.
            (2, 4),
        ]
    );
}

#[test]
fn names_policy_pseudo_paths_collect_attribute_values() {
    let x = extract(&sources(), &config(AttributePolicy::Names)).expect("extract");
    let name_path = x
        .paths
        .iter()
        .find(|p| p.text == "<event ts><device id><sensor name>@name")
        .expect("pseudo path");
    assert_eq!(name_path.kind, ValueKind::Categorical);
    let rows: Vec<(&str, u64)> = x
        .categorical
        .iter()
        .filter(|r| r.path == name_path.hash)
        .map(|r| (r.value.as_str(), r.count))
        .collect();
    assert_eq!(rows, [("a", 40), ("b", 40), ("c", 40)]);
}

#[test]
fn whole_input_is_one_document_without_split() {
    let x = extract(&sources(), &Config::default()).expect("extract");
    assert_eq!(x.summary.documents, 1);
    assert_eq!(x.summary.structures, 1);
}

#[test]
fn missing_file_is_a_typed_error() {
    let err =
        extract(&[Source::File("/nonexistent/exp-xml/x.xml".into())], &Config::default()).expect_err("missing file");
    assert!(matches!(err, exp_xml::XmlError::Open { .. }));
}

/// Documents written one per file (root = the split element) read like the
/// same documents inside a root: generated sets compare with their corpus.
#[test]
fn a_root_named_like_the_split_element_is_one_document() {
    let wrapped = extract(&sources(), &config(AttributePolicy::Keep)).expect("wrapped");
    let text = String::from_utf8(corpus()).expect("utf-8");
    let bare: Vec<Source> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("<event"))
        .enumerate()
        .map(|(i, line)| Source::Memory {
            name: format!("doc-{i}.xml"),
            data: format!("<?xml version=\"1.0\"?>\n{}\n", line.trim()).into_bytes(),
        })
        .collect();
    let bare = extract(&bare, &config(AttributePolicy::Keep)).expect("bare");
    assert_eq!(bare.summary.documents, 120);
    assert_eq!(bare.structures, wrapped.structures);
    assert_eq!(bare.paths, wrapped.paths);
    assert_eq!(bare.summary.split_root, None, "no root holds these documents");
    assert_eq!(wrapped.summary.split_root.as_deref(), Some("log"));
}

/// `Auto` decides on the whole corpus even though it reads it once: an
/// attribute whose (K+1)-th distinct value comes in the last document is
/// treated exactly as when that document comes first.
#[test]
fn auto_decides_on_the_whole_corpus_whatever_the_order() {
    // `slot` has K + 1 = 4 distinct values, the 4th in event 19 only;
    // `kind` has 2.
    let event = |i: u32| {
        let slot = if i == 19 { 4 } else { i % 3 + 1 };
        let kind = ["x", "y"][(i % 2) as usize];
        format!("<event><dev kind=\"{kind}\" slot=\"{slot}\"><v>{i}</v></dev></event>\n")
    };
    let run = |order: &[u32]| {
        let mut s = String::from("<log>\n");
        order.iter().for_each(|&i| s.push_str(&event(i)));
        s.push_str("</log>\n");
        let sources = vec![Source::Memory {
            name: "c.xml".into(),
            data: s.into_bytes(),
        }];
        extract(&sources, &config(AttributePolicy::Auto { max_distinct: 3 })).expect("extract")
    };
    let late = run(&(0..20).collect::<Vec<_>>());
    let early = run(&std::iter::once(19).chain(0..19).collect::<Vec<_>>());
    for x in [&late, &early] {
        let texts: Vec<&str> = x.paths.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "<event><dev kind=\"x\" slot><v>",
                "<event><dev kind=\"x\" slot>@slot",
                "<event><dev kind=\"y\" slot><v>",
                "<event><dev kind=\"y\" slot>@slot",
            ]
        );
        let slots = |path: usize| -> Vec<(&str, u64)> {
            x.categorical
                .iter()
                .filter(|r| r.path == x.paths[path].hash)
                .map(|r| (r.value.as_str(), r.count))
                .collect()
        };
        assert_eq!(slots(1), [("1", 4), ("2", 3), ("3", 3)]);
        assert_eq!(slots(3), [("1", 3), ("2", 3), ("3", 3), ("4", 1)]);
        assert_eq!(x.structures.len(), 2);
        assert!(x.structures.iter().all(|s| s.count == 10));
        assert_eq!((x.summary.unique_tags, x.summary.unique_attributes), (3, 2));
    }
    let rows = |x: &exp_xml::Extraction| {
        let paths: Vec<_> = x.paths.iter().map(|p| (p.hash, p.occurrences)).collect();
        let skeletons: Vec<_> = x.structures.iter().map(|s| (s.skeleton.clone(), s.count)).collect();
        let values: Vec<_> = x.numeric.iter().map(|n| (n.path, n.values.clone())).collect();
        (paths, skeletons, values)
    };
    assert_eq!(rows(&late), rows(&early));
}
