//! `cargo +nightly fuzz run xml_extract`: extraction of arbitrary bytes,
//! whole or split at an element, under every attribute policy, never panics;
//! a corpus with documents makes a set, and the set generates documents.

#![no_main]

use exp_xml::generate::Generator;
use exp_xml::set::{SetOptions, SynthesisSet};
use exp_xml::{extract, AttributePolicy, Config, Source};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (split, bytes) = match data.split_first() {
        Some((first, rest)) => (first % 3, rest),
        None => (0, data),
    };
    let split_at = match split {
        0 => None,
        1 => Some("e".to_string()),
        _ => Some("a".to_string()),
    };
    for policy in [
        AttributePolicy::Keep,
        AttributePolicy::Names,
        AttributePolicy::Auto { max_distinct: 2 },
    ] {
        let config = Config {
            split_at: split_at.clone(),
            policy,
            ..Config::default()
        };
        let source = Source::Memory {
            name: "fuzz.xml".into(),
            data: bytes.to_vec(),
        };
        let Ok(x) = extract(&[source], &config) else { continue };
        if x.summary.documents == 0 {
            continue;
        }
        let options = SetOptions {
            split_root: x.summary.split_root.clone(),
            ..SetOptions::default()
        };
        let set = SynthesisSet::from_extraction(x, &config, &options);
        let Ok(generator) = Generator::new(&set, 1) else {
            continue;
        };
        let mut out = Vec::new();
        for i in 0..3 {
            generator.document(i, &mut out);
        }
    }
});
