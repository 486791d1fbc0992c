//! Checks before a replay starts: every script is executable, and the
//! process may open enough sockets for the connections that will be open at
//! once.
//!
//! How many connections overlap is not known before they run (transfers
//! and the network add to their lifetimes), so the check uses a lower
//! bound: each connection lives at least as long as its own waits add up
//! to. A trace whose think times alone keep 10,000 connections open needs
//! at least 20,000 descriptors in-process; the check refuses it up front
//! rather than failing with EMFILE half an hour in.

use crate::cvec::{Connection, Mode, Side};

use super::preamble::validate;
use super::sys::raise_nofile;
use super::ReplayError;

/// Descriptors kept free for everything else the process has open.
const RESERVE: u64 = 64;

/// Validates the scripts, raises the open-files limit and checks it against
/// the planned peak of open connections. Returns the limit in force.
pub fn check(connections: &[Connection], fds_per_connection: u64) -> Result<u64, ReplayError> {
    for (index, connection) in connections.iter().enumerate() {
        validate(&connection.adus).map_err(|source| ReplayError::InvalidConnection { index, source })?;
    }
    let peak = planned_peak_open(connections);
    let needed = peak.saturating_mul(fds_per_connection).saturating_add(RESERVE);
    let limit = raise_nofile(needed).map_err(ReplayError::OpenFilesLimit)?;
    if needed > limit {
        return Err(ReplayError::TooManyOpen { peak, needed, limit });
    }
    Ok(limit)
}

/// The least time a connection is open: the sum of the waits its script
/// makes (sequential), or the longest of its two sides' send schedules
/// (concurrent).
pub fn planned_lifetime_us(connection: &Connection) -> u64 {
    let adus = &connection.adus;
    match connection.mode {
        Mode::Sequential => adus
            .iter()
            .enumerate()
            .map(|(i, adu)| {
                let follows_other = i > 0 && adus[i - 1].side != adu.side;
                if follows_other {
                    adu.recv_wait_us
                } else {
                    adu.send_wait_us
                }
            })
            .fold(0u64, u64::saturating_add),
        Mode::Concurrent => [Side::Initiator, Side::Acceptor]
            .into_iter()
            .map(|side| {
                adus.iter()
                    .filter(|a| a.side == side)
                    .map(|a| a.send_wait_us)
                    .fold(0u64, u64::saturating_add)
            })
            .max()
            .unwrap_or(0),
    }
}

/// Most connections open at once if each lived exactly its planned
/// lifetime.
pub fn planned_peak_open(connections: &[Connection]) -> u64 {
    let mut events: Vec<(u64, i8)> = connections
        .iter()
        .flat_map(|c| {
            let end = c.start_us.saturating_add(planned_lifetime_us(c));
            [(c.start_us, 1), (end, -1)]
        })
        .collect();
    // A zero-lifetime connection still holds its sockets for a moment:
    // starts sort before ends at the same instant.
    events.sort_unstable_by_key(|&(t, delta)| (t, -delta));
    let (mut open, mut peak) = (0i64, 0i64);
    for (_, delta) in events {
        open += i64::from(delta);
        peak = peak.max(open);
    }
    peak as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cvec::Adu;

    fn adu(side: Side, send: u64, recv: u64, bytes: u64) -> Adu {
        Adu {
            side,
            send_wait_us: send,
            recv_wait_us: recv,
            bytes,
        }
    }

    #[test]
    fn lifetime_and_peak() {
        let seq = vec![
            adu(Side::Initiator, 0, 0, 10),
            adu(Side::Acceptor, 999, 100, 10),
            adu(Side::Initiator, 999, 1_000, 10),
            adu(Side::Initiator, 50, 999, 0),
        ];
        let conc = vec![
            adu(Side::Initiator, 300, 0, 10),
            adu(Side::Acceptor, 200, 0, 10),
            adu(Side::Acceptor, 200, 0, 10),
        ];
        assert_eq!(
            planned_lifetime_us(&Connection::new(0, Mode::Sequential, seq.clone())),
            1_150
        );
        assert_eq!(
            planned_lifetime_us(&Connection::new(0, Mode::Concurrent, conc.clone())),
            400
        );
        let set = [
            Connection::new(0, Mode::Sequential, seq.clone()),
            Connection::new(1_000, Mode::Concurrent, conc),
            Connection::new(1_100, Mode::Sequential, seq),
        ];
        assert_eq!(planned_peak_open(&set), 3);
    }
}
