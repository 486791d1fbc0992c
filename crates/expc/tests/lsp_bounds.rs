//! Issue 39 §4: the language server reads imports with the compiler's
//! bounded reader and holds an open document to the compiler's 16 MiB cap.
//! It read an imported link to `/dev/zero` without limit, blocked for ever
//! on an imported FIFO (after which no document got diagnostics), read
//! `/dev/null` as an empty module, and analysed a document in quadratic time
//! (40,000 blocks: 9.2 s against `expc check`'s 1.1 s). Timings are in
//! exp-lsp's `benches/scale.rs`; these tests assert what the diagnostics say.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::lsp_client::{range, uri, Client, Scratch};
use serde_json::{json, Value};

/// A hang guard for the large documents (a debug build on a loaded 2-core
/// machine), not a timing assertion.
const LARGE: Duration = Duration::from_secs(300);

fn codes(diagnostics: &[Value]) -> Vec<&str> {
    diagnostics.iter().map(|d| d["code"].as_str().unwrap()).collect()
}

#[test]
fn imported_fifos_and_devices_are_refused_and_the_server_goes_on() {
    let scratch = Scratch::new("bounds-imports");
    let fifo = scratch.0.join("pipe.exp");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    std::os::unix::fs::symlink("/dev/zero", scratch.0.join("zero.exp")).unwrap();
    std::os::unix::fs::symlink("/dev/null", scratch.0.join("null.exp")).unwrap();
    let text = "import \"./pipe.exp\" as a\nimport \"./zero.exp\" as b\nimport \"./null.exp\" as c\n";
    let root = scratch.0.join("root.exp");
    std::fs::write(&root, text).unwrap();
    let mut client = Client::start(&scratch.0.join("cache"));
    client.open(&uri(&root), text);
    let diagnostics = client.diagnostics(&uri(&root), 1);
    assert_eq!(codes(&diagnostics), ["E0204", "E0204", "E0204"], "{diagnostics:?}");
    for (line, diagnostic) in diagnostics.iter().enumerate() {
        assert_eq!(range(&diagnostic["range"]).0, line as u64, "{diagnostic}");
        assert!(
            diagnostic["message"].as_str().unwrap().starts_with("cannot read"),
            "{diagnostic}"
        );
    }
    // The worker is free: the next document gets its diagnostics.
    let other = scratch.0.join("other.exp");
    let other_text = "let x = undefined_name\n";
    std::fs::write(&other, other_text).unwrap();
    client.open(&uri(&other), other_text);
    assert_eq!(codes(&client.diagnostics(&uri(&other), 1)), ["E0201"]);
    // Hover over the FIFO's alias reads the module: it must not block either.
    let hover = client.at("textDocument/hover", &uri(&root), 0, 23);
    assert!(hover.is_null() || hover["contents"].is_object(), "{hover}");
    client.shutdown();
}

#[test]
fn a_document_over_16_mib_gets_one_diagnostic_at_the_top() {
    let scratch = Scratch::new("bounds-large");
    let path = scratch.0.join("large.exp");
    let text = format!("// {}\nlet x = 1\n", "x".repeat(17 << 20));
    let mut client = Client::start(&scratch.0.join("cache"));
    client.open(&uri(&path), &text);
    let diagnostics = client.diagnostics_within(&uri(&path), 1, LARGE);
    assert_eq!(codes(&diagnostics), ["E0204"], "{diagnostics:?}");
    assert_eq!(range(&diagnostics[0]["range"]), (0, 0, 0, 0));
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.contains("17,825,806 bytes, more than the 16 MiB a file may have"),
        "{message}"
    );
    // Nothing else analyses it.
    let tokens = client.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri(&path)}}),
    );
    assert!(tokens.is_null(), "{tokens}");
    client.shutdown();
}

/// `count` fleets without their required `gap`, each on its own line or
/// all on one; the byte offset of each `fleet`.
fn fleets(count: usize, one_line: bool) -> (String, Vec<usize>) {
    let mut text = String::from("experiment \"x\" {\n  duration = 1s\n");
    let mut at = Vec::with_capacity(count);
    for i in 0..count {
        text.push_str(if one_line { " " } else { "  " });
        at.push(text.len());
        text.push_str(&format!("fleet \"f{i}\" {{ devices = 1 }}"));
        if !one_line {
            text.push('\n');
        }
    }
    text.push_str("\n}\n");
    (text, at)
}

#[test]
fn a_large_document_gets_every_diagnostic_in_its_place() {
    let scratch = Scratch::new("bounds-many");
    let mut client = Client::start(&scratch.0.join("cache"));
    for (count, one_line) in [(10_000, false), (4_000, true)] {
        let path = scratch.0.join(format!("many-{one_line}.exp"));
        let (text, at) = fleets(count, one_line);
        client.open(&uri(&path), &text);
        let diagnostics = client.diagnostics_within(&uri(&path), 1, LARGE);
        assert_eq!(diagnostics.len(), count);
        for (diagnostic, &offset) in diagnostics.iter().zip(&at) {
            assert_eq!(diagnostic["code"], "E0303");
            let line = text[..offset].matches('\n').count() as u64;
            let column = (offset - text[..offset].rfind('\n').map_or(0, |n| n + 1)) as u64;
            assert_eq!(
                range(&diagnostic["range"]),
                (line, column, line, column + 5),
                "{diagnostic}"
            );
        }
        // The quick fix of the last one adds `gap` to its own block.
        let last = diagnostics.last().unwrap().clone();
        let actions = client.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri(&path)}, "range": last["range"], "context": {"diagnostics": [last]}}),
        );
        let edit = &actions[0]["edit"]["changes"][uri(&path)][0];
        assert!(edit["newText"].as_str().unwrap().contains("gap = "), "{actions}");
        client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri(&path)}}));
    }
    client.shutdown();
}
