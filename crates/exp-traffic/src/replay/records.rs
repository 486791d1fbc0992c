//! What a replay measures, as plain rows (the runtime maps them to Parquet
//! tables), and the series derived from the connection rows.
//!
//! All times are microseconds from the replay's origin (`ReplayResult::origin`),
//! the instant the first connection was scheduled for. Rows outside the
//! measurement window are kept and marked (`in_window == false`) so a
//! report can show start-up and tail without them skewing statistics.

use std::net::SocketAddr;
use std::ops::Range;
use std::time::{Duration, SystemTime};

pub use super::sys::TcpInfo;

/// How a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectionStatus {
    /// Every planned byte went out and every expected byte arrived.
    Complete,
    /// Connected, but fewer (or more) bytes than planned moved, or I/O failed.
    Short,
    /// Never connected (or the preamble could not be sent).
    Failed,
}

/// Why a connection of a replay stopped early (see `ReplayConfig::stop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interruption {
    /// Running (or connecting) when the replay was stopped: closed then,
    /// the record holds what was measured up to that point.
    Cut,
    /// Not yet started when the replay was stopped (status `Failed`, zero bytes).
    NotStarted,
}

/// One replayed connection, seen from the initiator.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionRecord {
    /// Position of the connection in the replayed list.
    pub id: u64,
    /// Structure label from the configuration (e.g. `atbt`).
    pub structure: String,
    /// Local (source) address the connection was bound to.
    pub local: Option<SocketAddr>,
    pub planned_start_us: u64,
    /// When the connection's socket was created and connect began.
    pub actual_start_us: u64,
    /// First byte sent or received (preamble excluded).
    pub first_byte_us: Option<u64>,
    /// Last byte sent or received.
    pub last_byte_us: Option<u64>,
    /// When both directions had closed (or the attempt failed).
    pub end_us: u64,
    /// `end_us - actual_start_us`.
    pub duration_us: u64,
    /// Initiator → acceptor bytes written, and planned.
    pub sent_bytes: u64,
    pub expected_sent_bytes: u64,
    /// Acceptor → initiator bytes received, and planned.
    pub received_bytes: u64,
    pub expected_received_bytes: u64,
    /// Completed request/response exchanges (sequential connections).
    pub epochs: u32,
    /// RTT the flow hook assigned (the emulation stage), when it did.
    pub assigned_rtt_us: Option<u64>,
    pub status: ConnectionStatus,
    pub error: Option<String>,
    /// TCP_INFO just before close.
    pub tcp: Option<TcpInfo>,
    pub in_window: bool,
    /// Set when the replay was stopped before this connection ended.
    pub interrupted: Option<Interruption>,
}

/// One request/response exchange: request first byte written → response
/// last byte received, at the initiator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochRecord {
    pub connection_id: u64,
    /// Exchange number within the connection, from 0.
    pub index: u32,
    pub start_us: u64,
    pub end_us: u64,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub in_window: bool,
}

impl EpochRecord {
    pub fn duration_us(&self) -> u64 {
        self.end_us.saturating_sub(self.start_us)
    }
}

/// Open connections during one interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveSample {
    pub start_us: u64,
    /// Open at the interval's start.
    pub at_start: u32,
    /// Most open at any moment within the interval.
    pub peak: u32,
    pub in_window: bool,
}

/// Bytes moved in one interval, per direction, counted at the initiator
/// (written towards the acceptor, read from it), like iperf's client-side
/// interval reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThroughputSample {
    pub start_us: u64,
    /// Interval length (the last interval may be shorter).
    pub duration_us: u64,
    pub initiator_to_acceptor_bytes: u64,
    pub acceptor_to_initiator_bytes: u64,
    pub in_window: bool,
}

impl ThroughputSample {
    /// Initiator → acceptor rate in bit/s.
    pub fn initiator_to_acceptor_bit_per_s(&self) -> f64 {
        rate(self.initiator_to_acceptor_bytes, self.duration_us)
    }

    /// Acceptor → initiator rate in bit/s.
    pub fn acceptor_to_initiator_bit_per_s(&self) -> f64 {
        rate(self.acceptor_to_initiator_bytes, self.duration_us)
    }
}

fn rate(bytes: u64, us: u64) -> f64 {
    if us == 0 {
        return 0.0;
    }
    bytes as f64 * 8.0 * 1e6 / us as f64
}

/// One connection seen from the acceptor; its byte counts are the receiving
/// side's word on whether everything the initiator sent arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptorRecord {
    /// From the preamble; `None` when the preamble was refused.
    pub id: Option<u64>,
    pub peer: SocketAddr,
    /// Initiator → acceptor bytes received here, and planned.
    pub received_bytes: u64,
    pub expected_received_bytes: u64,
    /// Acceptor → initiator bytes written, and planned.
    pub sent_bytes: u64,
    pub expected_sent_bytes: u64,
    pub status: ConnectionStatus,
    pub error: Option<String>,
    /// Why the connection was refused before anything was sent (status
    /// `Failed`); `None` for one that ran or failed otherwise.
    pub refusal: Option<Refusal>,
    /// The connection opened a session (a run's hello) instead of
    /// replaying one.
    pub session: bool,
}

/// Why an acceptor closed a connection without sending a byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Refusal {
    /// An unsigned preamble, to an acceptor that has a secret.
    NoMac,
    /// A hello or a signed preamble, to an acceptor without a secret.
    NoSecret,
    /// A hello or preamble whose tag does not check.
    WrongMac,
    /// A preamble of a session this acceptor did not open: another run's.
    UnknownSession,
    /// A preamble (or hello) this acceptor has already seen.
    Replayed,
    /// The preamble asks the acceptor to send more than one connection may.
    ConnectionBytes,
    /// The acceptor has sent all the bytes it may send.
    TotalBytes,
    /// As many connections as allowed are open.
    Concurrent,
    /// As many connections as allowed from one address are open.
    PerSource,
    /// No complete preamble within the preamble timeout.
    Timeout,
    /// Not a preamble, or too long a one.
    Malformed,
}

impl Refusal {
    /// Every refusal, in report order.
    pub const ALL: [Refusal; 11] = [
        Refusal::NoMac,
        Refusal::NoSecret,
        Refusal::WrongMac,
        Refusal::UnknownSession,
        Refusal::Replayed,
        Refusal::ConnectionBytes,
        Refusal::TotalBytes,
        Refusal::Concurrent,
        Refusal::PerSource,
        Refusal::Timeout,
        Refusal::Malformed,
    ];

    /// A short name for reports.
    pub fn label(self) -> &'static str {
        match self {
            Refusal::NoMac => "no MAC",
            Refusal::NoSecret => "signed, but no secret here",
            Refusal::WrongMac => "wrong MAC",
            Refusal::UnknownSession => "unknown session",
            Refusal::Replayed => "replayed",
            Refusal::ConnectionBytes => "over the per-connection byte limit",
            Refusal::TotalBytes => "total byte limit reached",
            Refusal::Concurrent => "too many open",
            Refusal::PerSource => "too many open from one address",
            Refusal::Timeout => "preamble timeout",
            Refusal::Malformed => "malformed",
        }
    }
}

/// Everything one replay measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayResult {
    /// Wall-clock time of the origin all `_us` fields count from.
    pub origin: SystemTime,
    /// By id.
    pub connections: Vec<ConnectionRecord>,
    /// By connection id, then index.
    pub epochs: Vec<EpochRecord>,
    pub active_connections: Vec<ActiveSample>,
    pub throughput: Vec<ThroughputSample>,
    /// Soft open-files limit in force during the replay.
    pub nofile_limit: u64,
}

impl ReplayResult {
    /// Most connections open at once.
    pub fn peak_active(&self) -> u32 {
        self.active_connections.iter().map(|s| s.peak).max().unwrap_or(0)
    }

    /// Connections open on average between the first start and the last
    /// end (Little's law: total connection time over the span). Unlike the
    /// peak, one scheduling stall that lets connections pile up for a
    /// moment barely moves it.
    pub fn mean_active(&self) -> f64 {
        let first = self.connections.iter().map(|r| r.actual_start_us).min();
        let last = self.connections.iter().map(|r| r.end_us).max();
        let (Some(first), Some(last)) = (first, last) else {
            return 0.0;
        };
        let open: u64 = self.connections.iter().map(|r| r.duration_us).sum();
        open as f64 / last.saturating_sub(first).max(1) as f64
    }
}

/// Whether `t_us` falls in the measurement window (everything does when
/// there is none).
pub fn in_window(window: &Option<Range<Duration>>, t_us: u64) -> bool {
    window.as_ref().is_none_or(|w| w.contains(&Duration::from_micros(t_us)))
}

/// Open connections per interval, from the rows' start and end times.
pub fn active_series(
    connections: &[ConnectionRecord],
    interval: Duration,
    window: &Option<Range<Duration>>,
) -> Vec<ActiveSample> {
    let step = (interval.as_micros() as u64).max(1);
    // Ends sort before starts at the same instant: a connection closing
    // as another opens is not two open at once.
    let mut events: Vec<(u64, i8)> = connections
        .iter()
        .flat_map(|c| [(c.actual_start_us, 1), (c.end_us, -1)])
        .collect();
    events.sort_unstable();
    let Some(&(last, _)) = events.last() else {
        return Vec::new();
    };
    let mut samples = Vec::new();
    let mut open = 0i64;
    let mut next = 0usize;
    let mut start = 0u64;
    while start <= last {
        let end = start.saturating_add(step);
        while next < events.len() && events[next].0 <= start {
            open += i64::from(events[next].1);
            next += 1;
        }
        let at_start = open;
        let mut peak = open;
        while next < events.len() && events[next].0 < end {
            open += i64::from(events[next].1);
            peak = peak.max(open);
            next += 1;
        }
        samples.push(ActiveSample {
            start_us: start,
            at_start: at_start.max(0) as u32,
            peak: peak.max(0) as u32,
            in_window: in_window(window, start),
        });
        start = end;
    }
    samples
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(start: u64, end: u64) -> ConnectionRecord {
        ConnectionRecord {
            id: 0,
            structure: String::new(),
            local: None,
            planned_start_us: start,
            actual_start_us: start,
            first_byte_us: None,
            last_byte_us: None,
            end_us: end,
            duration_us: end - start,
            sent_bytes: 0,
            expected_sent_bytes: 0,
            received_bytes: 0,
            expected_received_bytes: 0,
            epochs: 0,
            assigned_rtt_us: None,
            status: ConnectionStatus::Complete,
            error: None,
            tcp: None,
            in_window: true,
            interrupted: None,
        }
    }

    #[test]
    fn active_counts_overlaps_per_interval() {
        let rows = [row(0, 1500), row(500, 700), row(700, 2500), row(2100, 2200)];
        let window = Some(Duration::from_millis(1)..Duration::from_millis(2));
        let series = active_series(&rows, Duration::from_millis(1), &window);
        let got: Vec<(u64, u32, u32, bool)> = series
            .iter()
            .map(|s| (s.start_us, s.at_start, s.peak, s.in_window))
            .collect();
        assert_eq!(got, [(0, 1, 2, false), (1000, 2, 2, true), (2000, 1, 2, false)]);
    }
}
