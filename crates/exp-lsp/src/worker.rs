//! The compile thread. The protocol loop hands it every change and goes back
//! to answering requests at once; the worker waits until typing pauses
//! (debounce), compiles each changed document and the open documents that
//! import it with `exp_check::compile` (over the editor's texts), and
//! publishes their diagnostics. A slow compile (a spec with a huge sweep)
//! therefore delays only its own diagnostics, never hover or completion;
//! changes that arrive meanwhile are compiled together afterwards.

use std::collections::{BTreeSet, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use exp_check::{compile, Options};
use lsp_server::{Message, Notification};
use lsp_types::notification::{Notification as _, PublishDiagnostics};
use lsp_types::{PublishDiagnosticsParams, Uri};

use crate::diagnostics::{convert, Converted};
use crate::documents::{Document, Overlay};
use crate::library::Library;

pub enum Job {
    /// A document was opened, changed or saved; `immediate` skips the
    /// debounce (opening, saving).
    Changed {
        uri: Uri,
        immediate: bool,
    },
    Closed {
        uri: Uri,
    },
}

/// A job with the open documents as they were when it was sent.
pub struct Envelope {
    pub job: Job,
    pub documents: Vec<Document>,
}

/// The diagnostics last published for a document, for hover and quick fixes.
#[derive(Default)]
pub struct Published {
    by_uri: Mutex<HashMap<Uri, (i32, Vec<Converted>)>>,
}

impl Published {
    /// The diagnostics of `uri` if they were computed for `version`.
    pub fn get(&self, uri: &Uri, version: i32) -> Vec<Converted> {
        let map = self.by_uri.lock().unwrap_or_else(PoisonError::into_inner);
        match map.get(uri) {
            Some((v, items)) if *v == version => items.clone(),
            _ => Vec::new(),
        }
    }

    fn set(&self, uri: Uri, version: i32, items: Vec<Converted>) {
        let mut map = self.by_uri.lock().unwrap_or_else(PoisonError::into_inner);
        map.insert(uri, (version, items));
    }

    fn remove(&self, uri: &Uri) {
        let mut map = self.by_uri.lock().unwrap_or_else(PoisonError::into_inner);
        map.remove(uri);
    }
}

pub struct Worker {
    pub jobs: Receiver<Envelope>,
    pub out: Sender<Message>,
    pub library: Arc<Library>,
    pub published: Arc<Published>,
    pub debounce: Duration,
}

/// The longest a stream of changes holds diagnostics back.
const MAX_WAIT: Duration = Duration::from_secs(1);

impl Worker {
    pub fn run(self) {
        let mut state = State::default();
        while let Ok(first) = self.jobs.recv() {
            let started = Instant::now();
            let mut deadline = match state.take(first) {
                true => started,
                false => started + self.debounce,
            };
            loop {
                let wait = deadline.min(started + MAX_WAIT);
                match self.jobs.recv_deadline(wait) {
                    Ok(next) => {
                        if !state.take(next) {
                            deadline = Instant::now() + self.debounce;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            for uri in std::mem::take(&mut state.pending) {
                self.check(&mut state, &uri);
            }
            for uri in std::mem::take(&mut state.closed) {
                self.published.remove(&uri);
                self.publish(uri, None, Vec::new());
            }
        }
    }

    fn check(&self, state: &mut State, uri: &Uri) {
        let Some(document) = state.documents.get(uri) else {
            return;
        };
        let root = match &document.path {
            Some(path) => path.to_string_lossy().into_owned(),
            None => "untitled.exp".to_string(),
        };
        let mut overlay = state.overlay.clone();
        if document.path.is_none() {
            overlay.insert(PathBuf::from(&root), document.text.clone());
        }
        let options = Options {
            seed: None,
            require_experiment: false,
        };
        let compiled = catch_unwind(AssertUnwindSafe(|| compile(&root, &overlay, &options)));
        let items = match compiled {
            Ok(compilation) => {
                let deps = compilation
                    .sources
                    .files()
                    .filter_map(|(_, f)| self.library.file_of_source(&f.name))
                    .collect();
                state.deps.insert(uri.clone(), deps);
                convert(&compilation, &root, &self.library)
            }
            Err(_) => vec![crate::diagnostics::internal_error()],
        };
        self.published.set(uri.clone(), document.version, items.clone());
        let diagnostics = items.into_iter().map(|c| c.diagnostic).collect();
        self.publish(uri.clone(), Some(document.version), diagnostics);
    }

    fn publish(&self, uri: Uri, version: Option<i32>, diagnostics: Vec<lsp_types::Diagnostic>) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        // The protocol loop has stopped when this fails: nothing to tell.
        let _ = self.out.send(Message::Notification(Notification::new(
            PublishDiagnostics::METHOD.to_string(),
            params,
        )));
    }
}

#[derive(Default)]
struct State {
    documents: HashMap<Uri, Document>,
    overlay: Overlay,
    /// The files each document's last compilation read.
    deps: HashMap<Uri, Vec<PathBuf>>,
    pending: BTreeSet<Uri>,
    closed: BTreeSet<Uri>,
}

impl State {
    /// Takes a job in; true when it asks for no debounce.
    fn take(&mut self, envelope: Envelope) -> bool {
        self.overlay = Overlay::of(&envelope.documents);
        self.documents = envelope.documents.into_iter().map(|d| (d.uri.clone(), d)).collect();
        match envelope.job {
            Job::Changed { uri, immediate } => {
                self.closed.remove(&uri);
                // Documents that import the changed one see it change too.
                if let Some(path) = self.documents.get(&uri).and_then(|d| d.path.clone()) {
                    for (other, deps) in &self.deps {
                        if *other != uri && deps.contains(&path) && self.documents.contains_key(other) {
                            self.pending.insert(other.clone());
                        }
                    }
                }
                self.pending.insert(uri);
                immediate
            }
            Job::Closed { uri } => {
                self.pending.remove(&uri);
                self.deps.remove(&uri);
                self.closed.insert(uri);
                true
            }
        }
    }
}
