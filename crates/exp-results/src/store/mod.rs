//! The table store: executors write [`Batch`]es through [`TableSink`]s; one
//! writer thread turns them into hive-partitioned Parquet files,
//! `tables/<table>/trial=<n>/part-<shard>.parquet`, one row group per
//! `row_group_rows` rows. While a trial runs, its rows are kept on disk in
//! segments and a checkpoint under `tables/.partial/` (files.rs), so a
//! killed runner loses at most the last `checkpoint` interval.
//!
//! Sinks hand batches to the writer over a bounded channel, so a writer
//! that falls behind (slow disk) slows the executors down instead of letting
//! memory grow: at most [`CHANNEL_BATCHES`] batches wait, plus one partial
//! row group per open file.

mod files;
mod frame;
mod writer;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::check_component;
use crate::manifest::{Manifest, TableRecord};
use crate::table::{Batch, Schema};
use crate::ResultsError;
pub(crate) use files::{parquet_rows, PARTIAL_DIR};
use writer::{lock, Msg, Shared, Writer};

/// How many batches may wait for the writer before `write` blocks.
pub const CHANNEL_BATCHES: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// Rows per Parquet row group (the last group of a file may be smaller).
    pub row_group_rows: usize,
    /// Rows waiting longer than this are written to the trial's checkpoint
    /// (within a quarter second more): what a killed runner can lose.
    pub checkpoint: Duration,
    /// Rows waiting longer than this are sealed into a segment of their own,
    /// so a checkpoint rewrites at most this much of a slow table.
    pub seal_after: Duration,
    /// A `host` column with this value added to every row of every table
    /// (a run split across hosts: each row says which host wrote it).
    pub host_column: Option<String>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            row_group_rows: 65_536,
            checkpoint: Duration::from_secs(2),
            seal_after: Duration::from_secs(60),
            host_column: None,
        }
    }
}

/// Rows the store has accepted per unfinished trial and table. Cloned
/// handles share the counts.
#[derive(Clone, Default)]
pub struct RowCounts(Arc<std::sync::Mutex<BTreeMap<u32, BTreeMap<String, u64>>>>);

impl RowCounts {
    /// The rows of `trial` so far, per table.
    pub fn trial(&self, trial: u32) -> BTreeMap<String, u64> {
        lock(&self.0).get(&trial).cloned().unwrap_or_default()
    }

    /// Called on every write: allocates only for a table the trial has not
    /// written yet.
    fn add(&self, trial: u32, table: &str, rows: u64) {
        let mut counts = lock(&self.0);
        let tables = counts.entry(trial).or_default();
        match tables.get_mut(table) {
            Some(n) => *n += rows,
            None => {
                tables.insert(table.to_string(), rows);
            }
        }
    }

    fn forget(&self, trial: u32) {
        lock(&self.0).remove(&trial);
    }
}

/// What the store wrote: finished files and their rows, per table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreSummary {
    pub tables: BTreeMap<String, TableRecord>,
}

impl Manifest {
    /// Adds what the store reports having written to `tables` (a resumed
    /// run keeps the counts of the files written before). Here, not in
    /// manifest.rs: the manifest's type knows nothing of the store.
    pub fn record_tables(&mut self, summary: &StoreSummary) {
        for (table, written) in &summary.tables {
            let total = self.tables.entry(table.clone()).or_default();
            total.rows += written.rows;
            total.files += written.files;
        }
    }
}

pub struct Store {
    shared: Arc<Shared>,
    tx: SyncSender<Msg>,
    /// `None` once closed.
    thread: Option<JoinHandle<()>>,
}

impl Store {
    /// Starts the writer thread for `tables_dir` (created if missing, but
    /// not its parent: a run directory that is gone is not made again).
    pub fn open(tables_dir: PathBuf, options: StoreOptions) -> Result<Store, ResultsError> {
        match std::fs::create_dir(&tables_dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(ResultsError::Io {
                    action: "create",
                    path: tables_dir,
                    source: e,
                })
            }
            _ => {}
        }
        let shared = Arc::new(Shared::default());
        let (tx, rx) = sync_channel(CHANNEL_BATCHES);
        let options = StoreOptions {
            row_group_rows: options.row_group_rows.max(1),
            ..options
        };
        let writer = Writer::new(tables_dir.clone(), options, Arc::clone(&shared));
        let thread = std::thread::Builder::new()
            .name("exp-results-writer".into())
            .spawn(move || writer.run(rx))
            .map_err(ResultsError::io("start the writer thread for", &tables_dir))?;
        Ok(Store {
            shared,
            tx,
            thread: Some(thread),
        })
    }

    /// A sink for one table of one trial and shard. Cheap; nothing is created
    /// on disk until rows arrive. A problem with the schema (bad table name,
    /// duplicate column, a table already opened with another schema) is
    /// returned by every `write` of the sink.
    pub fn sink(&self, schema: &Schema, trial: u32, shard: u32) -> TableSink {
        let mut schemas = lock(&self.shared.schemas);
        let defect =
            if let Err(ResultsError::InvalidName { name, why, .. }) = check_component("table name", &schema.name) {
                Some(Defect::Name { name, why })
            } else {
                frame::duplicate_column(schema).map(|column| Defect::DuplicateColumn(column.to_string()))
            };
        let (schema, defect) = match schemas.get(&schema.name) {
            Some(known) if **known == *schema => (Arc::clone(known), defect),
            Some(_) => (Arc::new(schema.clone()), Some(Defect::Conflict)),
            None => {
                let shared_schema = Arc::new(schema.clone());
                if defect.is_none() {
                    schemas.insert(schema.name.clone(), Arc::clone(&shared_schema));
                }
                (shared_schema, defect)
            }
        };
        TableSink {
            schema,
            trial,
            shard,
            defect,
            tx: self.tx.clone(),
            shared: Arc::clone(&self.shared),
        }
    }

    /// Writes the last row group and the footer of every file of `trial`,
    /// and blocks until they are on disk. Later writes to the trial fail
    /// with [`ResultsError::TrialFinished`]. Calling it again is harmless.
    pub fn finish_trial(&self, trial: u32) -> Result<(), ResultsError> {
        let (reply, answer) = sync_channel(1);
        {
            let mut gate = self.shared.gate.write().unwrap_or_else(PoisonError::into_inner);
            if gate.closed {
                return Err(ResultsError::StoreClosed);
            }
            gate.finished.insert(trial);
            self.shared.accepted.forget(trial);
            self.tx
                .send(Msg::FinishTrial { trial, reply })
                .map_err(|_| self.shared.gone())?;
        }
        answer.recv().map_err(|_| self.shared.gone())?
    }

    /// Lets a finished `trial` be written again, after its files were set
    /// aside (`repeat until` replacing an invalid attempt): `removed` (the
    /// set-aside files' rows and files, per table) no longer counts as
    /// written.
    pub fn reopen_trial(&self, trial: u32, removed: &BTreeMap<String, TableRecord>) {
        let mut gate = self.shared.gate.write().unwrap_or_else(PoisonError::into_inner);
        gate.finished.remove(&trial);
        let mut written = lock(&self.shared.written);
        for (table, gone) in removed {
            if let Some(record) = written.get_mut(table) {
                record.rows = record.rows.saturating_sub(gone.rows);
                record.files = record.files.saturating_sub(gone.files);
            }
        }
    }

    /// Rows accepted so far for `trial`, per table: what a progress line
    /// shows while the trial runs (forgotten when the trial is finished).
    pub fn trial_rows(&self, trial: u32) -> BTreeMap<String, u64> {
        self.shared.accepted.trial(trial)
    }

    /// The row counts alone, for a task that reports progress: it must not
    /// keep the store itself alive, which closes when its last owner lets go.
    pub fn row_counts(&self) -> RowCounts {
        self.shared.accepted.clone()
    }

    /// The writer's failure, if it failed (disk full, I/O error): every
    /// later write fails with it, so a run stops rather than go on unrecorded.
    pub fn failure(&self) -> Option<ResultsError> {
        self.shared.failed()
    }

    /// Files finished so far (for the manifest while the run goes).
    pub fn summary(&self) -> StoreSummary {
        StoreSummary {
            tables: lock(&self.shared.written).clone(),
        }
    }

    /// Finishes every file and stops the writer. Reports the writer's first
    /// error, if it had one; files finished before it stay readable.
    pub fn close(mut self) -> Result<StoreSummary, ResultsError> {
        self.shutdown()?;
        Ok(self.summary())
    }

    /// [`Store::close`] that also returns what was written when the writer
    /// failed, so the manifest can still list the files that are there.
    pub fn close_with_summary(mut self) -> (StoreSummary, Result<(), ResultsError>) {
        let result = self.shutdown();
        (self.summary(), result)
    }

    fn shutdown(&mut self) -> Result<(), ResultsError> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        {
            let mut gate = self.shared.gate.write().unwrap_or_else(PoisonError::into_inner);
            gate.closed = true;
            // Fails only if the thread is gone already; `join` tells why.
            let _ = self.tx.send(Msg::Close);
        }
        if thread.join().is_err() {
            self.shared.fail(ResultsError::WriterPanicked);
        }
        match self.shared.failed() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Store {
    /// An interrupted run keeps what it measured: dropping the store finishes
    /// every file as `close` would (errors cannot be reported from here).
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Why a sink refuses every write; kept instead of the error because
/// [`ResultsError`] is not `Clone`.
#[derive(Debug, Clone)]
enum Defect {
    Name { name: String, why: &'static str },
    DuplicateColumn(String),
    Conflict,
}

/// Where an executor writes one table of one trial and shard. Clone it
/// freely; clones write to the same file.
#[derive(Clone)]
pub struct TableSink {
    schema: Arc<Schema>,
    trial: u32,
    shard: u32,
    defect: Option<Defect>,
    tx: SyncSender<Msg>,
    shared: Arc<Shared>,
}

impl TableSink {
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn trial(&self) -> u32 {
        self.trial
    }

    pub fn shard(&self) -> u32 {
        self.shard
    }

    /// Queues the batch; the writer cuts row groups of exactly
    /// `row_group_rows` rows from the stream of batches. Blocks while the
    /// queue is full. Empty batches are accepted and ignored.
    pub fn write(&self, batch: Batch) -> Result<(), ResultsError> {
        let table = &self.schema.name;
        match &self.defect {
            Some(Defect::Name { name, why }) => {
                return Err(ResultsError::InvalidName {
                    what: "table name",
                    name: name.clone(),
                    why,
                })
            }
            Some(Defect::DuplicateColumn(column)) => {
                return Err(ResultsError::DuplicateColumn {
                    table: table.clone(),
                    column: column.clone(),
                })
            }
            Some(Defect::Conflict) => return Err(ResultsError::SchemaConflict { table: table.clone() }),
            None => {}
        }
        frame::check_batch(&self.schema, &batch)?;
        if let Some(e) = self.shared.failed() {
            return Err(e);
        }
        if batch.is_empty() {
            return Ok(());
        }
        let gate = self.shared.gate.read().unwrap_or_else(PoisonError::into_inner);
        if gate.closed {
            return Err(ResultsError::StoreClosed);
        }
        if gate.finished.contains(&self.trial) {
            return Err(ResultsError::TrialFinished {
                table: table.clone(),
                trial: self.trial,
            });
        }
        let rows = batch.rows() as u64;
        let msg = Msg::Write {
            schema: Arc::clone(&self.schema),
            trial: self.trial,
            shard: self.shard,
            batch,
        };
        self.tx.send(msg).map_err(|_| self.shared.gone())?;
        self.shared.accepted.add(self.trial, table, rows);
        Ok(())
    }
}
