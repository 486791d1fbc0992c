//! Run directories, manifests and Parquet tables.
//!
//! ```text
//! runs/<experiment>/<run-id>/            (.<run-id>.partial/ while running)
//!   manifest.json                          Manifest
//!   plan.json                              the plan that ran
//!   tables/<table>/trial=<n>/part-<shard>.parquet
//!   tables/.partial/…                      files being written (gone after a clean close)
//! ```
//!
//! [`RunDir`] owns the directory, [`Store`] writes the tables through
//! [`TableSink`]s, and [`open_run`] reads a run back: its manifest and the
//! files of its tables (exp-report turns them into summaries and reports).
//! [`schemas`] names the tables the executors write and their columns, for
//! the writers and the readers alike. Nothing here prints; everything
//! fallible returns [`ResultsError`].

pub mod claims;
mod columns;
mod error;
mod json_lines;
pub mod manifest;
pub mod part_chunks;
mod parts;
mod provenance;
mod read;
mod run_status;
mod rundir;
pub mod runner;
pub mod schemas;
mod shards;
mod store;
pub mod table;
pub mod timeline;
mod times;
pub mod validity;
mod warning;

pub use columns::Columns;
pub use error::{check_component, ResultsError};
pub use exp_parquet::{Col, StrCol};
pub use manifest::{
    new_run_id, rfc3339, unix_ns, AttemptRecord, Manifest, OptionsRecord, PointRecord, ResumeRecord, RunStatus,
    ShardOf, ShardState, SpecRecord, TableRecord, TrialRecord, TrialStatus, MANIFEST_VERSION,
};
pub use parts::{recorded as recorded_parts, PartMode, PartsAgreement, PARTS_FILE};
pub use provenance::BuildRecord;
pub use read::{open_run, open_run_unlocked, PartFile, RunView, TableFiles};
pub use rundir::{
    create_dir_below, experiment_dir_name, has_partial_name, locate_run, plan_sha256, AttemptFiles, Role, RunDir,
    LOCK_FILE,
};
pub use shards::{merge as merge_shards, read_run, write_merged, Writers};
pub use store::{RowCounts, Store, StoreOptions, StoreSummary, TableSink, CHANNEL_BATCHES};
pub use table::{Batch, Cell, ColumnData, ColumnSpec, DType, RowError, Schema};
pub use warning::Warning;
