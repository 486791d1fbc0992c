//! Per-process files: /proc/<pid>/stat, statm, io and the per-thread
//! schedstat. The readers return `Ok(None)` for a process (or thread) that
//! has exited: processes come and go, and that is not an error.

use std::collections::BTreeMap;

use crate::{is_gone, parse_error, parse_u64, read_if_alive, HostError};

/// The fields of /proc/<pid>/stat the process sampler uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PidStat {
    /// The command name, without the parentheses.
    pub comm: String,
    /// `R`, `S`, `D`, `Z` (zombie), `X` (dead), …
    pub state: char,
    /// CPU time in user and kernel mode, in clock ticks, including threads
    /// that have exited.
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    pub num_threads: u64,
    /// When the process started, in clock ticks after boot. With the pid it
    /// identifies a process: a reused pid has a different start time.
    pub start_ticks: u64,
}

impl PidStat {
    pub fn parse(text: &str) -> Result<Self, HostError> {
        Self::parse_at("/proc/<pid>/stat", text)
    }

    fn parse_at(path: &str, text: &str) -> Result<Self, HostError> {
        // The name may itself contain spaces and parentheses; it ends at the last `)`.
        let (open, close) = match (text.find('('), text.rfind(')')) {
            (Some(open), Some(close)) if open < close => (open, close),
            _ => return Err(parse_error(path, "no `(comm)` field")),
        };
        let comm = text[open + 1..close].to_string();
        // Field 3 (state) is the first after the name, so field k is rest[k - 3].
        let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
        let field = |k: usize, what: &str| parse_u64(path, what, rest.get(k - 3).copied());
        let state = rest
            .first()
            .and_then(|s| s.chars().next())
            .ok_or_else(|| parse_error(path, "no state field"))?;
        Ok(PidStat {
            comm,
            state,
            utime_ticks: field(14, "utime")?,
            stime_ticks: field(15, "stime")?,
            num_threads: field(20, "num_threads")?,
            start_ticks: field(22, "starttime")?,
        })
    }

    /// A zombie or dead process runs nothing and holds no memory: for a
    /// sampler it has exited, even before its parent reaps it. A main thread
    /// that called pthread_exit also shows as a zombie while the other
    /// threads run on; those still count in `num_threads`, so a process is
    /// only taken as exited when its last thread is.
    pub fn has_exited(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x') && self.num_threads <= 1
    }
}

/// /proc/<pid>/statm, in pages (see [`crate::page_size`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PidStatm {
    pub size_pages: u64,
    pub resident_pages: u64,
    pub shared_pages: u64,
}

impl PidStatm {
    pub fn parse(text: &str) -> Result<Self, HostError> {
        let path = "/proc/<pid>/statm";
        let mut w = text.split_whitespace();
        Ok(PidStatm {
            size_pages: parse_u64(path, "size", w.next())?,
            resident_pages: parse_u64(path, "resident", w.next())?,
            shared_pages: parse_u64(path, "shared", w.next())?,
        })
    }
}

/// /proc/<pid>/io: bytes moved by the whole process, exited threads included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PidIo {
    /// Bytes passed to read-like system calls (files, pipes, sockets, cache hits).
    pub rchar: u64,
    /// Bytes passed to write-like system calls.
    pub wchar: u64,
    /// Bytes fetched from storage.
    pub read_bytes: u64,
    /// Bytes sent (or to be sent) to storage.
    pub write_bytes: u64,
}

impl PidIo {
    pub fn parse(text: &str) -> Result<Self, HostError> {
        let path = "/proc/<pid>/io";
        let mut found: [Option<u64>; 4] = [None; 4];
        for line in text.lines() {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let slot = match name.trim() {
                "rchar" => 0,
                "wchar" => 1,
                "read_bytes" => 2,
                "write_bytes" => 3,
                _ => continue,
            };
            found[slot] = Some(parse_u64(path, name, Some(value.trim()))?);
        }
        match found {
            [Some(rchar), Some(wchar), Some(read_bytes), Some(write_bytes)] => Ok(PidIo {
                rchar,
                wchar,
                read_bytes,
                write_bytes,
            }),
            _ => Err(parse_error(path, "rchar, wchar, read_bytes or write_bytes is missing")),
        }
    }
}

/// One thread's /proc/<pid>/task/<tid>/schedstat (`run_ns wait_ns timeslices`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedStat {
    /// Nanoseconds the thread has run on a CPU.
    pub run_ns: u64,
    /// Nanoseconds it has waited on a run queue: runnable, but another task
    /// had the CPU. Run plus wait is how much CPU the thread asked for.
    pub wait_ns: u64,
}

impl SchedStat {
    pub fn parse(text: &str) -> Result<Self, HostError> {
        let mut fields = text.split_whitespace();
        let path = "/proc/<pid>/schedstat";
        Ok(SchedStat {
            run_ns: parse_u64(path, "run time", fields.next())?,
            wait_ns: parse_u64(path, "wait time", fields.next())?,
        })
    }
}

/// The nanoseconds a thread has run, the first field of
/// /proc/<pid>/task/<tid>/schedstat (`run_ns wait_ns timeslices`).
pub fn parse_schedstat(text: &str) -> Result<u64, HostError> {
    parse_u64("/proc/<pid>/schedstat", "run time", text.split_whitespace().next())
}

/// Puts the real path into a parse error of one of the pure parsers.
fn at(path: &str, error: HostError) -> HostError {
    match error {
        HostError::Parse { what, .. } => HostError::Parse {
            path: path.to_string(),
            what,
        },
        other => other,
    }
}

pub fn pid_stat(pid: u32) -> Result<Option<PidStat>, HostError> {
    let path = format!("/proc/{pid}/stat");
    read_if_alive(&path)?
        .map(|text| PidStat::parse_at(&path, &text))
        .transpose()
}

pub fn pid_statm(pid: u32) -> Result<Option<PidStatm>, HostError> {
    let path = format!("/proc/{pid}/statm");
    read_if_alive(&path)?
        .map(|text| PidStatm::parse(&text).map_err(|e| at(&path, e)))
        .transpose()
}

/// Needs the right to ptrace the process (same user, or root); without it
/// the read fails with `PermissionDenied`.
pub fn pid_io(pid: u32) -> Result<Option<PidIo>, HostError> {
    let path = format!("/proc/{pid}/io");
    read_if_alive(&path)?
        .map(|text| PidIo::parse(&text).map_err(|e| at(&path, e)))
        .transpose()
}

/// Nanoseconds on CPU of each live thread of `pid`, by thread id. Threads
/// that exit while the directory is being read are left out; `None` if the
/// process itself is gone. schedstat needs a kernel built with
/// CONFIG_SCHED_INFO (every distribution kernel); without it every thread's
/// file is missing and the map is empty.
pub fn pid_thread_cpu_ns(pid: u32) -> Result<Option<BTreeMap<u32, u64>>, HostError> {
    Ok(pid_thread_schedstat(pid)?.map(|threads| threads.into_iter().map(|(tid, s)| (tid, s.run_ns)).collect()))
}

/// Each live thread's schedstat, by thread id, as [`pid_thread_cpu_ns`].
pub fn pid_thread_schedstat(pid: u32) -> Result<Option<BTreeMap<u32, SchedStat>>, HostError> {
    let dir = format!("/proc/{pid}/task");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if is_gone(&e) => return Ok(None),
        Err(source) => return Err(HostError::Read { path: dir, source }),
    };
    let mut threads = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|source| HostError::Read {
            path: dir.clone(),
            source,
        })?;
        let Some(tid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let path = format!("{dir}/{tid}/schedstat");
        if let Some(text) = read_if_alive(&path)? {
            threads.insert(tid, SchedStat::parse(&text).map_err(|e| at(&path, e))?);
        }
    }
    Ok(Some(threads))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_a_hostile_name() {
        // A real line from `cat`, with the name replaced by one containing `) (`.
        let text = "27017 (a) (b c) R 27015 27015 25984 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 178571 3133440 381 \
                    18446744073709551615 94163051520000 94163051539881 140734320535392 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
        let stat = PidStat::parse(text).unwrap();
        assert_eq!(stat.comm, "a) (b c");
        assert_eq!(stat.state, 'R');
        assert_eq!((stat.utime_ticks, stat.stime_ticks), (7, 3));
        assert_eq!((stat.num_threads, stat.start_ticks), (1, 178571));
        assert!(!stat.has_exited());
    }

    #[test]
    fn a_zombie_main_thread_with_live_threads_has_not_exited() {
        let zombie = PidStat {
            state: 'Z',
            num_threads: 1,
            ..PidStat::default()
        };
        assert!(zombie.has_exited());
        assert!(!PidStat {
            num_threads: 3,
            ..zombie.clone()
        }
        .has_exited());
        assert!(!PidStat { state: 'S', ..zombie }.has_exited());
    }

    #[test]
    fn stat_damage_is_an_error() {
        assert!(PidStat::parse("12 cat R 1").is_err());
        assert!(PidStat::parse("12 (cat) R 1 2").is_err());
        let err = PidStat::parse_at("/proc/12/stat", "12 (cat) R 1 2").unwrap_err();
        assert!(err.to_string().contains("/proc/12/stat"), "{err}");
    }

    #[test]
    fn statm_io_and_schedstat() {
        assert_eq!(
            PidStatm::parse("765 427 398 5 0 123 0\n").unwrap(),
            PidStatm {
                size_pages: 765,
                resident_pages: 427,
                shared_pages: 398
            }
        );
        let io = "rchar: 6976\nwchar: 12\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 8192\n\
                  cancelled_write_bytes: 0\n";
        assert_eq!(
            PidIo::parse(io).unwrap(),
            PidIo {
                rchar: 6976,
                wchar: 12,
                read_bytes: 4096,
                write_bytes: 8192
            }
        );
        assert!(PidIo::parse("rchar: 1\n").is_err());
        assert_eq!(parse_schedstat("746774 0 1\n").unwrap(), 746774);
        assert_eq!(
            SchedStat::parse("746774 1200 1\n").unwrap(),
            SchedStat {
                run_ns: 746774,
                wait_ns: 1200
            }
        );
        assert!(SchedStat::parse("746774").is_err());
        assert!(parse_schedstat("").is_err());
    }

    #[test]
    fn this_process() {
        let me = std::process::id();
        let stat = pid_stat(me).unwrap().unwrap();
        assert!(stat.num_threads >= 1 && stat.start_ticks > 0);
        assert!(pid_statm(me).unwrap().unwrap().resident_pages > 0);
        assert!(pid_io(me).unwrap().is_some());
        let threads = pid_thread_cpu_ns(me).unwrap().unwrap();
        assert!(threads.contains_key(&me), "the main thread's tid is the pid");
        assert!(threads.values().sum::<u64>() > 0);
    }

    #[test]
    fn a_process_that_does_not_exist_is_none() {
        // Above the largest pid_max Linux allows (2^22).
        let pid = 4_194_304 + 1;
        assert_eq!(pid_stat(pid).unwrap(), None);
        assert_eq!(pid_statm(pid).unwrap(), None);
        assert_eq!(pid_io(pid).unwrap(), None);
        assert_eq!(pid_thread_cpu_ns(pid).unwrap(), None);
    }
}
