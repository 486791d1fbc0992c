//! Issue 14: 100,000-deep XML nesting grew memory quadratically (10,000 deep
//! took 200 MB, 30,000 deep 1.47 GB) and aborted. A document nesting past
//! `MAX_DEPTH` levels is skipped as malformed, the others are kept.

use exp_xml::{extract, Config, SkipReason, Source, MAX_DEPTH};

fn nested(depth: usize) -> String {
    format!("{}1{}", "<a>".repeat(depth), "</a>".repeat(depth))
}

#[test]
fn documents_past_the_depth_limit_are_skipped_not_expanded() {
    let config = Config {
        split_at: Some("doc".into()),
        ..Config::default()
    };
    let corpus = format!(
        "<log><doc>{}</doc><doc><v>2</v></doc><doc>{}</doc></log>",
        nested(100_000),
        nested(MAX_DEPTH - 1)
    );
    let source = Source::Memory {
        name: "deep.xml".into(),
        data: corpus.into_bytes(),
    };
    let x = extract(&[source], &config).expect("extract");
    assert_eq!(x.summary.documents, 2, "the shallow documents are kept");
    assert_eq!(x.summary.skipped.len(), 1);
    let skipped = &x.summary.skipped[0];
    assert!(
        matches!(&skipped.reason, SkipReason::Malformed(m) if m.contains("deeper than 1000 levels")),
        "{skipped:?}"
    );
    // The limit counts from the document's root (`<doc>` is level 1): the
    // error is at the end of the `<a>` of level 1001, after `<log><doc>`.
    assert_eq!(skipped.position, (10 + 3 * MAX_DEPTH) as u64);
}
