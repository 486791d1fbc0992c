//! The initiator: starts every connection at its scheduled time, runs the
//! initiating side, and gathers the records.
//!
//! Start times are absolute deadlines from one origin, kept by a dedicated
//! scheduler thread: it sleeps with the OS timer (tens of microseconds of
//! slack, where tokio's timer wheel has a millisecond's) towards each
//! connection's `origin + start_us`, recomputing the remaining time from the
//! clock each time, so lateness never accumulates into drift. Each due
//! connection becomes a tokio task on the caller's runtime.
//!
//! Source ports: each connection's socket is bound to source address
//! `i mod n` of the configured list, port 0, so the ephemeral range
//! (~28,000 ports) is available once per address; with SO_REUSEADDR the
//! kernel may also hand out ports whose previous connection is in
//! TIME_WAIT. Eight 127.0.0.x addresses sustain well over 3,000 new
//! connections per second indefinitely on loopback.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{timeout, Instant};

use super::exec::{exchanges, run_side_until, Counters};
use super::open_error::OpenError;
use super::preamble::{self, Script};
use super::records::{
    active_series, in_window, ConnectionRecord, ConnectionStatus, EpochRecord, Interruption, ReplayResult,
    ThroughputSample,
};
use super::{preflight, sys, ReplayConfig, ReplayError, StopSignal};
use crate::cvec::{Connection, Mode, Side};

/// Time between the call and the origin: lets the first connections be
/// scheduled on time rather than already late.
const LEAD: Duration = Duration::from_millis(20);
/// Longest single sleep of the scheduler, so a dropped replay stops it soon.
const SCHEDULER_NAP: Duration = Duration::from_millis(50);

struct Shared {
    connections: Vec<Connection>,
    config: ReplayConfig,
    counters: Counters,
    origin: Instant,
    /// Fired by the caller's stop, the deadline, or dropping the replay.
    stop: StopSignal,
}

type Finished = (ConnectionRecord, Vec<EpochRecord>);

/// Fires the replay's stop when dropped: the scheduler thread stops when
/// the replay future is dropped mid-way.
struct StopOnDrop(StopSignal);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Replays `connections` against the acceptor at `config.target`.
/// Must be called on a multi-threaded tokio runtime.
pub async fn replay(connections: Vec<Connection>, config: ReplayConfig) -> Result<ReplayResult, ReplayError> {
    if let Some(address) = config
        .source_addresses
        .iter()
        .find(|a| a.is_ipv4() != config.target.is_ipv4())
    {
        return Err(ReplayError::SourceFamily {
            address: *address,
            target: config.target,
        });
    }
    let nofile_limit = preflight::check(&connections, config.fds_per_connection)?;
    let total = connections.len();
    let origin = Instant::now() + LEAD;
    let origin_wall = SystemTime::now() + LEAD;
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| connections[i].start_us);
    let stop = StopSignal::new();
    let shared = Arc::new(Shared {
        connections,
        config,
        counters: Counters::default(),
        origin,
        stop: stop.clone(),
    });
    let _stop_on_drop = StopOnDrop(stop.clone());
    // Forwards the caller's stop and the deadline to the replay's own
    // signal; ends with the replay (its runtime) at the latest.
    let forward = (shared.config.stop.is_some() || shared.config.deadline.is_some()).then(|| {
        let external = shared.config.stop.clone();
        let deadline = shared.config.deadline.map(Instant::from_std);
        let stop = stop.clone();
        tokio::spawn(async move {
            let by_caller = async {
                match &external {
                    Some(signal) => signal.stopped().await,
                    None => std::future::pending().await,
                }
            };
            let by_deadline = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = by_caller => {}
                () = by_deadline => {}
            }
            stop.stop();
        })
    });

    let (done_tx, done_rx) = oneshot::channel();
    let sampler = tokio::spawn(sample_throughput(Arc::clone(&shared), done_rx));
    let (tx, mut rx) = mpsc::unbounded_channel::<Finished>();
    spawn_scheduler(Arc::clone(&shared), order, tx).map_err(ReplayError::Scheduler)?;

    let mut rows = Vec::with_capacity(total);
    let mut epochs = Vec::new();
    while let Some((row, mut exchanges)) = rx.recv().await {
        rows.push(row);
        epochs.append(&mut exchanges);
    }
    if let Some(forward) = forward {
        forward.abort();
    }
    let _ = done_tx.send(());
    let throughput = sampler.await.unwrap_or_default();
    rows.sort_by_key(|r| r.id);
    epochs.sort_by_key(|e| (e.connection_id, e.index));
    let active_connections = active_series(&rows, shared.config.interval, &shared.config.measure);
    Ok(ReplayResult {
        origin: origin_wall,
        connections: rows,
        epochs,
        active_connections,
        throughput,
        nofile_limit,
    })
}

/// Starts the scheduler thread. The record channel closes when it and every
/// connection task it spawned are done. Once stopped it starts nothing and
/// sends a `NotStarted` record for every connection left.
fn spawn_scheduler(shared: Arc<Shared>, order: Vec<usize>, tx: mpsc::UnboundedSender<Finished>) -> std::io::Result<()> {
    let runtime = tokio::runtime::Handle::current();
    let origin = shared.origin.into_std();
    std::thread::Builder::new()
        .name("replay-scheduler".into())
        .spawn(move || {
            for (position, &index) in order.iter().enumerate() {
                let due = origin + Duration::from_micros(shared.connections[index].start_us);
                loop {
                    if shared.stop.is_stopped() {
                        for &left in &order[position..] {
                            let _ = tx.send((not_started(&shared, left), Vec::new()));
                        }
                        return;
                    }
                    let now = std::time::Instant::now();
                    if now >= due {
                        break;
                    }
                    std::thread::sleep((due - now).min(SCHEDULER_NAP));
                }
                let shared = Arc::clone(&shared);
                let tx = tx.clone();
                runtime.spawn(async move {
                    let finished = run_connection(&shared, index).await;
                    let _ = tx.send(finished);
                });
            }
        })
        .map(|_| ())
}

fn micros_since(origin: Instant, t: Instant) -> u64 {
    t.saturating_duration_since(origin).as_micros() as u64
}

/// The record of a connection the stop kept from starting.
fn not_started(shared: &Shared, index: usize) -> ConnectionRecord {
    let mut row = blank_record(shared, index, micros_since(shared.origin, Instant::now()));
    row.end_us = row.actual_start_us;
    row.error = Some("the replay was stopped before this connection started".into());
    row.interrupted = Some(Interruption::NotStarted);
    row
}

/// A connection's record before anything happened: status `Failed`.
fn blank_record(shared: &Shared, index: usize, actual_start_us: u64) -> ConnectionRecord {
    let connection = &shared.connections[index];
    let config = &shared.config;
    let script = Script::of(index as u64, connection, config.window);
    ConnectionRecord {
        id: index as u64,
        structure: config.structure.clone(),
        local: None,
        planned_start_us: connection.start_us,
        actual_start_us,
        first_byte_us: None,
        last_byte_us: None,
        end_us: 0,
        duration_us: 0,
        sent_bytes: 0,
        expected_sent_bytes: script.bytes(Side::Initiator),
        received_bytes: 0,
        expected_received_bytes: script.bytes(Side::Acceptor),
        epochs: 0,
        assigned_rtt_us: None,
        status: ConnectionStatus::Failed,
        error: None,
        tcp: None,
        in_window: in_window(&config.measure, connection.start_us),
        interrupted: None,
    }
}

/// Connects, sends the preamble, runs the initiator side and records it;
/// the replay's stop cuts it short (closing the socket), keeping what was
/// measured.
async fn run_connection(shared: &Shared, index: usize) -> Finished {
    let connection = &shared.connections[index];
    let config = &shared.config;
    let origin = shared.origin;
    let start = Instant::now();
    let script = Script::of(index as u64, connection, config.window);
    let _counted = config.counts.as_deref().map(super::ConnectionCounts::start);
    let mut row = blank_record(shared, index, micros_since(origin, start));
    let mut epochs = Vec::new();
    let opened = tokio::select! {
        opened = open(shared, index, &script, &mut row) => Some(opened),
        () = shared.stop.stopped() => None,
    };
    match opened {
        None => {
            row.error = Some("the replay was stopped while connecting".into());
            row.interrupted = Some(Interruption::Cut);
        }
        Some(Err(e)) => row.error = Some(e.to_string()),
        Some(Ok(mut stream)) => {
            let established = Instant::now();
            let timed_out = async {
                match config.connection_timeout {
                    Some(limit) => tokio::time::sleep(limit).await,
                    None => std::future::pending().await,
                }
            };
            let until = async {
                tokio::select! {
                    () = timed_out => {}
                    () = shared.stop.stopped() => {}
                }
            };
            let (mut outcome, cut) = run_side_until(
                &mut stream,
                &script.adus,
                Side::Initiator,
                script.mode,
                established,
                Some(&shared.counters),
                until,
            )
            .await;
            if cut && shared.stop.is_stopped() {
                row.interrupted = Some(Interruption::Cut);
                outcome.error.get_or_insert_with(|| {
                    std::io::Error::new(std::io::ErrorKind::Interrupted, "the replay was stopped")
                });
            } else if cut {
                let limit = config.connection_timeout.unwrap_or_default();
                outcome.error.get_or_insert_with(|| {
                    std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("connection still running after {limit:?}"),
                    )
                });
            }
            row.tcp = sys::tcp_info(stream.as_raw_fd()).ok();
            drop(stream);
            row.sent_bytes = outcome.sent;
            row.received_bytes = outcome.received;
            row.first_byte_us = outcome.first_byte.map(|t| micros_since(origin, t));
            row.last_byte_us = outcome.last_byte.map(|t| micros_since(origin, t));
            if script.mode == Mode::Sequential {
                for (n, exchange) in exchanges(&script.adus, &outcome).into_iter().enumerate() {
                    let start_us = micros_since(origin, exchange.start);
                    epochs.push(EpochRecord {
                        connection_id: row.id,
                        index: n as u32,
                        start_us,
                        end_us: micros_since(origin, exchange.end),
                        request_bytes: exchange.request_bytes,
                        response_bytes: exchange.response_bytes,
                        // An exchange counts with its connection, whose
                        // planned start decides: a connection's exchanges
                        // are never split by how late the host ran them.
                        in_window: row.in_window,
                    });
                }
            }
            row.epochs = epochs.len() as u32;
            row.error = outcome.error.map(|e| e.to_string());
            row.status = if row.error.is_none()
                && row.sent_bytes == row.expected_sent_bytes
                && row.received_bytes == row.expected_received_bytes
            {
                ConnectionStatus::Complete
            } else {
                ConnectionStatus::Short
            };
        }
    }
    if let (Some(hook), Some(local)) = (&config.flow_hook, row.local) {
        hook.unregister(local, config.target);
    }
    let end = Instant::now();
    row.end_us = micros_since(origin, end);
    row.duration_us = row.end_us.saturating_sub(row.actual_start_us);
    (row, epochs)
}

/// Creates the socket (buffers, source address), registers the flow with
/// the hook, connects and sends the preamble.
async fn open(
    shared: &Shared,
    index: usize,
    script: &Script,
    row: &mut ConnectionRecord,
) -> Result<TcpStream, OpenError> {
    let config = &shared.config;
    let target = config.target;
    let socket = match target {
        SocketAddr::V4(_) => TcpSocket::new_v4(),
        SocketAddr::V6(_) => TcpSocket::new_v6(),
    }
    .map_err(OpenError::Socket)?;
    if let Some(w) = script.window {
        // Before connect, so the SYN's window scale fits the buffer.
        socket
            .set_recv_buffer_size(w.initiator)
            .and_then(|()| socket.set_send_buffer_size(w.acceptor))
            .map_err(OpenError::Buffers)?;
    }
    socket.set_reuseaddr(true).map_err(OpenError::ReuseAddr)?;
    if !config.source_addresses.is_empty() {
        let ip = config.source_addresses[index % config.source_addresses.len()];
        socket
            .bind(SocketAddr::new(ip, 0))
            .map_err(|source| OpenError::Bind { ip, source })?;
    }
    let local = socket.local_addr().map_err(OpenError::LocalAddr)?;
    row.local = Some(local);
    if let Some(hook) = &config.flow_hook {
        row.assigned_rtt_us = hook.register(local, target, &shared.connections[index]);
    }
    let mut stream = match timeout(config.connect_timeout, socket.connect(target)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(source)) => return Err(OpenError::Connect { target, source }),
        Err(_) => return Err(OpenError::ConnectTimeout { target }),
    };
    stream.set_nodelay(true).map_err(OpenError::NoDelay)?;
    let preamble = match &config.session {
        Some(session) => preamble::encode_signed(script, session),
        None => preamble::encode(script),
    };
    stream.write_all(&preamble).await.map_err(OpenError::Preamble)?;
    Ok(stream)
}

/// Interval reports of the bytes all connections moved, until `done`.
async fn sample_throughput(shared: Arc<Shared>, mut done: oneshot::Receiver<()>) -> Vec<ThroughputSample> {
    let step = shared.config.interval.max(Duration::from_millis(1));
    let mut ticker = tokio::time::interval_at(shared.origin + step, step);
    let mut samples = Vec::new();
    let mut last = (shared.origin, 0u64, 0u64);
    let mut snapshot = |samples: &mut Vec<ThroughputSample>| {
        let now = Instant::now();
        let sent = shared.counters.sent.load(Ordering::Relaxed);
        let received = shared.counters.received.load(Ordering::Relaxed);
        let start_us = micros_since(shared.origin, last.0);
        samples.push(ThroughputSample {
            start_us,
            duration_us: now.saturating_duration_since(last.0).as_micros() as u64,
            initiator_to_acceptor_bytes: sent - last.1,
            acceptor_to_initiator_bytes: received - last.2,
            in_window: in_window(&shared.config.measure, start_us),
        });
        last = (now, sent, received);
    };
    loop {
        tokio::select! {
            _ = ticker.tick() => snapshot(&mut samples),
            _ = &mut done => {
                snapshot(&mut samples);
                break;
            }
        }
    }
    samples
}
