//! Extraction on several threads with a result identical to one thread.
//!
//! Work is cut into parts in corpus order — one part per input when there
//! are several, batches of consecutive documents of a single input — and
//! each part is extracted into its own partial result ([`Extractor`] or
//! [`AttributeCensus`]). Partial results are merged strictly in part order,
//! and merging is "append what the later part saw", so first-appearance
//! orders (paths, numeric values, skipped documents) come out as a serial
//! run makes them.
//!
//! A single input is cut by its reader: the calling thread parses it (the
//! parser is a sequential state machine) and hands batches of parsed
//! documents to worker threads, which do the walking, hashing and counting.
//! For `Auto` the census pass keeps the parsed batches ([`Kept`], within
//! the same memory budget as the serial path) and the extraction pass
//! ([`replay`]) walks them on every thread without parsing again.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use crate::error::Skipped;
use crate::extract::census_document;
use crate::inputs::{with_unit, Unit};
use crate::parse::{DocReader, Document};
use crate::{AttributeCensus, XmlError};

/// Documents per batch handed to a worker.
const BATCH: usize = 512;

/// Batches in flight: bounds memory when workers fall behind the reader.
const IN_FLIGHT: usize = 8;

/// One item of a batch: a document or the record of a skipped one.
pub(crate) enum Item {
    Doc(Document),
    Skip(Skipped),
}

/// A partial result of some part of the corpus, mergeable in corpus order.
pub(crate) trait Partial: Send + Sized {
    fn add_document(&mut self, doc: &Document);
    fn add_skipped(&mut self, skipped: &Skipped);
    fn add(&mut self, item: &Item) {
        match item {
            Item::Doc(doc) => self.add_document(doc),
            Item::Skip(skipped) => self.add_skipped(skipped),
        }
    }
    /// Called after the last document of an input, with its root element.
    fn end_input(&mut self, root: Option<&str>);
    fn merge(&mut self, later: Self);
}

impl Partial for AttributeCensus {
    fn add_document(&mut self, doc: &Document) {
        census_document(self, doc, &mut Vec::new());
    }

    /// Malformed documents are left out of the census; the second pass
    /// records them.
    fn add_skipped(&mut self, _: &Skipped) {}

    fn end_input(&mut self, _: Option<&str>) {}

    fn merge(&mut self, later: Self) {
        AttributeCensus::merge(self, later);
    }
}

impl Partial for crate::Extractor<'_> {
    fn add_document(&mut self, doc: &Document) {
        self.document(doc);
    }

    fn add_skipped(&mut self, skipped: &Skipped) {
        self.skip(skipped.clone());
    }

    fn end_input(&mut self, root: Option<&str>) {
        self.note_root(root);
    }

    fn merge(&mut self, later: Self) {
        crate::Extractor::merge(self, later);
    }
}

/// Merges parts arriving in any order into `total`, in part order.
struct Merger<P> {
    total: P,
    next: usize,
    waiting: BTreeMap<usize, P>,
}

impl<P: Partial> Merger<P> {
    fn new(total: P) -> Self {
        Self {
            total,
            next: 0,
            waiting: BTreeMap::new(),
        }
    }

    fn push(&mut self, index: usize, part: P) {
        self.waiting.insert(index, part);
        while let Some(part) = self.waiting.remove(&self.next) {
            self.total.merge(part);
            self.next += 1;
        }
    }
}

/// A batch of kept items; the last batch of an input carries `Some(root)`.
type KeptBatch = (Vec<Item>, Option<Option<String>>);

/// Parsed documents kept from a first pass (the `Auto` census) for the
/// second, within a memory budget: batches in corpus order, the last batch
/// of each input with that input's root element.
pub(crate) struct Kept {
    batches: Vec<KeptBatch>,
    bytes: usize,
    budget: usize,
    overflowed: bool,
}

impl Kept {
    pub fn new(budget: usize) -> Self {
        Self {
            batches: Vec::new(),
            bytes: 0,
            budget,
            overflowed: false,
        }
    }

    /// Appends the next batch (in corpus order); past the budget everything
    /// kept is dropped.
    fn push(&mut self, items: Vec<Item>, end: Option<Option<String>>) {
        if self.overflowed {
            return;
        }
        self.bytes += items
            .iter()
            .map(|item| match item {
                Item::Doc(doc) => doc.heap_size(),
                Item::Skip(_) => std::mem::size_of::<Skipped>(),
            })
            .sum::<usize>();
        if self.bytes > self.budget {
            self.overflowed = true;
            self.batches = Vec::new();
        } else {
            self.batches.push((items, end));
        }
    }

    /// Everything, if it fit.
    pub fn complete(self) -> Option<Self> {
        (!self.overflowed).then_some(self)
    }
}

/// Reads every document of one input into `part`; with `keep`, also
/// returns them.
fn feed_all<P: Partial>(
    part: &mut P,
    split_at: Option<&str>,
    name: &str,
    source: &mut dyn BufRead,
    keep: bool,
) -> (Vec<Item>, Option<String>) {
    let mut reader = DocReader::new(name, source, split_at);
    let mut kept = Vec::new();
    loop {
        let item = match reader.next_document() {
            None => break,
            Some(Ok(doc)) if !keep => {
                // Walk in place: nothing to clone.
                part.add_document(doc);
                continue;
            }
            Some(Ok(doc)) => Item::Doc(doc.clone()),
            Some(Err(skipped)) => Item::Skip(skipped),
        };
        part.add(&item);
        if keep {
            kept.push(item);
        }
    }
    let root = reader.root().map(str::to_owned);
    part.end_input(root.as_deref());
    (kept, root)
}

type UnitResult<P> = Result<(P, Vec<Item>, Option<String>), XmlError>;

/// Runs `make`-created partial results over `units` on `threads` threads
/// and merges them in order into `total`; with `keep`, the parsed
/// documents are kept for a second pass.
pub(crate) fn run<P: Partial>(
    units: &[Unit<'_>],
    split_at: Option<&str>,
    threads: usize,
    total: P,
    make: &(dyn Fn() -> P + Sync),
    mut keep: Option<&mut Kept>,
) -> Result<P, XmlError> {
    if let [unit] = units {
        return with_unit(unit, |name, source| {
            by_documents(split_at, threads, total, make, name, source, keep)
        });
    }
    let keeping = keep.is_some();
    let next = AtomicUsize::new(0);
    let mut merger = Merger::new(total);
    let mut failure = None;
    let mut pending: BTreeMap<usize, (Vec<Item>, Option<String>)> = BTreeMap::new();
    let mut next_kept = 0;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, UnitResult<P>)>();
        for _ in 0..threads.min(units.len()) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(unit) = units.get(i) else { break };
                let result = with_unit(unit, |name, source| {
                    let mut part = make();
                    let (items, root) = feed_all(&mut part, split_at, name, source, keeping);
                    (part, items, root)
                });
                if tx.send((i, result)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, result) in rx {
            match result {
                Ok((part, items, root)) => {
                    merger.push(i, part);
                    if let Some(kept) = keep.as_deref_mut() {
                        pending.insert(i, (items, root));
                        while let Some((items, root)) = pending.remove(&next_kept) {
                            kept.push(items, Some(root));
                            next_kept += 1;
                        }
                    }
                }
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
fn by_documents<P: Partial>(
    split_at: Option<&str>,
    threads: usize,
    total: P,
    make: &(dyn Fn() -> P + Sync),
    name: &str,
    source: &mut dyn BufRead,
    keep: Option<&mut Kept>,
) -> P {
    let mut merger = Merger::new(total);
    let mut root = None;
    let mut kept: BTreeMap<usize, Vec<Item>> = BTreeMap::new();
    let keeping = keep.is_some();
    let (work_tx, work_rx) = mpsc::sync_channel::<(usize, Vec<Item>)>(IN_FLIGHT);
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, P, Vec<Item>)>();
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
                let mut part = make();
                for item in &items {
                    part.add(item);
                }
                let items = if keeping { items } else { Vec::new() };
                if done_tx.send((i, part, items)).is_err() {
                    break;
                }
            });
        }
        drop(done_tx);
        let mut done = |(i, part, items): (usize, P, Vec<Item>)| {
            merger.push(i, part);
            if keeping {
                kept.insert(i, items);
            }
        };
        let mut reader = DocReader::new(name, source, split_at);
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
                while let Ok(result) = done_rx.try_recv() {
                    done(result);
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
        for result in done_rx {
            done(result);
        }
    });
    if let Some(keep) = keep {
        let last = kept.len().saturating_sub(1);
        if kept.is_empty() {
            keep.push(Vec::new(), Some(root.clone()));
        }
        for (n, (_, items)) in kept.into_iter().enumerate() {
            keep.push(items, (n == last).then(|| root.clone()));
        }
    }
    let mut total = merger.total;
    total.end_input(root.as_deref());
    total
}

/// The second pass over kept documents: the batches are cut into one
/// contiguous run per thread, so each thread builds one partial result and
/// only `threads - 1` merges are needed.
pub(crate) fn replay<P: Partial>(kept: Kept, threads: usize, total: P, make: &(dyn Fn() -> P + Sync)) -> P {
    let mut merger = Merger::new(total);
    let mut runs: Vec<Vec<KeptBatch>> = Vec::new();
    let per_run = kept.batches.len().div_ceil(threads.max(1)).max(1);
    let mut batches = kept.batches.into_iter().peekable();
    while batches.peek().is_some() {
        runs.push(batches.by_ref().take(per_run).collect());
    }
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, P)>();
        for (i, run) in runs.into_iter().enumerate() {
            let tx = tx.clone();
            scope.spawn(move || {
                let mut part = make();
                for (items, end) in run {
                    for item in &items {
                        part.add(item);
                    }
                    if let Some(root) = end {
                        part.end_input(root.as_deref());
                    }
                }
                // The receiver outlives the scope's threads.
                let _ = tx.send((i, part));
            });
        }
        drop(tx);
        for (i, part) in rx {
            merger.push(i, part);
        }
    });
    merger.total
}
