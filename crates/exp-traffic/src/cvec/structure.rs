//! The four structure models, each derived from the full representation.
//!
//! Every model keeps the start time, ids, `m`/`w`/`r`/`l` values and the
//! total bytes each side sends; they differ in how much of the exchange's
//! shape and timing survives:
//!
//! | model | units | times | mode |
//! |---|---|---|---|
//! | `atbt` | all | all | kept |
//! | `ab` | all | none: data units have both waits 0 | kept |
//! | `blk_seq` | one initiator block, then one acceptor block | none | SEQ |
//! | `blk_conc` | one block per side, sent concurrently | none | CONC |
//!
//! FINs: a model never invents or loses a close. `ab` keeps every FIN in
//! place with each nonzero wait cut to 1 µs (the original format's `t 0`:
//! the trailing `t` survives, its time does not). `blk_seq` ends, if the
//! source had any FIN, with one FIN from the side that sent the last block
//! (`send_wait` 1 µs). `blk_conc` gives each side that had a FIN one after
//! its block (`send_wait` 1 µs), the initiator's first. All four results
//! of a connection the original format can express can be written in it,
//! except `blk_seq` of a connection that sends no data at all but closes:
//! its lone FIN has no unit to follow, which only the alternate format says.

use std::fmt;
use std::str::FromStr;

use super::{Adu, Connection, Mode, Side};

/// A connection-structure model (`structure = ...` in a traffic workload).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Structure {
    /// a-t-b-t: everything as in the file.
    Atbt,
    /// a-b: the same units and synchronisation, no times.
    Ab,
    /// One request block, then one response block.
    BlkSeq,
    /// Both directions' totals as single blocks, concurrently.
    BlkConc,
}

/// A structure name that is none of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown structure `{0}`: expected one of atbt, ab, blk_seq, blk_conc")]
pub struct UnknownStructure(pub String);

impl Structure {
    pub const ALL: [Structure; 4] = [Structure::Atbt, Structure::Ab, Structure::BlkSeq, Structure::BlkConc];

    /// The model's name as written in specs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Structure::Atbt => "atbt",
            Structure::Ab => "ab",
            Structure::BlkSeq => "blk_seq",
            Structure::BlkConc => "blk_conc",
        }
    }

    /// The connection as this model sees it.
    pub fn apply(&self, conn: &Connection) -> Connection {
        match self {
            Structure::Atbt => conn.clone(),
            Structure::Ab => with_units(conn, conn.mode, conn.adus.iter().map(untimed).collect()),
            Structure::BlkSeq => with_units(conn, Mode::Sequential, blocks_seq(conn)),
            Structure::BlkConc => with_units(conn, Mode::Concurrent, blocks_conc(conn)),
        }
    }
}

impl FromStr for Structure {
    type Err = UnknownStructure;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Structure::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| UnknownStructure(name.to_string()))
    }
}

impl fmt::Display for Structure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn with_units(conn: &Connection, mode: Mode, adus: Vec<Adu>) -> Connection {
    Connection {
        mode,
        adus,
        ..conn.clone()
    }
}

/// `ab`: data units lose their waits; a FIN keeps a minimal one.
fn untimed(adu: &Adu) -> Adu {
    let (send_wait_us, recv_wait_us) = if adu.bytes == 0 {
        (adu.send_wait_us.min(1), adu.recv_wait_us.min(1))
    } else {
        (0, 0)
    };
    Adu {
        send_wait_us,
        recv_wait_us,
        ..*adu
    }
}

fn block(side: Side, bytes: u64) -> Adu {
    Adu {
        side,
        send_wait_us: 0,
        recv_wait_us: 0,
        bytes,
    }
}

fn fin(side: Side) -> Adu {
    Adu {
        side,
        send_wait_us: 1,
        recv_wait_us: 0,
        bytes: 0,
    }
}

/// The per-side blocks (sides with no bytes send none), initiator first.
fn blocks(conn: &Connection) -> Vec<Adu> {
    [Side::Initiator, Side::Acceptor]
        .into_iter()
        .map(|side| (side, side_bytes(conn, side)))
        .filter(|&(_, bytes)| bytes > 0)
        .map(|(side, bytes)| block(side, bytes))
        .collect()
}

/// Like [`Connection::bytes`], but saturating: byte counts come from input
/// files, and an absurd file must not panic the conversion.
fn side_bytes(conn: &Connection, side: Side) -> u64 {
    conn.adus
        .iter()
        .filter(|a| a.side == side)
        .fold(0u64, |sum, a| sum.saturating_add(a.bytes))
}

fn blocks_seq(conn: &Connection) -> Vec<Adu> {
    let mut adus = blocks(conn);
    let any_fin = conn.has_fin(Side::Initiator) || conn.has_fin(Side::Acceptor);
    if any_fin {
        // Without blocks nobody "sent last"; the initiator then closes.
        let last = adus.last().map_or(Side::Initiator, |a| a.side);
        adus.push(fin(last));
    }
    adus
}

fn blocks_conc(conn: &Connection) -> Vec<Adu> {
    let mut adus = blocks(conn);
    for side in [Side::Initiator, Side::Acceptor] {
        if conn.has_fin(side) {
            adus.push(fin(side));
        }
    }
    adus
}
