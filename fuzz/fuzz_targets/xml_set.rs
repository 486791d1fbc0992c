//! `cargo +nightly fuzz run xml_set`: loading a set directory someone edited.
//! A valid set is changed where a hand edit could change it (numbers and
//! formats of numeric paths, fit parameters, skeletons, categorical values,
//! `set.json`), written, and read back: reading either fails with an error
//! or gives a set that generates documents. Never a panic.

#![no_main]

use std::sync::OnceLock;

use arbitrary::{Arbitrary, Unstructured};
use exp_xml::generate::Generator;
use exp_xml::set::{read_set, write_set, SetOptions, SynthesisSet};
use exp_xml::{extract, Config, NumberFormat, Source};
use libfuzzer_sys::fuzz_target;

fn base() -> &'static SynthesisSet {
    static SET: OnceLock<SynthesisSet> = OnceLock::new();
    SET.get_or_init(|| {
        let mut corpus = String::from("<log>");
        for i in 0..120 {
            corpus.push_str(&format!(
                "<e k=\"{}\"><v>{}.{:02}</v><n>{}</n><s>{}</s></e>",
                i % 4,
                i % 13,
                (i * 7) % 100,
                (i * i) % 1000,
                ["ok", "warn", "fail"][i % 3]
            ));
        }
        corpus.push_str("</log>");
        let config = Config {
            split_at: Some("e".into()),
            ..Config::default()
        };
        let source = Source::Memory {
            name: "base.xml".into(),
            data: corpus.into_bytes(),
        };
        let x = extract(&[source], &config).expect("the base corpus extracts");
        let options = SetOptions {
            split_root: x.summary.split_root.clone(),
            ..SetOptions::default()
        };
        SynthesisSet::from_extraction(x, &config, &options)
    })
}

#[derive(Arbitrary, Debug)]
enum Edit {
    Min(usize, f64),
    Max(usize, f64),
    Decimals(usize, u32),
    Format(usize, u8, u32),
    Param(usize, usize, f64),
    Skeleton(usize, String),
    Value(usize, String),
    Count(usize, u64),
    Json(Vec<u8>),
}

fn apply(set: &mut SynthesisSet, edit: &Edit) -> Option<Vec<u8>> {
    let n = set.numeric.len().max(1);
    match edit {
        Edit::Min(i, x) => set.numeric.get_mut(i % n)?.min = *x,
        Edit::Max(i, x) => set.numeric.get_mut(i % n)?.max = *x,
        Edit::Decimals(i, d) => set.numeric.get_mut(i % n)?.decimals = *d,
        Edit::Format(i, kind, d) => {
            set.numeric.get_mut(i % n)?.format = match kind % 3 {
                0 => NumberFormat::Integer,
                1 => NumberFormat::Exponent,
                _ => NumberFormat::Fixed { decimals: *d },
            }
        }
        Edit::Param(i, p, x) => {
            let fit = set.numeric.get_mut(i % n)?.fit.as_mut()?;
            let len = fit.params.len().max(1);
            fit.params.get_mut(p % len)?.1 = *x;
        }
        Edit::Skeleton(i, text) => {
            let len = set.structures.len().max(1);
            set.structures.get_mut(i % len)?.skeleton = text.clone();
        }
        Edit::Value(i, text) => {
            let len = set.categorical.len().max(1);
            set.categorical.get_mut(i % len)?.value = text.clone();
        }
        Edit::Count(i, c) => {
            let len = set.structures.len().max(1);
            set.structures.get_mut(i % len)?.count = *c;
        }
        Edit::Json(bytes) => return Some(bytes.clone()),
    }
    None
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(edits) = Vec::<Edit>::arbitrary(&mut u) else {
        return;
    };
    let mut set = base().clone();
    let mut json = None;
    for edit in edits.iter().take(8) {
        json = apply(&mut set, edit).or(json);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    if write_set(&set, dir.path()).is_err() {
        return;
    }
    if let Some(json) = json {
        std::fs::write(dir.path().join("set.json"), json).expect("set.json");
    }
    let Ok(back) = read_set(dir.path()) else { return };
    let Ok(generator) = Generator::new(&back, 1) else {
        return;
    };
    let mut out = Vec::new();
    for i in 0..3 {
        generator.document(i, &mut out);
    }
});
