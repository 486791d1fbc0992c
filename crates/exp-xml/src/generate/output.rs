//! The output driver: which documents a run (or shard) produces, worker
//! threads that generate batches of consecutive documents, and one writer
//! that puts them out in order.
//!
//! Work is cut into batches on a global grid of `B` documents (B from the
//! set, never from the thread count). Workers claim batches in order but at
//! most `WINDOW_PER_THREAD × threads` ahead of the writer, so memory is
//! bounded by the set plus a few batches, whatever the output size. Each
//! batch is one buffer holding one or more pieces (a piece belongs to one
//! output file); with gzip each piece is compressed by its worker as its own
//! gzip member, so compression runs in parallel and a file is a valid
//! multi-member gzip stream (what `gzip -d` and `zcat` read).
//!
//! Layouts: `Stream` writes `<?xml …?>`, the split root's opening tag (if
//! the set has one), every document followed by a newline, and the closing
//! tag; a shard writes the header only if it is the first shard and the
//! footer only if it is the last, so shard outputs concatenate to the single
//! run's bytes (for gzip: to the same decompressed bytes). `FilePerDocument`
//! writes `doc-NNNNNNNNN.xml` (declaration, document, newline).
//! `DocumentsPerFile(n)` writes `part-NNNNN.xml` holding documents
//! `[k·n, (k+1)·n)`, wrapped in the split root (or, for a set without one,
//! in `<documents>`, so each file has one root element); shards then
//! split at file boundaries, so every file is identical to the single run's.
//!
//! `Amount::Bytes(target)` generates documents 0, 1, … until the
//! uncompressed output reaches the target, stopping at the end of a batch
//! (overshoot below one batch, about 256 KiB; deterministic because batches
//! are). Its end is unknown in advance, so it cannot be sharded: shards need
//! `Amount::Documents`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use flate2::write::GzEncoder;
use flate2::Compression;

use super::error::GenerateError;
use super::plan::{GenerateOptions, Layout, Plan};
use super::Generator;

/// Batches in flight per worker thread.
const WINDOW_PER_THREAD: u64 = 4;

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerateStats {
    /// Index of the first document and number of documents.
    pub first_document: u64,
    pub documents: u64,
    /// Uncompressed bytes (documents, newlines, declarations, wrappers).
    pub bytes: u64,
    /// Bytes written (compressed with gzip).
    pub written: u64,
    pub files: u64,
    pub wall: Duration,
}

/// Generates into `out` (layout `Stream`).
pub fn generate_to_writer<W: Write>(
    generator: &Generator,
    options: &GenerateOptions,
    out: W,
) -> Result<GenerateStats, GenerateError> {
    if options.layout != Layout::Stream {
        return Err(GenerateError::Options("a writer takes the stream layout".into()));
    }
    run(generator, options, Sink::Stream(out), &|| false)
}

/// Generates files into `dir` (created if missing; layout
/// `FilePerDocument` or `DocumentsPerFile`).
pub fn generate_to_dir(
    generator: &Generator,
    options: &GenerateOptions,
    dir: &Path,
) -> Result<GenerateStats, GenerateError> {
    generate_to_dir_until(generator, options, dir, &|| false)
}

/// [`generate_to_dir`], ending early once `stop` says so (asked between
/// batches, and at least every [`STOP_POLL`]): what was generated until
/// then is written, its last file closed, and the stats count it.
pub fn generate_to_dir_until(
    generator: &Generator,
    options: &GenerateOptions,
    dir: &Path,
    stop: &dyn Fn() -> bool,
) -> Result<GenerateStats, GenerateError> {
    if options.layout == Layout::Stream {
        return Err(GenerateError::Options("a directory takes a file layout".into()));
    }
    std::fs::create_dir_all(dir).map_err(|source| GenerateError::File {
        path: dir.to_owned(),
        source,
    })?;
    run(
        generator,
        options,
        Sink::<io::Sink>::Dir {
            dir: dir.to_owned(),
            current: None,
        },
        stop,
    )
}

/// How long the writer waits for a batch before asking `stop` again.
pub const STOP_POLL: Duration = Duration::from_millis(50);
/// One batch: pieces in `data`, each ending at an offset.
#[derive(Debug, Default)]
struct Batch {
    data: Vec<u8>,
    /// (file index this piece starts, if any; end offset in `data`).
    pieces: Vec<(Option<u64>, usize)>,
    documents: u64,
    raw_bytes: u64,
}

/// Appends `raw` to `out`, as one gzip member when compressing.
fn encode(raw: &[u8], gzip: bool, out: &mut Vec<u8>) {
    if gzip {
        let mut encoder = GzEncoder::new(out, Compression::fast());
        // Writing into a Vec cannot fail.
        let _ = encoder.write_all(raw);
        let _ = encoder.finish();
    } else {
        out.extend_from_slice(raw);
    }
}

/// Generates batch `k` into `data` (a recycled buffer). Without gzip the
/// documents go straight into `data`; with gzip into `scratch`, compressed
/// into `data` piece by piece.
fn produce(generator: &Generator, plan: &Plan, k: u64, data: Vec<u8>, scratch: &mut Vec<u8>) -> Batch {
    let (lo, hi) = plan.batch_range(k);
    let mut batch = Batch {
        data,
        documents: hi - lo,
        ..Batch::default()
    };
    let mut file: Option<u64> = None;
    let mut piece_start = 0;
    scratch.clear();
    let flush = |batch: &mut Batch, scratch: &mut Vec<u8>, file: Option<u64>, piece_start: &mut usize| {
        if plan.gzip {
            batch.raw_bytes += scratch.len() as u64;
            encode(scratch, true, &mut batch.data);
            scratch.clear();
        } else {
            batch.raw_bytes += (batch.data.len() - *piece_start) as u64;
        }
        batch.pieces.push((file, batch.data.len()));
        *piece_start = batch.data.len();
    };
    let mut i = lo;
    while i < hi {
        let file_start = plan.per_file.is_some_and(|n| i.is_multiple_of(n));
        if file_start {
            if i > lo {
                flush(&mut batch, scratch, file, &mut piece_start);
            }
            file = plan.per_file.map(|n| i / n);
        }
        let out = if plan.gzip { &mut *scratch } else { &mut batch.data };
        if file_start {
            plan.header(out);
        }
        // The documents up to the end of this file (or of the batch).
        let run_end = plan.per_file.map_or(hi, |n| hi.min((i / n + 1).saturating_mul(n)));
        generator.documents(i..run_end, out);
        i = run_end;
        if let Some(n) = plan.per_file {
            if i.is_multiple_of(n) || Some(i) == plan.end {
                plan.footer(out);
            }
        }
    }
    if hi > lo {
        flush(&mut batch, scratch, file, &mut piece_start);
    }
    batch
}

enum Sink<W: Write> {
    Stream(W),
    Dir {
        dir: PathBuf,
        current: Option<(PathBuf, File)>,
    },
}

impl<W: Write> Sink<W> {
    fn open(&mut self, name: String) -> Result<(), GenerateError> {
        if let Sink::Dir { dir, current } = self {
            let path = dir.join(name);
            let file = File::create(&path).map_err(|source| GenerateError::File {
                path: path.clone(),
                source,
            })?;
            *current = Some((path, file));
        }
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), GenerateError> {
        match self {
            Sink::Stream(w) => w.write_all(bytes).map_err(GenerateError::Write),
            Sink::Dir {
                current: Some((path, file)),
                ..
            } => file.write_all(bytes).map_err(|source| GenerateError::File {
                path: path.clone(),
                source,
            }),
            Sink::Dir { current: None, .. } => Err(GenerateError::Options("no file is open".into())),
        }
    }

    fn finish(&mut self) -> Result<(), GenerateError> {
        match self {
            Sink::Stream(w) => w.flush().map_err(GenerateError::Write),
            Sink::Dir { current, .. } => {
                current.take();
                Ok(())
            }
        }
    }
}

struct State {
    next: u64,
    written: u64,
    stop: bool,
}

/// Claim state shared by the workers and the writer.
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    pool: Mutex<Vec<Vec<u8>>>,
    window: u64,
    batches: Option<u64>,
}

impl Shared {
    /// The next batch to generate, waiting while the window is full;
    /// `None` when there is no more work.
    fn claim(&self) -> Option<u64> {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if st.stop || self.batches.is_some_and(|n| st.next >= n) {
                return None;
            }
            if st.next < st.written + self.window {
                st.next += 1;
                return Some(st.next - 1);
            }
            st = self.wake.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn advance(&self, written: u64, stop: bool) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.written = written;
        st.stop |= stop;
        self.wake.notify_all();
    }
}

fn run<W: Write>(
    generator: &Generator,
    options: &GenerateOptions,
    mut sink: Sink<W>,
    stop: &dyn Fn() -> bool,
) -> Result<GenerateStats, GenerateError> {
    let began = Instant::now();
    let plan = Plan::new(generator, options)?;
    let threads = options.threads.max(1);
    let shared = Shared {
        state: Mutex::new(State {
            next: 0,
            written: 0,
            stop: false,
        }),
        wake: Condvar::new(),
        pool: Mutex::new(Vec::new()),
        window: WINDOW_PER_THREAD * threads as u64,
        batches: plan.batches(),
    };
    let mut stats = GenerateStats {
        first_document: plan.start,
        documents: 0,
        bytes: 0,
        written: 0,
        files: 0,
        wall: Duration::ZERO,
    };
    let result = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(u64, Batch)>();
        for _ in 0..threads {
            let tx = tx.clone();
            let (shared, plan) = (&shared, &plan);
            scope.spawn(move || {
                let mut scratch = Vec::new();
                while let Some(k) = shared.claim() {
                    let data = shared.pool.lock().unwrap_or_else(PoisonError::into_inner).pop();
                    let batch = produce(generator, plan, k, data.unwrap_or_default(), &mut scratch);
                    if tx.send((k, batch)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let result = write_all(&plan, &shared, rx, &mut sink, &mut stats, stop);
        // Release the workers whether the writer finished or failed.
        shared.advance(u64::MAX / 2, true);
        result
    });
    result?;
    sink.finish()?;
    stats.wall = began.elapsed();
    Ok(stats)
}

/// The writer: batches in order, framing the stream and the end of a
/// `Bytes` run.
fn write_all<W: Write>(
    plan: &Plan,
    shared: &Shared,
    rx: mpsc::Receiver<(u64, Batch)>,
    sink: &mut Sink<W>,
    stats: &mut GenerateStats,
    stop: &dyn Fn() -> bool,
) -> Result<(), GenerateError> {
    let mut framing = Vec::new();
    let mut encoded = Vec::new();
    let mut emit = |raw: &Vec<u8>, sink: &mut Sink<W>, stats: &mut GenerateStats| {
        encoded.clear();
        encode(raw, plan.gzip, &mut encoded);
        stats.bytes += raw.len() as u64;
        stats.written += encoded.len() as u64;
        sink.write(&encoded)
    };
    if plan.per_file.is_none() && plan.first_shard {
        plan.header(&mut framing);
        emit(&framing, sink, stats)?;
    }
    let mut pending = BTreeMap::new();
    let mut next = 0u64;
    let mut done = plan.batches() == Some(0);
    let mut stopped = false;
    'receive: while !done {
        if stop() {
            stopped = true;
            shared.advance(next, true);
            break;
        }
        let (k, batch) = match rx.recv_timeout(STOP_POLL) {
            Ok(received) => received,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        pending.insert(k, batch);
        while let Some(mut batch) = pending.remove(&next) {
            let mut at = 0;
            for &(file, end) in &batch.pieces {
                if let Some(f) = file {
                    stats.files += 1;
                    sink.open(file_name(plan, f))?;
                }
                sink.write(batch.data.get(at..end).unwrap_or_default())?;
                at = end;
            }
            stats.documents += batch.documents;
            stats.bytes += batch.raw_bytes;
            stats.written += batch.data.len() as u64;
            next += 1;
            done = plan.batches() == Some(next) || plan.target.is_some_and(|t| stats.bytes >= t);
            shared.advance(next, done);
            batch.data.clear();
            let mut pool = shared.pool.lock().unwrap_or_else(PoisonError::into_inner);
            if (pool.len() as u64) < shared.window {
                pool.push(batch.data);
            }
            drop(pool);
            if done {
                break 'receive;
            }
        }
    }
    framing.clear();
    match plan.per_file {
        None if plan.last_shard => {
            plan.footer(&mut framing);
            if !framing.is_empty() {
                emit(&framing, sink, stats)?;
            }
        }
        // A `Bytes` run, or one stopped early, can end inside a file: close its wrapper.
        Some(n) if (plan.end.is_none() || stopped) && !stats.documents.is_multiple_of(n) => {
            plan.footer(&mut framing);
            if !framing.is_empty() {
                emit(&framing, sink, stats)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn file_name(plan: &Plan, file: u64) -> String {
    let gz = if plan.gzip { ".gz" } else { "" };
    match plan.per_file {
        Some(1) => format!("doc-{file:09}.xml{gz}"),
        _ => format!("part-{file:05}.xml{gz}"),
    }
}
