//! The acceptor: a server that runs the accepting side of replayed
//! connections. It needs no trace: each connection's preamble carries the
//! script. Usable in-process (next to `replay`) and by `expc serve`.
//!
//! With a secret it answers only signed preambles of sessions it opened
//! ([`auth`](super::auth)); without one only unsigned preambles. Either way
//! it enforces its [`Limits`] before it sends a byte, and records every
//! connection, refused ones with the [`Refusal`].

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::{timeout, Instant};

use super::auth::{random_bytes, ClientSession, Secret, SessionRefusal, Sessions, AUTH_VERSION, HELLO_MAGIC};
use super::exec::{run_side, Counters};
use super::limits::{Admission, Limits, Slot};
use super::preamble::{self, Message, PreambleError, Script};
use super::records::{AcceptorRecord, ConnectionStatus, Refusal};
use super::sys;
use super::ReplayError;
use crate::cvec::Side;

/// Pending connections the kernel queues (capped by `net.core.somaxconn`):
/// bursts of new connections must not overflow into SYN retries.
const BACKLOG: u32 = 4096;
/// Pause after a failed accept (out of file descriptors) before retrying.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(5);

/// How an acceptor authenticates and what it allows.
#[derive(Debug, Clone)]
pub struct AcceptorConfig {
    /// Without one, unsigned preambles are served (in-process, loopback).
    pub secret: Option<Secret>,
    pub limits: Limits,
}

/// A running acceptor; dropping it stops accepting (connections already
/// accepted finish on their own).
#[derive(Debug)]
pub struct Acceptor {
    local: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

struct Shared {
    records: Mutex<Vec<AcceptorRecord>>,
    sessions: Option<Mutex<Sessions>>,
    limits: Limits,
    admission: Admission,
    counters: Counters,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("authenticated", &self.sessions.is_some())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Acceptor {
    /// Listens on `addr` (port 0 picks one) without a secret and with the
    /// in-process limits, and starts accepting on the current tokio runtime.
    pub async fn bind(addr: SocketAddr) -> Result<Acceptor, ReplayError> {
        let config = AcceptorConfig {
            secret: None,
            limits: Limits::in_process(),
        };
        Acceptor::bind_with(addr, config).await
    }

    /// Listens on `addr` with `config`.
    pub async fn bind_with(addr: SocketAddr, config: AcceptorConfig) -> Result<Acceptor, ReplayError> {
        let sessions = match config.secret {
            Some(secret) => Some(Mutex::new(Sessions::new(secret).map_err(ReplayError::Random)?)),
            None => None,
        };
        let listener = listen(addr).map_err(|source| ReplayError::Listen { addr, source })?;
        let local = listener
            .local_addr()
            .map_err(|source| ReplayError::Listen { addr, source })?;
        let shared = Arc::new(Shared {
            records: Mutex::new(Vec::new()),
            sessions,
            admission: Admission::new(&config.limits),
            counters: Counters::limited(config.limits.total_bytes),
            limits: config.limits,
        });
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(Acceptor { local, shared, task })
    }

    /// An in-process acceptor that nobody else can use: it makes its own
    /// secret and session and hands the session to the caller's replay
    /// (`ReplayConfig::session`); the user configures nothing.
    pub async fn bind_private(addr: SocketAddr) -> Result<(Acceptor, Arc<ClientSession>), ReplayError> {
        let text = Secret::generate().map_err(ReplayError::Random)?;
        let secret = Secret::from_text(&text).map_err(|e| ReplayError::Random(std::io::Error::other(e)))?;
        let nonce = random_bytes().map_err(ReplayError::Random)?;
        let config = AcceptorConfig {
            secret: Some(secret.clone()),
            limits: Limits::in_process(),
        };
        let acceptor = Acceptor::bind_with(addr, config).await?;
        if let Some(sessions) = &acceptor.shared.sessions {
            sessions.lock().unwrap_or_else(PoisonError::into_inner).register(nonce);
        }
        Ok((acceptor, Arc::new(ClientSession::new(secret, nonce))))
    }

    /// The address initiators connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Whether it answers only signed preambles.
    pub fn authenticates(&self) -> bool {
        self.shared.sessions.is_some()
    }

    /// Bytes sent to all connections so far.
    pub fn sent_bytes(&self) -> u64 {
        self.shared.counters.sent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records of the connections finished since the last call.
    pub fn take_records(&self) -> Vec<AcceptorRecord> {
        std::mem::take(&mut *self.shared.records.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => match shared.admission.admit(peer.ip()) {
                // Each record is kept before its connection closes, so a
                // peer that saw the close finds it in the next report.
                Ok(slot) => {
                    let shared = Arc::clone(&shared);
                    tokio::spawn(async move {
                        let mut stream = stream;
                        let record = serve(&mut stream, peer, &shared, slot).await;
                        shared.push(record);
                        drop(stream);
                    });
                }
                Err(refusal) => {
                    shared.push(refused(peer, refusal, None));
                    drop(stream);
                }
            },
            // EMFILE and friends: the preflight should prevent them; if they
            // happen anyway, the initiator sees its connect stall and the
            // acceptor keeps going once descriptors free up.
            Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
        }
    }
}

impl Shared {
    fn push(&self, record: AcceptorRecord) {
        self.records.lock().unwrap_or_else(PoisonError::into_inner).push(record);
    }

    fn sessions(&self) -> Option<std::sync::MutexGuard<'_, Sessions>> {
        self.sessions
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A connection's record before anything happened: status `Failed`.
fn blank(peer: SocketAddr) -> AcceptorRecord {
    AcceptorRecord {
        id: None,
        peer,
        received_bytes: 0,
        expected_received_bytes: 0,
        sent_bytes: 0,
        expected_sent_bytes: 0,
        status: ConnectionStatus::Failed,
        error: None,
        refusal: None,
        session: false,
    }
}

/// The record of a connection closed before anything was sent.
fn refused(peer: SocketAddr, refusal: Refusal, error: Option<String>) -> AcceptorRecord {
    AcceptorRecord {
        error: Some(error.unwrap_or_else(|| refusal.label().to_string())),
        refusal: Some(refusal),
        ..blank(peer)
    }
}

/// What the first message of a connection let through.
enum Admitted {
    Script(Script),
    /// A hello that opened a session: the answer to send.
    Session(Vec<u8>),
}

/// Reads and checks the first message under the preamble limits; nothing
/// is sent before it passes.
async fn first_message(stream: &mut TcpStream, shared: &Shared) -> Result<Admitted, (Refusal, String)> {
    let malformed = |e: PreambleError| (Refusal::Malformed, e.to_string());
    let head = preamble::read_head(stream).await.map_err(malformed)?;
    let signed = head[2] == AUTH_VERSION;
    match (shared.sessions.is_some(), signed) {
        (true, false) => return Err((Refusal::NoMac, Refusal::NoMac.label().into())),
        (false, true) => {
            return Err((
                Refusal::NoSecret,
                "a signed preamble or hello, but this acceptor has no secret".into(),
            ))
        }
        _ => {}
    }
    let message = preamble::read_rest(stream, head, shared.limits.max_preamble)
        .await
        .map_err(malformed)?;
    let session_refusal = |r: SessionRefusal| {
        let refusal = match r {
            SessionRefusal::WrongMac => Refusal::WrongMac,
            SessionRefusal::Replayed => Refusal::Replayed,
            SessionRefusal::UnknownSession => Refusal::UnknownSession,
        };
        (refusal, refusal.label().to_string())
    };
    let mut sessions = shared.sessions();
    match (message, sessions.as_mut()) {
        (Message::Plain(script), None) => Ok(Admitted::Script(script)),
        (
            Message::Hello {
                head,
                client_nonce,
                tag,
            },
            Some(sessions),
        ) if [head[0], head[1]] == HELLO_MAGIC => sessions
            .answer_hello(&head, &client_nonce, &tag)
            .map(Admitted::Session)
            .map_err(session_refusal),
        (
            Message::Signed {
                script,
                nonce,
                sequence,
                signed,
                tag,
            },
            Some(sessions),
        ) => {
            if !sessions.secret().verify(&[&signed], &tag) {
                return Err(session_refusal(SessionRefusal::WrongMac));
            }
            sessions.admit(&nonce, sequence).map_err(session_refusal)?;
            Ok(Admitted::Script(script))
        }
        _ => Err((Refusal::Malformed, "unexpected message".into())),
    }
}

/// Runs the acceptor side of one connection; `_slot` holds its place
/// among the open connections until it ends.
async fn serve(stream: &mut TcpStream, peer: SocketAddr, shared: &Shared, _slot: Slot) -> AcceptorRecord {
    let limit = shared.limits.preamble_timeout;
    let script = match timeout(limit, first_message(stream, shared)).await {
        Err(_) => return refused(peer, Refusal::Timeout, Some(format!("no preamble within {limit:?}"))),
        Ok(Err((refusal, error))) => return refused(peer, refusal, Some(error)),
        Ok(Ok(Admitted::Session(answer))) => {
            let mut record = blank(peer);
            record.session = true;
            match stream.write_all(&answer).await {
                Ok(()) => record.status = ConnectionStatus::Complete,
                Err(e) => record.error = Some(format!("answering the hello: {e}")),
            }
            return record;
        }
        Ok(Ok(Admitted::Script(script))) => script,
    };
    let asked = script.bytes(Side::Acceptor);
    if asked > shared.limits.bytes_per_connection {
        let error = format!(
            "the preamble asks for {asked} bytes; one connection may have {}",
            shared.limits.bytes_per_connection
        );
        return refused(peer, Refusal::ConnectionBytes, Some(error));
    }
    if shared.counters.exhausted() {
        return refused(peer, Refusal::TotalBytes, None);
    }
    run_script(stream, peer, &script, &shared.counters).await
}

async fn run_script(stream: &mut TcpStream, peer: SocketAddr, script: &Script, counters: &Counters) -> AcceptorRecord {
    let mut record = AcceptorRecord {
        id: Some(script.id),
        expected_received_bytes: script.bytes(Side::Initiator),
        expected_sent_bytes: script.bytes(Side::Acceptor),
        ..blank(peer)
    };
    // The window can only be applied now, after the handshake: the kernel
    // chose the window scale from the listener's (default, large) buffer,
    // which leaves room for any smaller window set here.
    if let Some(w) = script.window {
        let fd = stream.as_raw_fd();
        let applied = sys::set_recv_buffer(fd, w.acceptor).and_then(|()| sys::set_send_buffer(fd, w.initiator));
        if let Err(e) = applied {
            record.error = Some(format!("setting socket buffers: {e}"));
        }
    }
    if let Err(e) = stream.set_nodelay(true) {
        record.error.get_or_insert(format!("setting TCP_NODELAY: {e}"));
    }
    let outcome = run_side(
        stream,
        &script.adus,
        Side::Acceptor,
        script.mode,
        Instant::now(),
        Some(counters),
    )
    .await;
    record.received_bytes = outcome.received;
    record.sent_bytes = outcome.sent;
    if let Some(e) = outcome.error {
        record.error.get_or_insert(e.to_string());
    }
    record.status = if record.error.is_none()
        && record.received_bytes == record.expected_received_bytes
        && record.sent_bytes == record.expected_sent_bytes
    {
        ConnectionStatus::Complete
    } else {
        ConnectionStatus::Short
    };
    record
}
