//! Executes one side of a connection's script on a connected socket.
//!
//! Both sides run the same code. The socket is split; a reader drains
//! everything the other side sends until its FIN and notes when each of the
//! other side's ADUs has fully arrived, while a writer sends this side's
//! ADUs. Reading and writing run concurrently in both modes, so neither side
//! can block the other on a full buffer; what differs is when the writer
//! may send:
//!
//! - Sequential: an ADU that follows one of the other side's is sent
//!   `recv_wait` after that ADU fully arrived; one that follows this side's
//!   own ADU (or starts the connection) `send_wait` after that send finished.
//! - Concurrent: every ADU is sent `send_wait` after this side's previous
//!   send, whatever arrives meanwhile.
//!
//! A size of 0 shuts the write direction down (FIN); a script that ends
//! without one shuts down at its end. The waits are application think and
//! server times, slept with tokio timers (see `wait_until` for their
//! resolution); RTT is not emulated here.

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

use crate::cvec::{Adu, Mode, Side};

/// Source of the bytes every side writes: content does not matter, and one
/// shared buffer lets writes be large without per-connection memory.
static ZEROS: [u8; WRITE_CHUNK] = [0; WRITE_CHUNK];
const WRITE_CHUNK: usize = 256 << 10;
/// Read buffers start small (thousands of mostly idle connections) and grow
/// while reads keep filling them (bulk transfers).
const READ_MIN: usize = 4 << 10;
const READ_MAX: usize = 256 << 10;

/// Bytes moved by every connection of a replay (for interval reports) or
/// of an acceptor (against its total limit).
#[derive(Debug, Default)]
pub struct Counters {
    pub sent: AtomicU64,
    pub received: AtomicU64,
    /// Most bytes all connections together may send: each chunk is counted
    /// before it is written, and none is written past the limit.
    pub send_limit: Option<u64>,
}

impl Counters {
    /// Counters whose `sent` may not pass `limit`.
    pub fn limited(limit: u64) -> Counters {
        Counters {
            send_limit: Some(limit),
            ..Counters::default()
        }
    }

    /// Whether the limit (if any) is reached.
    pub fn exhausted(&self) -> bool {
        self.send_limit
            .is_some_and(|limit| self.sent.load(Ordering::Relaxed) >= limit)
    }

    /// Counts up to `n` bytes about to be written against the limit and
    /// returns how many may be (all `n` without a limit).
    fn reserve(&self, n: u64) -> u64 {
        let Some(limit) = self.send_limit else {
            return n;
        };
        let before = self
            .sent
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |sent| {
                Some(sent.saturating_add(n).min(limit.max(sent)))
            })
            .unwrap_or_else(|sent| sent);
        limit.saturating_sub(before).min(n)
    }
}

/// What one side observed.
#[derive(Debug, Default)]
pub struct SideOutcome {
    pub sent: u64,
    pub received: u64,
    pub first_byte: Option<Instant>,
    pub last_byte: Option<Instant>,
    /// When this side began writing each of its ADUs, by its own ADU
    /// ordinal (FINs included; `None` when never reached).
    pub send_started: Vec<Option<Instant>>,
    /// When each of the other side's ADUs had fully arrived, in order (a
    /// FIN arrives with end of stream); shorter when the stream ended early.
    pub received_at: Vec<Instant>,
    /// The first I/O error either direction hit.
    pub error: Option<io::Error>,
}

#[derive(Debug, Default)]
struct Progress {
    completed: Vec<Instant>,
    ended: bool,
}

/// Runs side `me` of `adus` on `stream`; `start` is when the connection was
/// established. Returns when this side has sent everything (and its FIN)
/// and the other side's FIN has arrived, or on an error.
pub async fn run_side(
    stream: &mut TcpStream,
    adus: &[Adu],
    me: Side,
    mode: Mode,
    start: Instant,
    counters: Option<&Counters>,
) -> SideOutcome {
    run_side_until(stream, adus, me, mode, start, counters, std::future::pending())
        .await
        .0
}

/// [`run_side`], cut short when `until` resolves first: the outcome then
/// holds what was measured so far (bytes of a write in progress are counted
/// per completed chunk) and the flag is true.
pub async fn run_side_until(
    stream: &mut TcpStream,
    adus: &[Adu],
    me: Side,
    mode: Mode,
    start: Instant,
    counters: Option<&Counters>,
    until: impl Future<Output = ()>,
) -> (SideOutcome, bool) {
    let (reader, writer) = stream.split();
    let (tx, rx) = watch::channel(Progress::default());
    let thresholds = arrival_thresholds(adus, me);
    // Filled in place by the two halves, so a cut keeps what they saw.
    let mut written = Written {
        started: vec![None; adus.iter().filter(|a| a.side == me).count()],
        ..Written::default()
    };
    let mut read = Read::default();
    let cut = {
        let both = async {
            tokio::join!(
                write_side(writer, adus, me, mode, start, rx, counters, &mut written),
                read_side(reader, &thresholds, tx, counters, &mut read)
            );
        };
        tokio::select! {
            () = both => false,
            () = until => true,
        }
    };
    let first_byte = match (written.first_byte, read.first_byte) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let outcome = SideOutcome {
        sent: written.bytes,
        received: read.bytes,
        first_byte,
        last_byte: written.last_byte.max(read.last_byte),
        send_started: written.started,
        received_at: read.completed,
        error: written.error.or(read.error),
    };
    (outcome, cut)
}

/// Cumulative byte counts at which each of the other side's ADUs has
/// arrived; `None` for a FIN, which arrives with end of stream.
fn arrival_thresholds(adus: &[Adu], me: Side) -> Vec<Option<u64>> {
    let mut total = 0u64;
    adus.iter()
        .filter(|a| a.side != me)
        .map(|a| {
            total = total.saturating_add(a.bytes);
            (a.bytes > 0).then_some(total)
        })
        .collect()
}

#[derive(Default)]
struct Written {
    bytes: u64,
    first_byte: Option<Instant>,
    last_byte: Option<Instant>,
    started: Vec<Option<Instant>>,
    error: Option<io::Error>,
}

#[allow(clippy::too_many_arguments)] // the two halves' shared inputs, plus where to record
async fn write_side(
    mut writer: WriteHalf<'_>,
    adus: &[Adu],
    me: Side,
    mode: Mode,
    start: Instant,
    mut progress: watch::Receiver<Progress>,
    counters: Option<&Counters>,
    out: &mut Written,
) {
    let mut last_send = start;
    let mut others_before = 0usize;
    let mut own = 0usize;
    let mut fin_sent = false;
    for (index, adu) in adus.iter().enumerate() {
        if adu.side != me {
            others_before += 1;
            continue;
        }
        let follows_other = index > 0 && adus[index - 1].side != me;
        let at = if mode == Mode::Sequential && follows_other {
            let wanted = others_before - 1;
            let arrived = match progress.wait_for(|p| p.completed.len() > wanted || p.ended).await {
                Ok(p) => p.completed.get(wanted).copied(),
                Err(_) => None,
            };
            // The other side ended (or failed) before sending what this ADU
            // answers: nothing sensible left to send.
            let Some(arrived) = arrived else { break };
            arrived + Duration::from_micros(adu.recv_wait_us)
        } else {
            last_send + Duration::from_micros(adu.send_wait_us)
        };
        wait_until(at).await;
        let now = Instant::now();
        out.started[own] = Some(now);
        own += 1;
        if adu.bytes == 0 {
            fin_sent = true;
            if let Err(e) = writer.shutdown().await {
                out.error = Some(e);
            }
            break;
        }
        out.first_byte.get_or_insert(now);
        if let Err(e) = write_bytes(&mut writer, adu.bytes, &mut out.bytes, counters).await {
            out.error = Some(e);
            return;
        }
        last_send = Instant::now();
        out.last_byte = Some(last_send);
    }
    if !fin_sent {
        if let Err(e) = writer.shutdown().await {
            out.error.get_or_insert(e);
        }
    }
}

/// tokio's timer has millisecond ticks and rounds deadlines up to the next
/// one, so a 1 µs wait (the structure models' FINs) would cost up to 1 ms.
/// Waits shorter than a tick yield to the scheduler until due instead;
/// longer ones sleep and may end up to a tick late.
const TIMER_TICK: Duration = Duration::from_millis(1);

async fn wait_until(at: Instant) {
    loop {
        let now = Instant::now();
        if now >= at {
            return;
        }
        if at - now >= TIMER_TICK {
            sleep_until(at).await;
            return;
        }
        tokio::task::yield_now().await;
    }
}

async fn write_bytes(
    writer: &mut WriteHalf<'_>,
    bytes: u64,
    total: &mut u64,
    counters: Option<&Counters>,
) -> io::Result<()> {
    let mut remaining = bytes;
    while remaining > 0 {
        let wanted = remaining.min(WRITE_CHUNK as u64) as usize;
        let limited = counters.filter(|c| c.send_limit.is_some());
        let n = match limited {
            Some(c) => c.reserve(wanted as u64) as usize,
            None => wanted,
        };
        writer.write_all(&ZEROS[..n]).await?;
        remaining -= n as u64;
        *total += n as u64;
        match (counters, limited) {
            (Some(c), None) => {
                c.sent.fetch_add(n as u64, Ordering::Relaxed);
            }
            (_, Some(c)) if n < wanted => {
                return Err(io::Error::other(format!(
                    "the acceptor's total byte limit ({} bytes) is reached",
                    c.send_limit.unwrap_or_default()
                )));
            }
            _ => {}
        }
    }
    Ok(())
}

#[derive(Default)]
struct Read {
    bytes: u64,
    first_byte: Option<Instant>,
    last_byte: Option<Instant>,
    completed: Vec<Instant>,
    error: Option<io::Error>,
}

async fn read_side(
    mut reader: ReadHalf<'_>,
    thresholds: &[Option<u64>],
    progress: watch::Sender<Progress>,
    counters: Option<&Counters>,
    out: &mut Read,
) {
    let mut buf = vec![0u8; READ_MIN];
    let mut next = 0usize;
    loop {
        match reader.read(&mut buf).await {
            Ok(0) => {
                // A FIN ADU arrives with end of stream, once all before it did.
                if let Some(None) = thresholds.get(next) {
                    let now = Instant::now();
                    out.completed.push(now);
                    progress.send_modify(|p| p.completed.push(now));
                }
                break;
            }
            Ok(n) => {
                let now = Instant::now();
                out.bytes += n as u64;
                out.first_byte.get_or_insert(now);
                out.last_byte = Some(now);
                if let Some(c) = counters {
                    c.received.fetch_add(n as u64, Ordering::Relaxed);
                }
                let before = next;
                while let Some(Some(threshold)) = thresholds.get(next) {
                    if out.bytes < *threshold {
                        break;
                    }
                    out.completed.push(now);
                    next += 1;
                }
                if next > before {
                    progress.send_modify(|p| p.completed.extend((before..next).map(|_| now)));
                }
                if n == buf.len() && buf.len() < READ_MAX {
                    buf.resize(buf.len() * 2, 0);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                out.error = Some(e);
                break;
            }
        }
    }
    progress.send_modify(|p| p.ended = true);
}

/// One request/response exchange seen by the initiator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    /// When the request's first byte was written.
    pub start: Instant,
    /// When the response's last byte arrived.
    pub end: Instant,
    pub request_bytes: u64,
    pub response_bytes: u64,
}

/// The initiator's epochs of a sequential connection: each run of initiator
/// data ADUs followed by a run of acceptor data ADUs. Acceptor data before
/// the first request (a greeting) and a trailing request without response
/// are not epochs; an exchange cut short by an error ends the list.
pub fn exchanges(adus: &[Adu], outcome: &SideOutcome) -> Vec<Exchange> {
    let mut found = Vec::new();
    let mut request: Option<(Instant, u64)> = None;
    let mut response: Option<(Instant, u64)> = None;
    let (mut own, mut other) = (0usize, 0usize);
    for adu in adus {
        let ordinal = match adu.side {
            Side::Initiator => &mut own,
            Side::Acceptor => &mut other,
        };
        let at = match adu.side {
            Side::Initiator => outcome.send_started.get(*ordinal).copied().flatten(),
            Side::Acceptor => outcome.received_at.get(*ordinal).copied(),
        };
        *ordinal += 1;
        if adu.bytes == 0 {
            continue;
        }
        let Some(at) = at else { break };
        match adu.side {
            Side::Initiator => {
                if let (Some((start, req)), Some((end, resp))) = (request, response.take()) {
                    found.push(Exchange {
                        start,
                        end,
                        request_bytes: req,
                        response_bytes: resp,
                    });
                    request = None;
                }
                let (start, bytes) = request.unwrap_or((at, 0));
                request = Some((start, bytes + adu.bytes));
            }
            Side::Acceptor if request.is_some() => {
                let bytes = response.map_or(0, |(_, b)| b);
                response = Some((at, bytes + adu.bytes));
            }
            Side::Acceptor => {}
        }
    }
    if let (Some((start, req)), Some((end, resp))) = (request, response) {
        found.push(Exchange {
            start,
            end,
            request_bytes: req,
            response_bytes: resp,
        });
    }
    found
}
