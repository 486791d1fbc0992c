//! The process sampler: one row per watched process per sample, for the
//! `process_metrics` table.
//!
//! CPU time comes from each thread's schedstat (nanoseconds) rather than
//! from utime+stime in /proc/<pid>/stat (clock ticks, 10 ms at USER_HZ=100,
//! too coarse for 1 s samples of a lightly loaded process). schedstat only
//! exists for live threads, so the sampler keeps each thread's last reading
//! and adds up growth: a thread that appears counts from zero, and a thread
//! that exits loses only what it ran since the previous sample. On a kernel
//! without schedstat it falls back to utime+stime.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::Path;
use std::time::Instant;

use crate::columns::{Cells, Column, Columns, MetricCell, RowSink};
use crate::{clock_ticks_per_s, delta, page_size, pid_io, pid_stat, pid_statm, pid_thread_cpu_ns, HostError, PidIo};

/// The workload name under which [`ProcessSampler::watch_self`] records the
/// runner, so the load generator's own cost is in the table.
pub const RUNNER_WORKLOAD: &str = "expc";

/// How a process is read on this machine, decided once.
struct Probe {
    /// Nanoseconds per clock tick if schedstat is missing.
    ticks_fallback_ns: Option<u64>,
    page_size: u64,
    /// /proc/<pid>/io needs CONFIG_TASK_IO_ACCOUNTING.
    io_supported: bool,
}

/// One reading of a process.
struct Reading {
    at: Instant,
    start_ticks: u64,
    threads: u64,
    rss_bytes: u64,
    /// Run time of each live thread (schedstat), or utime+stime of the
    /// whole process under the tid 0 (fallback).
    thread_ns: BTreeMap<u32, u64>,
    /// `None` when the runner may not read the process's io file.
    io: Option<PidIo>,
}

impl Probe {
    /// `Ok(None)` if the process has exited (a zombie counts as exited).
    fn read(&self, pid: u32) -> Result<Option<Reading>, HostError> {
        let at = Instant::now();
        let Some(stat) = pid_stat(pid)?.filter(|s| !s.has_exited()) else {
            return Ok(None);
        };
        let Some(statm) = pid_statm(pid)? else { return Ok(None) };
        let thread_ns = match self.ticks_fallback_ns {
            None => match pid_thread_cpu_ns(pid)? {
                Some(threads) => threads,
                None => return Ok(None),
            },
            Some(ns_per_tick) => {
                let ticks = stat.utime_ticks.saturating_add(stat.stime_ticks);
                BTreeMap::from([(0, ticks.saturating_mul(ns_per_tick))])
            }
        };
        let io = if self.io_supported {
            match pid_io(pid) {
                Ok(Some(io)) => Some(io),
                Ok(None) => return Ok(None),
                // Another user's process: sample the rest, leave I/O null.
                Err(HostError::Read { source, .. }) if source.kind() == ErrorKind::PermissionDenied => None,
                Err(e) => return Err(e),
            }
        } else {
            None
        };
        Ok(Some(Reading {
            at,
            start_ticks: stat.start_ticks,
            threads: stat.num_threads,
            rss_bytes: statm.resident_pages.saturating_mul(self.page_size),
            thread_ns,
            io,
        }))
    }
}

struct Watched {
    workload: String,
    pid: u32,
    /// CPU time seen so far, in ns: the live threads' run time at the first
    /// reading plus all growth since.
    cpu_time_ns: u64,
    last: Reading,
}

/// One row of `process_metrics`; rates are `None` on a process's first row.
struct Row<'a> {
    t_ns: u64,
    workload: &'a str,
    pid: u32,
    cpu_pct: Option<f64>,
    cpu_time_ns: u64,
    rss_bytes: u64,
    threads: u64,
    io_rates: [Option<f64>; 4],
}

impl Row<'_> {
    fn emit(&self, sink: &mut impl RowSink) {
        sink.u64(format_args!("t_ns"), Some(self.t_ns));
        sink.str(format_args!("workload"), self.workload);
        sink.u64(format_args!("pid"), Some(u64::from(self.pid)));
        sink.f64(format_args!("cpu_pct"), self.cpu_pct);
        sink.u64(format_args!("cpu_time_ns"), Some(self.cpu_time_ns));
        sink.u64(format_args!("rss_bytes"), Some(self.rss_bytes));
        sink.u64(format_args!("threads"), Some(self.threads));
        let [read, write, rchar, wchar] = self.io_rates;
        sink.f64(format_args!("read_bytes_per_s"), read);
        sink.f64(format_args!("write_bytes_per_s"), write);
        sink.f64(format_args!("rchar_per_s"), rchar);
        sink.f64(format_args!("wchar_per_s"), wchar);
    }
}

/// Samples the processes the runtime registers into rows of the
/// `process_metrics` table. `cpu_pct` is of one CPU (a process running two
/// threads flat out shows 200); `read_bytes_per_s`/`write_bytes_per_s` are
/// storage I/O, `rchar_per_s`/`wchar_per_s` all bytes through read- and
/// write-like system calls (page-cache hits, pipes and sockets too).
pub struct ProcessSampler {
    probe: Probe,
    watched: Vec<Watched>,
    errors: Vec<HostError>,
}

impl Default for ProcessSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessSampler {
    pub const TABLE: &'static str = "process_metrics";

    pub fn new() -> Self {
        let schedstat = Path::new("/proc/self/schedstat").exists();
        let ticks_fallback_ns = (!schedstat).then(|| 1_000_000_000 / clock_ticks_per_s().max(1));
        let probe = Probe {
            ticks_fallback_ns,
            page_size: page_size(),
            io_supported: Path::new("/proc/self/io").exists(),
        };
        ProcessSampler {
            probe,
            watched: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// The columns of [`Self::TABLE`], in row order.
    pub fn columns(&self) -> Vec<Column> {
        let mut columns = Columns::default();
        let row = Row {
            t_ns: 0,
            workload: "",
            pid: 0,
            cpu_pct: None,
            cpu_time_ns: 0,
            rss_bytes: 0,
            threads: 0,
            io_rates: [None; 4],
        };
        row.emit(&mut columns);
        columns.0
    }

    /// Starts watching `pid` under `workload`, taking the reading the first
    /// sample's rates are measured from. Returns false if the process has
    /// already exited (it is then not watched) or could not be read (the
    /// error is kept for [`Self::take_errors`]). Watching a pid again
    /// replaces the earlier entry.
    pub fn watch(&mut self, workload: &str, pid: u32) -> bool {
        self.forget(pid);
        match self.probe.read(pid) {
            Ok(Some(first)) => {
                let cpu_time_ns = first.thread_ns.values().fold(0u64, |s, &t| s.saturating_add(t));
                self.watched.push(Watched {
                    workload: workload.to_string(),
                    pid,
                    cpu_time_ns,
                    last: first,
                });
                true
            }
            Ok(None) => false,
            Err(e) => {
                self.errors.push(e);
                false
            }
        }
    }

    /// Watches this process as [`RUNNER_WORKLOAD`].
    pub fn watch_self(&mut self) -> bool {
        self.watch(RUNNER_WORKLOAD, std::process::id())
    }

    /// Stops watching `pid`; false if it was not watched.
    pub fn forget(&mut self, pid: u32) -> bool {
        let before = self.watched.len();
        self.watched.retain(|w| w.pid != pid);
        self.watched.len() != before
    }

    /// The watched (workload, pid) pairs, in the order they were registered.
    pub fn watched(&self) -> impl Iterator<Item = (&str, u32)> {
        self.watched.iter().map(|w| (w.workload.as_str(), w.pid))
    }

    /// One row per watched process that is still alive, in watch order.
    /// Processes that have exited (or whose pid now belongs to another
    /// process) are dropped silently and no longer watched. A process whose
    /// files could not be read is left out of this sample but stays
    /// watched; the error is kept for [`Self::take_errors`].
    pub fn sample<C: MetricCell>(&mut self, t_ns: u64) -> Vec<Vec<C>> {
        let mut rows = Vec::with_capacity(self.watched.len());
        let (probe, errors) = (&self.probe, &mut self.errors);
        self.watched.retain_mut(|w| match probe.read(w.pid) {
            Ok(Some(now)) if now.start_ticks == w.last.start_ticks => {
                let mut cells = Cells(Vec::new());
                w.advance(now, t_ns).emit(&mut cells);
                rows.push(cells.0);
                true
            }
            Ok(_) => false,
            Err(e) => {
                errors.push(e);
                true
            }
        });
        rows
    }

    /// The read errors of [`Self::watch`] and [`Self::sample`] since the last call.
    pub fn take_errors(&mut self) -> Vec<HostError> {
        std::mem::take(&mut self.errors)
    }
}

impl Watched {
    /// Takes in a new reading and gives the row for it.
    fn advance(&mut self, now: Reading, t_ns: u64) -> Row<'_> {
        let ns = u64::try_from(now.at.saturating_duration_since(self.last.at).as_nanos()).unwrap_or(u64::MAX);
        let ran_ns = now
            .thread_ns
            .iter()
            .map(|(tid, &t)| delta(t, self.last.thread_ns.get(tid).copied().unwrap_or(0)))
            .fold(0u64, u64::saturating_add);
        self.cpu_time_ns = self.cpu_time_ns.saturating_add(ran_ns);
        let per_s = |count: u64| (ns > 0).then(|| count as f64 * 1e9 / ns as f64);
        let io_rates = match (self.last.io, now.io) {
            (Some(a), Some(b)) => [
                per_s(delta(b.read_bytes, a.read_bytes)),
                per_s(delta(b.write_bytes, a.write_bytes)),
                per_s(delta(b.rchar, a.rchar)),
                per_s(delta(b.wchar, a.wchar)),
            ],
            _ => [None; 4],
        };
        let row = Row {
            t_ns,
            workload: &self.workload,
            pid: self.pid,
            cpu_pct: per_s(ran_ns).map(|per_s| per_s / 1e9 * 100.0),
            cpu_time_ns: self.cpu_time_ns,
            rss_bytes: now.rss_bytes,
            threads: now.threads,
            io_rates,
        };
        self.last = now;
        row
    }
}
