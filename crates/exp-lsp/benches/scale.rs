//! How the language server's time grows with the document: time from
//! opening a document to its diagnostics, and a semantic-tokens request,
//! for 10,000, 20,000 and 40,000 blocks (each missing a required property,
//! so each has a diagnostic and a quick fix), the same blocks on one line,
//! and as many top-level `let`s; beside `exp_check::compile` alone on the
//! same text (what `expc check` does before printing). With analysis linear
//! in the document, `ms/1k` stays flat down each column (issue 39: 40,000
//! blocks took 9.2 s against the CLI's 1.1 s). A benchmark, not a test:
//!
//!     cargo bench -p exp-lsp --bench scale
//!
//! The server runs in this process on an in-memory connection, as
//! `expc lsp` runs it on standard input and output.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use exp_check::{compile, Loader, Options};
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{json, Value};

/// The document as the compiler alone reads it.
struct Text(String);

impl Loader for Text {
    fn read(&self, _: &Path) -> std::io::Result<String> {
        Ok(self.0.clone())
    }
}

fn document(shape: &str, count: usize) -> String {
    let block = |i: usize| match shape {
        "blocks" => format!("  fleet \"f{i}\" {{ devices = 1 }}\n"),
        "one line" => format!(" fleet \"f{i}\" {{ devices = 1 }}"),
        _ => String::new(),
    };
    let lets: String = match shape {
        "lets" => (0..count).map(|i| format!("let a{i} = {i}\n")).collect(),
        _ => String::new(),
    };
    let blocks: String = (0..count).map(block).collect();
    format!("{lets}experiment \"x\" {{\n  duration = 1s\n{blocks}\n}}\n")
}

fn request(client: &Connection, id: i32, method: &str, params: Value) -> Value {
    client
        .sender
        .send(Message::Request(Request::new(
            RequestId::from(id),
            method.into(),
            params,
        )))
        .unwrap();
    loop {
        if let Message::Response(response) = client.receiver.recv().unwrap() {
            return response.response_result.unwrap_or(Value::Null);
        }
    }
}

fn notify(client: &Connection, method: &str, params: Value) {
    client
        .sender
        .send(Message::Notification(Notification::new(method.into(), params)))
        .unwrap();
}

/// Opens `text` in a fresh server: (diagnostics, time to them, time of a
/// semantic-tokens request).
fn serve(text: &str) -> (usize, Duration, Duration) {
    let (server, client) = Connection::memory();
    let config = exp_lsp::Config {
        cache_dir: None,
        debounce: Duration::ZERO,
    };
    let thread = std::thread::spawn(move || exp_lsp::serve(&server, &config));
    request(&client, 1, "initialize", json!({"capabilities": {}}));
    notify(&client, "initialized", json!({}));
    let uri = "file:///scale/document.exp";
    let opened = Instant::now();
    let document = json!({"uri": uri, "languageId": "exp", "version": 1, "text": text});
    notify(&client, "textDocument/didOpen", json!({"textDocument": document}));
    let count = loop {
        if let Message::Notification(n) = client.receiver.recv().unwrap() {
            if n.method == "textDocument/publishDiagnostics" {
                break n.params["diagnostics"].as_array().unwrap().len();
            }
        }
    };
    let diagnose = opened.elapsed();
    let asked = Instant::now();
    request(
        &client,
        2,
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri}}),
    );
    let tokens = asked.elapsed();
    request(&client, 3, "shutdown", Value::Null);
    notify(&client, "exit", Value::Null);
    thread.join().unwrap().unwrap();
    (count, diagnose, tokens)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    println!(
        "{:<9} {:>6} {:>6} {:>10} {:>7} {:>10} {:>10} {:>7}",
        "shape", "count", "diags", "lsp ms", "ms/1k", "tokens ms", "check ms", "ms/1k"
    );
    for shape in ["blocks", "one line", "lets"] {
        for count in [10_000, 20_000, 40_000] {
            let text = document(shape, count);
            let started = Instant::now();
            let options = Options {
                seed: None,
                require_experiment: false,
            };
            let compiled = compile("/scale/document.exp", &Text(text.clone()), &options);
            let check = started.elapsed();
            let (diagnostics, diagnose, tokens) = serve(&text);
            assert_eq!(
                diagnostics,
                compiled.diagnostics.len(),
                "the server publishes every diagnostic"
            );
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            let per_1k = |d: Duration| ms(d) / (count as f64 / 1000.0);
            println!(
                "{shape:<9} {count:>6} {diagnostics:>6} {:>10.0} {:>7.1} {:>10.0} {:>10.0} {:>7.1}",
                ms(diagnose),
                per_1k(diagnose),
                ms(tokens),
                ms(check),
                per_1k(check)
            );
        }
    }
}
