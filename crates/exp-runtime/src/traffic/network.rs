//! Where the two sides of a replay run: both in this process across
//! loopback, both in this process across two network namespaces joined by
//! the delay stage (RTT emulation, bottleneck, loss; needs root), or the
//! initiator here against an `expc serve` acceptor elsewhere.
//!
//! Every preamble is signed: in-process acceptors make their own secret and
//! session (nothing to configure, and nobody else on the machine can use
//! them); against `expc serve` the run opens a session with the secret from
//! `secret_env`, or sends unsigned preambles without one.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use exp_plan::Traffic;
use exp_traffic::cvec::Connection;
use exp_traffic::emulate::{
    Bottleneck, Capacity, Direction, EmulateError, FlowKey, FlowParams, Protocol, StageConfig, Testbed,
};
use exp_traffic::replay::{
    self, Acceptor, AuthError, ClientSession, FlowHook, ReplayConfig, ReplayError, ReplayResult, Secret,
};
use tokio::sync::oneshot;

/// Why the sides of a replay could not be set up, run or stopped.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    #[error("environment variable `{0}` is not set")]
    SecretUnset(String),
    #[error("environment variable `{var}`: {source}")]
    Secret { var: String, source: AuthError },
    #[error("server `{server}`: {source}")]
    Resolve { server: String, source: std::io::Error },
    #[error("server `{0}` resolves to no address")]
    NoAddress(String),
    #[error("{0}")]
    Session(AuthError),
    #[error("{0}")]
    Replay(ReplayError),
    #[error("{0}")]
    Emulate(EmulateError),
    #[error("measuring the delay stage's capacity: {0}")]
    Capacity(EmulateError),
    /// A side's runtime or thread could not start: `what` it was.
    #[error("starting the {what}: {source}")]
    Start { what: &'static str, source: std::io::Error },
    /// The acceptor's runtime in its namespace could not start.
    #[error("acceptor: {0}")]
    Acceptor(std::io::Error),
    #[error("the acceptor thread ended before listening")]
    AcceptorGone,
    #[error("the replay thread ended without a result")]
    ReplayLost,
    /// A thread that panicked: which, and the panic as tokio reports it.
    #[error("the {what} thread panicked{}", .detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
    Panicked { what: &'static str, detail: Option<String> },
}

/// Namespaces are named `expc-PID-N-i` and `expc-PID-N-a`.
const NAMESPACE_PREFIX: &str = "expc";
/// Worker threads of the acceptor's runtime inside its namespace.
const NAMESPACE_WORKERS: usize = 2;
/// Worker threads of each window's replay runtime.
const REPLAY_WORKERS: usize = 2;

/// The acceptor side and how to reach it.
pub enum Network {
    Loopback {
        acceptor: Acceptor,
        sources: Vec<IpAddr>,
        session: Arc<ClientSession>,
    },
    Server {
        target: SocketAddr,
        session: Option<Arc<ClientSession>>,
    },
    Namespaces(Box<Emulated>),
}

/// The testbed and the acceptor running inside its acceptor namespace.
pub struct Emulated {
    pub testbed: Arc<Testbed>,
    target: SocketAddr,
    session: Arc<ClientSession>,
    hook: Arc<StageHook>,
    stop_acceptor: Option<oneshot::Sender<()>>,
    acceptor_thread: Option<AcceptorThread>,
    /// Trial time (ns) when the testbed started: backlog samples count from it.
    pub started_ns: u64,
    /// The stage's own capacity, measured first when there is a bottleneck.
    pub capacity: Option<Capacity>,
}

type AcceptorThread = std::thread::JoinHandle<Result<Result<(), std::io::Error>, EmulateError>>;

/// How long opening a session with `expc serve` may take.
const SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the stage's capacity is measured before a bottleneck run.
const CAPACITY_PROBE: Duration = Duration::from_millis(500);

/// Whether the workload needs the namespaces and the delay stage.
pub fn needs_namespaces(traffic: &Traffic) -> bool {
    traffic.server.is_none() && emulates(traffic)
}

/// Whether the workload asks for anything of the delay stage.
pub fn emulates(traffic: &Traffic) -> bool {
    traffic.network == "namespaces"
        || super::vectors::emulates_rtt(&traffic.rtt)
        || traffic.bottleneck_bit_per_s.is_some()
        || traffic.apply_loss
}

/// The secret in environment variable `var` (preflight checked it).
pub fn secret(var: &str) -> Result<Secret, NetworkError> {
    let text = std::env::var(var).map_err(|_| NetworkError::SecretUnset(var.to_string()))?;
    Secret::from_text(&text).map_err(|source| NetworkError::Secret {
        var: var.to_string(),
        source,
    })
}

/// Resolves `server = "host:port"`.
pub fn resolve(server: &str) -> Result<SocketAddr, NetworkError> {
    server
        .to_socket_addrs()
        .map_err(|source| NetworkError::Resolve {
            server: server.to_string(),
            source,
        })?
        .next()
        .ok_or_else(|| NetworkError::NoAddress(server.to_string()))
}

impl Network {
    pub async fn start(traffic: &Traffic, seed: u64, now_ns: u64) -> Result<Network, NetworkError> {
        if let Some(server) = &traffic.server {
            let target = resolve(server)?;
            let session = match &traffic.secret_env {
                Some(var) => {
                    let secret = secret(var)?;
                    let session = ClientSession::open(target, secret, SESSION_TIMEOUT)
                        .await
                        .map_err(NetworkError::Session)?;
                    Some(Arc::new(session))
                }
                None => None,
            };
            return Ok(Network::Server { target, session });
        }
        if needs_namespaces(traffic) {
            let traffic = traffic.clone();
            return tokio::task::spawn_blocking(move || Emulated::start(&traffic, seed, now_ns))
                .await
                .map_err(|e| NetworkError::Panicked {
                    what: "testbed",
                    detail: Some(e.to_string()),
                })?
                .map(|e| Network::Namespaces(Box::new(e)));
        }
        let (acceptor, session) = Acceptor::bind_private(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .map_err(NetworkError::Replay)?;
        let count = u8::try_from(traffic.source_addresses).unwrap_or(u8::MAX);
        Ok(Network::Loopback {
            acceptor,
            sources: replay::loopback_sources(count),
            session,
        })
    }

    /// The replay configuration for this network (target, sources, hook).
    pub fn config(&self, traffic: &Traffic) -> ReplayConfig {
        let target = match self {
            Network::Loopback { acceptor, .. } => acceptor.local_addr(),
            Network::Server { target, .. } => *target,
            Network::Namespaces(e) => e.target,
        };
        let mut config = ReplayConfig::new(target);
        config.window = traffic.window_bytes.map(|w| u32::try_from(w).unwrap_or(u32::MAX));
        config.structure = traffic.structure.clone();
        match self {
            Network::Loopback { sources, session, .. } => {
                config.source_addresses = sources.clone();
                config.session = Some(Arc::clone(session));
            }
            Network::Server { session, .. } => {
                config.fds_per_connection = 1;
                config.session = session.clone();
            }
            Network::Namespaces(e) => {
                config.source_addresses = vec![IpAddr::V4(e.testbed.address(exp_traffic::emulate::Side::Initiator))];
                config.flow_hook = Some(e.hook.clone());
                config.session = Some(Arc::clone(&e.session));
            }
        }
        config
    }

    /// Replays one window's connections on a runtime of its own, on a
    /// thread of its own (inside the initiator's namespace when emulating).
    /// When `stop` resolves (sent or dropped) the replay is abandoned and
    /// that runtime shut down, which ends its connections at once; the
    /// result is then `None`.
    pub async fn replay(
        &self,
        connections: Vec<Connection>,
        config: ReplayConfig,
        stop: oneshot::Receiver<()>,
    ) -> Result<Option<ReplayResult>, NetworkError> {
        let job = move || -> Result<Option<ReplayResult>, NetworkError> {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(REPLAY_WORKERS)
                .enable_all()
                .build()
                .map_err(|source| NetworkError::Start {
                    what: "replay runtime",
                    source,
                })?;
            let result = runtime.block_on(async move {
                tokio::select! {
                    result = replay::replay(connections, config) => Some(result),
                    _ = stop => None,
                }
            });
            runtime.shutdown_background();
            result.transpose().map_err(NetworkError::Replay)
        };
        let (tx, rx) = oneshot::channel();
        let send = move || {
            let _ = tx.send(job());
        };
        match self {
            Network::Namespaces(e) => {
                // Detached: the result comes back through the channel.
                drop(
                    e.testbed
                        .spawn_in(exp_traffic::emulate::Side::Initiator, send)
                        .map_err(NetworkError::Emulate)?,
                );
            }
            _ => {
                drop(
                    std::thread::Builder::new()
                        .name("expc-replay".into())
                        .spawn(send)
                        .map_err(|source| NetworkError::Start {
                            what: "replay thread",
                            source,
                        })?,
                );
            }
        }
        rx.await.map_err(|_| NetworkError::ReplayLost)?
    }

    /// Stops the acceptor and removes the namespaces (by dropping the testbed).
    pub async fn stop(self) -> Result<(), NetworkError> {
        if let Network::Namespaces(mut e) = self {
            if let Some(stop) = e.stop_acceptor.take() {
                let _ = stop.send(());
            }
            let thread = e.acceptor_thread.take();
            let joined = tokio::task::spawn_blocking(move || thread.map(|t| t.join()))
                .await
                .map_err(|e| NetworkError::Panicked {
                    what: "acceptor",
                    detail: Some(e.to_string()),
                })?;
            drop(e);
            match joined {
                Some(Ok(Ok(Ok(())))) | None => {}
                Some(Ok(Ok(Err(error)))) => return Err(NetworkError::Acceptor(error)),
                Some(Ok(Err(error))) => return Err(NetworkError::Emulate(error)),
                Some(Err(_)) => {
                    return Err(NetworkError::Panicked {
                        what: "acceptor",
                        detail: None,
                    })
                }
            }
        }
        Ok(())
    }
}

impl Emulated {
    fn start(traffic: &Traffic, seed: u64, now_ns: u64) -> Result<Emulated, NetworkError> {
        let config = StageConfig {
            default: FlowParams::with_rtt(Duration::ZERO),
            bottleneck: traffic.bottleneck_bit_per_s.map(|rate| Bottleneck {
                rate_bits_per_s: rate,
                queue_bytes: usize::try_from(traffic.queue_bytes).unwrap_or(usize::MAX),
            }),
            seed,
        };
        // Namespaces of expc processes that died without removing theirs
        // (kill -9) would otherwise pile up.
        let _ = exp_traffic::emulate::cleanup_stale_namespaces(NAMESPACE_PREFIX);
        // A bottleneck near the stage's own limit would measure the stage:
        // its capacity goes into `traffic_stage` beside the results.
        let capacity = match traffic.bottleneck_bit_per_s {
            Some(_) => Some(
                exp_traffic::emulate::measure_capacity(NAMESPACE_PREFIX, CAPACITY_PROBE)
                    .map_err(NetworkError::Capacity)?,
            ),
            None => None,
        };
        let testbed = Arc::new(Testbed::create(NAMESPACE_PREFIX, config).map_err(NetworkError::Emulate)?);
        let address = testbed.address(exp_traffic::emulate::Side::Acceptor);
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let thread = testbed
            .spawn_in(exp_traffic::emulate::Side::Acceptor, move || {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(NAMESPACE_WORKERS)
                    .enable_all()
                    .build()?;
                runtime.block_on(async move {
                    // A failed bind goes back through the channel: the
                    // caller reports it, and this thread has nothing to add.
                    match Acceptor::bind_private(SocketAddr::from((address, 0))).await {
                        Err(error) => {
                            let _ = addr_tx.send(Err(error));
                        }
                        Ok((acceptor, session)) => {
                            let _ = addr_tx.send(Ok((acceptor.local_addr(), session)));
                            let _ = stop_rx.await;
                            drop(acceptor);
                        }
                    }
                    Ok(())
                })
            })
            .map_err(NetworkError::Emulate)?;
        let (target, session) = addr_rx
            .recv()
            .map_err(|_| NetworkError::AcceptorGone)?
            .map_err(NetworkError::Replay)?;
        Ok(Emulated {
            hook: Arc::new(StageHook {
                testbed: testbed.clone(),
                apply_loss: traffic.apply_loss,
            }),
            testbed,
            target,
            session,
            stop_acceptor: Some(stop_tx),
            acceptor_thread: Some(thread),
            started_ns: now_ns,
            capacity,
        })
    }
}

/// Registers every flow with the delay stage at the RTT the executor put in
/// the connection's `r` (and its loss rates with `apply_loss`).
struct StageHook {
    testbed: Arc<Testbed>,
    apply_loss: bool,
}

fn key(local: SocketAddr, peer: SocketAddr) -> Option<FlowKey> {
    match (local, peer) {
        (SocketAddr::V4(initiator), SocketAddr::V4(acceptor)) => Some(FlowKey {
            protocol: Protocol::Tcp,
            initiator,
            acceptor,
        }),
        _ => None,
    }
}

impl FlowHook for StageHook {
    fn register(&self, local: SocketAddr, peer: SocketAddr, connection: &Connection) -> Option<u64> {
        let rtt_us = connection.min_rtt_us.unwrap_or(0);
        let mut params = FlowParams::with_rtt(Duration::from_micros(rtt_us));
        if let (true, Some(loss)) = (self.apply_loss, connection.loss) {
            params.loss_to_acceptor = loss.initiator;
            params.loss_to_initiator = loss.acceptor;
        }
        self.testbed.flows().register(key(local, peer)?, params).ok()?;
        Some(rtt_us)
    }

    fn unregister(&self, local: SocketAddr, peer: SocketAddr) {
        if let Some(key) = key(local, peer) {
            self.testbed.flows().unregister(&key);
        }
    }
}

/// The queue's directions with their table labels.
pub const DIRECTIONS: [(Direction, &str); 2] = [
    (Direction::ToAcceptor, "to_acceptor"),
    (Direction::ToInitiator, "to_initiator"),
];
