//! Errors of reading and writing connection-vector files.

use std::path::PathBuf;

/// Why a connection-vector file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CvecError {
    /// A line that does not fit the format: where, what, and what would have.
    #[error("{file}:{line}: expected {expected}, found `{text}`")]
    Syntax {
        /// The file's name as given to the parser.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The offending line, trimmed.
        text: String,
        /// What the parser expected at this point, in words.
        expected: String,
    },
    /// Reading or writing the file itself failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Writing to a caller's `Write` failed.
    #[error("writing connection vectors: {0}")]
    Write(#[source] std::io::Error),
    /// The original format has no way to say what this connection does
    /// (e.g. both waits set on one data unit, a FIN that is not the last
    /// line); the alternate format can always be written.
    #[error("connection {ids} cannot be written in the original format: {reason}")]
    NotExpressible {
        /// The connection's two identifiers, `ID1 ID2`.
        ids: String,
        reason: Inexpressible,
    },
}

/// What of a connection the original format cannot say (write.rs,
/// `original_body`); `unit` is the 1-based data unit where it shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Inexpressible {
    #[error("unit {unit}: a FIN must be the last unit")]
    FinNotLast { unit: usize },
    #[error("unit {unit}: the FIN must be sent by the side that sent the unit before it")]
    FinFromOtherSide { unit: usize },
    #[error("unit {unit}: a FIN needs send_wait ≥ 1 µs and recv_wait 0 (a trailing `t`)")]
    SequentialFinWaits { unit: usize },
    #[error("unit {unit}: recv_wait after a unit of the same side (only send_wait can follow one)")]
    RecvWaitAfterSameSide { unit: usize },
    #[error("unit {unit}: send_wait after a unit of the other side (only recv_wait can follow one)")]
    SendWaitAfterOtherSide { unit: usize },
    #[error("unit {unit}: recv_wait in a concurrent connection")]
    ConcurrentRecvWait { unit: usize },
    #[error("unit {unit}: at most one FIN per side, the initiator's first")]
    FinOrder { unit: usize },
    /// `time` is the side's time keyword (`t>` or `t<`).
    #[error("unit {unit}: a FIN needs send_wait ≥ 1 µs (a trailing `{time}`)")]
    ConcurrentFinWait { unit: usize, time: &'static str },
    #[error("unit {unit}: data after a FIN (FINs must come last)")]
    DataAfterFin { unit: usize },
}

impl CvecError {
    /// The 1-based line number of a syntax error.
    pub fn line(&self) -> Option<usize> {
        match self {
            CvecError::Syntax { line, .. } => Some(*line),
            _ => None,
        }
    }
}
