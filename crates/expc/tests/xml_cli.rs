//! `expc xml` and `expc traffic convert` end to end through the binary.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../..")
}

fn expc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_expc"))
        .current_dir(repo_root())
        .args(args)
        .output()
        .unwrap()
}

fn ok(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Reads every file under `dir` (one level) as text, in name order.
fn texts(dir: &str) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect()
}

#[test]
fn extract_obfuscated_generate_reveal_and_compare() {
    let s = Scratch::new("xml-cli");
    let (set, map, out, revealed) = (s.path("set"), s.path("private"), s.path("out"), s.path("revealed"));
    let corpus = "specs/xml/corpus";
    let extract = expc(&[
        "xml",
        "extract",
        corpus,
        "--split-at",
        "event",
        "-o",
        &set,
        "--obfuscate",
        "--map",
        &map,
    ]);
    ok(&extract, "extract");
    let stdout = String::from_utf8_lossy(&extract.stdout);
    assert!(stdout.contains("1200 documents, 0 skipped"), "{stdout}");
    // The figures are end to end, fitting included, with each phase's share.
    assert!(
        stdout.contains("end to end: ") && stdout.contains(" per CPU-second"),
        "{stdout}"
    );
    let phases = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("phases:"))
        .unwrap_or_default();
    for phase in ["extract ", "fit ", "obfuscate ", "write "] {
        assert!(phases.contains(phase), "{phase}missing: {stdout}");
    }
    let info = std::fs::read_to_string(Path::new(&set).join("set.json")).unwrap();
    for original in ["temperature", "humidity", "north-hall", "event"] {
        assert!(!info.contains(original), "set.json leaks `{original}`");
    }

    ok(
        &expc(&[
            "xml",
            "generate",
            &set,
            "--documents",
            "300",
            "--per-file",
            "100",
            "-o",
            &out,
        ]),
        "generate",
    );
    let generated = texts(&out);
    assert_eq!(generated.len(), 3, "300 documents, 100 per file");
    assert!(generated.iter().all(|t| !t.contains("<temperature>")));

    ok(
        &expc(&["xml", "reveal", &out, "--map", &map, "-o", &revealed]),
        "reveal",
    );
    let plain = texts(&revealed);
    assert_eq!(plain.len(), 3);
    assert!(
        plain[0].starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<log>"),
        "{}",
        &plain[0][..80]
    );
    assert_eq!(plain.iter().map(|t| t.matches("<event ").count()).sum::<usize>(), 300);

    let compare = expc(&[
        "xml",
        "compare",
        corpus,
        &revealed,
        "--split-at",
        "event",
        "--probe",
        "alarm@level",
        "--json",
    ]);
    ok(&compare, "compare");
    let report: serde_json::Value = serde_json::from_slice(&compare.stdout).unwrap();
    assert_eq!(report["counts"]["original"]["documents"], 1200);
    assert_eq!(report["counts"]["synthetic"]["documents"], 300);
    assert_eq!(report["only_in_synthetic"].as_array().map(Vec::len), Some(0));
    let probe = &report["probe"];
    assert!(probe["original"]["matches"].as_u64().unwrap() > 0, "{probe}");
}

#[test]
fn generation_is_deterministic_and_shards_concatenate() {
    let s = Scratch::new("xml-shards");
    let set = s.path("set");
    ok(
        &expc(&["xml", "extract", "specs/xml/corpus", "--split-at", "event", "-o", &set]),
        "extract",
    );
    let stream = |extra: &[&str]| {
        let mut args = vec![
            "xml",
            "generate",
            set.as_str(),
            "--documents",
            "250",
            "--seed",
            "9",
            "-o",
            "-",
        ];
        args.extend_from_slice(extra);
        let output = expc(&args);
        ok(&output, "generate");
        output.stdout
    };
    let whole = stream(&[]);
    assert_eq!(
        whole,
        stream(&["--threads", "1"]),
        "thread count must not change the bytes"
    );
    let parts = [
        stream(&["--shard", "1/3"]),
        stream(&["--shard", "2/3"]),
        stream(&["--shard", "3/3"]),
    ]
    .concat();
    assert_eq!(whole, parts);
}

#[test]
fn bad_inputs_are_clear_errors() {
    let missing = expc(&["xml", "extract", "no/such/corpus.xml", "-o", "/tmp/never-written"]);
    assert_eq!(missing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("no/such/corpus.xml"), "{stderr}");
    assert!(!Path::new("/tmp/never-written").exists());
    let shard = expc(&[
        "xml",
        "generate",
        "set",
        "--documents",
        "5",
        "--shard",
        "4/3",
        "-o",
        "-",
    ]);
    assert_eq!(shard.status.code(), Some(2), "clap rejects a shard beyond the count");
}

#[test]
fn traffic_convert_to_the_alternate_format_and_the_ab_structure() {
    let s = Scratch::new("traffic-convert");
    let out = s.path("ab.alt");
    let input = "crates/exp-traffic/tests/data/pair_original.cvec";
    let convert = expc(&[
        "traffic",
        "convert",
        "--structure",
        "ab",
        "--to",
        "alternate",
        input,
        &out,
    ]);
    ok(&convert, "convert");
    let text = std::fs::read_to_string(&out).unwrap();
    let headers = text
        .lines()
        .filter(|l| l.starts_with("S ") || l.starts_with("C "))
        .count();
    assert!(headers >= 2, "{text}");
    // ab drops every think and server time: data units wait 0.
    assert!(
        text.lines()
            .filter(|l| l.starts_with("I ") || l.starts_with("A "))
            .filter(|l| !l.ends_with(" 0"))
            .all(|l| l.split_whitespace().nth(1) == Some("0") && l.split_whitespace().nth(2) == Some("0")),
        "{text}"
    );
    let broken = expc(&[
        "traffic",
        "convert",
        "crates/exp-traffic/tests/data/malformed.cvec",
        &s.path("x"),
    ]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&broken.stderr).contains("malformed.cvec:"));
}

#[test]
fn a_utf16_corpus_is_named_as_such() {
    let scratch = Scratch::new("xml-utf16");
    let corpus = scratch.path("corpus.xml");
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            "<events><e>1</e><e>2</e></events>"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    std::fs::write(&corpus, utf16).unwrap();
    let set = scratch.path("set");
    // It used to be "input ended inside the document", and with a split
    // "no document (empty, or no element)".
    for split in [&[][..], &["--split-at", "e"][..]] {
        let command: &[&str] = &["xml", "extract", corpus.as_str(), "-o", set.as_str()];
        let output = expc(&[command, split].concat());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(
                "the input is UTF-16 (with a byte order mark); only UTF-8 is supported: convert it, e.g. `iconv -f UTF-16 -t UTF-8`"
            ),
            "{stderr}"
        );
    }
}

/// `--split-at log` on a `<log><event>…` corpus reads each file as one
/// document: no error, so a warning says what `split_at` names.
#[test]
fn splitting_at_the_root_warns_and_the_right_element_does_not() {
    let s = Scratch::new("xml-split-root");
    let wrong = expc(&[
        "xml",
        "extract",
        "specs/xml/corpus",
        "--split-at",
        "log",
        "-o",
        &s.path("wrong"),
    ]);
    ok(&wrong, "extract at log");
    let stdout = String::from_utf8_lossy(&wrong.stdout);
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(stdout.contains("corpus: 3 documents"), "{stdout}");
    assert!(
        stderr.contains("warning: split at `log` gave 3 document(s) from 3 input(s)")
            && stderr.contains("the repeated children of the root (`event` in `<log><event>"),
        "{stderr}"
    );
    let compare = expc(&[
        "xml",
        "compare",
        "specs/xml/corpus",
        "specs/xml/corpus",
        "--split-at",
        "log",
    ]);
    ok(&compare, "compare at log");
    let stderr = String::from_utf8_lossy(&compare.stderr);
    assert!(
        stderr.contains("warning: the original corpus: split at `log`"),
        "{stderr}"
    );
    // The settings in the spec's terms, not Rust's debug text.
    let stdout = String::from_utf8_lossy(&compare.stdout);
    assert!(stdout.contains("attributes: auto (max_distinct = 16);"), "{stdout}");

    let right = expc(&[
        "xml",
        "extract",
        "specs/xml/corpus",
        "--split-at",
        "event",
        "-o",
        &s.path("right"),
    ]);
    ok(&right, "extract at event");
    assert!(String::from_utf8_lossy(&right.stdout).contains("corpus: 1200 documents"));
    let stderr = String::from_utf8_lossy(&right.stderr);
    assert!(!stderr.contains("warning"), "{stderr}");
}
