//! Generation: determinism, sharding, well-formedness, skeletons, value
//! ranges and formats, frequencies, layouts and typed errors.

use std::collections::{HashMap, HashSet};
use std::io::Read;

use exp_stats::Family;
use exp_xml::generate::{
    generate_to_dir, generate_to_writer, Amount, GenerateError, GenerateOptions, Generator, Layout, Shard,
};
use exp_xml::set::{FitRecord, NumericPath, SetInfo, SynthesisSet};
use exp_xml::{
    extract, md5_of, AttributePolicy, CategoricalCount, Config, Md5Hash, NumberFormat, PathInfo, Source, Structure,
    ValueKind, XmlError,
};
use quick_xml::events::Event;
use quick_xml::Reader;

#[path = "../examples/support/eventlog.rs"]
mod eventlog;

fn path(text: &str, kind: ValueKind, occurrences: u64) -> PathInfo {
    PathInfo {
        hash: md5_of(text),
        text: text.to_owned(),
        kind,
        occurrences,
    }
}

fn structure(skeleton: &str, count: u64) -> Structure {
    Structure {
        hash: md5_of(skeleton),
        count,
        skeleton: skeleton.to_owned(),
    }
}

fn value(path: &str, value: &str, count: u64) -> CategoricalCount {
    CategoricalCount {
        path: md5_of(path),
        value: value.to_owned(),
        count,
        truncated: false,
    }
}

const S1: &str = "<r id=\"x\" ts><a></a><n></n><f></f><e></e></r>";
const S2: &str = "<r id=\"y\" ts><a></a><b><c></c></b></r>";

/// A hand-built set: two skeletons (3:1), a categorical text path with
/// characters to escape and missing values, an attribute pseudo path, an
/// integer, a fixed-2 and an exponent numeric path.
fn small_set() -> SynthesisSet {
    let r1 = "<r id=\"x\" ts>";
    let r2 = "<r id=\"y\" ts>";
    let a1 = format!("{r1}<a>");
    let a2 = format!("{r2}<a>");
    let ts1 = format!("{r1}@ts");
    let ts2 = format!("{r2}@ts");
    let n = format!("{r1}<n>");
    let f = format!("{r1}<f>");
    let e = format!("{r1}<e>");
    let c = format!("{r2}<b><c>");
    let numeric =
        |p: &str, fit: Option<(Family, Vec<(&str, f64)>)>, min: f64, max: f64, format: NumberFormat| NumericPath {
            path: md5_of(p),
            fit: fit.map(|(family, params)| FitRecord {
                family,
                params: params.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                log_likelihood: 0.0,
                aic: 0.0,
            }),
            runner_up: None,
            n: 900,
            min,
            max,
            is_integer: format == NumberFormat::Integer,
            decimals: match format {
                NumberFormat::Fixed { decimals } => decimals,
                _ => 0,
            },
            format,
        };
    SynthesisSet {
        structures: vec![structure(S1, 3000), structure(S2, 1000)],
        paths: vec![
            path(&a1, ValueKind::Categorical, 3000),
            path(&a2, ValueKind::Categorical, 1000),
            path(&ts1, ValueKind::Categorical, 3000),
            path(&ts2, ValueKind::Categorical, 1000),
            path(&n, ValueKind::Numeric, 900),
            path(&f, ValueKind::Numeric, 1000),
            path(&e, ValueKind::Numeric, 900),
            path(&c, ValueKind::Categorical, 1000),
        ],
        categorical: vec![
            value(&a1, "alpha & <beta>", 2000),
            value(&a1, "gamma", 500),
            value(&a2, "delta", 1000),
            value(&ts1, "t\"1\"", 2000),
            value(&ts1, "t2", 1000),
            value(&ts2, "t3", 1000),
            value(&c, "only", 1000),
        ],
        numeric: vec![
            numeric(
                &n,
                Some((Family::Normal, vec![("mean", 50.0), ("sd", 30.0)])),
                0.0,
                100.0,
                NumberFormat::Integer,
            ),
            numeric(&f, None, -5.5, 7.25, NumberFormat::Fixed { decimals: 2 }),
            numeric(
                &e,
                Some((Family::LogNormal, vec![("mu", -6.0), ("sigma", 2.0)])),
                1e-6,
                0.5,
                NumberFormat::Exponent,
            ),
        ],
        info: SetInfo {
            split_at: Some("r".into()),
            split_root: Some("root".into()),
            ..SetInfo::default()
        },
    }
}

fn docs(generator: &Generator, range: std::ops::Range<u64>) -> Vec<Vec<u8>> {
    range
        .map(|i| {
            let mut out = Vec::new();
            generator.document(i, &mut out);
            out
        })
        .collect()
}

/// Leaf texts and attribute values by path text, and the skeleton, of one
/// document (parsed with quick-xml, which also checks well-formedness).
#[derive(Default)]
struct Parsed {
    skeleton: String,
    values: Vec<(String, String)>,
}

fn parse(doc: &[u8], kept: &[&str]) -> Parsed {
    let mut reader = Reader::from_reader(doc);
    let mut parsed = Parsed::default();
    let mut stack: Vec<(usize, String, bool)> = Vec::new();
    let mut path = String::new();
    let mut text = String::new();
    loop {
        match reader
            .read_event()
            .unwrap_or_else(|e| panic!("not well-formed: {e}: {}", String::from_utf8_lossy(doc)))
        {
            Event::Start(start) => {
                if let Some(top) = stack.last_mut() {
                    top.2 = true;
                }
                let name = String::from_utf8(start.name().as_ref().to_vec()).expect("utf-8 name");
                let mut attrs: Vec<(String, String)> = start
                    .attributes()
                    .map(|a| {
                        let a = a.expect("valid attribute");
                        let key = String::from_utf8(a.key.as_ref().to_vec()).expect("utf-8 key");
                        let value = a.unescape_value().expect("valid escapes").into_owned();
                        (key, value)
                    })
                    .collect();
                attrs.sort();
                let mut tag = format!("<{name}");
                let mut unkept = Vec::new();
                for (key, value) in &attrs {
                    if kept.contains(&key.as_str()) {
                        tag.push_str(&format!(" {key}=\"{value}\""));
                    } else {
                        tag.push_str(&format!(" {key}"));
                        unkept.push((key.clone(), value.clone()));
                    }
                }
                tag.push('>');
                parsed.skeleton.push_str(&tag);
                stack.push((path.len(), name, false));
                path.push_str(&tag);
                for (key, value) in unkept {
                    parsed.values.push((format!("{path}@{key}"), value));
                }
                text.clear();
            }
            Event::Text(t) => text.push_str(&t.decode().expect("utf-8 text")),
            Event::GeneralRef(r) => {
                let name = r.decode().expect("utf-8 reference");
                text.push_str(match name.as_ref() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    other => panic!("unexpected entity {other}"),
                });
            }
            Event::End(_) => {
                let (mark, name, had_child) = stack.pop().expect("balanced");
                if !had_child && !text.is_empty() {
                    parsed.values.push((path.clone(), text.clone()));
                }
                text.clear();
                path.truncate(mark);
                parsed.skeleton.push_str(&format!("</{name}>"));
            }
            Event::Eof => break,
            Event::Empty(_) => panic!("generation writes no empty-element tags"),
            _ => {}
        }
    }
    assert!(stack.is_empty(), "unclosed elements");
    parsed
}

#[test]
fn same_seed_same_bytes_different_seed_differs() {
    let set = small_set();
    let a = Generator::new(&set, 7).expect("compiles");
    let b = Generator::new(&set, 7).expect("compiles");
    let c = Generator::new(&set, 8).expect("compiles");
    assert_eq!(docs(&a, 0..200), docs(&b, 0..200));
    assert_ne!(docs(&a, 0..200), docs(&c, 0..200));
    // Document i does not depend on which documents were made before it.
    assert_eq!(docs(&a, 150..200), docs(&b, 0..200)[150..].to_vec());
}

#[test]
fn documents_are_well_formed_with_set_skeletons_and_values() {
    let set = small_set();
    let generator = Generator::new(&set, 1).expect("compiles");
    let skeletons: HashSet<&str> = set.structures.iter().map(|s| s.skeleton.as_str()).collect();
    let by_hash: HashMap<Md5Hash, &PathInfo> = set.paths.iter().map(|p| (p.hash, p)).collect();
    let mut categories: HashMap<Md5Hash, HashSet<&str>> = HashMap::new();
    for row in &set.categorical {
        categories.entry(row.path).or_default().insert(&row.value);
    }
    let numeric: HashMap<Md5Hash, &NumericPath> = set.numeric.iter().map(|n| (n.path, n)).collect();
    let mut skeleton_counts: HashMap<String, u64> = HashMap::new();
    let mut value_counts: HashMap<(String, String), u64> = HashMap::new();
    let mut present: HashMap<String, u64> = HashMap::new();
    let n_docs = 4000u64;
    for doc in docs(&generator, 0..n_docs) {
        let parsed = parse(&doc, &["id"]);
        assert!(
            skeletons.contains(parsed.skeleton.as_str()),
            "unknown skeleton {}",
            parsed.skeleton
        );
        *skeleton_counts.entry(parsed.skeleton).or_default() += 1;
        for (p, v) in parsed.values {
            let hash = md5_of(&p);
            let info = by_hash.get(&hash).unwrap_or_else(|| panic!("path {p} not in the set"));
            *present.entry(p.clone()).or_default() += 1;
            match info.kind {
                ValueKind::Categorical => {
                    assert!(categories[&hash].contains(v.as_str()), "{v:?} is not a value of {p}");
                    *value_counts.entry((p, v)).or_default() += 1;
                }
                ValueKind::Numeric => check_number(numeric[&hash], &v),
            }
        }
    }
    // Skeleton frequencies 3:1 — chi-squared with 1 df, 0.999 quantile 10.83.
    let total: u64 = set.structures.iter().map(|s| s.count).sum();
    let chi2: f64 = set
        .structures
        .iter()
        .map(|s| {
            let e = s.count as f64 / total as f64 * n_docs as f64;
            let o = skeleton_counts.get(&s.skeleton).copied().unwrap_or(0) as f64;
            (o - e).powi(2) / e
        })
        .sum();
    assert!(chi2 < 10.83, "skeleton chi2 {chi2}: {skeleton_counts:?}");
    // Categorical frequencies, including absence (2500 of 3000 `a` leaves
    // have text): total variation distance below 0.03 for every path.
    let s1_docs = skeleton_counts.get(S1).copied().unwrap_or(0) as f64;
    let a1 = "<r id=\"x\" ts><a>";
    let observed = |v: &str| value_counts.get(&(a1.to_owned(), v.to_owned())).copied().unwrap_or(0) as f64 / s1_docs;
    let tv = (observed("alpha & <beta>") - 2.0 / 3.0).abs()
        + (observed("gamma") - 1.0 / 6.0).abs()
        + ((s1_docs - present[a1] as f64) / s1_docs - 1.0 / 6.0).abs();
    assert!(tv / 2.0 < 0.03, "TV distance {tv} on {a1}");
    let ts = "<r id=\"x\" ts>@ts";
    let quoted = value_counts[&(ts.to_owned(), "t\"1\"".to_owned())] as f64 / s1_docs;
    assert!((quoted - 2.0 / 3.0).abs() < 0.03, "P(t\"1\") = {quoted}");
    // Numeric presence: 900 values in 900 occurrences (`n`) is always present.
    assert_eq!(present["<r id=\"x\" ts><n>"] as f64, s1_docs);
}

fn check_number(numeric: &NumericPath, text: &str) {
    let x: f64 = text.parse().unwrap_or_else(|_| panic!("{text:?} is not a number"));
    assert!(
        x >= numeric.min && x <= numeric.max,
        "{x} outside [{}, {}]",
        numeric.min,
        numeric.max
    );
    match numeric.format {
        NumberFormat::Integer => assert!(!text.contains(['.', 'e']), "{text} is not an integer"),
        NumberFormat::Fixed { decimals } => {
            let (_, frac) = text.split_once('.').unwrap_or_else(|| panic!("{text} has no decimals"));
            assert_eq!(frac.len() as u32, decimals, "{text} should have {decimals} decimals");
        }
        NumberFormat::Exponent => assert!(text.contains('e'), "{text} has no exponent"),
    }
}

#[test]
fn extracted_corpus_round_trips() {
    // A set from a real extraction: every generated document parses, has
    // a skeleton of the set, and its values respect the set.
    let x = eventlog::extraction(300);
    let set = eventlog::set_from(&x);
    assert!(set.paths.len() >= 40, "{} paths", set.paths.len());
    assert!(!set.numeric.is_empty());
    let generator = Generator::new(&set, 3).expect("compiles");
    let skeletons: HashSet<&str> = set.structures.iter().map(|s| s.skeleton.as_str()).collect();
    let mut kept: Vec<&str> = Vec::new();
    for s in &set.structures {
        for key in ["name", "dc", "kind"] {
            if s.skeleton.contains(&format!(" {key}=\"")) && !kept.contains(&key) {
                kept.push(key);
            }
        }
    }
    let numeric: HashMap<Md5Hash, &NumericPath> = set.numeric.iter().map(|n| (n.path, n)).collect();
    let values: HashSet<(Md5Hash, &str)> = set.categorical.iter().map(|c| (c.path, c.value.as_str())).collect();
    for doc in docs(&generator, 0..300) {
        let parsed = parse(&doc, &kept);
        assert!(
            skeletons.contains(parsed.skeleton.as_str()),
            "unknown skeleton {}",
            parsed.skeleton
        );
        for (p, v) in parsed.values {
            let hash = md5_of(&p);
            match numeric.get(&hash) {
                Some(n) => check_number(n, &v),
                None => assert!(values.contains(&(hash, v.as_str())), "{v:?} is not a value of {p}"),
            }
        }
    }
    // Re-extracting the generated documents finds only skeletons of the set.
    let mut stream = Vec::new();
    let options = GenerateOptions {
        amount: Amount::Documents(200),
        shard: Shard::default(),
        layout: Layout::Stream,
        gzip: false,
        threads: 2,
    };
    generate_to_writer(&generator, &options, &mut stream).expect("in memory");
    let config = Config {
        split_at: Some("event".into()),
        policy: AttributePolicy::Auto { max_distinct: 30 },
        ..Config::default()
    };
    let again = extract(
        &[Source::Memory {
            name: "generated".into(),
            data: stream,
        }],
        &config,
    )
    .expect("extracts");
    assert_eq!(again.summary.documents, 200);
    assert!(again.summary.skipped.is_empty(), "{:?}", again.summary.skipped);
}

fn options(amount: Amount, layout: Layout, shard: Shard, threads: usize) -> GenerateOptions {
    GenerateOptions {
        amount,
        shard,
        layout,
        gzip: false,
        threads,
    }
}

fn stream(generator: &Generator, o: &GenerateOptions) -> Vec<u8> {
    let mut out = Vec::new();
    generate_to_writer(generator, o, &mut out).expect("in memory");
    out
}

#[test]
fn shards_concatenate_to_the_single_run() {
    let set = small_set();
    let generator = Generator::new(&set, 5).expect("compiles");
    let total = 1237;
    let single = stream(
        &generator,
        &options(Amount::Documents(total), Layout::Stream, Shard::default(), 1),
    );
    let text = String::from_utf8(single.clone()).expect("utf-8");
    assert!(text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<root>\n<r id="));
    assert!(text.ends_with("</r>\n</root>\n"));
    assert_eq!(text.matches("<r id=").count(), total as usize);
    for count in [2u64, 3, 7] {
        for threads in [1, 2, 3] {
            let mut joined = Vec::new();
            for index in 0..count {
                let o = options(
                    Amount::Documents(total),
                    Layout::Stream,
                    Shard { index, count },
                    threads,
                );
                joined.extend(stream(&generator, &o));
            }
            assert!(
                joined == single,
                "{count} shards, {threads} threads differ from the single run"
            );
        }
    }
}

fn read_dir(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("output directory")
        .map(|e| {
            let e = e.expect("entry");
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).expect("file"),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn file_layouts_and_sharded_files() {
    let set = small_set();
    let generator = Generator::new(&set, 9).expect("compiles");
    let tmp = std::env::temp_dir().join(format!("exp-xml-generate-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for layout in [Layout::DocumentsPerFile(100), Layout::FilePerDocument] {
        let single_dir = tmp.join("single");
        let total = 1050;
        let stats = generate_to_dir(
            &generator,
            &options(Amount::Documents(total), layout, Shard::default(), 2),
            &single_dir,
        )
        .expect("writes");
        assert_eq!(stats.documents, total);
        let single = read_dir(&single_dir);
        let sharded_dir = tmp.join("sharded");
        for index in 0..4 {
            let o = options(Amount::Documents(total), layout, Shard { index, count: 4 }, 1);
            generate_to_dir(&generator, &o, &sharded_dir).expect("writes");
        }
        assert!(read_dir(&sharded_dir) == single, "{layout:?}: shard files differ");
        match layout {
            Layout::DocumentsPerFile(_) => {
                assert_eq!(single.len(), 11);
                assert_eq!(single[0].0, "part-00000.xml");
                assert_eq!(single[10].0, "part-00010.xml");
                let last = String::from_utf8(single[10].1.clone()).expect("utf-8");
                assert!(last.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<root>\n"));
                assert!(last.ends_with("</root>\n"));
                assert_eq!(last.matches("<r id=").count(), 50);
                // Every file is one well-formed document.
                for (_, bytes) in &single {
                    let body = &bytes[bytes.iter().position(|&b| b == b'\n').unwrap_or(0)..];
                    parse(body, &["id"]);
                }
            }
            _ => {
                assert_eq!(single.len(), total as usize);
                assert_eq!(single[42].0, "doc-000000042.xml");
                let mut doc = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n".to_vec();
                generator.document(42, &mut doc);
                doc.push(b'\n');
                assert_eq!(single[42].1, doc);
            }
        }
        std::fs::remove_dir_all(&tmp).expect("cleanup");
    }
}

#[test]
fn gzip_decompresses_to_the_plain_output() {
    let set = small_set();
    let generator = Generator::new(&set, 11).expect("compiles");
    let plain = stream(
        &generator,
        &options(Amount::Documents(3000), Layout::Stream, Shard::default(), 2),
    );
    let mut o = options(Amount::Documents(3000), Layout::Stream, Shard::default(), 2);
    o.gzip = true;
    let gz = stream(&generator, &o);
    assert!(gz.len() < plain.len() / 2, "compressed {} of {}", gz.len(), plain.len());
    let mut unpacked = Vec::new();
    flate2::read::MultiGzDecoder::new(gz.as_slice())
        .read_to_end(&mut unpacked)
        .expect("valid gzip");
    assert!(unpacked == plain);
}

#[test]
fn size_target_is_deterministic_and_reached() {
    let set = small_set();
    let generator = Generator::new(&set, 13).expect("compiles");
    let target = 300_000;
    let runs: Vec<Vec<u8>> = [1, 2, 3]
        .iter()
        .map(|&t| {
            stream(
                &generator,
                &options(Amount::Bytes(target), Layout::Stream, Shard::default(), t),
            )
        })
        .collect();
    assert!(
        runs[0] == runs[1] && runs[1] == runs[2],
        "thread count changed a --size run"
    );
    let len = runs[0].len() as u64;
    assert!(len >= target, "{len} < {target}");
    // Overshoot is below one batch (about 256 KiB).
    assert!(len < target + 300 * 1024, "{len} overshoots {target}");
    let text = String::from_utf8(runs[0].clone()).expect("utf-8");
    assert!(text.ends_with("</root>\n"));
    // A size run is a prefix of a count run with as many documents.
    let docs = text.matches("<r id=").count() as u64;
    assert!(
        stream(
            &generator,
            &options(Amount::Documents(docs), Layout::Stream, Shard::default(), 2)
        ) == runs[0]
    );
    // A partial last file still gets its closing wrapper.
    let tmp = std::env::temp_dir().join(format!("exp-xml-generate-size-{}", std::process::id()));
    let stats = generate_to_dir(
        &generator,
        &options(
            Amount::Bytes(target),
            Layout::DocumentsPerFile(1_000_000),
            Shard::default(),
            2,
        ),
        &tmp,
    )
    .expect("writes");
    let files = read_dir(&tmp);
    assert_eq!((files.len(), stats.files), (1, 1));
    assert!(files[0].1.ends_with(b"</root>\n"));
    std::fs::remove_dir_all(&tmp).expect("cleanup");
}

#[test]
fn invalid_sets_and_options_are_typed_errors() {
    let mut empty = small_set();
    empty.structures.clear();
    assert!(matches!(Generator::new(&empty, 0), Err(XmlError::Config(_))));
    let mut zero = small_set();
    for s in &mut zero.structures {
        s.count = 0;
    }
    assert!(matches!(Generator::new(&zero, 0), Err(XmlError::Config(_))));
    let mut missing = small_set();
    missing.paths.retain(|p| !p.text.ends_with("<c>"));
    assert!(matches!(Generator::new(&missing, 0), Err(XmlError::Config(_))));
    let mut bad_fit = small_set();
    if let Some(fit) = bad_fit.numeric[0].fit.as_mut() {
        fit.params[1].1 = -1.0;
    }
    assert!(matches!(Generator::new(&bad_fit, 0), Err(XmlError::Config(_))));
    let mut bad_skeleton = small_set();
    bad_skeleton.structures[0].skeleton = "<r><a></r>".into();
    assert!(matches!(Generator::new(&bad_skeleton, 0), Err(XmlError::Config(_))));

    let generator = Generator::new(&small_set(), 0).expect("compiles");
    let sharded_size = options(Amount::Bytes(1000), Layout::Stream, Shard { index: 0, count: 2 }, 1);
    assert!(matches!(
        generate_to_writer(&generator, &sharded_size, Vec::new()),
        Err(GenerateError::Options(_))
    ));
    let no_shard = options(Amount::Documents(10), Layout::Stream, Shard { index: 2, count: 2 }, 1);
    assert!(matches!(
        generate_to_writer(&generator, &no_shard, Vec::new()),
        Err(GenerateError::Options(_))
    ));
    let files_to_writer = options(Amount::Documents(10), Layout::FilePerDocument, Shard::default(), 1);
    assert!(matches!(
        generate_to_writer(&generator, &files_to_writer, Vec::new()),
        Err(GenerateError::Options(_))
    ));
    // Zero documents: just the framing.
    let none = stream(
        &generator,
        &options(Amount::Documents(0), Layout::Stream, Shard::default(), 2),
    );
    assert_eq!(none, b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<root>\n</root>\n");
}
