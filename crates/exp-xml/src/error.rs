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
    /// The corpus holds no well-formed document (each was skipped, or the
    /// inputs hold none): there is nothing to make a set of.
    #[error("no well-formed document in the corpus ({} skipped); nothing to extract", skipped.len())]
    NoDocument { skipped: Vec<Skipped> },
    /// Reading or writing a file of a set directory, map directory or
    /// reveal input/output failed.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A Parquet table of a set directory could not be written or decoded.
    #[error("cannot {action} Parquet table `{path}`: {source}")]
    Parquet {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: exp_parquet::ParquetError,
    },
    /// A JSON file (`set.json`, `map.json`) could not be written or parsed.
    #[error("cannot {action} `{path}`: {source}")]
    Json {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A set file decodes but its content is not a valid set (missing
    /// column, bad hash, unknown family, reference to an unknown path ...).
    #[error("invalid set file `{path}`: {message}")]
    SetFormat { path: PathBuf, message: String },
    /// The private obfuscation map would be written inside the set
    /// directory, which is meant to be shared.
    #[error("the obfuscation map directory `{map_dir}` is inside the set directory `{set_dir}`")]
    MapInsideSet { map_dir: PathBuf, set_dir: PathBuf },
    /// Obfuscation cannot meet its guarantee (an original string of at least
    /// 4 characters would remain visible in the set).
    #[error("obfuscation failed: {0}")]
    Obfuscation(String),
    /// `reveal` input that is not XML it can rewrite.
    #[error("cannot reveal `{input}` at byte {position}: {message}")]
    Reveal {
        input: String,
        position: u64,
        message: String,
    },
    /// An output file could not be written by the output rule (a
    /// directory in its place, a FIFO with no reader, ENOSPC…).
    #[error(transparent)]
    Output(#[from] exp_files::WriteError),
    /// `reveal` would write over what it reads.
    #[error("the output `{output}` is (or holds, or lies inside) the input `{input}`: choose another output")]
    RevealOverInput { input: PathBuf, output: PathBuf },
    /// `reveal` found element or attribute names in a file and none of them
    /// in the map: the map is of another extraction.
    #[error("`{input}`: none of its {names} names is in the map: the map does not belong to these documents")]
    MapMismatch { input: String, names: u64 },
    /// The KS test of a numeric path failed during `compare`.
    #[error("comparison of path `{path}`: {source}")]
    CompareKs {
        path: String,
        #[source]
        source: exp_stats::KsError,
    },
}

/// Why a document was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    /// Not well-formed (mismatched/unmatched end tag, bad syntax, bad
    /// attribute, invalid UTF-8 ...). The text is the scanner's message
    /// (`parse/scanner.rs`, reading the tokens of `lexer/`).
    #[error("malformed XML: {0}")]
    Malformed(String),
    /// The input ended inside the document.
    #[error("input ended inside the document")]
    Truncated,
    /// The input is not UTF-8 (a UTF-16 or UTF-32 byte order mark, or NUL
    /// bytes among its first four); nothing of it is read.
    #[error("{0}")]
    Encoding(String),
    /// Reading the input failed; the rest of that input is not read.
    #[error("I/O error: {0}")]
    Io(String),
}

/// One skipped document: which input, where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Input name (file path or the name given to an in-memory input).
    pub input: String,
    /// Byte position in the input of the first problem found in the
    /// document.
    pub position: u64,
    pub reason: SkipReason,
}
