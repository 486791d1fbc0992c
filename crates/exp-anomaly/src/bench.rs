//! Measuring instruments for `expc calibrate`: the STREAM-style copy loop
//! that serves as the victim of the interference benchmark, and the host
//! facts it needs to size its arrays. These run in the calling process.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use crate::counters::KernelCounters;
use crate::ffi::{self, Ctx};
use crate::job::kernel_error;
use crate::AnomalyError;

/// One run of the copy loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamRun {
    /// Bytes moved, counted as STREAM does (each byte copied is read and written: 2×).
    pub bytes: u64,
    /// Wall time of the timed part (the arrays' first fill is not timed).
    pub wall_ns: u64,
    /// CPU time of the copying thread over the same part.
    pub cpu_ns: u64,
    /// Complete copies of the array.
    pub passes: u64,
}

impl StreamRun {
    /// Throughput in MB/s (10^6 bytes) of wall time.
    pub fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / (self.wall_ns.max(1) as f64 / 1e9)
    }

    /// Throughput in MB per second of the thread's own CPU time: what the
    /// copy achieves while it actually runs, which separates cache and memory
    /// effects from time lost to sharing the core.
    pub fn mb_per_cpu_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / (self.cpu_ns.max(1) as f64 / 1e9)
    }

    /// Fraction of the wall time the copying thread was on a CPU.
    pub fn cpu_share(&self) -> f64 {
        self.cpu_ns as f64 / self.wall_ns.max(1) as f64
    }
}

/// Copies an array of `array_bytes` into another for `run_for` on a new
/// thread pinned to `cpu` (anywhere if `None`), and returns the throughput.
/// Blocks for the fill plus `run_for`.
pub fn stream_copy(
    cpu: Option<u32>,
    array_bytes: u64,
    run_for: Duration,
    seed: u64,
) -> Result<StreamRun, AnomalyError> {
    let run_ns = u64::try_from(run_for.as_nanos()).unwrap_or(u64::MAX);
    let thread = std::thread::Builder::new().name("stream-copy".into()).spawn(move || {
        if let Some(cpu) = cpu {
            ffi::pin_current_thread(&[cpu]).map_err(kernel_error("stream", format!("pinning to core {cpu}")))?;
        }
        let stop = AtomicU32::new(0);
        let counters = KernelCounters::default();
        let ctx = Ctx {
            stop: &stop,
            deadline_ns: 0,
            counters: &counters,
            seed,
        };
        ffi::stream_copy(&ctx, array_bytes, run_ns)
            .map_err(kernel_error("stream", format!("copying arrays of {array_bytes} bytes")))
    });
    let thread = thread.map_err(|source| AnomalyError::Kernel {
        kernel: "stream",
        what: "starting".into(),
        source,
    })?;
    let result = thread.join().unwrap_or_else(|_| {
        Err(AnomalyError::Kernel {
            kernel: "stream",
            what: "thread".into(),
            source: std::io::Error::other("panicked"),
        })
    })?;
    Ok(StreamRun {
        bytes: result.bytes,
        wall_ns: result.wall_ns,
        cpu_ns: result.cpu_ns,
        passes: result.passes,
    })
}

/// STREAM's rule for its arrays: at least four times the largest cache, so
/// the copy runs from memory. Capped at 1 GiB per array to stay affordable on
/// machines that report huge shared caches; at least 64 MiB.
pub fn stream_array_bytes(cpu: u32) -> u64 {
    let largest = exp_host::caches(cpu).iter().map(|c| c.size_bytes).max().unwrap_or(0);
    largest.saturating_mul(4).clamp(64 << 20, 1 << 30)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_times() {
        let run = stream_copy(Some(0), 1 << 20, Duration::from_millis(50), 1).unwrap();
        assert!(run.passes > 0 && run.bytes >= 2 << 20, "{run:?}");
        assert!(run.wall_ns >= 50_000_000, "{run:?}");
        assert!(
            run.mb_per_s() > 1.0 && run.mb_per_cpu_s() >= run.mb_per_s() * 0.99,
            "{run:?}"
        );
    }

    #[test]
    fn arrays_are_larger_than_the_caches() {
        let bytes = stream_array_bytes(0);
        assert!((64 << 20..=1 << 30).contains(&bytes));
    }
}
