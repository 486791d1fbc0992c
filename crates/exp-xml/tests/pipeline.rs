//! The corpus → set directory pipeline: the same set as its steps run by
//! hand, the map written beside the set when obfuscating, a refused empty
//! corpus leaving nothing written, and failures naming their phase.

use std::path::Path;
use std::time::Duration;

use exp_xml::obfuscate::{obfuscate, read_map};
use exp_xml::pipeline::{Obfuscation, SetPhase};
use exp_xml::set::{read_set, SetOptions, SynthesisSet};
use exp_xml::{extract, extract_set, Config, SetJob, Source, XmlError};

fn corpus() -> Vec<Source> {
    let mut s = String::from("<log>\n");
    for i in 0..50u32 {
        s.push_str(&format!(
            "<event kind=\"{}\"><size>{}</size><status>{}</status></event>\n",
            ["open", "close"][(i % 2) as usize],
            100 + (i * 37) % 250,
            ["ok", "retry", "failed"][(i % 3) as usize],
        ));
    }
    s.push_str("<event><size>1</size>\n</log>\n");
    vec![Source::Memory {
        name: "log.xml".into(),
        data: s.into_bytes(),
    }]
}

fn config() -> Config {
    Config {
        split_at: Some("event".into()),
        threads: 2,
        ..Config::default()
    }
}

/// The set the pipeline's steps make when run by hand.
fn by_hand(sources: &[Source], config: &Config) -> SynthesisSet {
    let extraction = extract(sources, config).expect("the corpus extracts");
    let options = SetOptions {
        threads: config.threads,
        split_root: extraction.summary.split_root.clone(),
        ..SetOptions::default()
    };
    SynthesisSet::from_extraction(extraction, config, &options)
}

fn cpu_clock() -> Duration {
    Duration::from_millis(7)
}

#[test]
fn makes_and_writes_the_set_its_steps_make() {
    let dir = tempfile::tempdir().unwrap();
    let set_dir = dir.path().join("set");
    let job = SetJob {
        cpu_clock: Some(cpu_clock),
        ..SetJob::new(&set_dir)
    };
    let made = extract_set(&corpus(), &config(), &job).unwrap();
    let expected = by_hand(&corpus(), &config());
    assert_eq!(made.set, expected);
    assert_eq!(made.set.info.corpus.documents, 50);
    assert_eq!(made.set.info.skipped.len(), 1, "the truncated event");
    assert_eq!(read_set(&set_dir).unwrap(), expected);
    assert!(made.map.is_none());
    let t = made.timings;
    assert_eq!(t.wall(), t.extract.wall + t.fit.wall + t.obfuscate.wall + t.write.wall);
    assert_eq!(t.extract.cpu, Some(Duration::ZERO), "a clock that stands still");
    assert_eq!(t.obfuscate.wall, Duration::ZERO, "no obfuscation");
}

#[test]
fn obfuscates_with_the_map_outside_the_set() {
    let dir = tempfile::tempdir().unwrap();
    let (set_dir, map_dir) = (dir.path().join("set"), dir.path().join("private"));
    let job = SetJob {
        obfuscation: Some(Obfuscation {
            seed: 3,
            map_dir: &map_dir,
        }),
        ..SetJob::new(&set_dir)
    };
    let made = extract_set(&corpus(), &config(), &job).unwrap();
    let (hidden, map) = obfuscate(&by_hand(&corpus(), &config()), 3).unwrap();
    assert_eq!(made.set, hidden);
    assert_eq!(read_set(&set_dir).unwrap(), hidden);
    let written = made.map.unwrap();
    assert_eq!(written.map, map);
    assert!(written.path.starts_with(&map_dir));
    assert_eq!(read_map(&written.path).unwrap(), map);
    assert!(made.timings.extract.cpu.is_none(), "no CPU clock");

    // A map inside the set is refused before anything is written.
    let inside = set_dir.join("private");
    let job = SetJob {
        obfuscation: Some(Obfuscation {
            seed: 3,
            map_dir: &inside,
        }),
        ..SetJob::new(&set_dir)
    };
    let error = extract_set(&corpus(), &config(), &job).unwrap_err();
    assert_eq!(error.phase, SetPhase::WriteMap);
    assert!(matches!(error.error, XmlError::MapInsideSet { .. }), "{error}");
    assert_eq!(error.to_string(), error.error.to_string());
    assert!(!inside.exists());
}

#[test]
fn an_empty_corpus_is_refused_or_makes_an_empty_set() {
    let dir = tempfile::tempdir().unwrap();
    let set_dir = dir.path().join("set");
    let empty = vec![Source::Memory {
        name: "broken.xml".into(),
        data: b"<a><b>".to_vec(),
    }];
    let refuse = SetJob {
        refuse_empty: true,
        ..SetJob::new(&set_dir)
    };
    let error = extract_set(&empty, &Config::default(), &refuse).unwrap_err();
    assert_eq!(error.phase, SetPhase::Extract);
    match &error.error {
        XmlError::NoDocument { skipped } => assert_eq!(skipped.len(), 1),
        other => panic!("{other}"),
    }
    assert!(error
        .to_string()
        .starts_with("no well-formed document in the corpus (1 skipped)"));
    assert!(!set_dir.exists(), "nothing written");

    let made = extract_set(&empty, &Config::default(), &SetJob::new(&set_dir)).unwrap();
    assert_eq!(made.set.info.corpus.documents, 0);
    assert!(Path::new(&set_dir).join("set.json").is_file());
}

#[test]
fn a_failure_names_its_phase() {
    let dir = tempfile::tempdir().unwrap();
    let missing = vec![Source::File(dir.path().join("missing.xml"))];
    let error = extract_set(&missing, &Config::default(), &SetJob::new(dir.path())).unwrap_err();
    assert_eq!(error.phase, SetPhase::Extract);
    assert!(matches!(error.error, XmlError::Open { .. }), "{error}");

    // The set directory is a file: writing the set fails.
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let error = extract_set(&corpus(), &config(), &SetJob::new(&file)).unwrap_err();
    assert_eq!(error.phase, SetPhase::WriteSet);
    assert!(error.map_path.is_none());
    // ... and says where the map went, written before.
    let map_dir = dir.path().join("private");
    let job = SetJob {
        obfuscation: Some(Obfuscation {
            seed: 1,
            map_dir: &map_dir,
        }),
        ..SetJob::new(&file)
    };
    let error = extract_set(&corpus(), &config(), &job).unwrap_err();
    assert_eq!(error.phase, SetPhase::WriteSet);
    let map_path = error.map_path.unwrap();
    assert!(map_path.starts_with(&map_dir) && map_path.is_file());
}
