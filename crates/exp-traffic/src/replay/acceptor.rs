//! The acceptor: a server that runs the accepting side of replayed
//! connections. It needs no trace: each connection's preamble carries the
//! script. Usable in-process (next to `replay`) and by `expc serve`.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::{timeout, Instant};

use super::exec::run_side;
use super::preamble;
use super::records::{AcceptorRecord, ConnectionStatus};
use super::sys;
use super::ReplayError;
use crate::cvec::Side;

/// How long a new connection may take to deliver its preamble.
const PREAMBLE_TIMEOUT: Duration = Duration::from_secs(30);
/// Pending connections the kernel queues (capped by `net.core.somaxconn`):
/// bursts of new connections must not overflow into SYN retries.
const BACKLOG: u32 = 4096;
/// Pause after a failed accept (out of file descriptors) before retrying.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(5);

/// A running acceptor; dropping it stops accepting (connections already
/// accepted finish on their own).
#[derive(Debug)]
pub struct Acceptor {
    local: SocketAddr,
    records: Arc<Mutex<Vec<AcceptorRecord>>>,
    task: JoinHandle<()>,
}

impl Acceptor {
    /// Listens on `addr` (port 0 picks one) and starts accepting on the
    /// current tokio runtime.
    pub async fn bind(addr: SocketAddr) -> Result<Acceptor, ReplayError> {
        let listener = listen(addr).map_err(|source| ReplayError::Listen { addr, source })?;
        let local = listener
            .local_addr()
            .map_err(|source| ReplayError::Listen { addr, source })?;
        let records = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&records)));
        Ok(Acceptor { local, records, task })
    }

    /// The address initiators connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Records of the connections finished since the last call.
    pub fn take_records(&self) -> Vec<AcceptorRecord> {
        std::mem::take(&mut *self.records.lock().unwrap_or_else(PoisonError::into_inner))
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

async fn accept_loop(listener: TcpListener, records: Arc<Mutex<Vec<AcceptorRecord>>>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let records = Arc::clone(&records);
                tokio::spawn(async move {
                    let record = serve(stream, peer).await;
                    records.lock().unwrap_or_else(PoisonError::into_inner).push(record);
                });
            }
            // EMFILE and friends: the preflight should prevent them; if they
            // happen anyway, the initiator sees its connect stall and the
            // acceptor keeps going once descriptors free up.
            Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
        }
    }
}

/// Runs the acceptor side of one connection.
async fn serve(mut stream: TcpStream, peer: SocketAddr) -> AcceptorRecord {
    let mut record = AcceptorRecord {
        id: None,
        peer,
        received_bytes: 0,
        expected_received_bytes: 0,
        sent_bytes: 0,
        expected_sent_bytes: 0,
        status: ConnectionStatus::Failed,
        error: None,
    };
    let script = match timeout(PREAMBLE_TIMEOUT, preamble::read(&mut stream)).await {
        Ok(Ok(script)) => script,
        Ok(Err(e)) => {
            record.error = Some(e.to_string());
            return record;
        }
        Err(_) => {
            record.error = Some(format!("no preamble within {PREAMBLE_TIMEOUT:?}"));
            return record;
        }
    };
    record.id = Some(script.id);
    record.expected_received_bytes = script.bytes(Side::Initiator);
    record.expected_sent_bytes = script.bytes(Side::Acceptor);
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
        &mut stream,
        &script.adus,
        Side::Acceptor,
        script.mode,
        Instant::now(),
        None,
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
