//! Editor support (`editors/`): the TextMate grammar tokenises every spec,
//! example, stdlib module and diagnostic UI file with VS Code's own engine
//! (vscode-textmate on Oniguruma), and it and the extension manifest agree
//! with the registry and with each other.
//!
//! The engine runs in `node` from `editors/node_modules`; without them
//! (`npm ci --prefix editors`) the engine tests are reported as ignored.

// Helpers outside #[test] functions unwrap too: a failed setup fails the test.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("..")
}

fn json(path: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(path)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `node editors/test/tokenize.mjs TARGETS…`
fn tokenize(targets: &[PathBuf]) -> (Output, Value) {
    let output = Command::new("node")
        .arg(repo().join("editors/test/tokenize.mjs"))
        .args(targets)
        .output()
        .expect("node runs");
    let summary = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    (output, summary)
}

#[test]
#[cfg_attr(
    not(textmate_engine),
    ignore = "needs node and the npm packages of editors/ (`npm ci --prefix editors`)"
)]
fn the_grammar_tokenises_every_exp_file_of_the_repository() {
    let folders: Vec<PathBuf> = ["specs", "examples", "stdlib", "tests/ui"]
        .iter()
        .map(|f| repo().join(f))
        .collect();
    let (output, summary) = tokenize(&folders);
    assert!(output.status.success(), "{summary:#}");
    assert_eq!(summary["problems"], Value::Array(Vec::new()));
    // Every file was read: as many as the folders hold.
    let mut count = 0;
    let mut stack = folders;
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "exp") {
                count += 1;
            }
        }
    }
    assert!(count > 60);
    assert_eq!(summary["files"], count);
}

#[test]
#[cfg_attr(
    not(textmate_engine),
    ignore = "needs node and the npm packages of editors/ (`npm ci --prefix editors`)"
)]
fn invalid_text_and_open_regions_are_found() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("textmate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let open = dir.join("open.exp");
    std::fs::write(&open, "let a = 1\n/* never closed\nlet b = 2\n").unwrap();
    let stray = dir.join("stray.exp");
    std::fs::write(&stray, "let a = 1 § 2\n").unwrap();
    // A UI case that expects a syntax error may hold such characters.
    let expected = dir.join("expected.exp");
    std::fs::write(&expected, "// expect: E0101\nlet a = 1 § 2\n").unwrap();
    let (output, summary) = tokenize(&[open, stray, expected]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!output.status.success());
    let problems: Vec<&str> = summary["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].ends_with("open.exp: a region is still open at the end of the file"));
    assert!(
        problems[1].ends_with("stray.exp:1:11: marked invalid \"§\""),
        "{problems:?}"
    );
}

#[test]
fn the_grammar_knows_the_registrys_functions() {
    let grammar = json("editors/vscode/syntaxes/exp.tmLanguage.json");
    let pattern = grammar["repository"]["calls"]["patterns"][0]["match"].as_str().unwrap();
    let listed = pattern
        .strip_prefix("\\b(")
        .and_then(|p| p.strip_suffix(")(?=\\()"))
        .unwrap();
    let mut listed: Vec<&str> = listed.split('|').collect();
    let mut functions: Vec<&str> = exp_check::registry::FUNCTIONS.iter().map(|f| f.name).collect();
    listed.sort_unstable();
    functions.sort_unstable();
    assert_eq!(listed, functions);
}

#[test]
fn the_extension_declares_the_grammar_and_starts_expc_lsp() {
    let manifest = json("editors/vscode/package.json");
    let grammar_entry = &manifest["contributes"]["grammars"][0];
    let path = grammar_entry["path"].as_str().unwrap();
    let grammar = json(&format!("editors/vscode/{}", path.trim_start_matches("./")));
    assert_eq!(grammar_entry["scopeName"], grammar["scopeName"]);
    assert_eq!(grammar_entry["language"], manifest["contributes"]["languages"][0]["id"]);
    assert_eq!(manifest["contributes"]["languages"][0]["extensions"][0], ".exp");
    let main = manifest["main"].as_str().unwrap().trim_start_matches("./");
    let extension = std::fs::read_to_string(repo().join("editors/vscode").join(main)).unwrap();
    assert!(extension.contains("args: [\"lsp\"]"), "{extension}");
    let configuration = manifest["contributes"]["languages"][0]["configuration"]
        .as_str()
        .unwrap();
    json(&format!("editors/vscode/{}", configuration.trim_start_matches("./")));
}
