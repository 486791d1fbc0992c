//! The writer thread: owns every open table file, cuts row groups, and keeps
//! what it was given on disk while trials run.
//!
//! Rows of a running trial live in sealed segments (one full row group, or
//! everything older than `seal_after`) and a checkpoint of the rest,
//! rewritten at most every `checkpoint` interval once new rows are waiting
//! (files.rs). Finishing a trial assembles them into the final file, which
//! is moved into `tables/<table>/trial=<n>/` once synced. So a table's
//! directory only ever holds complete files — while the run goes, after a
//! failure and after a hard kill — and polars or DuckDB can scan it (or
//! `**/*.parquet` below it) at any time; and rows older than a checkpoint
//! interval survive a kill under `tables/.partial/`. Polars refuses a
//! directory with mixed file extensions, so unfinished files must not sit
//! next to finished ones.

use std::collections::{BTreeMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

use exp_parquet::Frame;

use super::files::{assemble, write_segment, PartPaths, PARTIAL_DIR};
use super::frame::to_frame;
use super::StoreOptions;
use crate::manifest::TableRecord;
use crate::table::{Batch, ColumnData, ColumnSpec, DType, Schema};
use crate::ResultsError;

pub(super) enum Msg {
    Write {
        schema: Arc<Schema>,
        trial: u32,
        shard: u32,
        batch: Batch,
    },
    FinishTrial {
        trial: u32,
        reply: SyncSender<Result<(), ResultsError>>,
    },
    Close,
}

/// State shared by the store, its sinks and the writer thread.
#[derive(Default)]
pub(super) struct Shared {
    /// Held for reading while a sink sends and for writing while the trial
    /// set or `closed` changes, so no write can slip in behind a
    /// `FinishTrial` or `Close` message of its trial.
    pub gate: RwLock<Gate>,
    /// The writer's first fatal error.
    pub failure: OnceLock<Arc<ResultsError>>,
    /// Rows and files of every finished file, per table.
    pub written: Mutex<BTreeMap<String, TableRecord>>,
    /// The schema each table was first opened with.
    pub schemas: Mutex<BTreeMap<String, Arc<Schema>>>,
    /// Rows accepted so far per unfinished trial and table, for progress.
    pub accepted: super::RowCounts,
}

#[derive(Default)]
pub(super) struct Gate {
    pub finished: HashSet<u32>,
    pub closed: bool,
}

impl Shared {
    pub fn fail(&self, error: ResultsError) {
        // Only the first error is kept: later ones are usually its echoes.
        let _ = self.failure.set(Arc::new(error));
    }

    pub fn failed(&self) -> Option<ResultsError> {
        self.failure.get().map(|e| ResultsError::StoreFailed(Arc::clone(e)))
    }

    /// The error for a writer thread that is gone.
    pub fn gone(&self) -> ResultsError {
        self.failed().unwrap_or(ResultsError::WriterPanicked)
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section leaves its data consistent, so a panic elsewhere
    // while holding the lock does not make the data unusable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How often the writer looks for rows due for a checkpoint when no batch arrives.
const TICK: Duration = Duration::from_millis(250);

type Key = (String, u32, u32);

/// One table of one trial and shard while its trial runs.
struct OpenFile {
    schema: Arc<Schema>,
    paths: PartPaths,
    /// Rows in no sealed segment, oldest first.
    rest: Option<Frame>,
    /// When the oldest row of `rest` arrived.
    rest_since: Option<Instant>,
    /// When the oldest row not yet in a checkpoint arrived.
    unsaved_since: Option<Instant>,
    segments: Vec<PathBuf>,
}

impl OpenFile {
    fn rest_rows(&self) -> usize {
        self.rest.as_ref().map_or(0, Frame::height)
    }
}

pub(super) struct Writer {
    pub dir: PathBuf,
    pub options: StoreOptions,
    pub shared: Arc<Shared>,
    files: BTreeMap<Key, OpenFile>,
}

impl Writer {
    pub fn new(dir: PathBuf, options: StoreOptions, shared: Arc<Shared>) -> Self {
        Writer {
            dir,
            options,
            shared,
            files: BTreeMap::new(),
        }
    }

    /// Serves messages until `Close` (or until every sender is gone), saving
    /// rows due for a checkpoint in between; then finishes every open file.
    pub fn run(mut self, rx: Receiver<Msg>) {
        loop {
            match rx.recv_timeout(TICK) {
                Ok(Msg::Write {
                    schema,
                    trial,
                    shard,
                    batch,
                }) => {
                    // After a failure, writes already queued are dropped: the
                    // store is failed and reports so to everyone.
                    if self.shared.failure.get().is_none() {
                        let key = (schema.name.clone(), trial, shard);
                        if let Err(e) = self.guarded(|w| w.write(&key, schema, batch)) {
                            self.abandon(&key, e);
                        }
                    }
                }
                Ok(Msg::FinishTrial { trial, reply }) => {
                    let result = self.guarded(|w| w.finish_where(|key| key.1 == trial));
                    let _ = reply.send(result);
                }
                Ok(Msg::Close) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if self.shared.failure.get().is_none() {
                self.checkpoint_due();
            }
        }
        let _ = self.guarded(|w| w.finish_where(|_| true));
        // Left in place (not empty) only if a file could not be finished.
        let _ = std::fs::remove_dir(self.dir.join(PARTIAL_DIR));
    }

    /// Runs `f`, turning a panic (a defect in the writer or its Parquet
    /// library) into an error
    /// so the remaining files still get finished.
    fn guarded<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, ResultsError>) -> Result<T, ResultsError> {
        match catch_unwind(AssertUnwindSafe(|| f(self))) {
            Ok(result) => result,
            Err(_) => {
                self.shared.fail(ResultsError::WriterPanicked);
                Err(self.shared.gone())
            }
        }
    }

    /// A file that failed is given up: what it sealed and checkpointed
    /// stays on disk, readable; the rows only in memory are lost with the
    /// store, which is failed from now on and says why.
    fn abandon(&mut self, key: &Key, error: ResultsError) {
        self.files.remove(key);
        self.shared.fail(error);
    }

    fn write(&mut self, key: &Key, schema: Arc<Schema>, batch: Batch) -> Result<(), ResultsError> {
        let now = Instant::now();
        let host = self.options.host_column.as_deref();
        let file = self.files.entry(key.clone()).or_insert_with(|| OpenFile {
            paths: PartPaths::new(&self.dir, &key.0, key.1, key.2),
            schema: match host {
                Some(_) => Arc::new(with_host_column(&schema)),
                None => schema,
            },
            rest: None,
            rest_since: None,
            unsaved_since: None,
            segments: Vec::new(),
        });
        let table = &key.0;
        let mut batch = batch;
        if let Some(host) = host {
            let rows = batch.rows();
            batch.columns.push(ColumnData::Str(vec![Some(host.to_string()); rows]));
        }
        let frame = to_frame(&file.schema, batch).map_err(|source| ResultsError::Parquet {
            action: "encode rows for",
            path: file.paths.final_path.clone(),
            source,
        })?;
        match file.rest.as_mut() {
            None => {
                file.rest = Some(frame);
                file.rest_since = Some(now);
            }
            Some(rest) => {
                rest.append(frame).map_err(|source| ResultsError::Parquet {
                    action: "buffer rows for",
                    path: file.paths.final_path.clone(),
                    source,
                })?;
            }
        }
        file.unsaved_since.get_or_insert(now);
        while file.rest_rows() >= self.options.row_group_rows {
            seal(table, file, self.options.row_group_rows)?;
        }
        Ok(())
    }

    /// Seals what waited longer than `seal_after` and checkpoints what
    /// waited longer than `checkpoint`; a failure fails the store.
    fn checkpoint_due(&mut self) {
        let now = Instant::now();
        let keys: Vec<Key> = self.files.keys().cloned().collect();
        for key in keys {
            let Some(file) = self.files.get_mut(&key) else { continue };
            let result = if file.rest_since.is_some_and(|t| now - t >= self.options.seal_after) {
                let rows = file.rest_rows();
                seal(&key.0, file, rows)
            } else if file.unsaved_since.is_some_and(|t| now - t >= self.options.checkpoint) {
                checkpoint(&key.0, file)
            } else {
                Ok(())
            };
            if let Err(e) = result {
                self.abandon(&key, e);
                return;
            }
        }
    }

    /// Finishes every open file whose key matches; keeps going after an
    /// error so one bad file does not cost the others.
    fn finish_where(&mut self, matches: impl Fn(&Key) -> bool) -> Result<(), ResultsError> {
        let keys: Vec<Key> = self.files.keys().filter(|k| matches(k)).cloned().collect();
        for key in keys {
            if let Some(file) = self.files.remove(&key) {
                match finish(&key.0, file, self.options.row_group_rows) {
                    Ok(rows) if rows > 0 => {
                        let mut written = lock(&self.shared.written);
                        let record = written.entry(key.0.clone()).or_default();
                        record.rows += rows;
                        record.files += 1;
                    }
                    Ok(_) => {}
                    Err(e) => self.shared.fail(e),
                }
            }
        }
        match self.shared.failed() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Writes the first `rows` rows of the rest as the next sealed segment
/// (and drops the checkpoint, whose rows are now all in segments or still
/// to be checkpointed).
fn seal(table: &str, file: &mut OpenFile, rows: usize) -> Result<(), ResultsError> {
    let Some(rest) = file.rest.take() else { return Ok(()) };
    let rows = rows.min(rest.height());
    let head = rest.slice(0..rows);
    let tail = rest.slice(rows..rest.height());
    let path = file.paths.segment(file.segments.len() as u32);
    write_segment(&file.paths, &path, &file.schema, head).map_err(|e| in_table(table, e))?;
    file.segments.push(path);
    if tail.height() > 0 {
        // The rest replaces the checkpoint at once (a rename): no moment
        // leaves rows that were on disk in no file.
        file.rest = Some(tail);
        checkpoint(table, file)?;
    } else {
        let _ = std::fs::remove_file(file.paths.checkpoint());
        file.rest_since = None;
        file.unsaved_since = None;
    }
    Ok(())
}

/// Rewrites the checkpoint with the whole rest.
fn checkpoint(table: &str, file: &mut OpenFile) -> Result<(), ResultsError> {
    let Some(rest) = file.rest.as_ref() else { return Ok(()) };
    write_segment(&file.paths, &file.paths.checkpoint(), &file.schema, rest.clone()).map_err(|e| in_table(table, e))?;
    file.unsaved_since = None;
    Ok(())
}

/// The final file from the segments and the rest; the rows it holds.
fn finish(table: &str, file: OpenFile, row_group_rows: usize) -> Result<u64, ResultsError> {
    if file.segments.is_empty() && file.rest.is_none() {
        return Ok(0);
    }
    assemble(&file.paths, &file.schema, &file.segments, file.rest, row_group_rows).map_err(|e| in_table(table, e))
}

fn in_table(table: &str, source: ResultsError) -> ResultsError {
    ResultsError::Table {
        table: table.to_string(),
        source: Box::new(source),
    }
}

/// `schema` with the `host` column a split run adds to every row.
fn with_host_column(schema: &Schema) -> Schema {
    let mut schema = schema.clone();
    schema.columns.push(ColumnSpec {
        name: "host".into(),
        dtype: DType::Str,
    });
    schema
}
