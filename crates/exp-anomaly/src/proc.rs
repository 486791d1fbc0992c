//! What the OS says about a child: CPU time and resident memory, read
//! through exp-host (the one reader of /proc). These are the facts a sample
//! reports, independent of the kernels' claims.

use crate::AnomalyError;

/// The child is gone: its /proc directory no longer exists.
fn gone(pid: u32) -> AnomalyError {
    AnomalyError::Proc {
        path: format!("/proc/{pid}"),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    }
}

/// CPU time of all of `pid`'s live threads in nanoseconds: the sum of their
/// schedstat run times. Falls back to utime + stime of the process (clock
/// tick resolution) when schedstat is not available (kernels without
/// CONFIG_SCHEDSTATS).
pub(crate) fn cpu_time_ns(pid: u32) -> Result<u64, AnomalyError> {
    let threads = exp_host::pid_thread_cpu_ns(pid)?.ok_or_else(|| gone(pid))?;
    if !threads.is_empty() {
        return Ok(threads.values().fold(0u64, |total, ns| total.saturating_add(*ns)));
    }
    let stat = exp_host::pid_stat(pid)?.ok_or_else(|| gone(pid))?;
    let ticks = stat.utime_ticks.saturating_add(stat.stime_ticks);
    Ok(ticks.saturating_mul(1_000_000_000) / exp_host::clock_ticks_per_s().max(1))
}

/// Resident set size of `pid` in bytes.
pub(crate) fn rss_bytes(pid: u32) -> Result<u64, AnomalyError> {
    let statm = exp_host::pid_statm(pid)?.ok_or_else(|| gone(pid))?;
    Ok(statm.resident_pages.saturating_mul(exp_host::page_size()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_cpu_time_and_memory_and_a_missing_one_is_gone() {
        let me = std::process::id();
        assert!(cpu_time_ns(me).unwrap() > 0);
        assert!(rss_bytes(me).unwrap() > 1 << 20);
        // Pids above pid_max (at most 2^22) never exist.
        assert!(matches!(cpu_time_ns(1 << 23), Err(AnomalyError::Proc { .. })));
    }
}
