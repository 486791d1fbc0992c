//! The files of one table, trial and shard while its trial runs, and the
//! final file they become.
//!
//! ```text
//! tables/.partial/<table>/trial=<n>/part-<shard>.000000.parquet   sealed segments
//! tables/.partial/<table>/trial=<n>/part-<shard>.open.parquet     checkpoint of the rest
//! tables/<table>/trial=<n>/part-<shard>.parquet                   the final file
//! ```
//!
//! Every one of them is a complete Parquet file the moment it has its name:
//! each is written as `<name>.tmp` and renamed, and a write that fails
//! removes its `.tmp`. So a run killed at any instant keeps every sealed
//! segment and the last checkpoint readable, and a full disk leaves no
//! truncated or empty file behind.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use exp_parquet::{Frame, Reader};

use super::frame::fields;
use crate::rundir::{create_dir_below, sync_dir};
use crate::table::Schema;
use crate::ResultsError;

/// Where unfinished files are written, inside the tables directory.
pub(crate) const PARTIAL_DIR: &str = ".partial";

/// The paths of one (table, trial, shard).
pub(super) struct PartPaths {
    /// `tables/.partial/<table>/trial=<n>/`
    pub partial_dir: PathBuf,
    /// `tables/<table>/trial=<n>/part-<shard>.parquet`
    pub final_path: PathBuf,
    shard: u32,
    /// `tables/`: directories are made below it, never it or above (a run
    /// directory moved away while running is not made again).
    tables_dir: PathBuf,
}

impl PartPaths {
    pub fn new(tables_dir: &Path, table: &str, trial: u32, shard: u32) -> PartPaths {
        let trial_dir = format!("trial={trial}");
        PartPaths {
            partial_dir: tables_dir.join(PARTIAL_DIR).join(table).join(&trial_dir),
            final_path: tables_dir
                .join(table)
                .join(&trial_dir)
                .join(format!("part-{shard}.parquet")),
            shard,
            tables_dir: tables_dir.to_path_buf(),
        }
    }

    pub fn segment(&self, seq: u32) -> PathBuf {
        self.partial_dir.join(format!("part-{}.{seq:06}.parquet", self.shard))
    }

    pub fn checkpoint(&self) -> PathBuf {
        self.partial_dir.join(format!("part-{}.open.parquet", self.shard))
    }

    /// Where the final file is assembled before it is renamed into place.
    fn final_tmp(&self) -> PathBuf {
        self.partial_dir.join(format!("part-{}.parquet.tmp", self.shard))
    }

    /// Removes `.partial/<table>/trial=<n>/` and `.partial/<table>/` once
    /// empty; failing to is harmless (another shard's files are still there).
    pub fn tidy(&self) {
        let Ok(_lock) = lock_partial_dir(&self.tables_dir, true) else {
            return;
        };
        if fs::remove_dir(&self.partial_dir).is_ok() {
            if let Some(table_dir) = self.partial_dir.parent() {
                let _ = fs::remove_dir(table_dir);
            }
        }
    }
}

/// Writes `frames` as one Parquet file at `path`, through `tmp`; the
/// directories below `root` are created as needed. With `sync`, the file and its
/// directory are synced before this returns (the final file must survive a
/// power loss; segments only a crashed process). Returns the rows written.
fn write_file(
    root: &Path,
    tmp: &Path,
    path: &Path,
    schema: &Schema,
    frames: impl Iterator<Item = Result<Frame, ResultsError>>,
    sync: bool,
) -> Result<u64, ResultsError> {
    let written = write_tmp(root, tmp, schema, frames, sync).and_then(|rows| {
        if let Some(dir) = path.parent() {
            create_dir_below(root, dir)?;
        }
        fs::rename(tmp, path).map_err(ResultsError::io("rename", tmp))?;
        if let (true, Some(dir)) = (sync, path.parent()) {
            sync_dir(dir)?;
        }
        Ok(rows)
    });
    if written.is_err() {
        // Whatever part of it reached the disk is not a Parquet file.
        let _ = fs::remove_file(tmp);
    }
    written
}

/// Creates `path` (truncated) and its directories below `root` (the run's
/// tables directory: never made again if the run moved). The directories of
/// `.partial/` are shared by a run's shards and split parts, and a part
/// whose trial ends removes them once empty ([`PartPaths::tidy`]): the two
/// hold a lock on `.partial/` itself (never removed), shared here and
/// exclusive there, so no directory goes between its creation here and
/// the file's.
fn create_in_shared_dir(root: &Path, path: &Path) -> Result<File, ResultsError> {
    // Named by the file it is for: that is what could not be written.
    let named = |e: ResultsError| match e {
        ResultsError::Io { action, source, .. } => ResultsError::Io {
            action,
            path: path.to_path_buf(),
            source,
        },
        other => other,
    };
    let _lock = lock_partial_dir(root, false).map_err(named)?;
    if let Some(dir) = path.parent() {
        create_dir_below(root, dir).map_err(named)?;
    }
    File::options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(ResultsError::io("create", path))
}

/// `tables/.partial/`, made if needed and locked (`exclusive` or shared)
/// until the returned file is dropped.
fn lock_partial_dir(tables_dir: &Path, exclusive: bool) -> Result<File, ResultsError> {
    let dir = tables_dir.join(PARTIAL_DIR);
    create_dir_below(tables_dir, &dir)?;
    let handle = File::open(&dir).map_err(ResultsError::io("open", &dir))?;
    let locked = if exclusive { handle.lock() } else { handle.lock_shared() };
    locked.map_err(ResultsError::io("lock", &dir))?;
    Ok(handle)
}

fn write_tmp(
    root: &Path,
    tmp: &Path,
    schema: &Schema,
    frames: impl Iterator<Item = Result<Frame, ResultsError>>,
    sync: bool,
) -> Result<u64, ResultsError> {
    // Named by the file it is for: that is what could not be written.
    let file = create_in_shared_dir(root, tmp)?;
    let sync_handle = file.try_clone().map_err(ResultsError::io("open", tmp))?;
    let mut writer = exp_parquet::Writer::new(file, &fields(schema)).map_err(ResultsError::parquet("start", tmp))?;
    let mut rows = 0;
    for frame in frames {
        let frame = frame?;
        rows += frame.height() as u64;
        // One row group per frame.
        writer.write(&frame).map_err(ResultsError::parquet("write", tmp))?;
    }
    // `finish` writes the footer and flushes the writer's buffer (errors included).
    writer.finish().map_err(ResultsError::parquet("finish", tmp))?;
    // Without `sync` the bytes are in the page cache, which outlives the process.
    if sync {
        sync_handle.sync_all().map_err(ResultsError::io("sync", tmp))?;
    }
    Ok(rows)
}

/// Writes `frame` as a segment or checkpoint at `path` (replacing what is
/// there atomically).
pub(super) fn write_segment(
    paths: &PartPaths,
    path: &Path,
    schema: &Schema,
    frame: Frame,
) -> Result<u64, ResultsError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    write_file(
        &paths.tables_dir,
        Path::new(&tmp),
        path,
        schema,
        std::iter::once(Ok(frame)),
        false,
    )
}

/// Assembles the final file from the sealed segments and the unsealed
/// rest, in row groups of `row_group_rows`, syncs it and renames it into
/// place; then removes the segments and the checkpoint. On an error the
/// segments stay, so nothing already on disk is lost.
pub(super) fn assemble(
    paths: &PartPaths,
    schema: &Schema,
    segments: &[PathBuf],
    rest: Option<Frame>,
    row_group_rows: usize,
) -> Result<u64, ResultsError> {
    if paths.final_path.exists() {
        return Err(ResultsError::Io {
            action: "create",
            path: paths.final_path.clone(),
            source: std::io::ErrorKind::AlreadyExists.into(),
        });
    }
    let read = segments.iter().map(|path| read_frame(path));
    let frames = Regroup::new(read.chain(rest.map(Ok)), row_group_rows);
    let rows = write_file(
        &paths.tables_dir,
        &paths.final_tmp(),
        &paths.final_path,
        schema,
        frames,
        true,
    )?;
    for segment in segments {
        let _ = fs::remove_file(segment);
    }
    let _ = fs::remove_file(paths.checkpoint());
    paths.tidy();
    Ok(rows)
}

fn read_frame(path: &Path) -> Result<Frame, ResultsError> {
    let file = File::open(path).map_err(ResultsError::io("open", path))?;
    (Reader::new(file).and_then(|r| r.read_all())).map_err(ResultsError::parquet("read", path))
}

/// Cuts a stream of frames into frames of exactly `rows` rows (the last
/// may be smaller), so the final file has full row groups whatever the
/// segments held.
struct Regroup<I> {
    frames: I,
    rows: usize,
    pending: Option<Frame>,
    done: bool,
}

impl<I> Regroup<I> {
    fn new(frames: I, rows: usize) -> Self {
        Regroup {
            frames,
            rows: rows.max(1),
            pending: None,
            done: false,
        }
    }
}

impl<I: Iterator<Item = Result<Frame, ResultsError>>> Iterator for Regroup<I> {
    type Item = Result<Frame, ResultsError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(pending) = self.pending.take() {
                if pending.height() >= self.rows || (self.done && pending.height() > 0) {
                    let take = self.rows.min(pending.height());
                    let head = pending.slice(0..take);
                    let tail = pending.slice(take..pending.height());
                    self.pending = (tail.height() > 0).then_some(tail);
                    return Some(Ok(head));
                }
                self.pending = Some(pending);
            }
            if self.done {
                return None;
            }
            match self.frames.next() {
                None => self.done = true,
                Some(Err(e)) => {
                    self.done = true;
                    self.pending = None;
                    return Some(Err(e));
                }
                Some(Ok(frame)) => match self.pending.take() {
                    None => self.pending = Some(frame),
                    Some(mut pending) => {
                        if let Err(e) = stack(&mut pending, frame) {
                            self.done = true;
                            return Some(Err(e));
                        }
                        self.pending = Some(pending);
                    }
                },
            }
        }
    }
}

fn stack(pending: &mut Frame, frame: Frame) -> Result<(), ResultsError> {
    pending.append(frame).map_err(|source| ResultsError::Parquet {
        action: "combine the segments of",
        path: PathBuf::new(),
        source,
    })
}

/// The rows of a Parquet file, from its footer.
pub(crate) fn parquet_rows(path: &Path) -> Result<u64, ResultsError> {
    let file = File::open(path).map_err(ResultsError::io("open", path))?;
    let reader = Reader::new(file).map_err(ResultsError::parquet("read the footer of", path))?;
    Ok(reader.num_rows())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One part creates its files in `.partial/<table>/trial=<n>/` while
    /// another keeps tidying the directory away once empty (as a part does
    /// when its part of the trial ends): every file is still created.
    #[test]
    fn a_file_is_created_though_another_part_tidies_meanwhile() {
        let root = std::env::temp_dir().join(format!("expc-shared-dir-{}", std::process::id()));
        fs::create_dir_all(&root).unwrap();
        let other = PartPaths::new(&root, "table", 0, 0);
        let mine = PartPaths::new(&root, "table", 0, 1);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let remover = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    other.tidy();
                }
            })
        };
        for seq in 0..2_000 {
            let path = mine.segment(seq);
            create_in_shared_dir(&root, &path).unwrap();
            fs::remove_file(&path).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        remover.join().unwrap();
        let _ = fs::remove_dir_all(&root);
    }
}
