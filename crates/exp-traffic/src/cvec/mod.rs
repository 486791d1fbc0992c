//! Tmix connection vectors: the model every format is parsed into.
//!
//! The model is the alternate format's: a connection is a list of
//! application data units (ADUs), each with the side that sends it, how long
//! that side waits after its own previous send (`send_wait`) and after the
//! last ADU it received from the other side (`recv_wait`), and its size; a
//! size of 0 is that side's FIN. The original format's `SEQ`/`CONC` bodies
//! map onto it without loss (see `parse`), which is why both formats parse
//! to the same value.

mod analysis;
mod body;
mod convert;
mod error;
mod parse;
mod structure;
mod write;

pub(crate) use analysis::quantile_sorted;
pub use analysis::{mean_rtt_us, rtt_path_quantiles_us, rtt_quantile_us, rtts_us, Epoch};
pub use convert::convert;
pub use error::{CvecError, Inexpressible};
pub use parse::{parse, read_file, read_text, Format, Parsed, SkippedConnection, MAX_FILE_BYTES};
pub use structure::{Structure, UnknownStructure};
pub use write::{alternate_text, original_body, original_text, to_alternate, write_alternate, write_original};

/// Which endpoint sends a data unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The side that opens the connection (`>`/`c>` in the original format, `I`).
    Initiator,
    /// The side that accepts it (`<`/`c<`, `A`).
    Acceptor,
}

/// How the two sides' data units relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `SEQ`/`S`: request/response epochs; a side sends after receiving.
    Sequential,
    /// `CONC`/`C`: each side sends on its own schedule.
    Concurrent,
}

/// One application data unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Adu {
    pub side: Side,
    /// Microseconds after this side's previous send.
    pub send_wait_us: u64,
    /// Microseconds after the last data unit received from the other side.
    pub recv_wait_us: u64,
    /// Bytes; 0 is this side's FIN.
    pub bytes: u64,
}

/// Per-direction values of the `m`, `w` and `l` lines: initiator's first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerSide<T> {
    pub initiator: T,
    pub acceptor: T,
}

/// One connection vector.
#[derive(Debug, Clone, PartialEq)]
pub struct Connection {
    pub mode: Mode,
    /// Start time, microseconds from the start of the trace.
    pub start_us: u64,
    /// `m MSS_I MSS_A`
    pub mss: Option<PerSide<u32>>,
    /// `w WIN_I WIN_A`, bytes.
    pub window: Option<PerSide<u32>>,
    /// `r MIN_RTT_US`
    pub min_rtt_us: Option<u64>,
    /// `l LOSS_I2A LOSS_A2I`, probabilities.
    pub loss: Option<PerSide<f64>>,
    /// The header's two identifiers (kept verbatim so a round trip is exact).
    pub ids: (String, String),
    pub adus: Vec<Adu>,
}

impl Connection {
    /// A connection without `m`, `w`, `r` or `l` lines and with empty
    /// identifiers (for scripts built in code).
    pub fn new(start_us: u64, mode: Mode, adus: Vec<Adu>) -> Self {
        Self {
            mode,
            start_us,
            mss: None,
            window: None,
            min_rtt_us: None,
            loss: None,
            ids: (String::new(), String::new()),
            adus,
        }
    }

    /// Bytes sent by `side` (FINs count 0).
    pub fn bytes(&self, side: Side) -> u64 {
        self.adus.iter().filter(|a| a.side == side).map(|a| a.bytes).sum()
    }
}
