//! `--split K/N`: the workloads of every trial split across N processes,
//! typically one per host under `srun`, so that a fleet of 40,000 devices
//! runs on four nodes as one fleet.
//!
//! Every part runs every trial with its share of each splittable workload
//! ([`share`]): a contiguous block of a fleet's devices (their indices,
//! client ids, schedules and payloads are the ones the whole fleet would
//! give them), every N-th connection of a traffic workload, and its share
//! of an xml workload's documents. Anomalies and the monitor run on every
//! host, each on its own. Each part writes `part-<k>` files and its own
//! manifest fragment, like a shard; every row carries a `host` column.
//!
//! The parts start each trial at one instant, agreed through the run
//! directory (which they share): each says it is ready in
//! `sync/<attempt>/trial=<n>/ready-<k>`; part 0, once all are, names an
//! instant [`START_MARGIN`] ahead in `start`; every part sleeps until that
//! wall-clock instant. On several hosts this needs clocks in sync (NTP, as
//! clusters keep them); the parts' real start times are in their fragments.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::cancel::Cancel;
use crate::clock::{unix_ns, TrialClock};
use crate::events::{Event, Events};
use crate::shard::ShardSpec;

/// How far ahead of the last ready part the common start is set: time for
/// every part to see the start file on a shared file system.
pub const START_MARGIN: Duration = Duration::from_millis(300);
/// How long a part waits for the others to be ready for a trial.
pub const READY_TIMEOUT: Duration = Duration::from_secs(600);
const POLL: Duration = Duration::from_millis(5);
/// A part that waits this long for the others says so, then again every
/// [`WAIT_REPORT_EVERY`].
const WAIT_REPORT_AFTER: Duration = Duration::from_secs(2);
const WAIT_REPORT_EVERY: Duration = Duration::from_secs(10);

/// The block of `0..total` that part `split` takes: contiguous, sizes
/// differing by at most one, together exactly `0..total`.
pub fn share(total: u64, split: ShardSpec) -> Range<u64> {
    let (k, n) = (u128::from(split.index), u128::from(split.count));
    let bound = |i: u128| (u128::from(total) * i / n) as u64;
    bound(k)..bound(k + 1)
}

#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    #[error("trial {trial}: part {part} of the split run could not reach the others: {source} ({path})")]
    Io {
        trial: u32,
        part: u32,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "trial {trial}: the other parts of the split run were not ready within {timeout:?} (missing: {missing:?})"
    )]
    Timeout {
        trial: u32,
        timeout: Duration,
        missing: Vec<u32>,
    },
    #[error("trial {trial}: stopped while waiting for the other parts of the split run")]
    Cancelled { trial: u32 },
}

/// Waits until every part is ready for `trial`, then until the common start;
/// returns the trial's clock started at that instant (this process's own
/// reading of it). `generation` (the trial's attempt) keeps a resumed
/// run's barriers apart from the ones its earlier attempt left.
pub async fn common_start(
    run_dir: &Path,
    generation: usize,
    trial: u32,
    split: ShardSpec,
    cancel: &Cancel,
    events: &Events,
) -> Result<TrialClock, SplitError> {
    let dir = run_dir
        .join("sync")
        .join(generation.to_string())
        .join(format!("trial={trial}"));
    let io = |path: &Path, source| SplitError::Io {
        trial,
        part: split.index,
        path: path.to_path_buf(),
        source,
    };
    // Below the run directory only: a run moved away is not made again.
    exp_results::create_dir_below(run_dir, &dir).map_err(|e| match e {
        exp_results::ResultsError::Io { source, .. } => io(&dir, source),
        other => io(&dir, std::io::Error::other(other.to_string())),
    })?;
    let ready = dir.join(format!("ready-{}", split.index));
    std::fs::write(&ready, b"").map_err(|e| io(&ready, e))?;
    let start_file = dir.join("start");
    let waiting_since = Instant::now();
    let deadline = waiting_since + READY_TIMEOUT;
    let mut next_report = waiting_since + WAIT_REPORT_AFTER;
    let start_unix_ns = loop {
        if let Some(ns) = read_start(&start_file) {
            break ns;
        }
        let missing: Vec<u32> = (0..split.count)
            .filter(|k| !dir.join(format!("ready-{k}")).exists())
            .collect();
        if split.index == 0 && missing.is_empty() {
            let ns = unix_ns(SystemTime::now() + START_MARGIN);
            write_start(&start_file, ns).map_err(|e| io(&start_file, e))?;
            break ns;
        }
        let now = Instant::now();
        if now >= next_report {
            next_report = now + WAIT_REPORT_EVERY;
            events.send(Event::WaitingForParts {
                trial,
                missing: missing.clone(),
                count: split.count,
                waited_ns: now.duration_since(waiting_since).as_nanos() as u64,
                timeout_ns: READY_TIMEOUT.as_nanos() as u64,
            });
        }
        if now >= deadline {
            return Err(SplitError::Timeout {
                trial,
                timeout: READY_TIMEOUT,
                missing,
            });
        }
        if !cancel.sleep_until_async(Instant::now() + POLL).await {
            return Err(SplitError::Cancelled { trial });
        }
    };
    let now = unix_ns(SystemTime::now());
    let wait = Duration::from_nanos(start_unix_ns.saturating_sub(now));
    if !cancel.sleep_until_async(Instant::now() + wait).await {
        return Err(SplitError::Cancelled { trial });
    }
    Ok(TrialClock::start_now())
}

fn read_start(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Written whole (a temporary file renamed), so a reader never sees half.
fn write_start(path: &Path, unix_ns: u64) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, unix_ns.to_string())?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_unit_once() {
        for total in [0u64, 1, 2, 7, 10, 40_000] {
            for count in 1..=5 {
                let parts: Vec<Range<u64>> = (0..count)
                    .map(|index| share(total, ShardSpec { index, count }))
                    .collect();
                assert_eq!(parts[0].start, 0);
                assert_eq!(parts.last().unwrap().end, total);
                for pair in parts.windows(2) {
                    assert_eq!(pair[0].end, pair[1].start);
                }
                let sizes: Vec<u64> = parts.iter().map(|p| p.end - p.start).collect();
                assert!(
                    sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
                    "{sizes:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn parts_start_together_and_a_missing_part_is_named() {
        let dir = std::env::temp_dir().join(format!("expc-split-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cancel = Cancel::new();
        let part = |index| ShardSpec { index, count: 2 };
        let events = Events::none();
        let (a, b) = tokio::join!(
            common_start(&dir, 0, 3, part(0), &cancel, &events),
            common_start(&dir, 0, 3, part(1), &cancel, &events)
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!(a.start_unix_ns.abs_diff(b.start_unix_ns) < 1_000_000_000);
        let start: u64 = std::fs::read_to_string(dir.join("sync/0/trial=3/start"))
            .unwrap()
            .parse()
            .unwrap();
        assert!(a.start_unix_ns >= start && b.start_unix_ns >= start);

        // Part 1 of another trial alone: cancelled while it waits for part 0.
        let stop = Cancel::new();
        stop.raise(crate::cancel::Level::Stop);
        let alone = common_start(&dir, 0, 4, part(1), &stop, &events).await;
        assert!(matches!(alone, Err(SplitError::Cancelled { trial: 4 })), "{alone:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
