//! What the OS says about a child: CPU time and resident memory from /proc.
//! These are the facts a sample reports, independent of the kernels' claims.

use std::io::ErrorKind;

use crate::{ffi, AnomalyError};

fn read(path: &str) -> Result<String, AnomalyError> {
    std::fs::read_to_string(path).map_err(|source| AnomalyError::Proc {
        path: path.to_string(),
        source,
    })
}

/// CPU time of all of `pid`'s live threads in nanoseconds: the sum of the
/// first field (time on the CPU, ns) of /proc/<pid>/task/*/schedstat. Falls
/// back to utime + stime of /proc/<pid>/stat (clock-tick resolution) when
/// schedstat is not available (kernels without CONFIG_SCHEDSTATS).
pub(crate) fn cpu_time_ns(pid: u32) -> Result<u64, AnomalyError> {
    let tasks = format!("/proc/{pid}/task");
    let entries = std::fs::read_dir(&tasks).map_err(|source| AnomalyError::Proc {
        path: tasks.clone(),
        source,
    })?;
    let mut total: u64 = 0;
    let mut seen = false;
    for entry in entries.flatten() {
        let path = entry.path().join("schedstat");
        match std::fs::read_to_string(&path) {
            Ok(text) => match parse_schedstat(&text) {
                Some(ns) => {
                    total = total.saturating_add(ns);
                    seen = true;
                }
                None => break,
            },
            // A thread that ended between the listing and the read.
            Err(error) if error.kind() == ErrorKind::NotFound || error.raw_os_error() == Some(libc::ESRCH) => {}
            Err(_) => break,
        }
    }
    if seen {
        return Ok(total);
    }
    let path = format!("/proc/{pid}/stat");
    let ticks = parse_stat_cpu_ticks(&read(&path)?).ok_or_else(|| AnomalyError::ProcParse {
        path,
        what: "no utime and stime fields".into(),
    })?;
    Ok(ticks.saturating_mul(1_000_000_000) / ffi::clock_ticks_per_s())
}

/// Resident set size of `pid` in bytes: /proc/<pid>/statm's second field, in pages.
pub(crate) fn rss_bytes(pid: u32) -> Result<u64, AnomalyError> {
    let path = format!("/proc/{pid}/statm");
    let pages = parse_statm_resident(&read(&path)?).ok_or_else(|| AnomalyError::ProcParse {
        path,
        what: "no resident field".into(),
    })?;
    Ok(pages.saturating_mul(ffi::page_size()))
}

fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

fn parse_statm_resident(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

/// utime + stime (fields 14 and 15) of a /proc/<pid>/stat line. The command
/// name (field 2) may contain spaces and parentheses, so fields are counted
/// from the last `)`.
fn parse_stat_cpu_ticks(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11); // field 3 is the first after `)`
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime.saturating_add(stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_files() {
        assert_eq!(parse_schedstat("123456789 2000 31\n"), Some(123_456_789));
        assert_eq!(parse_schedstat(""), None);
        assert_eq!(parse_statm_resident("1000 250 30 1 0 100 0\n"), Some(250));
        let stat = "42 (my (odd) name) S 1 42 42 0 -1 4194560 100 0 0 0 17 5 0 0 20 0 3 0 1000 10000 250";
        assert_eq!(parse_stat_cpu_ticks(stat), Some(22));
        assert_eq!(parse_stat_cpu_ticks("42 (x) S 1"), None);
    }

    #[test]
    fn reads_this_process() {
        let pid = std::process::id();
        // Burn a little CPU so the total cannot be zero.
        let mut x = 1u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        assert_ne!(x, 0);
        assert!(cpu_time_ns(pid).unwrap() > 0);
        assert!(rss_bytes(pid).unwrap() > 1 << 20);
        assert!(cpu_time_ns(u32::MAX).is_err());
    }
}
