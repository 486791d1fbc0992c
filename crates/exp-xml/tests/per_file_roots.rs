//! Issue 14: a set extracted from one-document-per-file input, generated with
//! `--per-file N`, wrote N root elements into one file (not XML). Every file
//! of several documents now has exactly one root.

use std::cell::Cell;

use exp_xml::generate::{generate_to_dir, generate_to_dir_until, Amount, GenerateOptions, Generator, Layout, Shard};
use exp_xml::set::{SetOptions, SynthesisSet};
use exp_xml::{extract, Config, Source};
use quick_xml::events::Event;
use quick_xml::Reader;

/// A set whose documents were whole files: it has no split root.
fn set() -> SynthesisSet {
    let sources: Vec<Source> = (0..20)
        .map(|i| Source::Memory {
            name: format!("d{i}.xml"),
            data: format!("<reading id=\"{}\"><v>{}</v></reading>", i % 3, i * 7).into_bytes(),
        })
        .collect();
    let config = Config::default();
    let x = extract(&sources, &config).expect("extract");
    assert_eq!(x.summary.split_root, None);
    SynthesisSet::from_extraction(x, &config, &SetOptions::default())
}

/// Root elements of a well-formed document; panics on malformed XML.
fn roots(text: &str) -> usize {
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let (mut depth, mut roots) = (0usize, 0usize);
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(_) => {
                roots += usize::from(depth == 0);
                depth += 1;
            }
            Event::Empty(_) => roots += usize::from(depth == 0),
            Event::End(_) => depth -= 1,
            Event::Eof => return roots,
            _ => {}
        }
    }
}

#[test]
fn several_documents_per_file_get_one_root() {
    let set = set();
    let generator = Generator::new(&set, 3).expect("generator");
    let dir = tempfile::tempdir().expect("tempdir");
    for per_file in [1, 7, 10_000] {
        let out = dir.path().join(format!("per-{per_file}"));
        let options = GenerateOptions {
            amount: Amount::Documents(30),
            shard: Shard::default(),
            layout: if per_file == 1 {
                Layout::FilePerDocument
            } else {
                Layout::DocumentsPerFile(per_file)
            },
            gzip: false,
            threads: 1,
        };
        generate_to_dir(&generator, &options, &out).expect("generate");
        let mut files = 0;
        for entry in std::fs::read_dir(&out).expect("output") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("file");
            assert_eq!(roots(&text), 1, "per_file {per_file}:\n{text}");
            if per_file > 1 {
                assert!(text.contains("<documents>\n<reading"), "{text}");
            }
            files += 1;
        }
        assert_eq!(files, 30u64.div_ceil(per_file), "per_file {per_file}");
    }
}

#[test]
fn a_stopped_generation_ends_early_with_every_file_well_formed() {
    let set = set();
    let generator = Generator::new(&set, 3).expect("generator");
    let dir = tempfile::tempdir().expect("tempdir");
    let options = GenerateOptions {
        // Far more than could ever be written: only the stop ends it.
        amount: Amount::Documents(u64::MAX / 2),
        shard: Shard::default(),
        layout: Layout::DocumentsPerFile(7),
        gzip: false,
        threads: 2,
    };
    let asked = Cell::new(0);
    let stop = || {
        asked.set(asked.get() + 1);
        asked.get() > 20
    };
    let stats = generate_to_dir_until(&generator, &options, dir.path(), &stop).expect("generate");
    assert!(stats.documents > 0, "batches before the stop are written");
    let mut documents = 0;
    let mut files = 0;
    for entry in std::fs::read_dir(dir.path()).expect("output") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("file");
        assert_eq!(roots(&text), 1, "the last file is closed too:\n{text}");
        documents += text.matches("<reading").count() as u64;
        files += 1;
    }
    assert_eq!(documents, stats.documents);
    assert_eq!(files, stats.files);
    assert_eq!(files, stats.documents.div_ceil(7));
}
