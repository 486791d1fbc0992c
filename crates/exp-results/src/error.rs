//! The one error type of this crate.

use std::path::PathBuf;
use std::sync::Arc;

use crate::table::{DType, RowError};

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot {action} {path}: {source}")]
    Json {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot serialise the {what}: {source}")]
    Serialize {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot {action} Parquet file {path}: {source}")]
    Parquet {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: exp_parquet::ParquetError,
    },
    /// A table file without a column a reader needs (a run of another version).
    #[error("{path}: no column `{column}`")]
    MissingColumn { path: PathBuf, column: String },
    /// A null where a reader needs a value (e.g. an anomaly activation without its name).
    #[error("{path}: column `{column}` is null where a value is required")]
    NullValue { path: PathBuf, column: String },
    #[error("{path}: column `{column}` holds {found}, expected {expected}")]
    ColumnType {
        path: PathBuf,
        column: String,
        expected: &'static str,
        found: String,
    },
    #[error("a run already exists at {path}")]
    RunExists { path: PathBuf },
    /// A shard or split part that already ran (or runs) in this run directory.
    #[error(
        "`{part}` of this run has already started ({path}): resume it with `expc run --resume {} {part}`",
        .path.parent().unwrap_or(.path).display()
    )]
    PartExists { path: PathBuf, part: String },
    #[error("{path} is not a run directory (no manifest.json)")]
    NotARun { path: PathBuf },
    /// A shard found the run's plan written by another shard, and it differs.
    #[error("{path} holds another plan (SHA-256 {found}) than this shard runs ({expected})")]
    PlanMismatch {
        path: PathBuf,
        expected: String,
        found: String,
    },
    /// A shard or split part does not agree with the parts already in the run (parts.rs).
    #[error("this part does not belong to the run in {}: {}", .path.parent().unwrap_or(.path).display(), .differences.join("; "))]
    PartsDisagree { path: PathBuf, differences: Vec<String> },
    /// Another process holds the run's runner lock: it is writing the run.
    #[error("the run is being written by another process ({holder}; lock {path})")]
    RunLocked { path: PathBuf, holder: String },
    /// The run directory is no longer where its runner writes it.
    #[error(
        "the run directory {path} was moved or removed while the run was writing it, so the run stopped; \
         what it wrote is wherever the directory went, and `expc run --resume` there goes on with it"
    )]
    RunDirMoved { path: PathBuf },
    #[error("invalid {what} `{name}`: {why}")]
    InvalidName {
        what: &'static str,
        name: String,
        why: &'static str,
    },
    #[error("{path}: manifest version {version} is not supported (this build reads version {supported})")]
    UnsupportedManifest {
        path: PathBuf,
        version: u32,
        supported: u32,
    },

    // Batches that do not fit their table: programming errors in an executor,
    // reported rather than panicking.
    #[error("table `{table}`: batch has {got} columns, the schema has {expected}")]
    BatchArity { table: String, expected: usize, got: usize },
    #[error("table `{table}`: column `{column}` is {expected:?} in the schema, the batch holds {got:?}")]
    BatchType {
        table: String,
        column: String,
        expected: DType,
        got: DType,
    },
    #[error("table `{table}`: column `{column}` has {got} rows, the first column has {expected}")]
    RaggedBatch {
        table: String,
        column: String,
        expected: usize,
        got: usize,
    },
    /// From [`crate::Batch::push_row`], for callers that build batches row by row.
    #[error("{0}")]
    Row(#[from] RowError),
    #[error("table `{table}` is already written with a different schema")]
    SchemaConflict { table: String },
    #[error("table `{table}` names column `{column}` twice")]
    DuplicateColumn { table: String, column: String },
    #[error("table `{table}`: trial {trial} is already finished")]
    TrialFinished { table: String, trial: u32 },

    /// An error writing a table's files, with the table it hit.
    #[error("table `{table}`: {source}")]
    Table {
        table: String,
        #[source]
        source: Box<ResultsError>,
    },
    #[error("the table store is closed")]
    StoreClosed,
    /// The writer thread failed earlier (disk full, …); every later write and
    /// the final close report the same first error.
    #[error("the table writer failed: {0}")]
    StoreFailed(#[source] Arc<ResultsError>),
    #[error("the table writer stopped unexpectedly (it panicked)")]
    WriterPanicked,
}

impl ResultsError {
    /// Whether this is the file system saying it is full (or over quota).
    pub fn is_disk_full(&self) -> bool {
        match self {
            ResultsError::Io { source, .. } => {
                matches!(
                    source.kind(),
                    std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
                )
            }
            ResultsError::Parquet { source, .. } => source.to_string().contains("No space left on device"),
            ResultsError::Table { source, .. } => source.is_disk_full(),
            ResultsError::StoreFailed(source) => source.is_disk_full(),
            _ => false,
        }
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| ResultsError::Io { action, path, source }
    }

    pub(crate) fn parquet(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(exp_parquet::ParquetError) -> Self {
        let path = path.into();
        move |source| ResultsError::Parquet { action, path, source }
    }
}

/// Checks a name used as one path component (run id, table, scratch
/// directory): no separators, nothing hidden, nothing a hive reader would
/// mistake for a partition (`=`).
pub fn check_component(what: &'static str, name: &str) -> Result<(), ResultsError> {
    let why = if name.is_empty() {
        Some("it is empty")
    } else if name.len() > 200 {
        Some("it is longer than 200 bytes")
    } else if name.starts_with('.') {
        Some("it starts with `.`")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        Some("only ASCII letters, digits, `_`, `-` and `.` are allowed")
    } else {
        None
    };
    match why {
        Some(why) => Err(ResultsError::InvalidName {
            what,
            name: name.to_string(),
            why,
        }),
        None => Ok(()),
    }
}
