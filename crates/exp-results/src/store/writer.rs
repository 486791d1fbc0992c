//! The writer thread: owns every open Parquet file, gathers batches into
//! row groups, writes footers when a trial or the store is finished.
//!
//! A file is written under `tables/.partial/<table>/trial=<n>/` and moved to
//! `tables/<table>/trial=<n>/part-<shard>.parquet` once its footer is written
//! and synced. So a table's directory only ever holds complete files — while
//! the run goes, after a failure and after a hard kill — and polars or DuckDB
//! can scan it (or `**/*.parquet` below it) at any time. Polars refuses a
//! directory with mixed file extensions, so unfinished files must not sit
//! next to finished ones.

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File};
use std::io::BufWriter;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use polars::io::parquet::write::BatchedWriter;
use polars::prelude::{ParquetCompression, ParquetWriter};

use super::frame::{polars_schema, to_frame, Rows};
use crate::manifest::TableRecord;
use crate::rundir::sync_dir;
use crate::table::{Batch, Schema};
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

type Key = (String, u32, u32);

struct OpenFile {
    schema: Arc<Schema>,
    buffer: Batch,
    part: Option<Part>,
    rows: u64,
}

struct Part {
    writer: BatchedWriter<BufWriter<File>>,
    /// A second handle on the file, to fsync it once the footer is written.
    file: File,
    partial: PathBuf,
    /// `tables/<table>/trial=<n>/part-<shard>.parquet`.
    path: PathBuf,
}

/// Where unfinished files are written, inside the tables directory.
pub(crate) const PARTIAL_DIR: &str = ".partial";

pub(super) struct Writer {
    pub dir: PathBuf,
    pub row_group_rows: usize,
    pub shared: Arc<Shared>,
    files: BTreeMap<Key, OpenFile>,
}

impl Writer {
    pub fn new(dir: PathBuf, row_group_rows: usize, shared: Arc<Shared>) -> Self {
        Writer {
            dir,
            row_group_rows,
            shared,
            files: BTreeMap::new(),
        }
    }

    /// Serves messages until `Close` (or until every sender is gone), then
    /// finishes every open file.
    pub fn run(mut self, rx: Receiver<Msg>) {
        while let Ok(msg) = rx.recv() {
            match msg {
                Msg::Write {
                    schema,
                    trial,
                    shard,
                    batch,
                } => {
                    // After a failure, writes already queued are dropped: the
                    // store is failed and reports so to everyone.
                    if self.shared.failure.get().is_none() {
                        let key = (schema.name.clone(), trial, shard);
                        if let Err(e) = self.guarded(|w| w.write(&key, schema, batch)) {
                            // A file that failed (or panicked) mid-write is
                            // abandoned under `.partial/`: a footer written
                            // after a failed page could describe bytes that
                            // are not there.
                            self.files.remove(&key);
                            self.shared.fail(e);
                        }
                    }
                }
                Msg::FinishTrial { trial, reply } => {
                    let result = self.guarded(|w| w.finish_where(|key| key.1 == trial));
                    let _ = reply.send(result);
                }
                Msg::Close => break,
            }
        }
        let _ = self.guarded(|w| w.finish_where(|_| true));
        // Left in place (not empty) only if a file could not be finished.
        let _ = fs::remove_dir(self.dir.join(PARTIAL_DIR));
    }

    /// Runs `f`, turning a panic (polars asserts internally) into an error
    /// so the remaining files still get their footers.
    fn guarded(&mut self, f: impl FnOnce(&mut Self) -> Result<(), ResultsError>) -> Result<(), ResultsError> {
        match catch_unwind(AssertUnwindSafe(|| f(self))) {
            Ok(result) => result,
            Err(_) => {
                self.shared.fail(ResultsError::WriterPanicked);
                Err(self.shared.gone())
            }
        }
    }

    fn write(&mut self, key: &Key, schema: Arc<Schema>, batch: Batch) -> Result<(), ResultsError> {
        let row_group_rows = self.row_group_rows;
        let file = self.files.entry(key.clone()).or_insert_with(|| OpenFile {
            buffer: schema.batch(),
            schema,
            part: None,
            rows: 0,
        });
        let n = batch.rows();
        if file.buffer.is_empty() && n <= row_group_rows {
            // Nothing buffered and the batch fits: keep it as is, no copy.
            file.buffer = batch;
        } else {
            let mut rows = Rows::new(batch);
            let mut offset = 0;
            while offset < n {
                let take = (row_group_rows - file.buffer.rows()).min(n - offset);
                rows.move_into(&mut file.buffer, take);
                offset += take;
                if file.buffer.rows() >= row_group_rows {
                    flush(&self.dir, key, file)?;
                }
            }
        }
        if file.buffer.rows() >= row_group_rows {
            flush(&self.dir, key, file)?;
        }
        Ok(())
    }

    /// Flushes and finishes every open file whose key matches; keeps going
    /// after an error so one bad file does not cost the others.
    fn finish_where(&mut self, matches: impl Fn(&Key) -> bool) -> Result<(), ResultsError> {
        let keys: Vec<Key> = self.files.keys().filter(|k| matches(k)).cloned().collect();
        for key in keys {
            if let Some(file) = self.files.remove(&key) {
                if let Err(e) = finish(&self.dir, &key, file, &self.shared) {
                    self.shared.fail(e);
                }
            }
        }
        match self.shared.failed() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Writes the buffered rows as one row group, creating the file on first use.
fn flush(dir: &Path, key: &Key, file: &mut OpenFile) -> Result<(), ResultsError> {
    if file.buffer.is_empty() {
        return Ok(());
    }
    if file.part.is_none() {
        file.part = Some(create_part(dir, key, &file.schema)?);
    }
    let Some(part) = file.part.as_mut() else { return Ok(()) };
    let batch = std::mem::replace(&mut file.buffer, file.schema.batch());
    let rows = batch.rows() as u64;
    let frame = to_frame(&file.schema, batch).map_err(ResultsError::parquet("encode", &part.partial))?;
    part.writer
        .write_batch(&frame)
        .map_err(ResultsError::parquet("write", &part.partial))?;
    file.rows += rows;
    Ok(())
}

fn create_part(dir: &Path, (table, trial, shard): &Key, schema: &Schema) -> Result<Part, ResultsError> {
    let trial_dir = format!("trial={trial}");
    let name = format!("part-{shard}.parquet");
    let path = dir.join(table).join(&trial_dir).join(&name);
    if path.exists() {
        return Err(ResultsError::Io {
            action: "create",
            path,
            source: std::io::ErrorKind::AlreadyExists.into(),
        });
    }
    let partial_dir = dir.join(PARTIAL_DIR).join(table).join(&trial_dir);
    fs::create_dir_all(&partial_dir).map_err(ResultsError::io("create", &partial_dir))?;
    let partial = partial_dir.join(&name);
    let file = File::options()
        .write(true)
        .create_new(true)
        .open(&partial)
        .map_err(ResultsError::io("create", &partial))?;
    let sync_handle = file.try_clone().map_err(ResultsError::io("open", &partial))?;
    // zstd (polars' default, from the `parquet` feature's compression set):
    // compact and read by every current Parquet reader.
    let writer = ParquetWriter::new(BufWriter::with_capacity(1 << 20, file))
        .with_compression(ParquetCompression::Zstd(None))
        .batched(&polars_schema(schema))
        .map_err(ResultsError::parquet("start", &partial))?;
    Ok(Part {
        writer,
        file: sync_handle,
        partial,
        path,
    })
}

/// Last row group, footer, fsync, rename into place, count.
fn finish(dir: &Path, key: &Key, mut file: OpenFile, shared: &Shared) -> Result<(), ResultsError> {
    flush(dir, key, &mut file)?;
    let Some(part) = file.part else { return Ok(()) };
    // `finish` writes the footer and flushes the BufWriter (errors included).
    part.writer
        .finish()
        .map_err(ResultsError::parquet("finish", &part.partial))?;
    drop(part.writer);
    part.file.sync_all().map_err(ResultsError::io("sync", &part.partial))?;
    let trial_dir = part.path.parent().unwrap_or(dir);
    fs::create_dir_all(trial_dir).map_err(ResultsError::io("create", trial_dir))?;
    fs::rename(&part.partial, &part.path).map_err(ResultsError::io("rename", &part.partial))?;
    sync_dir(trial_dir)?;
    // Tidy `.partial/<table>/trial=<n>/` and `.partial/<table>/` once empty;
    // failing to is harmless (another file of the table is still open).
    if let Some(partial_trial) = part.partial.parent() {
        let _ = fs::remove_dir(partial_trial);
        if let Some(partial_table) = partial_trial.parent() {
            let _ = fs::remove_dir(partial_table);
        }
    }
    let mut written = lock(&shared.written);
    let record = written.entry(key.0.clone()).or_default();
    record.rows += file.rows;
    record.files += 1;
    Ok(())
}
