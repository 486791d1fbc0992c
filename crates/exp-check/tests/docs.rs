//! docs/language.md embeds the reference tables that `exp_check::docs::reference()`
//! renders from the schema registry, between two marker lines. This test fails
//! when the two drift apart.
//!
//! To refresh the section after changing the registry:
//!
//!     UPDATE_DOCS=1 cargo test -p exp-check --test docs

use std::path::PathBuf;

const BEGIN: &str = "<!-- BEGIN GENERATED: registry -->";
const END: &str = "<!-- END GENERATED: registry -->";

fn language_md() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../docs/language.md")
}

/// Byte ranges of the generated section: from just after the BEGIN line to the
/// start of the END line. Both markers must be whole lines, each exactly once.
fn section(text: &str) -> std::ops::Range<usize> {
    let mut begin = None;
    let mut end = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if content == BEGIN {
            assert!(begin.is_none(), "`{BEGIN}` appears twice in docs/language.md");
            begin = Some(offset + line.len());
        } else if content == END {
            assert!(end.is_none(), "`{END}` appears twice in docs/language.md");
            end = Some(offset);
        }
        offset += line.len();
    }
    let begin = begin.unwrap_or_else(|| panic!("docs/language.md has no line `{BEGIN}`"));
    let end = end.unwrap_or_else(|| panic!("docs/language.md has no line `{END}`"));
    assert!(begin <= end, "`{END}` comes before `{BEGIN}` in docs/language.md");
    begin..end
}

#[test]
fn language_reference_matches_the_registry() {
    let path = language_md();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let range = section(&text);
    let generated = exp_check::docs::reference();
    if text[range.clone()] == generated {
        return;
    }
    if std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1") {
        let mut updated = String::with_capacity(text.len() + generated.len());
        updated.push_str(&text[..range.start]);
        updated.push_str(&generated);
        updated.push_str(&text[range.end..]);
        std::fs::write(&path, updated).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        eprintln!("updated the generated section of {}", path.display());
        return;
    }
    let first_difference = text[range.clone()]
        .lines()
        .zip(generated.lines())
        .position(|(a, b)| a != b)
        .map_or_else(
            || "one is a prefix of the other".to_string(),
            |i| format!("first differing line: {}", i + 1),
        );
    panic!(
        "the generated section of docs/language.md is out of date ({first_difference}); \
         run `UPDATE_DOCS=1 cargo test -p exp-check --test docs`"
    );
}
