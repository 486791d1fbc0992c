//! This process and the calling thread, as the kernel accounts them:
//! /proc/thread-self and /proc/self.

use crate::{clock_ticks_per_s, parse_error, parse_u64, pid::PidStat, read_if_alive, HostError};

/// CPU time of the calling thread in nanoseconds: the first field of
/// /proc/thread-self/schedstat, else utime + stime of /proc/thread-self/stat
/// in the kernel's clock ticks ([`clock_ticks_per_s`], asked of sysconf, not
/// assumed to be 100). `None` where neither can be read.
pub fn thread_cpu_ns() -> Option<u64> {
    let schedstat = read_if_alive("/proc/thread-self/schedstat").ok().flatten();
    if let Some(ns) = schedstat.and_then(|s| crate::pid::parse_schedstat(&s).ok()) {
        return Some(ns);
    }
    let text = read_if_alive("/proc/thread-self/stat").ok().flatten()?;
    let stat = PidStat::parse(&text).ok()?;
    let ticks = stat.utime_ticks.saturating_add(stat.stime_ticks);
    Some(ticks.saturating_mul(1_000_000_000) / clock_ticks_per_s().max(1))
}

/// CPU time of this process, every thread included (those that ended
/// too), in nanoseconds: the process CPU-time clock, else utime + stime of
/// /proc/self/stat in the kernel's clock ticks. `None` where neither can be
/// read.
pub fn process_cpu_ns() -> Option<u64> {
    if let Some(ns) = crate::sys::process_cputime_ns() {
        return Some(ns);
    }
    let text = read_if_alive("/proc/self/stat").ok().flatten()?;
    let stat = PidStat::parse(&text).ok()?;
    let ticks = stat.utime_ticks.saturating_add(stat.stime_ticks);
    Some(ticks.saturating_mul(1_000_000_000) / clock_ticks_per_s().max(1))
}

/// A numeric field of /proc/thread-self/sched (`prio`, `se.slice`): what
/// the scheduler holds of the calling thread. `None` where it is missing.
pub fn thread_sched_field(name: &str) -> Option<i64> {
    let text = read_if_alive("/proc/thread-self/sched").ok().flatten()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == name).then(|| value.trim().parse().ok())?
    })
}

/// Peak resident memory of this process (VmHWM of /proc/self/status), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let path = "/proc/self/status";
    let status = read_if_alive(path).ok().flatten()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib = parse_u64(path, "VmHWM", line.split_whitespace().nth(1)).ok()?;
    Some(kib.saturating_mul(1024))
}

/// A field of /proc/self/status (`CapEff`, `Uid`, …), after its colon.
fn status_field(name: &str) -> Result<String, HostError> {
    let path = "/proc/self/status";
    let text = read_if_alive(path)?.ok_or_else(|| parse_error(path, "no such file"))?;
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .map(|rest| rest.trim().to_string())
        .ok_or_else(|| parse_error(path, format!("no {name} line")))
}

/// This process's effective capability set (`CapEff`, a bit per capability:
/// CAP_NET_ADMIN is bit 12, CAP_SYS_ADMIN bit 21).
pub fn effective_capabilities() -> Result<u64, HostError> {
    let hex = status_field("CapEff")?;
    u64::from_str_radix(&hex, 16).map_err(|_| parse_error("/proc/self/status", format!("CapEff `{hex}`")))
}

/// This process's effective user id (the second field of `Uid`).
pub fn effective_uid() -> Result<u32, HostError> {
    let uid = status_field("Uid")?;
    let word = uid.split_whitespace().nth(1);
    u32::try_from(parse_u64("/proc/self/status", "effective uid", word)?)
        .map_err(|_| parse_error("/proc/self/status", "effective uid"))
}

/// Whether a process `pid` exists (its /proc directory does).
pub fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The kernel's ceiling on open files per process (`fs.nr_open`).
pub fn nr_open() -> Option<u64> {
    let text = read_if_alive("/proc/sys/fs/nr_open").ok().flatten()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calling_thread_and_process_are_measured() {
        let before = thread_cpu_ns().expect("Linux has /proc/thread-self");
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(50) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
        assert!(thread_cpu_ns().unwrap() > before, "50 ms of work shows as CPU time");
        // The process's time moves in clock ticks: work until it does.
        let before = process_cpu_ns().expect("Linux has /proc/self/stat");
        let start = std::time::Instant::now();
        while process_cpu_ns().unwrap() == before && start.elapsed() < std::time::Duration::from_secs(10) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(
            process_cpu_ns().unwrap() > before,
            "work shows as the process's CPU time"
        );
        assert!(peak_rss_bytes().unwrap() > 1 << 20);
        assert!(process_exists(std::process::id()) && !process_exists(1 << 23));
        assert!(nr_open().unwrap() >= 1024);
        let root = effective_uid().unwrap() == 0;
        // Root has CAP_SYS_ADMIN here unless a container took it away.
        assert!(effective_capabilities().is_ok(), "{root}");
    }
}
