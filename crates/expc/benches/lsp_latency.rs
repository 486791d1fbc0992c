//! How fast `expc lsp` answers on every spec of `specs/` (the target: 50 ms
//! per response). A benchmark, not a test (timing is not asserted in tests):
//!
//!     cargo bench -p expc --bench lsp_latency
//!
//! It prints, per spec, the slowest answer of each request kind and the
//! time from opening the document to its diagnostics, and exits 1 if a
//! request took 50 ms or more. `cargo test --benches` (and clippy) only
//! build it.

#![allow(clippy::unwrap_used)]

#[path = "../tests/lsp_client/mod.rs"]
mod lsp_client;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_client::{repo, uri, Client, Scratch};
use serde_json::json;

const TARGET: Duration = Duration::from_millis(50);

fn specs(folder: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(specs(&path));
        } else if path.extension().is_some_and(|e| e == "exp") {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// Positions to ask about: the first word of every line and two points
/// inside it.
fn positions(text: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for (line, content) in text.lines().enumerate() {
        let indent = content.len() - content.trim_start().len();
        let width = content.encode_utf16().count() as u32;
        for column in [indent as u32, width / 2, width] {
            out.push((line as u32, column));
        }
    }
    out
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let scratch = Scratch::new("latency");
    let mut client = Client::start(&scratch.0.join("cache"));
    let mut slowest = Duration::ZERO;
    println!(
        "{:<44} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
        "spec (ms)", "diagnose", "hover", "compl.", "defin.", "symbols", "tokens", "format"
    );
    for spec in specs(&repo().join("specs")) {
        let text = std::fs::read_to_string(&spec).unwrap();
        let uri = uri(&spec);
        let opened = Instant::now();
        client.open(&uri, &text);
        client.diagnostics(&uri, 1);
        let diagnose = opened.elapsed();
        let mut worst = [Duration::ZERO; 6];
        let document = json!({"textDocument": {"uri": uri}});
        for (line, character) in positions(&text) {
            let at = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
            for (slot, method) in [
                "textDocument/hover",
                "textDocument/completion",
                "textDocument/definition",
            ]
            .iter()
            .enumerate()
            {
                let (_, took) = client.request_timed(method, at.clone());
                worst[slot] = worst[slot].max(took);
            }
        }
        let (_, took) = client.request_timed("textDocument/documentSymbol", document.clone());
        worst[3] = took;
        let (_, took) = client.request_timed("textDocument/semanticTokens/full", document.clone());
        worst[4] = took;
        let mut formatting = document.clone();
        formatting["options"] = json!({"tabSize": 2, "insertSpaces": true});
        let (_, took) = client.request_timed("textDocument/formatting", formatting);
        worst[5] = took;
        client.notify("textDocument/didClose", document);
        let name = spec.strip_prefix(repo()).unwrap().display().to_string();
        let ms = |d: Duration| format!("{:.2}", d.as_secs_f64() * 1e3);
        println!(
            "{name:<44} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
            ms(diagnose),
            ms(worst[0]),
            ms(worst[1]),
            ms(worst[2]),
            ms(worst[3]),
            ms(worst[4]),
            ms(worst[5])
        );
        slowest = slowest.max(worst.into_iter().max().unwrap());
    }
    client.shutdown();
    println!(
        "slowest request: {:.2} ms (target {} ms)",
        slowest.as_secs_f64() * 1e3,
        TARGET.as_millis()
    );
    if slowest >= TARGET {
        std::process::exit(1);
    }
}
