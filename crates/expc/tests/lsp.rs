//! `expc lsp` driven as an editor drives it: a child process speaking
//! JSON-RPC on stdin and stdout. Diagnostics with their ranges, a quick fix,
//! hover, completion, go to definition across imports, formatting, and a
//! huge sweep that must not hold requests up.

#![allow(clippy::unwrap_used)]

use std::process::Command;

use crate::lsp_client::{labels, range, repo, uri, Client, Scratch};
use serde_json::{json, Value};

/// Three mistakes, each in its own block.
const THREE: &str = r#"experiment "three" {
  duration = 30s

  fleet "sensors" {
    devices = 10
    gap     = pareto(shape = 3, median = 100ms)
    qos     = 7
  }

  anomaly "leak" {
    kind = memleak
    sise = 10MB
  }

  monitor {
    interval = 5
  }
}
"#;

/// Line and UTF-16 column of the `at`-th byte of `needle` in `text`.
fn position(text: &str, needle: &str, at: usize) -> (u32, u32) {
    let offset = text.find(needle).unwrap() + at;
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let column = before.rsplit('\n').next().unwrap().encode_utf16().count() as u32;
    (line, column)
}

fn codes_and_ranges(diagnostics: &[Value]) -> Vec<(String, (u64, u64, u64, u64))> {
    diagnostics
        .iter()
        .map(|d| (d["code"].as_str().unwrap().to_string(), range(&d["range"])))
        .collect()
}

#[test]
fn three_mistakes_are_reported_and_a_quick_fix_removes_one() {
    let scratch = Scratch::new("three");
    let path = scratch.0.join("three.exp");
    std::fs::write(&path, THREE).unwrap();
    let uri = uri(&path);
    let mut client = Client::start(&scratch.0.join("cache"));
    client.open(&uri, THREE);
    let diagnostics = client.diagnostics(&uri, 1);
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![
            ("E0501".to_string(), (6, 14, 6, 15)),
            ("E0302".to_string(), (11, 4, 11, 8)),
            ("E0403".to_string(), (15, 15, 15, 16)),
        ]
    );
    // The code links to its `expc explain` text.
    let href = diagnostics[1]["codeDescription"]["href"].as_str().unwrap();
    let explanation = std::fs::read_to_string(href.strip_prefix("file://").unwrap()).unwrap();
    assert!(explanation.starts_with("# E0302: "), "{explanation}");
    assert!(diagnostics[1]["message"]
        .as_str()
        .unwrap()
        .contains("help: did you mean `size`?"));

    // The compiler's did-you-mean, as a quick fix; applying its edit as the
    // editor would leaves the two other mistakes.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": diagnostics[1]["range"], "context": {"diagnostics": [diagnostics[1]]}}),
    );
    let action = &actions.as_array().unwrap()[0];
    assert_eq!(action["title"], "Replace with `size`");
    let edit = action["edit"]["changes"][&uri][0].clone();
    assert_eq!(edit["newText"], "size");
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": edit["range"], "text": edit["newText"]}]}),
    );
    let diagnostics = client.diagnostics(&uri, 2);
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![
            ("E0501".to_string(), (6, 14, 6, 15)),
            ("E0403".to_string(), (15, 15, 15, 16))
        ]
    );

    // Hovering a mistake shows its explanation too.
    let hover = client.at("textDocument/hover", &uri, 15, 15);
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("**E0403**"), "{text}");
    client.shutdown();
}

#[test]
fn hover_shows_a_property_and_a_distribution() {
    let scratch = Scratch::new("hover");
    let path = scratch.0.join("three.exp");
    let uri = uri(&path);
    let mut client = Client::start(&scratch.0.join("cache"));
    client.open(&uri, THREE);
    let (line, column) = position(THREE, "qos", 1);
    let qos = client.at("textDocument/hover", &uri, line, column);
    let text = qos["contents"]["value"].as_str().unwrap();
    for expected in [
        "MQTT quality of service",
        "type: integer",
        "range: 0 – 2",
        "default: `1`",
    ] {
        assert!(text.contains(expected), "{expected} in {text}");
    }
    assert_eq!(range(&qos["range"]), (6, 4, 6, 7));
    let (line, column) = position(THREE, "pareto", 2);
    let pareto = client.at("textDocument/hover", &uri, line, column);
    let text = pareto["contents"]["value"].as_str().unwrap();
    for expected in [
        "pareto(shape, scale?, median?, mean?)",
        "`shape`: number",
        "Tail index α",
        "`median`",
    ] {
        assert!(text.contains(expected), "{expected} in {text}");
    }
    client.shutdown();
}

#[test]
fn completion_knows_the_fleet_and_the_chosen_anomaly_kind() {
    let text = "experiment \"c\" {\n  fleet \"sensors\" {\n    devices = 10\n    \n  }\n  anomaly \"leak\" {\n    kind = memleak\n    \n  }\n}\n";
    let scratch = Scratch::new("complete");
    let uri = uri(&scratch.0.join("c.exp"));
    let mut client = Client::start(&scratch.0.join("cache"));
    client.open(&uri, text);
    let fleet = labels(&client.at("textDocument/completion", &uri, 3, 4));
    for expected in ["gap", "payload", "qos", "broker", "at", "for"] {
        assert!(fleet.contains(&expected.to_string()), "{expected} in {fleet:?}");
    }
    assert!(!fleet.contains(&"devices".to_string()), "already set: {fleet:?}");
    assert!(!fleet.contains(&"utilization".to_string()), "an anomaly's: {fleet:?}");
    let memleak = labels(&client.at("textDocument/completion", &uri, 7, 4));
    for expected in ["size", "rate", "limit", "cores", "at"] {
        assert!(memleak.contains(&expected.to_string()), "{expected} in {memleak:?}");
    }
    for other in ["utilization", "buffer", "ntasks", "kind"] {
        assert!(!memleak.contains(&other.to_string()), "{other} in {memleak:?}");
    }
    client.shutdown();
}

#[test]
fn definitions_cross_imports_into_files_and_the_stdlib() {
    let spec = repo().join("examples/05-imports.exp");
    let text = std::fs::read_to_string(&spec).unwrap();
    let scratch = Scratch::new("definition");
    let mut client = Client::start(&scratch.0.join("cache"));
    let spec_uri = uri(&spec);
    client.open(&spec_uri, &text);

    let (line, column) = position(&text, "common.devices", "common.".len() + 1);
    let found = client.at("textDocument/definition", &spec_uri, line, column);
    let common = repo().join("examples/shared/common.exp");
    assert_eq!(found["uri"], uri(&common));
    let common_text = std::fs::read_to_string(&common).unwrap();
    let (line, column) = position(&common_text, "let devices", 4);
    assert_eq!(
        range(&found["range"]),
        (line as u64, column as u64, line as u64, column as u64 + 7)
    );

    // Into the stdlib's read-only copy: the text the compiler embeds.
    let (line, column) = position(&text, "iot.s1.connects", 5);
    let found = client.at("textDocument/definition", &spec_uri, line, column);
    let target = found["uri"]
        .as_str()
        .unwrap()
        .strip_prefix("file://")
        .unwrap()
        .to_string();
    assert!(
        target.ends_with("/std/iot.exp") && target.starts_with(client.cache.to_str().unwrap()),
        "{target}"
    );
    let stdlib = std::fs::read_to_string(&target).unwrap();
    assert_eq!(stdlib, std::fs::read_to_string(repo().join("stdlib/iot.exp")).unwrap());
    assert!(std::fs::metadata(&target).unwrap().permissions().readonly());
    let (line, _) = position(&stdlib, "let s1 =", 0);
    assert_eq!(found["range"]["start"]["line"], line);

    // References of the file's binding, from the importing spec.
    let (line, column) = position(&text, "common.gap", "common.".len());
    let references = client.at("textDocument/references", &spec_uri, line, column);
    let uris: Vec<&str> = references
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(
        uris.contains(&uri(&common).as_str()) && uris.contains(&spec_uri.as_str()),
        "{uris:?}"
    );
    client.shutdown();
}

#[test]
fn formatting_is_what_expc_fmt_writes() {
    let scratch = Scratch::new("format");
    let text = "import \"std/pareto\"\nlet   g=pareto.shape3_100ms\nexperiment \"f\"{\nduration=10s // short\n fleet \"s\" {devices=2\ngap=g}\n}\n";
    let path = scratch.0.join("f.exp");
    std::fs::write(&path, text).unwrap();
    let uri = uri(&path);
    let mut client = Client::start(&scratch.0.join("cache"));
    client.open(&uri, text);
    let edits = client.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    let edits = edits.as_array().unwrap();
    assert_eq!(edits.len(), 1);
    assert_eq!(range(&edits[0]["range"]), (0, 0, 7, 0));
    let fmt = Command::new(env!("CARGO_BIN_EXE_expc"))
        .arg("fmt")
        .arg(&path)
        .output()
        .unwrap();
    assert!(fmt.status.success(), "{fmt:?}");
    assert_eq!(
        edits[0]["newText"].as_str().unwrap(),
        std::fs::read_to_string(&path).unwrap()
    );
    client.shutdown();
}

/// A sweep of 90,000 points: hover and completion are answered from the
/// document's syntax while the compile runs on the worker, and the compile
/// checks the sweep without expanding it.
#[test]
fn a_huge_sweep_does_not_hold_up_requests() {
    let text = "experiment \"huge\" {\n  duration = 10s\n  sweep {\n    a = 1..300 step 1\n    b = 1..300 step 1\n  }\n  fleet \"f\" {\n    devices = a\n    gap = 100ms\n    messages = 5\n  }\n}\n";
    let scratch = Scratch::new("huge");
    let uri = uri(&scratch.0.join("huge.exp"));
    let mut client = Client::start(&scratch.0.join("cache"));
    client.open(&uri, text);
    let hover = client.at("textDocument/hover", &uri, 3, 4);
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("a = 1..300 step 1"),
        "{hover}"
    );
    let completion = labels(&client.at("textDocument/completion", &uri, 7, 14));
    assert!(completion.contains(&"b".to_string()), "{completion:?}");
    // `devices = a` goes to the sweep parameter `a`.
    let found = client.at("textDocument/definition", &uri, 7, 14);
    assert_eq!(found["uri"], uri.as_str());
    assert_eq!(range(&found["range"]), (3, 4, 3, 5));
    // Whether the answers came before the diagnostics depends on the
    // machine's load, so it is not asserted here: how long answers take is
    // `cargo bench -p expc --bench lsp_latency`'s measure.
    // The compile still finishes: `b` multiplies the trials but nothing reads it.
    let diagnostics = client.diagnostics(&uri, 1);
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![("W0801".to_string(), (4, 4, 4, 5))]
    );
    client.shutdown();
}

/// A mistake in an imported file shows on the import that loads it (with
/// the place itself as related information); fixing the file, open in the
/// editor, rechecks the spec that imports it.
#[test]
fn an_imported_files_mistake_shows_on_its_import_until_fixed() {
    let scratch = Scratch::new("imported");
    std::fs::create_dir_all(scratch.0.join("lib")).unwrap();
    let main = "import \"./lib/shared.exp\" as shared\n\nexperiment \"m\" {\n  duration = 10s\n  fleet \"f\" {\n    devices = shared.n\n    gap     = 100ms\n  }\n}\n";
    let shared = "let n = 10 ms\n";
    let (main_path, shared_path) = (scratch.0.join("main.exp"), scratch.0.join("lib/shared.exp"));
    std::fs::write(&main_path, main).unwrap();
    std::fs::write(&shared_path, shared).unwrap();
    let (main_uri, shared_uri) = (uri(&main_path), uri(&shared_path));
    let mut client = Client::start(&scratch.0.join("cache"));
    client.open(&main_uri, main);
    let diagnostics = client.diagnostics(&main_uri, 1);
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![
            ("E0205".to_string(), (5, 21, 5, 22)),
            ("E0101".to_string(), (0, 7, 0, 25))
        ]
    );
    let message = diagnostics[1]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("in `{}`: expected", shared_path.display())),
        "{message}"
    );
    let related = &diagnostics[1]["relatedInformation"][0]["location"];
    assert_eq!(related["uri"], shared_uri);
    assert_eq!(range(&related["range"]), (0, 11, 0, 13));

    client.open(&shared_uri, shared);
    let own = client.diagnostics(&shared_uri, 1);
    assert_eq!(codes_and_ranges(&own), vec![("E0101".to_string(), (0, 11, 0, 13))]);
    // Opening a file rechecks the open files that import it.
    assert_eq!(client.diagnostics(&main_uri, 1).len(), 2);
    // Its quick fix joins number and unit; the importing spec is rechecked.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": shared_uri}, "range": own[0]["range"], "context": {"diagnostics": own}}),
    );
    let edit = actions[0]["edit"]["changes"][&shared_uri][0].clone();
    assert_eq!(
        (edit["newText"].as_str().unwrap(), range(&edit["range"])),
        ("10ms", (0, 8, 0, 13))
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": shared_uri, "version": 2}, "contentChanges": [{"range": edit["range"], "text": "10"}]}),
    );
    assert_eq!(client.diagnostics(&shared_uri, 2), Vec::<Value>::new());
    assert_eq!(client.diagnostics(&main_uri, 1), Vec::<Value>::new());
    client.shutdown();
}

/// A duplicate block's diagnostic points at the other block too, as a
/// related location in the same document.
#[test]
fn a_duplicate_block_names_the_first_one_as_related() {
    let text = "experiment \"d\" {\n  duration = 10s\n  fleet \"a\" {\n    devices = 1\n    gap = 100ms\n  }\n  fleet \"a\" {\n    devices = 2\n    gap = 100ms\n  }\n}\n";
    let scratch = Scratch::new("duplicate");
    let uri = uri(&scratch.0.join("duplicate.exp"));
    let mut client = Client::start(&scratch.0.join("cache"));
    client.open(&uri, text);
    let diagnostics = client.diagnostics(&uri, 1);
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![("E0202".to_string(), (6, 8, 6, 11))]
    );
    let related = &diagnostics[0]["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], uri.as_str());
    assert_eq!(
        related["location"]["range"]["start"],
        json!({"line": 2, "character": 8})
    );
    assert_eq!(related["location"]["range"]["end"], json!({"line": 2, "character": 11}));
    assert_eq!(related["message"], "first one");
    client.shutdown();
}
