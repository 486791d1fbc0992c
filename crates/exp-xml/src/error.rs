//! Typed errors and the record of skipped (malformed) documents.

use std::path::PathBuf;

/// Errors that stop an extraction. Malformed XML is *not* one of them: a bad
/// document is skipped and recorded as a [`Skipped`] so one broken event in a
/// log of thousands does not lose the rest.
#[derive(Debug, thiserror::Error)]
pub enum XmlError {
    #[error("cannot open input `{path}`: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid configuration: {0}")]
    Config(String),
}

/// Why a document was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    /// Not well-formed (mismatched/unmatched end tag, bad syntax, bad
    /// attribute, invalid UTF-8 ...). The text is quick-xml's message.
    #[error("malformed XML: {0}")]
    Malformed(String),
    /// The input ended inside the document.
    #[error("input ended inside the document")]
    Truncated,
    /// Reading the input failed; the rest of that input is not read.
    #[error("I/O error: {0}")]
    Io(String),
}

/// One skipped document: which input, where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Input name (file path or the name given to an in-memory input).
    pub input: String,
    /// Byte position in the input where the problem was detected
    /// (quick-xml's `error_position`/`buffer_position`).
    pub position: u64,
    pub reason: SkipReason,
}
