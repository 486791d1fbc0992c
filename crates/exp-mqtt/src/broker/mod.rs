//! The embedded broker: an MQTT 3.1.1 broker on 127.0.0.1, in-process, on
//! one thread of its own (`exp-mqtt-broker-<port>`), so its CPU time is
//! apart from the runner's.
//!
//! - It binds port 0 when no port is asked for and reports the port it got:
//!   no free-port race.
//! - Dropping [`EmbeddedBroker`] stops it: its thread ends, and with it every
//!   connection.
//! - Accepted sockets get TCP_NODELAY, so acknowledgements never wait for
//!   Nagle's algorithm.
//! - Its listen backlog is 4,096 (capped by `net.core.somaxconn`), so a fleet
//!   connecting in a burst waits in the backlog instead of being dropped.
//! - When the process has no descriptor left, accepting waits 20 ms and
//!   retries instead of spinning (see `fds.rs`).
//!
//! What it implements: QoS 0, 1 and 2 both ways, wildcard subscriptions,
//! persistent sessions, wills and keep-alive ([`router`] says how). It does
//! not store retained messages and takes no credentials: it is a broker for
//! the fleet of the same process, on loopback.

mod connection;
mod router;
mod topic;

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::url::Endpoint;
use crate::MqttError;
use connection::Shared;
use router::{Limits, Router};

/// Sizing of the embedded broker.
#[derive(Debug, Clone)]
pub struct BrokerOptions {
    /// Port to listen on; `None` picks a free one.
    pub port: Option<u16>,
    /// Clients the broker admits at once (devices plus subscribers plus slack).
    pub max_connections: usize,
    /// Largest PUBLISH payload, in bytes.
    pub max_payload_bytes: usize,
    /// Unacknowledged QoS 1/2 messages the broker sends a client at once.
    pub max_inflight: usize,
}

impl BrokerOptions {
    /// Options sized for `devices` clients with the plan's inflight and packet limits.
    pub fn for_fleet(devices: u32, max_inflight: u16, max_packet_bytes: u64) -> Self {
        BrokerOptions {
            port: None,
            // Subscribers, the version probe and clients reconnecting under
            // a new client id need headroom.
            max_connections: (devices as usize).saturating_mul(2).saturating_add(64),
            max_payload_bytes: usize::try_from(max_packet_bytes).unwrap_or(usize::MAX),
            max_inflight: usize::from(max_inflight.max(1)),
        }
    }
}

impl Default for BrokerOptions {
    fn default() -> Self {
        BrokerOptions::for_fleet(1000, 100, 256 * 1024)
    }
}

/// A running embedded broker; dropping it stops it.
#[derive(Debug)]
pub struct EmbeddedBroker {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// Connections waiting to be accepted (the kernel caps it at `somaxconn`).
const BACKLOG: u32 = 4096;

/// Messages kept per session beyond its inflight window: a subscriber
/// receiving a whole fleet's messages needs room while it catches up.
const MAX_QUEUED: usize = 200_000;

impl EmbeddedBroker {
    /// Starts the broker on 127.0.0.1 (on `options.port`, or a port the
    /// kernel picks); it accepts connections when this returns.
    pub fn start(options: BrokerOptions) -> Result<EmbeddedBroker, MqttError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, options.port.unwrap_or(0)));
        let listen_error = |source| MqttError::BrokerListen { addr, source };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(MqttError::BrokerThread)?;
        let listener = {
            let _context = runtime.enter();
            let socket = tokio::net::TcpSocket::new_v4().map_err(listen_error)?;
            // A fixed port whose last broker's connections are in TIME_WAIT binds again.
            socket.set_reuseaddr(true).map_err(listen_error)?;
            socket.bind(addr).map_err(listen_error)?;
            socket.listen(BACKLOG).map_err(listen_error)?
        };
        let addr = listener.local_addr().map_err(listen_error)?;
        let shared = Arc::new(Shared {
            router: Mutex::new(Router::new(Limits {
                max_connections: options.max_connections,
                max_inflight: options.max_inflight.clamp(1, usize::from(u16::MAX - 1)),
                max_queued: MAX_QUEUED,
            })),
            // Remaining length: topic (up to 65,535 bytes and its length), packet id, payload.
            max_packet: options.max_payload_bytes.saturating_add(2 + 65_535 + 2),
        });
        let (stop, stopped) = oneshot::channel();
        let thread = thread::Builder::new()
            .name(format!("exp-mqtt-broker-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    tokio::select! {
                        () = accept_loop(listener, shared) => {}
                        _ = stopped => {}
                    }
                });
                // Dropping the runtime here ends every connection task and closes its socket.
            })
            .map_err(MqttError::BrokerThread)?;
        Ok(EmbeddedBroker {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address the broker listens on (always 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The broker as an `mqtt://` endpoint for devices and subscribers.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint::tcp(self.addr.ip().to_string(), self.addr.port())
    }
}

impl Drop for EmbeddedBroker {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept_loop(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    let mut links = 0u64;
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                links += 1;
                tokio::spawn(connection::serve(stream, Arc::clone(&shared), links));
            }
            // Out of descriptors: the connection stays in the backlog until
            // one is closed; retrying at once would spin a core.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
                ) =>
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // A connection reset before it was accepted: the next one is unaffected.
            Err(_) => {}
        }
    }
}

/// A port that was free a moment ago, for starting an external broker (tests
/// and benches start Mosquitto on it); another process may take it first.
pub fn free_port() -> Result<u16, MqttError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(MqttError::FreePort)?;
    Ok(listener.local_addr().map_err(MqttError::FreePort)?.port())
}
