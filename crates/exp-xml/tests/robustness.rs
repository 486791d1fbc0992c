//! Hostile and broken inputs: skipped and recorded, never expanded, never a
//! panic or a stack overflow. Inputs are generated here, not committed.

use exp_xml::{extract, Config, Extraction, SkipReason, Source, MAX_VALUE_LEN};

fn run(xml: impl Into<Vec<u8>>, split_at: Option<&str>) -> Extraction {
    let config = Config {
        split_at: split_at.map(str::to_owned),
        ..Config::default()
    };
    let source = Source::Memory {
        name: "input.xml".into(),
        data: xml.into(),
    };
    extract(&[source], &config).expect("extract")
}

fn values(x: &Extraction) -> Vec<&str> {
    x.categorical.iter().map(|r| r.value.as_str()).collect()
}

/// Everything the extraction retains, as one string, to search for leaks.
fn all_text(x: &Extraction) -> String {
    let mut s = String::new();
    for st in &x.structures {
        s.push_str(&st.skeleton);
    }
    for p in &x.paths {
        s.push_str(&p.text);
    }
    for r in &x.categorical {
        s.push_str(&r.value);
    }
    s
}

#[test]
fn mismatched_end_tag_skips_one_document_and_continues() {
    let xml = "<log><event><a>1</a></event><event><a>2</b></event><event><a>3</a></event></log>";
    let x = run(xml, Some("event"));
    assert_eq!(x.summary.documents, 2);
    assert_eq!(x.summary.skipped.len(), 1);
    let skipped = &x.summary.skipped[0];
    assert_eq!(skipped.input, "input.xml");
    assert!(matches!(skipped.reason, SkipReason::Malformed(_)));
    // At the bad end tag `</b>`.
    assert_eq!(skipped.position, xml.find("</b>").expect("</b>") as u64);
    let mut v = values(&x);
    v.sort();
    assert_eq!(v, ["1", "3"]);
}

#[test]
fn truncated_input_ends_cleanly() {
    let x = run("<log><event><a>1</a></event><event><a>2", Some("event"));
    assert_eq!(x.summary.documents, 1);
    assert_eq!(x.summary.skipped.len(), 1);
    assert_eq!(x.summary.skipped[0].reason, SkipReason::Truncated);
    assert_eq!(values(&x), ["1"]);

    let x = run("<root><a>1</a>", None);
    assert_eq!(x.summary.documents, 0);
    assert_eq!(x.summary.skipped.len(), 1);
}

#[test]
fn syntax_error_ends_the_input_and_keeps_earlier_documents() {
    let xml = "<log><event><a>1</a></event><event><a>2</a><!-- never closed </event></log>";
    let x = run(xml, Some("event"));
    assert_eq!(x.summary.documents, 1);
    assert_eq!(x.summary.skipped.len(), 1);
    assert!(matches!(x.summary.skipped[0].reason, SkipReason::Malformed(_)));
    assert!(x.summary.skipped[0].position > 0);
    assert_eq!(values(&x), ["1"]);
}

#[test]
fn bad_attribute_skips_only_its_document() {
    let xml = "<log><event><a>1</a></event><event><a x=>2</a></event><event><a>3</a></event></log>";
    let x = run(xml, Some("event"));
    assert_eq!(x.summary.documents, 2);
    assert_eq!(x.summary.skipped.len(), 1);
    let mut v = values(&x);
    v.sort();
    assert_eq!(v, ["1", "3"]);
}

#[test]
fn garbage_input_does_not_panic() {
    for xml in [
        &b""[..],
        b"not xml at all",
        b"<",
        b"</a>",
        b"<a><b></a></b>",
        b"<a>\xff\xfe</a>",
        b"<a x='1' x='2'/>",
        b"<!DOCTYPE",
        b"<a><![CDATA[x",
    ] {
        let _ = run(xml, None);
        let _ = run(xml, Some("b"));
    }
}

#[test]
fn billion_laughs_is_not_expanded() {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n");
    for i in 1..=9 {
        let prev = if i == 1 {
            "lol".to_owned()
        } else {
            format!("lol{}", i - 1)
        };
        let refs = format!("&{prev};").repeat(10);
        xml.push_str(&format!("<!ENTITY lol{i} \"{refs}\">\n"));
    }
    xml.push_str("]>\n<lolz a=\"&lol9;\">&lol9;</lolz>\n");
    let x = run(xml, None);
    assert_eq!(x.summary.documents, 1);
    assert_eq!(values(&x), ["&lol9;"]);
    assert!(all_text(&x).len() < 200, "{}", all_text(&x));
    assert!(!all_text(&x).contains("lollol"));
}

#[test]
fn external_entity_is_not_resolved() {
    let xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE foo [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n<foo><bar>&xxe;</bar><baz v=\"&xxe;\"/></foo>";
    let x = run(xml, None);
    assert_eq!(x.summary.documents, 1);
    assert_eq!(values(&x), ["&xxe;"]);
    let text = all_text(&x);
    assert!(!text.contains("root:"), "{text}");
    // Predefined entities and character references are still resolved.
    let x = run("<a><b>&lt;&#65;&amp;</b></a>", None);
    assert_eq!(values(&x), ["<A&"]);
}

#[test]
fn the_deepest_document_allowed_does_not_overflow_the_stack() {
    // Deeper documents are skipped (deep_documents.rs).
    const DEPTH: usize = exp_xml::MAX_DEPTH;
    let xml = format!("{}x{}", "<a>".repeat(DEPTH), "</a>".repeat(DEPTH));
    // Run on a thread with a deliberately small stack: recursion per level
    // would overflow it.
    let x = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || run(xml, None))
        .expect("spawn")
        .join()
        .expect("no overflow");
    assert_eq!(x.summary.documents, 1);
    assert_eq!(x.paths.len(), 1);
    assert_eq!(x.paths[0].text.len(), 3 * DEPTH);
    assert_eq!(x.structures[0].skeleton.len(), 7 * DEPTH);
    assert_eq!(values(&x), ["x"]);
}

#[test]
fn huge_text_node_is_truncated_and_flagged() {
    const SIZE: usize = 50 * 1024 * 1024;
    let mut xml = Vec::with_capacity(SIZE + 64);
    xml.extend_from_slice(b"<r><big>");
    xml.resize(xml.len() + SIZE, b'7');
    xml.extend_from_slice(b"</big><n>1</n></r>");
    let x = run(xml, None);
    assert_eq!(x.summary.documents, 1);
    let big = x.categorical.iter().find(|r| r.truncated).expect("truncated row");
    assert_eq!(big.value.len(), MAX_VALUE_LEN);
    // All digits, but cut: counted as non-numeric (categorical).
    assert!(x.numeric.is_empty());
    assert_eq!(x.categorical.len(), 2);
}

#[test]
fn long_attribute_value_is_truncated_under_names() {
    let xml = format!("<r><e v=\"{}\">1</e></r>", "x".repeat(10_000));
    let config = Config {
        policy: exp_xml::AttributePolicy::Names,
        ..Config::default()
    };
    let source = Source::Memory {
        name: "attr.xml".into(),
        data: xml.into_bytes(),
    };
    let x = extract(&[source], &config).expect("extract");
    let row = x
        .categorical
        .iter()
        .find(|r| r.truncated)
        .expect("truncated attribute value");
    assert_eq!(row.value.len(), MAX_VALUE_LEN);
}

#[test]
fn file_sources_are_read_and_named() {
    let path = std::env::temp_dir().join(format!("exp-xml-test-{}.xml", std::process::id()));
    std::fs::write(&path, "<log><event><a>1</a></event><event><a>2</b></event></log>").expect("write temp file");
    let config = Config {
        split_at: Some("event".into()),
        ..Config::default()
    };
    let result = extract(&[Source::File(path.clone())], &config);
    let _ = std::fs::remove_file(&path);
    let x = result.expect("extract");
    assert_eq!(x.summary.documents, 1);
    assert_eq!(x.summary.skipped.len(), 1);
    assert_eq!(x.summary.skipped[0].input, path.display().to_string());
}
