//! Issue 36: the same documents extract to the same set whether they come
//! as one file or as one file per document, on one thread or several —
//! and a large single input cut across threads at guessed document starts
//! gives the set of one scan, wrong guesses (the split element's bytes in
//! a comment, in CDATA, deeper in the tree) and malformed documents
//! included.

use std::path::Path;

use exp_xml::pipeline::SetJob;
use exp_xml::{expand_inputs, extract, extract_set, AttributePolicy, Config, Source};

/// Document `i` of a device fleet: categorical identity, numeric readings.
fn document(i: u64) -> String {
    format!(
        "<reading device='fd-{:04}' site='site-{}'><time>2026-01-01T00:{:02}:{:02}Z</time>\
         <battery>{}.{}</battery><temperature>{}</temperature><latency>{}.{:03}</latency>\
         <errors>{}</errors><status>{}</status></reading>\n",
        i * 7919 % 1500,
        i % 5,
        i / 60 % 60,
        i % 60,
        40 + i * 31 % 60,
        i % 10,
        20 + i * 17 % 45,
        3 + i * 13 % 40,
        i * 389 % 1000,
        i % 7 / 4,
        ["ok", "ok", "degraded", "fault"][(i % 4) as usize]
    )
}

const DOCUMENTS: u64 = 5000;

fn wrapped(body: &str) -> String {
    format!("<?xml version=\"1.0\"?>\n<fleet>\n{body}</fleet>\n")
}

fn config(threads: usize) -> Config {
    Config {
        split_at: Some("reading".into()),
        policy: AttributePolicy::Auto { max_distinct: 16 },
        threads,
        ..Config::default()
    }
}

/// Every file of the set written from `sources`, by name, as bytes.
fn set_files(sources: &[Source], config: &Config, dir: &Path) -> Vec<(String, Vec<u8>)> {
    extract_set(sources, config, &SetJob::new(dir)).expect("the corpus extracts");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the set directory")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            let name = path.file_name().expect("a name").to_string_lossy().into_owned();
            (name, std::fs::read(&path).expect("a set file"))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 2, "a set directory has its files");
    files
}

#[test]
fn one_file_and_one_file_per_document_give_the_same_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body: String = (0..DOCUMENTS).map(document).collect();
    let one = dir.path().join("fleet.xml");
    std::fs::write(&one, wrapped(&body)).expect("write");
    let many = dir.path().join("fleet.d");
    std::fs::create_dir(&many).expect("mkdir");
    for i in 0..DOCUMENTS {
        std::fs::write(many.join(format!("{i:06}.xml")), wrapped(&document(i))).expect("write");
    }
    let one = expand_inputs(&[one]).expect("one file");
    let many = expand_inputs(&[many]).expect("the directory");
    assert_eq!(many.len(), DOCUMENTS as usize);
    let expected = set_files(&one, &config(1), &dir.path().join("set-one-1"));
    for (name, sources) in [("one", &one), ("many", &many)] {
        for threads in [1, 2, 3] {
            let set = dir.path().join(format!("set-{name}-{threads}-t"));
            let got = set_files(sources, &config(threads), &set);
            assert!(got == expected, "{name} file(s), {threads} threads: another set");
        }
    }
}

/// One large input, `decoy` between documents every `every` documents.
fn with_decoys(decoy: &str, every: u64) -> Vec<Source> {
    let mut body = String::new();
    for i in 0..DOCUMENTS {
        if i % every == every - 1 {
            body.push_str(decoy);
        }
        body.push_str(&document(i));
    }
    vec![Source::Memory {
        name: "fleet.xml".into(),
        data: wrapped(&body).into_bytes(),
    }]
}

#[test]
fn a_large_input_cut_at_wrong_guesses_still_gives_the_set_of_one_scan() {
    let dir = tempfile::tempdir().expect("tempdir");
    let decoys = [
        "<!-- <reading device='decoy'><battery>1</battery></reading> -->\n",
        "<note><![CDATA[<reading device='x'>]]></note>\n",
        "<batch><reading device='nested'><battery>2</battery></reading></batch>\n",
        "<?pi <reading ?>\n",
        // Malformed: skipped, and the scan goes on in step.
        "<reading device='bad'><battery>3</temperature></reading>\n",
    ];
    for (d, decoy) in decoys.iter().enumerate() {
        // Dense decoys make every guess wrong; sparse ones only some.
        for every in [1, 97] {
            let sources = with_decoys(decoy, every);
            let serial = extract(&sources, &config(1)).expect("serial");
            let expected = set_files(&sources, &config(1), &dir.path().join(format!("{d}-{every}-1")));
            for threads in [2, 3] {
                let parallel = extract(&sources, &config(threads)).expect("parallel");
                assert_eq!(
                    parallel.summary, serial.summary,
                    "decoy {d} every {every}, {threads} threads"
                );
                let set = dir.path().join(format!("{d}-{every}-{threads}"));
                let got = set_files(&sources, &config(threads), &set);
                assert!(
                    got == expected,
                    "decoy {d} every {every}, {threads} threads: another set"
                );
            }
        }
    }
}
