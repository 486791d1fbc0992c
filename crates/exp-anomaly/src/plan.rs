//! Inside the child: which kernel threads an anomaly needs.
//!
//! An anomaly becomes a list of [`Job`]s, one per thread: cpuoccupy,
//! cachecopy and membw run one thread per listed core, pinned to it; the
//! memory anomalies one thread, and the I/O and network anomalies `ntasks`,
//! allowed on all listed cores. Each thread has its own counters.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use exp_plan::{Anomaly, AnomalyParams};

use crate::config::{self, CPU_PERIOD_NS, DUTY_PERIOD_NS};
use crate::ffi;
use crate::job::{kernel_error, Job, Run};
use crate::{net, sizes, AnomalyError};

/// The threads `anomaly` needs. `work_dir` is where I/O kernels put their
/// files; it is created here.
pub(crate) fn plan(anomaly: &Anomaly, work_dir: Option<&Path>) -> Result<Vec<Job>, AnomalyError> {
    let cores = &anomaly.cores;
    let jobs = match &anomaly.params {
        &AnomalyParams::Cpuoccupy { utilization_ratio } => per_core(cores, "cpuoccupy", |core| {
            Box::new(move |ctx| {
                ffi::cpuoccupy(ctx, utilization_ratio, CPU_PERIOD_NS)
                    .map_err(kernel_error("cpuoccupy", format!("holding core {core}")))
            })
        }),
        AnomalyParams::Cachecopy {
            cache,
            multiplier,
            rate_ratio,
        } => cachecopy(cores, cache, *multiplier, *rate_ratio)?,
        &AnomalyParams::Membw {
            buffer_bytes,
            rate_ratio,
        } => {
            // The buffer is split over the cores, so the instance holds `buffer` in all.
            let share = buffer_bytes / cores.len().max(1) as u64;
            per_core(cores, "membw", |_| {
                Box::new(move |ctx| {
                    ffi::membw(ctx, share, rate_ratio, DUTY_PERIOD_NS)
                        .map_err(kernel_error("membw", format!("transposing a buffer of {share} bytes")))
                })
            })
        }
        &AnomalyParams::Memeater {
            buffer_bytes,
            interval_ns,
            limit_bytes,
        } => vec![job(
            "memeater",
            cores.clone(),
            Box::new(move |ctx| {
                ffi::memeater(ctx, buffer_bytes, interval_ns, limit_bytes).map_err(kernel_error(
                    "memeater",
                    format!("growing by {buffer_bytes} bytes up to {limit_bytes}"),
                ))
            }),
        )],
        &AnomalyParams::Memleak {
            size_bytes,
            rate_per_s,
            limit_bytes,
        } => vec![job(
            "memleak",
            cores.clone(),
            Box::new(move |ctx| {
                ffi::memleak(ctx, size_bytes, rate_per_s, limit_bytes).map_err(kernel_error(
                    "memleak",
                    format!("leaking {size_bytes} bytes per step up to {limit_bytes}"),
                ))
            }),
        )],
        AnomalyParams::Netoccupy {
            ntasks,
            message_bytes,
            bandwidth_bit_per_s,
            peer,
        } => net::plan(*ntasks, *message_bytes, *bandwidth_bit_per_s, peer.as_deref(), cores)?,
        &AnomalyParams::Iometadata { ntasks, rate_per_s, .. } => {
            let dir = prepare_dir(work_dir)?;
            let rate = rate_per_s.unwrap_or(0.0);
            io_workers(ntasks, cores, "iometadata", |worker| {
                let dir = dir.clone();
                Box::new(move |ctx| {
                    ffi::iometadata(ctx, &dir, worker, rate).map_err(kernel_error(
                        "iometadata",
                        format!("worker {worker} in {}", dir.to_string_lossy()),
                    ))
                })
            })
        }
        &AnomalyParams::Iobandwidth {
            ntasks,
            file_size_bytes,
            bandwidth_bit_per_s,
            ..
        } => {
            let dir = prepare_dir(work_dir)?;
            let bandwidth = bandwidth_bit_per_s.unwrap_or(0);
            io_workers(ntasks, cores, "iobandwidth", |worker| {
                let dir = dir.clone();
                Box::new(move |ctx| {
                    ffi::iobandwidth(ctx, &dir, worker, file_size_bytes, bandwidth).map_err(kernel_error(
                        "iobandwidth",
                        format!("worker {worker} in {}", dir.to_string_lossy()),
                    ))
                })
            })
        }
    };
    Ok(jobs)
}

/// A counted job.
fn job(name: &'static str, cpus: Vec<u32>, run: Run) -> Job {
    Job {
        name,
        cpus,
        counted: true,
        run,
    }
}

/// One job per core in `cores`, pinned to it.
fn per_core(cores: &[u32], name: &'static str, mut run: impl FnMut(u32) -> Run) -> Vec<Job> {
    cores.iter().map(|&core| job(name, vec![core], run(core))).collect()
}

/// `ntasks` jobs allowed on all of `cores`, one per worker number.
fn io_workers(ntasks: u32, cores: &[u32], name: &'static str, mut run: impl FnMut(u32) -> Run) -> Vec<Job> {
    (0..ntasks)
        .map(|worker| job(name, cores.to_vec(), run(worker)))
        .collect()
}

/// cachecopy: one thread per core, its arrays sized from that core's own
/// cache (L1 and L2 are per core).
fn cachecopy(cores: &[u32], cache: &str, multiplier: f64, rate: f64) -> Result<Vec<Job>, AnomalyError> {
    let level = config::cache_level(cache)?;
    cores
        .iter()
        .map(|&core| {
            let cache_bytes = exp_host::cache_size_bytes(level, core).ok_or_else(|| {
                AnomalyError::Config(format!("cannot read the size of the L{level} data cache of cpu {core}"))
            })?;
            let array = sizes::cachecopy_array_bytes(cache_bytes, multiplier);
            Ok(job(
                "cachecopy",
                vec![core],
                Box::new(move |ctx| {
                    ffi::cachecopy(ctx, array, rate, DUTY_PERIOD_NS).map_err(kernel_error(
                        "cachecopy",
                        format!("copying two arrays of {array} bytes"),
                    ))
                }),
            ))
        })
        .collect()
}

/// Creates the I/O kernels' own directory (its parent must exist) and returns it for C.
fn prepare_dir(work_dir: Option<&Path>) -> Result<CString, AnomalyError> {
    let dir = work_dir.ok_or_else(|| AnomalyError::Config("no directory for the I/O kernel".into()))?;
    std::fs::create_dir(dir).map_err(|source| AnomalyError::Directory {
        path: dir.to_path_buf(),
        source,
    })?;
    CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| AnomalyError::Config(format!("directory {} contains a NUL byte", dir.display())))
}
