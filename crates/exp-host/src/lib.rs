//! Facts about this machine and readers of the kernel's counters
//! (`/proc`, `/sys`). Pure readers: nothing here starts or changes anything.
//!
//! Each counter file has a parser that works on text (so it can be tested on
//! fixtures) and a reader of the real file. On top of them sit the two
//! samplers behind the `monitor` block: [`SystemSampler`] (one wide row per
//! interval for the `system_metrics` table) and [`ProcessSampler`] (one row
//! per watched process for `process_metrics`).

mod cache;
mod columns;
mod cpu_facts;
mod current;
mod diskstats;
mod facts;
mod meminfo;
mod net_facts;
mod netdev;
mod pid;
mod process;
mod procstat;
mod small_files;
mod sys;
mod system;
mod system_facts;
mod vmstat;

pub use cache::{cache_size_bytes, caches, Cache};
pub use columns::{Column, ColumnType, MetricCell};
pub use cpu_facts::CpuFacts;
pub use current::{
    effective_capabilities, effective_uid, nr_open, peak_rss_bytes, process_cpu_ns, process_exists, thread_cpu_ns,
    thread_sched_field,
};
pub use diskstats::{diskstats, is_counted_disk, DiskStat};
pub use facts::{facts, hostname, online_cpus, CacheFact, HostFacts};
pub use meminfo::{meminfo, MemInfo};
pub use net_facts::{InterfaceFacts, NetworkFacts};
pub use netdev::{net_dev, NetDev};
pub use pid::{
    parse_schedstat, pid_io, pid_stat, pid_statm, pid_thread_cpu_ns, pid_thread_schedstat, PidIo, PidStat, PidStatm,
    SchedStat,
};
pub use process::{ProcessSampler, RUNNER_WORKLOAD};
pub use procstat::{proc_stat, CpuTimes, ProcStat};
pub use sys::{allocate, clock_ticks_per_s, disk_free_bytes, page_size};
pub use system::{SamplerOptions, SystemSampler};
pub use system_facts::{MemoryFacts, Virtualization};
pub use vmstat::{vmstat, VmStat};

/// A file under /proc or /sys that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot parse {path}: {what}")]
    Parse { path: String, what: String },
    #[error("cannot query the file system holding {path}: {source}")]
    StatFs {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

pub(crate) fn read(path: &str) -> Result<String, HostError> {
    std::fs::read_to_string(path).map_err(|source| HostError::Read {
        path: path.to_string(),
        source,
    })
}

/// Reads a file of a process or thread that may have exited: `None` when it
/// has. Exiting shows as ENOENT (the directory is gone) or ESRCH (the task is
/// being torn down while its directory still exists).
pub(crate) fn read_if_alive(path: &str) -> Result<Option<String>, HostError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if is_gone(&e) => Ok(None),
        Err(source) => Err(HostError::Read {
            path: path.to_string(),
            source,
        }),
    }
}

pub(crate) fn is_gone(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH)
}

pub(crate) fn parse_error(path: &str, what: impl Into<String>) -> HostError {
    HostError::Parse {
        path: path.to_string(),
        what: what.into(),
    }
}

/// Parses one decimal counter; `what` names it in the error.
pub(crate) fn parse_u64(path: &str, what: &str, word: Option<&str>) -> Result<u64, HostError> {
    let word = word.ok_or_else(|| parse_error(path, format!("{what} is missing")))?;
    word.parse()
        .map_err(|_| parse_error(path, format!("{what} `{word}` is not a counter")))
}

/// The growth of a counter between two readings. A counter that went
/// backwards (a 32-bit wrap, a device removed and re-added, a thread that
/// exited) gives 0 for the interval rather than a huge bogus number.
pub(crate) fn delta(now: u64, before: u64) -> u64 {
    now.saturating_sub(before)
}
