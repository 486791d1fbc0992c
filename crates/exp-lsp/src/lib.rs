//! The language server of the exp language: `expc lsp`.
//!
//! A thin layer over the compiler. Diagnostics are `exp_check::compile`'s,
//! run on a worker thread over the editor's unsaved texts; hover, completion
//! and quick fixes read the schema registry, `expc explain` and the
//! compiler's did-you-mean help; formatting is `expc fmt`'s formatter. The
//! server is synchronous (lsp-server's stdio threads, no async runtime),
//! never runs a spec, never expands a sweep itself and never opens a
//! network connection. It writes only the protocol (on the connection it is
//! given) and the read-only copies of the stdlib and the explanations (see
//! `library.rs`); it prints nothing else.

mod analysis;
mod claims;
mod completion;
mod context;
mod cursor;
mod diagnostics;
mod documents;
mod fixes;
mod hover;
mod insert;
mod lex;
mod library;
mod markdown;
mod navigate;
mod scope;
mod semantic;
mod server;
mod symbols;
mod text;
mod uri;
mod worker;

#[cfg(test)]
mod robustness;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use lsp_server::{Connection, ProtocolError};

use crate::documents::Documents;
use crate::library::Library;
use crate::worker::{Published, Worker};

/// How the server is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the read-only copies of the stdlib and the `expc explain`
    /// texts go (definitions into the stdlib and the links on diagnostic
    /// codes need them); `None`: no copies, those features do without.
    pub cache_dir: Option<PathBuf>,
    /// How long typing must pause before a changed document is compiled.
    pub debounce: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cache_dir: None,
            debounce: Duration::from_millis(100),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("language server protocol: {0}")]
    Protocol(#[from] ProtocolError),
    #[error("the client's connection closed")]
    Disconnected,
    /// The protocol asks for exit code 1 then.
    #[error("the client sent `exit` without `shutdown` first")]
    ExitWithoutShutdown,
    #[error("reading or writing the connection: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves one client on standard input and output until it exits.
pub fn serve_stdio(config: &Config) -> Result<(), Error> {
    let (connection, threads) = Connection::stdio();
    serve(&connection, config)?;
    drop(connection);
    threads.join()?;
    Ok(())
}

/// Serves one client on `connection`: the handshake, then requests and
/// notifications until `shutdown`.
pub fn serve(connection: &Connection, config: &Config) -> Result<(), Error> {
    let library = Arc::new(match &config.cache_dir {
        Some(dir) => Library::materialise(dir),
        None => Library::none(),
    });
    let (id, params) = connection.initialize_start()?;
    let snippets = server::client_snippets(&params);
    let result = serde_json::json!({
        "capabilities": server::capabilities(),
        "serverInfo": server::server_info(),
    });
    connection.initialize_finish(id, result)?;

    let published = Arc::new(Published::default());
    let (jobs, receiver) = crossbeam_channel::unbounded();
    let worker = Worker {
        jobs: receiver,
        out: connection.sender.clone(),
        library: library.clone(),
        published: published.clone(),
        debounce: config.debounce,
    };
    let worker = std::thread::Builder::new()
        .name("exp-lsp-compile".into())
        .spawn(move || worker.run())?;
    let mut server = server::Server {
        connection,
        documents: Documents::default(),
        library,
        published,
        jobs,
        completion: completion::Options { snippets },
    };
    let served = server.serve();
    // Closing the job channel stops the worker after its current compile.
    drop(server);
    let _ = worker.join();
    served
}
