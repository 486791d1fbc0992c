//! Extraction on several threads with a result identical to one thread.
//!
//! Work is cut into parts in corpus order and each part is extracted into
//! its own [`Extractor`]. Partial results are merged strictly in part
//! order, and merging is "append what the later part saw", so skipped
//! documents come out in a serial run's order, and everything else the
//! extraction reports is ordered independently of how the corpus was cut
//! (paths by text, values sorted, structures by count).
//!
//! Several inputs are cut into batches of consecutive inputs, a few per
//! thread rather than one per input: a part costs an extractor of its own
//! (its path table, every path's digest, its maps) and a merge, which on a
//! corpus of small one-document files cost more than reading the file.
//! A single input is cut at document starts (`chunks.rs`).

mod chunks;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::inputs::{with_unit, Inputs, Unit};
use crate::{Config, Extractor, XmlError};

/// Batches per thread: enough that the threads finish close together
/// when inputs differ in size, few enough that merges stay rare (8 cost
/// 16 % more CPU than 4 on 21,069 small files: decision 0021).
const BATCHES_PER_THREAD: usize = 4;

/// Extracts `units` on `threads` threads.
pub(crate) fn run(units: &[Unit<'_>], config: &Config, threads: usize) -> Result<Extractor, XmlError> {
    if let [unit] = units {
        if let Some(extractor) = chunks::run(unit, config, threads)? {
            return Ok(extractor);
        }
        return with_unit(unit, |name, source| {
            let mut extractor = Extractor::new(config);
            extractor.feed(name, source);
            extractor
        });
    }
    let size = units.len().div_ceil(threads * BATCHES_PER_THREAD).max(1);
    let batches: Vec<&[Unit<'_>]> = units.chunks(size).collect();
    let mut total = Extractor::new(config);
    let mut failure = None;
    in_order(
        threads,
        batches.len(),
        |i| {
            let (mut part, mut reading) = (Extractor::new(config), Inputs::default());
            for unit in batches.get(i).copied().unwrap_or_default() {
                reading.with(unit, |name, source| part.feed(name, source))?;
            }
            Ok(part)
        },
        |part: Result<Extractor, XmlError>| match part {
            Ok(part) => {
                total.merge(part);
                true
            }
            Err(e) => {
                // The first failing input in corpus order, as in a serial
                // run: every batch before this one was merged.
                failure = Some(e);
                false
            }
        },
    );
    match failure {
        Some(e) => Err(e),
        None => Ok(total),
    }
}

/// Runs `work(0..jobs)` on up to `threads` threads and hands the results to
/// `take` in job order, until `take` returns `false` (then no more job is
/// started and later results are dropped).
fn in_order<T: Send>(threads: usize, jobs: usize, work: impl Fn(usize) -> T + Sync, mut take: impl FnMut(T) -> bool) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<(usize, T)>();
        for _ in 0..threads.min(jobs) {
            let (tx, next, work) = (tx.clone(), &next, &work);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs || tx.send((i, work(i))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut waiting = std::collections::BTreeMap::new();
        let mut due = 0;
        for (i, result) in rx {
            waiting.insert(i, result);
            while let Some(result) = waiting.remove(&due) {
                due += 1;
                if !take(result) {
                    next.store(jobs, Ordering::Relaxed);
                    return;
                }
            }
        }
    });
}
