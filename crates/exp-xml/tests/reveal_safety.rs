//! Issue 14: `reveal` with output = input truncated the input to 0 bytes;
//! the map of another extraction "revealed" nothing and exited 0; a failed
//! reveal left partial files. Nothing is written over an input, a foreign
//! map is an error, and a failed reveal leaves nothing behind.

use std::fs;
use std::path::Path;

use exp_xml::obfuscate::{obfuscate, reveal_path, ObfuscationMap};
use exp_xml::set::{SetOptions, SynthesisSet};
use exp_xml::{extract, AttributePolicy, Config, Source, XmlError};

fn map_of(corpus: &str, seed: u64) -> (SynthesisSet, ObfuscationMap) {
    let config = Config {
        policy: AttributePolicy::Keep,
        ..Config::default()
    };
    let source = Source::Memory {
        name: "c.xml".into(),
        data: corpus.as_bytes().to_vec(),
    };
    let x = extract(&[source], &config).expect("extract");
    let set = SynthesisSet::from_extraction(x, &config, &SetOptions::default());
    obfuscate(&set, seed).expect("obfuscate")
}

/// An obfuscated document of the set: its first skeleton.
fn document(set: &SynthesisSet) -> String {
    set.structures[0].skeleton.clone()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("listing")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

const CORPUS: &str = "<station><sensor model=\"thermo\"><reading>12</reading></sensor></station>";
const OTHER: &str = "<fleet><truck plate=\"abc\"><speed>80</speed></truck></fleet>";

#[test]
fn output_equal_to_input_is_refused_and_the_input_kept() {
    let (set, map) = map_of(CORPUS, 1);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("doc.xml");
    let text = document(&set);
    fs::write(&file, &text).expect("write");
    let error = reveal_path(&map, &file, &file).expect_err("same file");
    assert!(matches!(error, XmlError::RevealOverInput { .. }), "{error}");
    assert_eq!(fs::read_to_string(&file).expect("kept"), text);
    // Through another spelling of the same path, and for directories.
    let dotted = dir.path().join(".").join("doc.xml");
    assert!(reveal_path(&map, &file, &dotted).is_err());
    assert!(matches!(
        reveal_path(&map, dir.path(), dir.path()),
        Err(XmlError::RevealOverInput { .. })
    ));
    assert!(matches!(
        reveal_path(&map, dir.path(), &dir.path().join("inside")),
        Err(XmlError::RevealOverInput { .. })
    ));
    assert_eq!(fs::read_to_string(&file).expect("kept"), text);
    assert_eq!(listing(dir.path()), ["doc.xml"]);
}

#[test]
fn the_map_of_another_extraction_is_detected() {
    let (set, _) = map_of(CORPUS, 1);
    let (_, other_map) = map_of(OTHER, 1);
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("docs");
    fs::create_dir_all(&input).expect("mkdir");
    fs::write(input.join("a.xml"), document(&set)).expect("write");
    let out = dir.path().join("revealed");
    let error = reveal_path(&other_map, &input, &out).expect_err("foreign map");
    assert!(matches!(error, XmlError::MapMismatch { .. }), "{error}");
    assert!(error.to_string().contains("a.xml"), "{error}");
    assert_eq!(listing(dir.path()), ["docs"], "no output left");
}

#[test]
fn a_failed_reveal_leaves_no_partial_output() {
    let (set, map) = map_of(CORPUS, 1);
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("docs");
    fs::create_dir_all(input.join("sub")).expect("mkdir");
    // A large good file first, then a broken one: the good one was
    // already written when the broken one failed.
    fs::write(input.join("a.xml"), document(&set).repeat(200)).expect("write");
    fs::write(input.join("sub/b.xml"), "<a b=c>").expect("write");
    let out = dir.path().join("revealed");
    assert!(matches!(reveal_path(&map, &input, &out), Err(XmlError::Reveal { .. })));
    assert_eq!(listing(dir.path()), ["docs"], "no output directory, no temporary");
    // A single file: no output file either.
    let file_out = dir.path().join("b.xml");
    assert!(reveal_path(&map, &input.join("sub/b.xml"), &file_out).is_err());
    assert_eq!(listing(dir.path()), ["docs"]);
    // A good reveal into an existing empty directory replaces it.
    fs::remove_file(input.join("sub/b.xml")).expect("remove");
    fs::create_dir_all(&out).expect("empty output");
    assert_eq!(reveal_path(&map, &input, &out).expect("reveal"), 1);
    assert_eq!(listing(&out), ["a.xml", "sub"]);
    // Into a non-empty one it refuses, rather than mixing outputs.
    assert!(matches!(reveal_path(&map, &input, &out), Err(XmlError::Config(_))));
}
