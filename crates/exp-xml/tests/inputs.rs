//! Corpus inputs (directories, globs, `.gz`, `.zip`, corrupt archives),
//! the split root, and parallel extraction giving the serial result.

use std::io::Write;
use std::path::Path;

use exp_xml::{expand_inputs, extract, AttributePolicy, Config, Extraction, SkipReason, Source};

fn events(from: u32, n: u32) -> String {
    let mut s = String::from("<?xml version=\"1.0\"?>\n<log>\n");
    for i in from..from + n {
        let name = ["a", "b", "c"][(i % 3) as usize];
        s.push_str(&format!(
            "<event ts=\"{}\"><sensor name=\"{name}\"><v>{}.5</v></sensor><s>{}</s></event>\n",
            1_700_000_000 + i,
            i % 97,
            ["ok", "warn"][(i % 2) as usize]
        ));
    }
    s.push_str("</log>\n");
    s
}

fn config(threads: usize) -> Config {
    Config {
        split_at: Some("event".into()),
        policy: AttributePolicy::Auto { max_distinct: 5 },
        threads,
        ..Config::default()
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).expect("gzip");
    gz.finish().expect("gzip")
}

fn zip(path: &Path, entries: &[(&str, &str)]) {
    let file = std::fs::File::create(path).expect("create zip");
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.add_directory("sub/", options).expect("zip dir");
    for (name, text) in entries {
        zip.start_file(*name, options).expect("zip entry");
        zip.write_all(text.as_bytes()).expect("zip write");
    }
    zip.finish().expect("zip finish");
}

/// What must not depend on how the corpus was read.
fn fingerprint(x: &Extraction) -> String {
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        x.structures, x.paths, x.categorical, x.numeric, x.summary
    )
}

#[test]
fn directories_globs_gzip_and_zip_read_like_plain_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("b/deeper")).expect("mkdir");
    std::fs::write(root.join("a.xml"), events(0, 40)).expect("write");
    std::fs::write(root.join("b/deeper/c.xml.gz"), gzip(events(40, 40).as_bytes())).expect("write");
    std::fs::write(root.join("b/notes.txt"), "not a corpus file").expect("write");
    zip(
        &root.join("d.zip"),
        &[("x.xml", &events(80, 20)), ("sub/y.xml", &events(100, 20))],
    );

    let plain = vec![Source::Memory {
        name: "all".into(),
        data: events(0, 120).into_bytes(),
    }];
    let expected = extract(&plain, &config(1)).expect("plain");

    let from_dir = expand_inputs(&[root]).expect("expand dir");
    let names: Vec<String> = from_dir
        .iter()
        .map(|s| match s {
            Source::File(p) => p.strip_prefix(root).expect("under root").display().to_string(),
            Source::Memory { name, .. } => name.clone(),
        })
        .collect();
    // Sorted by path, recursive, non-corpus files left out.
    assert_eq!(names, ["a.xml", "b/deeper/c.xml.gz", "d.zip"]);
    let x = extract(&from_dir, &config(1)).expect("extract dir");
    assert_eq!(x.summary.documents, 120);
    assert!(x.summary.skipped.is_empty(), "{:?}", x.summary.skipped);
    // The documents split across 4 inputs give the one-input result.
    assert_eq!(x.paths, expected.paths);
    assert_eq!(x.structures, expected.structures);
    assert_eq!(x.categorical, expected.categorical);
    assert_eq!(x.numeric, expected.numeric);
    assert_eq!(x.summary.split_root.as_deref(), Some("log"));

    let pattern = root.join("**").join("*.x*");
    let globbed = expand_inputs(&[pattern]).expect("expand glob");
    assert_eq!(globbed.len(), 2, "{globbed:?}");
    let x = extract(&globbed, &config(1)).expect("extract glob");
    assert_eq!(x.summary.documents, 80);

    let no_match = expand_inputs(&[root.join("*.nothing")]);
    assert!(matches!(no_match, Err(exp_xml::XmlError::Open { .. })));
}

#[test]
fn zip_entries_are_named_after_the_archive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("logs.zip");
    zip(
        &path,
        &[
            ("ok.xml", &events(0, 3)),
            ("bad.xml", "<log><event><a>1</b></event></log>"),
        ],
    );
    let x = extract(&[Source::File(path.clone())], &config(1)).expect("extract");
    assert_eq!(x.summary.documents, 3);
    assert_eq!(x.summary.skipped.len(), 1);
    assert_eq!(x.summary.skipped[0].input, format!("{}:bad.xml", path.display()));
    assert_eq!(x.summary.skipped[0].position, 16);
}

#[test]
fn corrupt_compressed_inputs_are_recorded_and_the_run_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.xml");
    std::fs::write(&good, events(0, 10)).expect("write");
    // Valid gzip header, then garbage: fails after the header.
    let mut bad_gz = gzip(events(0, 200).as_bytes());
    let half = bad_gz.len() / 2;
    bad_gz[half..].fill(0xAB);
    let bad_gz_path = dir.path().join("bad.xml.gz");
    std::fs::write(&bad_gz_path, &bad_gz).expect("write");
    let not_gz = dir.path().join("plain.gz");
    std::fs::write(&not_gz, "<log/>").expect("write");
    let not_zip = dir.path().join("broken.zip");
    std::fs::write(&not_zip, "PK this is no archive").expect("write");
    let sources = [good, bad_gz_path.clone(), not_gz.clone(), not_zip.clone()].map(Source::File);

    let x = extract(&sources, &config(1)).expect("extract");
    assert!(x.summary.documents >= 10, "{}", x.summary.documents);
    let io: Vec<(&str, u64)> = x
        .summary
        .skipped
        .iter()
        .filter(|s| matches!(s.reason, SkipReason::Io(_)))
        .map(|s| (s.input.as_str(), s.position))
        .collect();
    let names: Vec<&str> = io.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            bad_gz_path.to_str().expect("utf-8 path"),
            not_gz.to_str().expect("utf-8 path"),
            not_zip.to_str().expect("utf-8 path"),
        ]
    );
    // The bad gzip failed somewhere inside its stream, the others at once.
    assert!(io[0].1 > 0);
    assert_eq!((io[1].1, io[2].1), (0, 0));

    // A file that does not exist is a typed error, not a skip.
    let missing = extract(&[Source::File(dir.path().join("missing.xml"))], &config(1));
    assert!(matches!(missing, Err(exp_xml::XmlError::Open { .. })));
}

#[test]
fn parallel_extraction_equals_serial() {
    // Several inputs (per-input parts) and one large input (batches of
    // documents), with malformed documents in between.
    let mut big = events(0, 3000);
    big = big.replace(
        "<s>warn</s></event>\n<event ts=\"1700000100\"",
        "<s>warn</t></event>\n<event ts=\"1700000100\"",
    );
    let many: Vec<Source> = (0..7)
        .map(|i| Source::Memory {
            name: format!("part{i}.xml"),
            data: events(i * 50, 50 + i).into_bytes(),
        })
        .collect();
    let one = vec![Source::Memory {
        name: "big.xml".into(),
        data: big.into_bytes(),
    }];
    for sources in [&many, &one] {
        for policy in [
            AttributePolicy::Keep,
            AttributePolicy::Names,
            AttributePolicy::Auto { max_distinct: 5 },
        ] {
            let serial = Config { policy, ..config(1) };
            let expected = fingerprint(&extract(sources, &serial).expect("serial"));
            for threads in [2, 3, 8] {
                let parallel = Config {
                    threads,
                    ..serial.clone()
                };
                let got = fingerprint(&extract(sources, &parallel).expect("parallel"));
                assert!(got == expected, "{threads} threads, {policy:?}");
            }
        }
    }
    let x = extract(&one, &config(2)).expect("extract");
    assert_eq!(x.summary.skipped.len(), 1);
    assert_eq!(x.summary.documents, 2999);
}

#[test]
fn split_root_is_the_first_inputs_root() {
    let sources = vec![
        Source::Memory {
            name: "empty".into(),
            data: Vec::new(),
        },
        Source::Memory {
            name: "a".into(),
            data: events(0, 2).replace("log>", "journal>").into_bytes(),
        },
        Source::Memory {
            name: "b".into(),
            data: events(2, 2).into_bytes(),
        },
    ];
    let x = extract(&sources, &config(1)).expect("extract");
    assert_eq!(x.summary.split_root.as_deref(), Some("journal"));
    let whole = Config {
        split_at: None,
        ..config(1)
    };
    assert_eq!(extract(&sources, &whole).expect("extract").summary.split_root, None);
}
