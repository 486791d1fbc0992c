//! Obfuscated sets: no original string of 4 or more characters anywhere in
//! the written set or in documents generated from it; consistency of the
//! mapping; and `reveal` restoring the original text.

use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::Path;

use exp_xml::generate::Generator;
use exp_xml::obfuscate::{
    obfuscate, read_map, reveal, reveal_path, write_map, ObfuscationMap, StringKind, MIN_HIDDEN_CHARS,
};
use exp_xml::set::{write_set, SetOptions, SynthesisSet, SET_FILES};
use exp_xml::{extract, md5_of, AttributePolicy, Config, Source, XmlError};
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

/// Names and values of the corpus (besides the numbers).
const ORIGINALS: &[&str] = &[
    "telemetry",
    "reading",
    "stamp",
    "station",
    "region",
    "northwest",
    "southeast",
    "terrain",
    "coastal",
    "rock & sand",
    "sensor",
    "model",
    "thermo",
    "hygro",
    "temperature",
    "quality",
    "excellent",
    "degraded",
    "code",
    "0042",
    "0117",
    "0305",
    "home",
    "station-feed.xml",
];

fn corpus() -> Vec<Source> {
    let mut s = String::from("<telemetry>\n");
    for i in 0..200u32 {
        let region = ["northwest", "southeast"][(i % 2) as usize];
        let terrain = ["coastal", "rock &amp; sand"][(i % 3 == 0) as usize];
        s.push_str(&format!(
            "<reading stamp=\"{}\"><station region=\"{region}\" terrain=\"{terrain}\"><sensor model=\"{}\">\
             <temperature>{:.2}</temperature><quality>{}</quality><code>{}</code><home>{}</home>\
             </sensor></station></reading>\n",
            1_700_000_000 + i * 37,
            ["thermo", "hygro"][(i % 2) as usize],
            15.0 + f64::from((i * 7919) % 1000) / 50.0,
            ["excellent", "degraded"][(i % 5 == 0) as usize],
            ["0042", "0117", "0305"][(i % 3) as usize],
            ["northwest", "southeast"][(i % 7 == 0) as usize],
        ));
    }
    s.push_str("</telemetry>\n");
    let broken = "<telemetry><reading stamp=\"1\"><station></reading></telemetry>";
    vec![
        Source::Memory {
            name: "corpus.xml".into(),
            data: s.into_bytes(),
        },
        Source::Memory {
            name: "station-feed.xml".into(),
            data: broken.as_bytes().to_vec(),
        },
    ]
}

fn set(policy: AttributePolicy) -> SynthesisSet {
    let config = Config {
        split_at: Some("reading".into()),
        policy,
        ..Config::default()
    };
    let x = extract(&corpus(), &config).expect("extract");
    let options = SetOptions {
        split_root: Some("telemetry".into()),
        ..SetOptions::default()
    };
    SynthesisSet::from_extraction(x, &config, &options)
}

fn auto() -> AttributePolicy {
    AttributePolicy::Auto { max_distinct: 5 }
}

/// Every original of at least 4 characters: the corpus strings and
/// whatever the set itself holds as categorical values.
fn originals(original: &SynthesisSet) -> BTreeSet<String> {
    let values = original.categorical.iter().map(|c| c.value.as_str());
    ORIGINALS
        .iter()
        .copied()
        .chain(values)
        .filter(|s| s.chars().count() >= MIN_HIDDEN_CHARS)
        .map(str::to_owned)
        .collect()
}

fn is_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Every string cell of every table, with its column name.
fn table_strings(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for file in SET_FILES.iter().filter(|f| f.ends_with(".parquet")) {
        let frame = exp_parquet::Reader::new(File::open(dir.join(file)).expect("open"))
            .and_then(|r| r.read_all())
            .expect("decode");
        for column in frame.columns() {
            if let Some(values) = column.values.str() {
                for v in values.iter().flatten() {
                    out.push((column.name.clone(), v.to_owned()));
                }
            }
        }
    }
    out
}

fn json_strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| json_strings(v, out)),
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                json_strings(v, out);
            }
        }
        _ => {}
    }
}

#[test]
fn no_original_string_in_the_written_set_or_generated_documents() {
    let original = set(auto());
    assert_eq!(original.info.skipped.len(), 1);
    let (hidden, map) = obfuscate(&original, 11).expect("obfuscate");
    let dir = tempfile::tempdir().expect("tempdir");
    let set_dir = dir.path().join("set");
    write_set(&hidden, &set_dir).expect("write");
    let originals = originals(&original);
    assert!(originals.len() >= 20, "{originals:?}");

    let cells = table_strings(&set_dir);
    assert!(cells.len() > 50);
    for (column, value) in &cells {
        for o in &originals {
            // MD5 digests of obfuscated texts are not corpus strings; a
            // hex-only original (`0042`) may occur in one by chance.
            let digest = matches!(column.as_str(), "hash" | "path") && is_hex(o);
            assert!(digest || !value.contains(o.as_str()), "`{o}` in {column}: {value}");
        }
    }
    let json_text = fs::read_to_string(set_dir.join("set.json")).expect("set.json");
    let mut strings = Vec::new();
    json_strings(&serde_json::from_str(&json_text).expect("json"), &mut strings);
    for s in &strings {
        for o in &originals {
            assert!(!s.contains(o.as_str()), "`{o}` in set.json string {s}");
        }
    }
    for o in originals.iter().filter(|o| !o.bytes().all(|b| b.is_ascii_digit())) {
        assert!(!json_text.contains(o.as_str()), "`{o}` in set.json");
    }
    assert!(strings.contains(&"obfuscated".to_owned()) && json_text.contains("\"obfuscated\": true"));

    // Documents generated from the obfuscated set.
    let generator = Generator::new(&hidden, 5).expect("generator");
    let mut docs = Vec::new();
    for i in 0..300 {
        let mut doc = Vec::new();
        generator.document(i, &mut doc);
        let text = String::from_utf8(doc).expect("utf8");
        for o in &originals {
            if o.bytes().all(|b| b.is_ascii_digit()) {
                // Digits may occur inside generated numbers; as a whole
                // value the original must not.
                assert!(!text.contains(&format!(">{o}<")), "`{o}` in {text}");
                assert!(!text.contains(&format!("\"{o}\"")), "`{o}` in {text}");
            } else {
                assert!(!text.contains(o.as_str()), "`{o}` in generated {text}");
            }
        }
        docs.push(text);
    }

    // Revealed, they are documents of the original corpus: every structure
    // and every categorical value is one the original set holds.
    let root = map.replacement("telemetry").expect("root replaced");
    let obfuscated_file = format!("<{root}>\n{}\n</{root}>\n", docs.join("\n"));
    let mut revealed = Vec::new();
    reveal(&map, obfuscated_file.as_bytes(), &mut revealed).expect("reveal");
    let again = extract(
        &[Source::Memory {
            name: "revealed.xml".into(),
            data: revealed,
        }],
        &Config {
            split_at: Some("reading".into()),
            policy: auto(),
            ..Config::default()
        },
    )
    .expect("extract revealed");
    assert_eq!(again.summary.documents, 300);
    assert!(again.summary.skipped.is_empty());
    let skeletons: BTreeSet<&str> = original.structures.iter().map(|s| s.skeleton.as_str()).collect();
    for s in &again.structures {
        assert!(
            skeletons.contains(s.skeleton.as_str()),
            "unknown structure {}",
            s.skeleton
        );
    }
    let path_text: HashMap<_, _> = again.paths.iter().map(|p| (p.hash, p.text.as_str())).collect();
    let original_values: BTreeSet<(&str, &str)> = {
        let texts: HashMap<_, _> = original.paths.iter().map(|p| (p.hash, p.text.as_str())).collect();
        original
            .categorical
            .iter()
            .map(|c| (texts[&c.path], c.value.as_str()))
            .collect()
    };
    let categorical_paths: BTreeSet<&str> = original_values.iter().map(|&(p, _)| p).collect();
    // Numeric paths (the `stamp` pseudo path) may look categorical in a
    // small generated sample; their values are drawn numbers.
    let checked = again
        .categorical
        .iter()
        .filter(|c| categorical_paths.contains(path_text[&c.path]));
    assert!(checked.clone().count() >= 8);
    for c in checked {
        let key = (path_text[&c.path], c.value.as_str());
        assert!(original_values.contains(&key), "unknown value {key:?}");
    }
}

#[test]
fn mapping_is_consistent_injective_and_seeded() {
    let original = set(auto());
    let (hidden, map) = obfuscate(&original, 11).expect("obfuscate");
    let rep = |s: &str| {
        map.replacement(s)
            .unwrap_or_else(|| panic!("{s} not mapped"))
            .to_owned()
    };

    // Same length in bytes and characters; names stay names; numbers numbers.
    for e in &map.entries {
        assert_eq!(e.original.len(), e.replacement.len());
        assert_eq!(e.original.chars().count(), e.replacement.chars().count());
        if e.kinds.contains(&StringKind::Tag) {
            assert!(
                e.replacement.starts_with(|c: char| c.is_ascii_alphabetic()),
                "{}",
                e.replacement
            );
        }
    }
    let code = rep("0042");
    assert!(
        code.starts_with('0') && code.bytes().all(|b| b.is_ascii_digit()),
        "{code}"
    );
    let replacements: BTreeSet<&str> = map.entries.iter().map(|e| e.replacement.as_str()).collect();
    assert_eq!(replacements.len(), map.entries.len(), "injective");

    // One replacement everywhere: an attribute value that is also a
    // categorical value, a tag in skeletons and paths.
    let northwest = map.entries.iter().find(|e| e.original == "northwest").expect("entry");
    assert!(northwest.kinds.contains(&StringKind::AttributeValue));
    assert!(northwest.kinds.contains(&StringKind::CategoricalValue));
    let attr = format!("{}=\"{}\"", rep("region"), rep("northwest"));
    assert!(hidden.structures.iter().any(|s| s.skeleton.contains(&attr)));
    assert!(hidden.paths.iter().any(|p| p.text.contains(&attr)));
    assert!(hidden.categorical.iter().any(|c| c.value == rep("northwest")));
    let escaped = format!("{}=\"{}\"", rep("terrain"), rep("rock & sand").replace('&', "&amp;"));
    assert!(
        hidden.structures.iter().any(|s| s.skeleton.contains(&escaped)),
        "{escaped}"
    );
    let station = format!("<{} ", rep("station"));
    assert!(hidden.structures.iter().all(|s| s.skeleton.contains(&station)));
    assert_eq!(hidden.info.split_at, Some(rep("reading")));
    assert_eq!(hidden.info.split_root, Some(rep("telemetry")));
    assert_eq!(hidden.info.skipped[0].input, rep("station-feed.xml"));
    assert_eq!(hidden.info.skipped[0].detail, None);
    assert!(hidden.info.obfuscated);

    // Hashes are those of the new texts, references follow them, numbers stay.
    for s in &hidden.structures {
        assert_eq!(s.hash, md5_of(&s.skeleton));
    }
    for p in &hidden.paths {
        assert_eq!(p.hash, md5_of(&p.text));
    }
    let known: BTreeSet<_> = hidden.paths.iter().map(|p| p.hash).collect();
    assert!(hidden.categorical.iter().all(|c| known.contains(&c.path)));
    assert!(hidden.numeric.iter().all(|n| known.contains(&n.path)));
    for (a, b) in original.numeric.iter().zip(&hidden.numeric) {
        assert_eq!(
            (&a.fit, &a.runner_up, a.min, a.max),
            (&b.fit, &b.runner_up, b.min, b.max)
        );
    }
    let counts = |s: &SynthesisSet| s.structures.iter().map(|s| s.count).collect::<Vec<_>>();
    assert_eq!(counts(&original), counts(&hidden));
    assert_eq!(original.info.corpus, hidden.info.corpus);

    // Seeded.
    assert_eq!(obfuscate(&original, 11).expect("again"), (hidden.clone(), map.clone()));
    assert_ne!(obfuscate(&original, 12).expect("other seed").0, hidden);
}

#[test]
fn map_stays_out_of_the_set_and_reveal_restores_documents() {
    let original = set(AttributePolicy::Keep);
    let (hidden, map) = obfuscate(&original, 3).expect("obfuscate");
    let dir = tempfile::tempdir().expect("tempdir");
    let set_dir = dir.path().join("set");
    write_set(&hidden, &set_dir).expect("write");
    match write_map(&map, &set_dir.join("private"), &set_dir) {
        Err(XmlError::MapInsideSet { .. }) => {}
        other => panic!("expected MapInsideSet, got {other:?}"),
    }
    match write_map(&map, &set_dir.join("x/../../set"), &set_dir) {
        Err(XmlError::MapInsideSet { .. }) => {}
        other => panic!("expected MapInsideSet for the set dir itself, got {other:?}"),
    }
    assert!(!set_dir.join("private").exists());
    let private = dir.path().join("private");
    let file = write_map(&map, &private, &set_dir).expect("write map");
    assert_eq!(file, private.join("map.json"));
    let back: ObfuscationMap = read_map(&private).expect("read map");
    assert_eq!(back, map);

    // Under `keep` every skeleton is a well-formed document; with values
    // filled in, revealing the obfuscated one gives the original text.
    let fill = |skeleton: &str, m: &dyn Fn(&str) -> String| {
        let quality = m("quality");
        skeleton.replace(
            &format!("<{quality}></{quality}>"),
            &format!("<{quality}>{}</{quality}>", m("excellent")),
        )
    };
    let same = |s: &str| s.to_owned();
    let rep = |s: &str| map.replacement(s).expect("mapped").to_owned();
    let docs_dir = dir.path().join("generated");
    fs::create_dir_all(docs_dir.join("sub")).expect("mkdir");
    let mut expected = BTreeSet::new();
    for (i, s) in hidden.structures.iter().enumerate() {
        let obfuscated = fill(&s.skeleton, &rep);
        assert!(obfuscated.contains(&rep("excellent")));
        let name = if i % 2 == 0 {
            format!("d{i}.xml")
        } else {
            format!("sub/d{i}.xml")
        };
        fs::write(docs_dir.join(&name), &obfuscated).expect("write doc");
        let mut revealed = Vec::new();
        reveal(&map, obfuscated.as_bytes(), &mut revealed).expect("reveal");
        let revealed = String::from_utf8(revealed).expect("utf8");
        expected.insert(revealed.clone());
        assert!(revealed.contains("<quality>excellent</quality>"), "{revealed}");
    }
    let originals: BTreeSet<String> = original.structures.iter().map(|s| fill(&s.skeleton, &same)).collect();
    assert_eq!(expected, originals, "reveal restores every original document exactly");
    assert!(originals.iter().any(|d| d.contains("terrain=\"rock &amp; sand\"")));

    // Whole directories, recursively.
    let out = dir.path().join("revealed");
    let files = reveal_path(&map, &docs_dir, &out).expect("reveal dir");
    assert_eq!(files, hidden.structures.len() as u64);
    let revealed: BTreeSet<String> = (0..hidden.structures.len())
        .map(|i| {
            let name = if i % 2 == 0 {
                format!("d{i}.xml")
            } else {
                format!("sub/d{i}.xml")
            };
            fs::read_to_string(out.join(name)).expect("revealed file")
        })
        .collect();
    assert_eq!(revealed, originals);

    // Gzip output of the generator: revealed and compressed again.
    let gz_dir = dir.path().join("gz");
    fs::create_dir_all(&gz_dir).expect("mkdir");
    let mut all = String::new();
    for s in &hidden.structures {
        all.push_str(&fill(&s.skeleton, &rep));
        all.push('\n');
    }
    let mut gz = GzEncoder::new(
        File::create(gz_dir.join("all.xml.gz")).expect("gz"),
        Compression::fast(),
    );
    gz.write_all(all.as_bytes()).expect("compress");
    gz.finish().expect("finish");
    let gz_out = dir.path().join("gz-revealed");
    assert_eq!(reveal_path(&map, &gz_dir, &gz_out).expect("reveal gz"), 1);
    let mut text = String::new();
    MultiGzDecoder::new(File::open(gz_out.join("all.xml.gz")).expect("open"))
        .read_to_string(&mut text)
        .expect("decompress");
    let lines: BTreeSet<String> = text.lines().map(str::to_owned).collect();
    assert_eq!(lines, originals);
}
