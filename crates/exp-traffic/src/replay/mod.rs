//! Replay of connection vectors on real TCP sockets.
//!
//! [`replay`] runs the initiating side of every connection, starting each at
//! its scheduled time; an [`Acceptor`] (in-process or `expc serve` on another
//! host) runs the accepting side. The initiator opens every connection with
//! a [preamble](preamble) carrying the script, so the acceptor needs no copy
//! of the trace and checks the bytes it receives against the plan. Against
//! an acceptor with a secret, preambles are signed for a session
//! ([`auth`]); the acceptor enforces its [`Limits`] whatever they ask.
//!
//! Execution semantics are in `exec`, scheduling and source-port spreading
//! in `initiator`, the descriptor preflight in `preflight`, what gets
//! measured in [`records`](ConnectionRecord), and how `w` windows become
//! socket buffers (Linux doubles them) in `sys`.

mod acceptor;
pub mod auth;
mod exec;
mod initiator;
mod limits;
mod open_error;
pub mod preamble;
mod preflight;
mod records;
mod stop;
mod sys;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

pub use acceptor::{Acceptor, AcceptorConfig};
pub use auth::{AuthError, ClientSession, Secret};
pub use initiator::replay;
pub use limits::Limits;
pub use preamble::ScriptError;
pub use preflight::{planned_lifetime_us, planned_peak_open};
pub use records::{
    AcceptorRecord, ActiveSample, ConnectionRecord, ConnectionStatus, EpochRecord, Interruption, Refusal, ReplayResult,
    TcpInfo, ThroughputSample,
};
pub use stop::StopSignal;

use crate::cvec::Connection;

/// Told about every flow before it connects, so a packet-path stage (RTT
/// emulation) can register it; the value returned is recorded as the
/// connection's assigned RTT.
pub trait FlowHook: Send + Sync {
    /// Called with the bound local address, the target and the connection
    /// before `connect`; returns the RTT assigned to the flow, microseconds.
    fn register(&self, local: SocketAddr, peer: SocketAddr, connection: &Connection) -> Option<u64>;

    /// Called once the connection has closed (or failed to open).
    fn unregister(&self, _local: SocketAddr, _peer: SocketAddr) {}
}

/// How to replay.
#[derive(Clone)]
pub struct ReplayConfig {
    /// The acceptor's address.
    pub target: SocketAddr,
    /// Source addresses; connection `i` binds to entry `i mod n`, port 0.
    /// Empty leaves the choice to the kernel (one address's port range).
    pub source_addresses: Vec<IpAddr>,
    /// Receiver window for every connection (both sides), bytes; `None`
    /// uses each connection's `w` line, and kernel autotuning without one.
    pub window: Option<u32>,
    pub flow_hook: Option<Arc<dyn FlowHook>>,
    /// The session every preamble is signed for; unsigned without one (an
    /// acceptor without a secret).
    pub session: Option<Arc<ClientSession>>,
    /// Measurement window, from the origin; rows outside are marked.
    pub measure: Option<Range<Duration>>,
    /// Length of the throughput and active-connection intervals.
    pub interval: Duration,
    /// Structure label copied into every connection row.
    pub structure: String,
    /// Longest a connect may take.
    pub connect_timeout: Duration,
    /// Longest a connection may run once connected (a peer that stops
    /// responding would otherwise hold the replay forever); `None` waits.
    pub connection_timeout: Option<Duration>,
    /// Descriptors one open connection costs this process: 2 with the
    /// acceptor in-process, 1 against a remote one.
    pub fds_per_connection: u64,
    /// Ends the replay early when fired (Ctrl-C): see `deadline`.
    pub stop: Option<StopSignal>,
    /// Ends the replay early at this instant (the end of the window it runs
    /// in). Either way no more connections start, running ones are cut
    /// (closed, their records keeping what was measured, marked
    /// [`Interruption::Cut`]), those never started get a record marked
    /// [`Interruption::NotStarted`], and `replay` returns normally.
    pub deadline: Option<std::time::Instant>,
    /// Counted as connections start and end, for whoever watches the
    /// replay while it runs (`expc run --metrics`); only atomics are bumped.
    pub counts: Option<Arc<ConnectionCounts>>,
}

/// Connections of a replay so far: started (the scheduler reached them)
/// and finished (recorded, whatever their status); open is the difference.
#[derive(Debug, Default)]
pub struct ConnectionCounts {
    pub started: std::sync::atomic::AtomicU64,
    pub finished: std::sync::atomic::AtomicU64,
}

impl ConnectionCounts {
    /// Counts a connection started; it counts as finished when the
    /// returned guard is dropped, however its task ends.
    fn start(&self) -> Counted<'_> {
        self.started.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Counted(self)
    }
}

struct Counted<'a>(&'a ConnectionCounts);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl ReplayConfig {
    /// In-process defaults: 1 s intervals, no window override, and for a
    /// loopback IPv4 target eight source addresses 127.0.0.1–127.0.0.8.
    pub fn new(target: SocketAddr) -> ReplayConfig {
        let source_addresses = if target.ip().is_loopback() && target.is_ipv4() {
            loopback_sources(8)
        } else {
            Vec::new()
        };
        ReplayConfig {
            target,
            source_addresses,
            window: None,
            flow_hook: None,
            session: None,
            measure: None,
            interval: Duration::from_secs(1),
            structure: String::new(),
            connect_timeout: Duration::from_secs(10),
            connection_timeout: None,
            fds_per_connection: 2,
            stop: None,
            deadline: None,
            counts: None,
        }
    }
}

impl std::fmt::Debug for ReplayConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayConfig")
            .field("target", &self.target)
            .field("source_addresses", &self.source_addresses)
            .field("window", &self.window)
            .field("flow_hook", &self.flow_hook.as_ref().map(|_| "FlowHook"))
            .field("signed", &self.session.is_some())
            .field("measure", &self.measure)
            .field("interval", &self.interval)
            .field("structure", &self.structure)
            .field("connect_timeout", &self.connect_timeout)
            .field("connection_timeout", &self.connection_timeout)
            .field("fds_per_connection", &self.fds_per_connection)
            .field("stop", &self.stop)
            .field("deadline", &self.deadline)
            .field("counts", &self.counts)
            .finish()
    }
}

/// `count` loopback addresses from 127.0.0.1 up (at most 254).
pub fn loopback_sources(count: u8) -> Vec<IpAddr> {
    (1..=count.min(254))
        .map(|last| IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)))
        .collect()
}

/// Why a replay or an acceptor could not start.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("listening on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("connection {index}: {source}")]
    InvalidConnection { index: usize, source: ScriptError },
    #[error("raising the open-files limit: {0}")]
    OpenFilesLimit(std::io::Error),
    #[error(
        "up to {peak} connections are planned to be open at once, needing {needed} file \
         descriptors, but the open-files limit is {limit} (raise the hard limit, `ulimit -Hn`)"
    )]
    TooManyOpen { peak: u64, needed: u64, limit: u64 },
    #[error("source address {address} and target {target} are of different IP families")]
    SourceFamily { address: IpAddr, target: SocketAddr },
    #[error("starting the scheduler thread: {0}")]
    Scheduler(std::io::Error),
    #[error("reading random bytes for the acceptor's sessions: {0}")]
    Random(std::io::Error),
}
