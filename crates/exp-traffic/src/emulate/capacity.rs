//! The delay stage's own limits, measured through a testbed with no delay,
//! loss or bottleneck: its base round-trip time (TCP ping-pong) and its
//! forwarding capacity (bulk TCP). Reports show them next to the emulated
//! link so the stage's limits are never mistaken for the link's.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::testbed::{Side, StageConfig, Testbed};
use super::EmulateError;

/// What the stage added and forwarded during a capacity measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capacity {
    /// Median TCP ping-pong RTT with nothing emulated: the stage's (and the
    /// two network stacks') own latency, added to every emulated RTT.
    pub base_rtt: Duration,
    /// TCP payload delivered to the acceptor, in Mbit/s.
    pub goodput_mbit_per_s: f64,
    /// IP bytes forwarded in both directions, in Mbit/s.
    pub forwarded_mbit_per_s: f64,
    /// Packets forwarded in both directions (data and ACKs) per second.
    pub packets_per_s: f64,
    /// Mean and worst time packets left after their release time.
    pub mean_lateness: Duration,
    pub max_lateness: Duration,
    /// Length of the bulk transfer the rates come from.
    pub measured_for: Duration,
}

const CHUNK: usize = 64 * 1024;
const PINGS: usize = 50;
/// Bounds every blocking socket call, so a broken stage cannot hang a run.
const SOCKET_TIMEOUT: Duration = Duration::from_secs(5);

/// Measures the stage in a fresh testbed (named `PREFIX-…`): ping-pong for
/// the base RTT, then bulk TCP from initiator to acceptor for `duration`.
pub fn measure_capacity(name_prefix: &str, duration: Duration) -> Result<Capacity, EmulateError> {
    let testbed = Testbed::create(name_prefix, StageConfig::default())?;
    let acceptor_addr = SocketAddr::from((testbed.address(Side::Acceptor), 0));
    let (port_tx, port_rx) = mpsc::channel();
    let acceptor = testbed.spawn_in(Side::Acceptor, move || -> io::Result<(u64, Duration)> {
        let listener = TcpListener::bind(acceptor_addr)?;
        let _ = port_tx.send(listener.local_addr()?.port());
        echo(&listener)?;
        receive_bulk(&listener)
    })?;
    let port = port_rx
        .recv_timeout(SOCKET_TIMEOUT)
        .map_err(|_| EmulateError::io("capacity: acceptor did not listen", io::ErrorKind::TimedOut.into()))?;
    let target = SocketAddr::from((testbed.address(Side::Acceptor), port));
    let base_rtt = testbed
        .run_in(Side::Initiator, move || ping(target))?
        .map_err(|e| EmulateError::io("capacity: ping-pong", e))?;
    let before = testbed.stats();
    testbed
        .run_in(Side::Initiator, move || send_bulk(target, duration))?
        .map_err(|e| EmulateError::io("capacity: sending", e))?;
    let (received, elapsed) = acceptor
        .join()
        .map_err(|_| EmulateError::ThreadPanicked {
            namespace: testbed.namespace_name(Side::Acceptor).to_string(),
        })??
        .map_err(|e| EmulateError::io("capacity: receiving", e))?;
    let after = testbed.stats();
    testbed.shutdown()?;
    let seconds = elapsed.as_secs_f64().max(1e-9);
    let (a, i) = (after.to_acceptor, after.to_initiator);
    let packets = (a.forwarded - before.to_acceptor.forwarded) + (i.forwarded - before.to_initiator.forwarded);
    let bytes = (a.forwarded_bytes - before.to_acceptor.forwarded_bytes)
        + (i.forwarded_bytes - before.to_initiator.forwarded_bytes);
    let all_forwarded = u32::try_from((a.forwarded + i.forwarded).max(1)).unwrap_or(u32::MAX);
    Ok(Capacity {
        base_rtt,
        goodput_mbit_per_s: received as f64 * 8.0 / seconds / 1e6,
        forwarded_mbit_per_s: bytes as f64 * 8.0 / seconds / 1e6,
        packets_per_s: packets as f64 / seconds,
        mean_lateness: (a.lateness_sum + i.lateness_sum) / all_forwarded,
        max_lateness: a.lateness_max.max(i.lateness_max),
        measured_for: elapsed,
    })
}

/// Acceptor side of the ping-pong: echoes `PINGS` single bytes.
fn echo(listener: &TcpListener) -> io::Result<()> {
    let (mut stream, _) = listener.accept()?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(SOCKET_TIMEOUT))?;
    let mut byte = [0u8; 1];
    for _ in 0..PINGS {
        stream.read_exact(&mut byte)?;
        stream.write_all(&byte)?;
    }
    Ok(())
}

/// Initiator side of the ping-pong: the median round trip.
fn ping(target: SocketAddr) -> io::Result<Duration> {
    let mut stream = TcpStream::connect_timeout(&target, SOCKET_TIMEOUT)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(SOCKET_TIMEOUT))?;
    let mut rtts = Vec::with_capacity(PINGS);
    let mut byte = [0u8; 1];
    for _ in 0..PINGS {
        let started = Instant::now();
        stream.write_all(&byte)?;
        stream.read_exact(&mut byte)?;
        rtts.push(started.elapsed());
    }
    rtts.sort();
    Ok(rtts[PINGS / 2])
}

fn send_bulk(target: SocketAddr, duration: Duration) -> io::Result<()> {
    let mut stream = TcpStream::connect_timeout(&target, SOCKET_TIMEOUT)?;
    stream.set_write_timeout(Some(SOCKET_TIMEOUT))?;
    let chunk = vec![0x5au8; CHUNK];
    let deadline = Instant::now() + duration;
    while Instant::now() < deadline {
        stream.write_all(&chunk)?;
    }
    stream.shutdown(std::net::Shutdown::Write)
}

/// Bytes received on the next connection until EOF, and the time from the
/// first byte to EOF.
fn receive_bulk(listener: &TcpListener) -> io::Result<(u64, Duration)> {
    let (mut stream, _) = listener.accept()?;
    stream.set_read_timeout(Some(SOCKET_TIMEOUT))?;
    let mut buffer = vec![0u8; CHUNK];
    let mut received = 0u64;
    let mut first_byte = None;
    loop {
        let n = stream.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        first_byte.get_or_insert_with(Instant::now);
        received += n as u64;
    }
    Ok((received, first_byte.map_or(Duration::ZERO, |t| t.elapsed())))
}
