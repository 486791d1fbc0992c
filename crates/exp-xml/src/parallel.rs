//! Extraction on several threads with a result identical to one thread.
//!
//! Work is cut into parts in corpus order — one part per input when there
//! are several, batches of consecutive documents of a single input — and
//! each part is extracted into its own [`Extractor`]. Partial results are
//! merged strictly in part order, and merging is "append what the later
//! part saw", so skipped documents come out in a serial run's order, and
//! everything else the extraction reports is ordered independently of how
//! the corpus was cut (paths by text, values sorted, structures by count).
//!
//! A single input is cut by its reader: the calling thread parses it (the
//! parser is a sequential state machine) and hands batches of parsed
//! documents to worker threads, which do the walking, hashing and counting.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use crate::error::Skipped;
use crate::inputs::{with_unit, Unit};
use crate::parse::{DocReader, Document};
use crate::{Config, Extractor, XmlError};

/// Documents per batch handed to a worker.
const BATCH: usize = 512;

/// Batches in flight: bounds memory when workers fall behind the reader.
const IN_FLIGHT: usize = 8;

/// One item of a batch: a document or the record of a skipped one.
enum Item {
    Doc(Document),
    Skip(Skipped),
}

/// Merges parts arriving in any order into `total`, in part order.
struct Merger {
    total: Extractor,
    next: usize,
    waiting: BTreeMap<usize, Extractor>,
}

impl Merger {
    fn new(total: Extractor) -> Self {
        Self {
            total,
            next: 0,
            waiting: BTreeMap::new(),
        }
    }

    fn push(&mut self, index: usize, part: Extractor) {
        self.waiting.insert(index, part);
        while let Some(part) = self.waiting.remove(&self.next) {
            self.total.merge(part);
            self.next += 1;
        }
    }
}

/// Extracts `units` on `threads` threads.
pub(crate) fn run(units: &[Unit<'_>], config: &Config, threads: usize) -> Result<Extractor, XmlError> {
    if let [unit] = units {
        return with_unit(unit, |name, source| by_documents(config, threads, name, source));
    }
    let next = AtomicUsize::new(0);
    let mut merger = Merger::new(Extractor::new(config));
    let mut failure = None;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, Result<Extractor, XmlError>)>();
        for _ in 0..threads.min(units.len()) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(unit) = units.get(i) else { break };
                let result = with_unit(unit, |name, source| {
                    let mut part = Extractor::new(config);
                    part.feed(name, source);
                    part
                });
                if tx.send((i, result)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, result) in rx {
            match result {
                Ok(part) => merger.push(i, part),
                Err(e) => {
                    // The first failing input in corpus order wins, as in a
                    // serial run; stop handing out work.
                    next.store(units.len(), Ordering::Relaxed);
                    if failure.as_ref().is_none_or(|(at, _)| i < *at) {
                        failure = Some((i, e));
                    }
                }
            }
        }
    });
    match failure {
        Some((_, e)) => Err(e),
        None => Ok(merger.total),
    }
}

/// One input: this thread parses, workers walk batches of documents.
fn by_documents(config: &Config, threads: usize, name: &str, source: &mut dyn BufRead) -> Extractor {
    let mut merger = Merger::new(Extractor::new(config));
    let mut root = None;
    let (work_tx, work_rx) = mpsc::sync_channel::<(usize, Vec<Item>)>(IN_FLIGHT);
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Extractor)>();
    std::thread::scope(|scope| {
        for _ in 0..threads.saturating_sub(1).max(1) {
            let done_tx = done_tx.clone();
            let work_rx = &work_rx;
            scope.spawn(move || loop {
                let batch = match work_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => break,
                };
                let Ok((i, items)) = batch else { break };
                let mut part = Extractor::new(config);
                for item in items {
                    match item {
                        Item::Doc(doc) => part.document(&doc),
                        Item::Skip(skipped) => part.skip(skipped),
                    }
                }
                if done_tx.send((i, part)).is_err() {
                    break;
                }
            });
        }
        drop(done_tx);
        let mut reader = DocReader::new(name, source, config.split_at.as_deref());
        let mut batch = Vec::with_capacity(BATCH);
        let mut batches = 0;
        loop {
            let item = match reader.next_document() {
                None => break,
                Some(Ok(doc)) => Item::Doc(doc.clone()),
                Some(Err(skipped)) => Item::Skip(skipped),
            };
            batch.push(item);
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if work_tx.send((batches, full)).is_err() {
                    break;
                }
                batches += 1;
                // Merge what is ready while the workers go on.
                while let Ok((i, part)) = done_rx.try_recv() {
                    merger.push(i, part);
                }
            }
        }
        if !batch.is_empty() {
            // A send fails only when every worker is gone, and then the
            // results below are all there will be.
            let _ = work_tx.send((batches, batch));
        }
        drop(work_tx);
        root = reader.root().map(str::to_owned);
        for (i, part) in done_rx {
            merger.push(i, part);
        }
    });
    let mut total = merger.total;
    total.note_root(root.as_deref());
    total
}
