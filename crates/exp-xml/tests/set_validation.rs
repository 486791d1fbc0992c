//! Issue 14: a `numeric.parquet` with `format_decimals = 70000` panicked the
//! generator (generate/number.rs). Everything read from a set is checked
//! when the set is read: a clear `SetFormat` error naming the file, never a
//! panic later.

use exp_xml::generate::Generator;
use exp_xml::set::{read_set, write_set, SetOptions, SynthesisSet};
use exp_xml::{extract, Config, NumberFormat, Source, XmlError};

fn set() -> SynthesisSet {
    let mut corpus = String::from("<log>");
    for i in 0..200 {
        corpus.push_str(&format!("<e><v>{}.{:03}</v></e>", i % 17, (i * 37) % 1000));
    }
    corpus.push_str("</log>");
    let config = Config {
        split_at: Some("e".into()),
        ..Config::default()
    };
    let source = Source::Memory {
        name: "c.xml".into(),
        data: corpus.into_bytes(),
    };
    let x = extract(&[source], &config).expect("extract");
    SynthesisSet::from_extraction(x, &config, &SetOptions::default())
}

fn refused(edit: impl FnOnce(&mut SynthesisSet), what: &str) {
    let mut set = set();
    assert!(!set.numeric.is_empty(), "the set has a numeric path");
    edit(&mut set);
    let dir = tempfile::tempdir().expect("tempdir");
    write_set(&set, dir.path()).expect("write");
    match read_set(dir.path()) {
        Err(error @ XmlError::SetFormat { .. }) => {
            assert!(error.to_string().contains("numeric.parquet"), "{what}: {error}");
        }
        Err(other) => panic!("{what}: expected SetFormat, got {other}"),
        Ok(_) => panic!("{what}: the set was accepted"),
    }
}

#[test]
fn numbers_read_from_a_set_are_validated() {
    refused(
        |s| s.numeric[0].format = NumberFormat::Fixed { decimals: 70_000 },
        "format_decimals",
    );
    refused(|s| s.numeric[0].decimals = u32::MAX, "decimals");
    refused(|s| s.numeric[0].min = f64::NAN, "NaN min");
    refused(
        |s| {
            s.numeric[0].min = 5.0;
            s.numeric[0].max = 1.0;
        },
        "min above max",
    );
    refused(
        |s| {
            if let Some(fit) = s.numeric[0].fit.as_mut() {
                fit.params[0].1 = f64::INFINITY;
            }
        },
        "infinite parameter",
    );
}

#[test]
fn a_valid_set_still_generates() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_set(&set(), dir.path()).expect("write");
    let back = read_set(dir.path()).expect("read");
    let generator = Generator::new(&back, 1).expect("generator");
    let mut out = Vec::new();
    generator.document(0, &mut out);
    assert!(out.starts_with(b"<e>"), "{}", String::from_utf8_lossy(&out));
}
