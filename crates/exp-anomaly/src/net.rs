//! netoccupy, in Rust (std::net): `ntasks` sender threads, each with its own
//! TCP connection to a sink, sending `message_bytes`-sized messages, each
//! paced to `bandwidth_bit_per_s` if given. The sink is `peer` (an external
//! `host:port` the user named), or, when absent, `ntasks` sink threads of the
//! child itself on 127.0.0.1 (an ephemeral port) that read and discard.
//!
//! Sockets have 100 ms timeouts so every thread sees the stop flag promptly
//! even when the other side stalls.
//!
//! Counters (senders only): iterations = complete messages; bytes = bytes sent.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config;
use crate::ffi::Ctx;
use crate::job::{kernel_error, Job};
use crate::AnomalyError;

const POLL: Duration = Duration::from_millis(100);
const SLEEP_SLICE: Duration = Duration::from_millis(10);
/// How long a sender keeps trying to connect before it gives up.
const CONNECT_FOR: Duration = Duration::from_secs(5);
/// Largest write: the send buffer, and the pacing step at high bandwidths.
const CHUNK: u64 = 1 << 20;

pub(crate) fn plan(
    ntasks: u32,
    message_bytes: u64,
    bandwidth: Option<u64>,
    peer: Option<&str>,
    cores: &[u32],
) -> Result<Vec<Job>, AnomalyError> {
    let mut jobs = Vec::new();
    let targets: Vec<SocketAddr> = match peer {
        Some(peer) => {
            let (host, port) = config::parse_peer(peer)?;
            let addrs: Vec<SocketAddr> = (host, port)
                .to_socket_addrs()
                .map_err(kernel_error("netoccupy", format!("resolving the peer {peer}")))?
                .collect();
            if addrs.is_empty() {
                return Err(AnomalyError::Config(format!("the peer {peer} resolves to no address")));
            }
            addrs
        }
        None => {
            // Bound before any sender starts, so their connections queue in the backlog.
            let listener = TcpListener::bind(("127.0.0.1", 0))
                .and_then(|l| l.set_nonblocking(true).map(|()| l))
                .map_err(kernel_error("netoccupy", "starting the loopback sink"))?;
            let addr = listener
                .local_addr()
                .map_err(kernel_error("netoccupy", "starting the loopback sink"))?;
            let listener = Arc::new(listener);
            for _ in 0..ntasks {
                let listener = Arc::clone(&listener);
                jobs.push(Job {
                    name: "netoccupy-sink",
                    cpus: cores.to_vec(),
                    counted: false,
                    run: Box::new(move |ctx| sink(ctx, &listener)),
                });
            }
            vec![addr]
        }
    };
    for _ in 0..ntasks {
        let targets = targets.clone();
        jobs.push(Job {
            name: "netoccupy",
            cpus: cores.to_vec(),
            counted: true,
            run: Box::new(move |ctx| send(ctx, &targets, message_bytes, bandwidth)),
        });
    }
    Ok(jobs)
}

/// Sleeps until `until` in slices, looking at the stop flag. `true`: stopped.
fn sleep_until(ctx: &Ctx<'_>, until: Instant) -> bool {
    loop {
        if ctx.stopped() {
            return true;
        }
        let now = Instant::now();
        if now >= until {
            return false;
        }
        std::thread::sleep((until - now).min(SLEEP_SLICE));
    }
}

fn transient(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

fn connect(ctx: &Ctx<'_>, targets: &[SocketAddr]) -> Result<Option<TcpStream>, AnomalyError> {
    let give_up = Instant::now() + CONNECT_FOR;
    loop {
        let mut last = None;
        for addr in targets {
            if ctx.stopped() {
                return Ok(None);
            }
            match TcpStream::connect_timeout(addr, POLL) {
                Ok(stream) => return Ok(Some(stream)),
                Err(error) => last = Some((addr, error)),
            }
        }
        if Instant::now() >= give_up {
            let (addr, source) = last.map_or_else(
                || (String::from("no address"), std::io::Error::from(ErrorKind::NotFound)),
                |(addr, error)| (addr.to_string(), error),
            );
            return Err(AnomalyError::Kernel {
                kernel: "netoccupy",
                what: format!("connecting to {addr}"),
                source,
            });
        }
        if sleep_until(ctx, Instant::now() + POLL) {
            return Ok(None);
        }
    }
}

/// Bytes per write: about 10 ms of traffic at the paced rate, within 1 B..1 MiB.
pub(crate) fn pace_step(bandwidth: Option<u64>) -> u64 {
    bandwidth.map_or(CHUNK, |bits| (bits / 8 / 100).clamp(1, CHUNK))
}

/// When `sent` bytes are due, counted from the start, at `bandwidth` bit/s.
pub(crate) fn due_after(sent: u64, bandwidth: u64) -> Duration {
    Duration::from_secs_f64(sent as f64 * 8.0 / bandwidth.max(1) as f64)
}

fn send(ctx: &Ctx<'_>, targets: &[SocketAddr], message_bytes: u64, bandwidth: Option<u64>) -> Result<(), AnomalyError> {
    let Some(mut stream) = connect(ctx, targets)? else {
        return Ok(());
    };
    stream
        .set_write_timeout(Some(POLL))
        .map_err(kernel_error("netoccupy", "configuring the socket"))?;
    let mut buffer = vec![0u8; message_bytes.min(CHUNK) as usize];
    fill_random(&mut buffer, ctx.seed);
    let step = pace_step(bandwidth);
    let start = Instant::now();
    let mut sent: u64 = 0;
    loop {
        let mut remaining = message_bytes;
        while remaining > 0 {
            if let Some(bandwidth) = bandwidth {
                if sleep_until(ctx, start + due_after(sent, bandwidth)) {
                    return Ok(());
                }
            } else if ctx.stopped() {
                return Ok(());
            }
            let n = remaining.min(step).min(buffer.len() as u64) as usize;
            match stream.write(&buffer[..n]) {
                Ok(0) => {
                    let source = std::io::Error::from(ErrorKind::WriteZero);
                    return Err(AnomalyError::Kernel {
                        kernel: "netoccupy",
                        what: "sending".into(),
                        source,
                    });
                }
                Ok(written) => {
                    remaining -= written as u64;
                    sent += written as u64;
                    ctx.counters.add_bytes(written as u64);
                }
                Err(error) if transient(error.kind()) => {}
                // A sink going away while we are told to stop is the normal end.
                Err(_) if ctx.stopped() => return Ok(()),
                Err(source) => {
                    return Err(AnomalyError::Kernel {
                        kernel: "netoccupy",
                        what: "sending".into(),
                        source,
                    });
                }
            }
        }
        ctx.counters.add_iterations(1);
    }
}

fn sink(ctx: &Ctx<'_>, listener: &TcpListener) -> Result<(), AnomalyError> {
    let mut stream = loop {
        if ctx.stopped() {
            return Ok(());
        }
        match listener.accept() {
            Ok((stream, _)) => break stream,
            Err(error) if transient(error.kind()) => std::thread::sleep(SLEEP_SLICE),
            Err(source) => {
                return Err(AnomalyError::Kernel {
                    kernel: "netoccupy",
                    what: "accepting".into(),
                    source,
                })
            }
        }
    };
    // Accepted sockets do not inherit the listener's non-blocking mode on Linux; be explicit.
    stream
        .set_nonblocking(false)
        .and_then(|()| stream.set_read_timeout(Some(POLL)))
        .map_err(kernel_error("netoccupy", "configuring the sink socket"))?;
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        if ctx.stopped() {
            return Ok(());
        }
        match stream.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => ctx.counters.add_bytes(n as u64),
            Err(error) if transient(error.kind()) => {}
            Err(_) if ctx.stopped() => return Ok(()),
            Err(source) => {
                return Err(AnomalyError::Kernel {
                    kernel: "netoccupy",
                    what: "receiving".into(),
                    source,
                })
            }
        }
    }
}

/// Pseudo-random payload (SplitMix64), so nothing on the path can compress it.
fn fill_random(buffer: &mut [u8], seed: u64) {
    let mut state = seed;
    for chunk in buffer.chunks_mut(8) {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacing_math() {
        assert_eq!(pace_step(None), CHUNK);
        assert_eq!(pace_step(Some(8_000_000)), 10_000); // 1 MB/s → 10 kB per 10 ms
        assert_eq!(pace_step(Some(1)), 1);
        assert_eq!(pace_step(Some(u64::MAX)), CHUNK);
        assert_eq!(due_after(1_000_000, 8_000_000), Duration::from_secs(1));
        assert_eq!(due_after(0, 8_000_000), Duration::ZERO);
    }

    #[test]
    fn payload_is_not_constant() {
        let mut buffer = [0u8; 37];
        fill_random(&mut buffer, 1);
        assert!(buffer.iter().any(|&b| b != buffer[0]));
    }
}
