//! An editor's side of the Language Server Protocol, enough to drive
//! `expc lsp` in a child process: framed JSON-RPC over its stdin and stdout.

#![allow(dead_code, clippy::unwrap_used)] // each test file uses some of these

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long any one answer may take before the test fails (a loaded 2-core
/// VM; the measured figures come from `benches/lsp_latency.rs`).
pub const BOUND: Duration = Duration::from_secs(10);

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
    /// Notifications from the server not looked at yet, in arrival order.
    pub notifications: Vec<Value>,
    pub cache: PathBuf,
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

pub fn repo() -> PathBuf {
    Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A scratch directory of one test, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lsp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Client {
    /// Starts `expc lsp` (its cache in `cache`) and completes the handshake.
    pub fn start(cache: &Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_expc"))
            .args(["lsp", "--cache-dir"])
            .arg(cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, incoming) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            incoming,
            next_id: 0,
            notifications: Vec::new(),
            cache: cache.to_path_buf(),
        };
        let capabilities = json!({
            "textDocument": {
                "completion": {"completionItem": {"snippetSupport": true}},
                "publishDiagnostics": {"relatedInformation": true, "versionSupport": true}
            }
        });
        let init = client.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": capabilities}),
        );
        assert!(init["capabilities"]["hoverProvider"].as_bool().unwrap(), "{init}");
        client.notify("initialized", json!({}));
        client
    }

    fn send(&mut self, message: &Value) {
        let body = serde_json::to_string(message).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its result (failing the test on an
    /// error response or after `BOUND`); returns the result and how long it took.
    pub fn request_timed(&mut self, method: &str, params: Value) -> (Value, Duration) {
        self.next_id += 1;
        let id = self.next_id;
        let sent = Instant::now();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.next_message(sent + BOUND, method);
            if message.get("id") == Some(&json!(id)) {
                let elapsed = sent.elapsed();
                assert!(message.get("error").is_none(), "{method}: {message}");
                return (message["result"].clone(), elapsed);
            }
            if message.get("method").is_some() {
                self.notifications.push(message);
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_timed(method, params).0
    }

    fn next_message(&mut self, deadline: Instant, waiting_for: &str) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.incoming.recv_timeout(left) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => panic!("no answer to {waiting_for} in time"),
            Err(RecvTimeoutError::Disconnected) => panic!("expc lsp exited while waiting for {waiting_for}"),
        }
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        let document = json!({"uri": uri, "languageId": "exp", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": document}));
    }

    /// The diagnostics published for `uri` at `version` (earlier versions'
    /// are skipped), waiting at most `BOUND`.
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        self.diagnostics_within(uri, version, BOUND)
    }

    /// [`Client::diagnostics`], waiting at most `bound` (a guard against a
    /// hang, not a timing assertion).
    pub fn diagnostics_within(&mut self, uri: &str, version: i64, bound: Duration) -> Vec<Value> {
        let deadline = Instant::now() + bound;
        loop {
            let found = self.notifications.iter().position(|n| {
                n["method"] == "textDocument/publishDiagnostics"
                    && n["params"]["uri"] == uri
                    && n["params"]["version"] == json!(version)
            });
            if let Some(at) = found {
                let notification = self.notifications.remove(at);
                return notification["params"]["diagnostics"].as_array().unwrap().clone();
            }
            let message = self.next_message(deadline, "publishDiagnostics");
            self.notifications.push(message);
        }
    }

    /// `textDocument/…` at a position.
    pub fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        let mut params = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
        if method == "textDocument/references" {
            params["context"] = json!({"includeDeclaration": true});
        }
        self.request(method, params)
    }

    /// Ends the session as an editor does, and checks that the server exits.
    pub fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + BOUND;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "expc lsp exited with {status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("expc lsp did not exit after `exit`");
    }

    /// Sends `exit` without `shutdown` first; the server's exit code.
    pub fn exit_without_shutdown(mut self) -> Option<i32> {
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + BOUND;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("expc lsp did not exit after `exit`");
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// The labels of a completion response.
pub fn labels(completion: &Value) -> Vec<String> {
    let items = completion
        .as_array()
        .or_else(|| completion["items"].as_array())
        .unwrap();
    items.iter().map(|i| i["label"].as_str().unwrap().to_string()).collect()
}

/// A range as `(start line, start character, end line, end character)`.
pub fn range(value: &Value) -> (u64, u64, u64, u64) {
    let n = |v: &Value| v.as_u64().unwrap();
    (
        n(&value["start"]["line"]),
        n(&value["start"]["character"]),
        n(&value["end"]["line"]),
        n(&value["end"]["character"]),
    )
}
