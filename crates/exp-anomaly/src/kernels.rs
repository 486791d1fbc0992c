//! Inside the child: which kernel threads an anomaly needs, and running them.
//!
//! An anomaly becomes a list of [`Job`]s, one per thread: cpuoccupy,
//! cachecopy and membw run one thread per listed core, pinned to it; the
//! memory anomalies one thread, and the I/O and network anomalies `ntasks`,
//! allowed on all listed cores. Each thread has its own counters.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::AtomicU32;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;

use exp_plan::{Anomaly, AnomalyParams};

use crate::config::{self, CPU_PERIOD_NS, DUTY_PERIOD_NS};
use crate::counters::{Counters, KernelCounters};
use crate::ffi::{self, Ctx};
use crate::{net, sizes, AnomalyError};

pub(crate) type Run = Box<dyn FnOnce(&Ctx<'_>) -> Result<(), AnomalyError> + Send>;

/// One kernel thread to start.
pub(crate) struct Job {
    pub name: &'static str,
    /// CPUs the thread may run on; empty: wherever the scheduler likes.
    pub cpus: Vec<u32>,
    /// Whether its counters are the instance's (a netoccupy sink's are not).
    pub counted: bool,
    pub run: Run,
}

/// Maps a kernel's errno to an error that says which kernel and what it was doing.
pub(crate) fn kernel_error(
    kernel: &'static str,
    what: impl Into<String>,
) -> impl FnOnce(std::io::Error) -> AnomalyError {
    let what = what.into();
    move |source| AnomalyError::Kernel { kernel, what, source }
}

/// The threads `anomaly` needs. `work_dir` is where I/O kernels put their
/// files; it is created here.
pub(crate) fn plan(anomaly: &Anomaly, work_dir: Option<&Path>) -> Result<Vec<Job>, AnomalyError> {
    let cores = anomaly.cores.clone();
    let job = |name: &'static str, cpus: Vec<u32>, run: Run| Job {
        name,
        cpus,
        counted: true,
        run,
    };
    let mut jobs = Vec::new();
    match &anomaly.params {
        &AnomalyParams::Cpuoccupy { utilization_ratio } => {
            for &core in &cores {
                jobs.push(job(
                    "cpuoccupy",
                    vec![core],
                    Box::new(move |ctx| {
                        ffi::cpuoccupy(ctx, utilization_ratio, CPU_PERIOD_NS)
                            .map_err(kernel_error("cpuoccupy", format!("holding core {core}")))
                    }),
                ));
            }
        }
        AnomalyParams::Cachecopy {
            cache,
            multiplier,
            rate_ratio,
        } => {
            let level = config::cache_level(cache)?;
            let (multiplier, rate) = (*multiplier, *rate_ratio);
            for &core in &cores {
                // Sized from each core's own cache: L1 and L2 are per core.
                let cache_bytes = exp_host::cache_size_bytes(level, core).ok_or_else(|| {
                    AnomalyError::Config(format!("cannot read the size of the L{level} data cache of cpu {core}"))
                })?;
                let array = sizes::cachecopy_array_bytes(cache_bytes, multiplier);
                jobs.push(job(
                    "cachecopy",
                    vec![core],
                    Box::new(move |ctx| {
                        ffi::cachecopy(ctx, array, rate, DUTY_PERIOD_NS).map_err(kernel_error(
                            "cachecopy",
                            format!("copying two arrays of {array} bytes"),
                        ))
                    }),
                ));
            }
        }
        &AnomalyParams::Membw {
            buffer_bytes,
            rate_ratio,
        } => {
            // The buffer is split over the cores, so the instance holds `buffer` in all.
            let share = buffer_bytes / cores.len().max(1) as u64;
            for &core in &cores {
                jobs.push(job(
                    "membw",
                    vec![core],
                    Box::new(move |ctx| {
                        ffi::membw(ctx, share, rate_ratio, DUTY_PERIOD_NS)
                            .map_err(kernel_error("membw", format!("transposing a buffer of {share} bytes")))
                    }),
                ));
            }
        }
        &AnomalyParams::Memeater {
            buffer_bytes,
            interval_ns,
            limit_bytes,
        } => jobs.push(job(
            "memeater",
            cores,
            Box::new(move |ctx| {
                ffi::memeater(ctx, buffer_bytes, interval_ns, limit_bytes).map_err(kernel_error(
                    "memeater",
                    format!("growing by {buffer_bytes} bytes up to {limit_bytes}"),
                ))
            }),
        )),
        &AnomalyParams::Memleak {
            size_bytes,
            rate_per_s,
            limit_bytes,
        } => jobs.push(job(
            "memleak",
            cores,
            Box::new(move |ctx| {
                ffi::memleak(ctx, size_bytes, rate_per_s, limit_bytes).map_err(kernel_error(
                    "memleak",
                    format!("leaking {size_bytes} bytes per step up to {limit_bytes}"),
                ))
            }),
        )),
        AnomalyParams::Netoccupy {
            ntasks,
            message_bytes,
            bandwidth_bit_per_s,
            peer,
        } => {
            jobs = net::plan(*ntasks, *message_bytes, *bandwidth_bit_per_s, peer.as_deref(), &cores)?;
        }
        &AnomalyParams::Iometadata { ntasks, rate_per_s, .. } => {
            let dir = prepare_dir(work_dir)?;
            for worker in 0..ntasks {
                let dir = dir.clone();
                let rate = rate_per_s.unwrap_or(0.0);
                jobs.push(job(
                    "iometadata",
                    cores.clone(),
                    Box::new(move |ctx| {
                        ffi::iometadata(ctx, &dir, worker, rate).map_err(kernel_error(
                            "iometadata",
                            format!("worker {worker} in {}", dir.to_string_lossy()),
                        ))
                    }),
                ));
            }
        }
        &AnomalyParams::Iobandwidth {
            ntasks,
            file_size_bytes,
            bandwidth_bit_per_s,
            ..
        } => {
            let dir = prepare_dir(work_dir)?;
            for worker in 0..ntasks {
                let dir = dir.clone();
                let bandwidth = bandwidth_bit_per_s.unwrap_or(0);
                jobs.push(job(
                    "iobandwidth",
                    cores.clone(),
                    Box::new(move |ctx| {
                        ffi::iobandwidth(ctx, &dir, worker, file_size_bytes, bandwidth).map_err(kernel_error(
                            "iobandwidth",
                            format!("worker {worker} in {}", dir.to_string_lossy()),
                        ))
                    }),
                ));
            }
        }
    }
    Ok(jobs)
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

struct Worker {
    name: &'static str,
    counters: Arc<KernelCounters>,
    counted: bool,
    handle: Option<JoinHandle<Result<(), AnomalyError>>>,
}

/// The running kernel threads of one instance.
pub(crate) struct Workers {
    workers: Vec<Worker>,
}

impl Workers {
    /// Starts every job on its own thread; each sends on `done` when it ends
    /// (even by panicking), so the main thread can wait instead of polling.
    /// On failure the threads already started are stopped through `stop` and joined.
    pub fn start(
        jobs: Vec<Job>,
        stop: &'static AtomicU32,
        deadline_ns: u64,
        seed: u64,
        done: &Sender<()>,
    ) -> Result<Workers, AnomalyError> {
        let mut started = Workers {
            workers: Vec::with_capacity(jobs.len()),
        };
        for (index, job) in jobs.into_iter().enumerate() {
            let counters = Arc::new(KernelCounters::default());
            let thread_counters = Arc::clone(&counters);
            let (name, cpus, run) = (job.name, job.cpus, job.run);
            let seed = config::worker_seed(seed, index as u64);
            let done = NotifyOnDrop(done.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{index}"))
                .spawn(move || {
                    let _done = done;
                    if !cpus.is_empty() {
                        ffi::pin_current_thread(&cpus)
                            .map_err(kernel_error(name, format!("pinning to cores {cpus:?}")))?;
                    }
                    let ctx = Ctx {
                        stop,
                        deadline_ns,
                        counters: &thread_counters,
                        seed,
                    };
                    run(&ctx)
                });
            match spawned {
                Ok(handle) => started.workers.push(Worker {
                    name,
                    counters,
                    counted: job.counted,
                    handle: Some(handle),
                }),
                Err(source) => {
                    stop.store(1, std::sync::atomic::Ordering::Relaxed);
                    started.join();
                    return Err(AnomalyError::Kernel {
                        kernel: name,
                        what: "starting a thread".into(),
                        source,
                    });
                }
            }
        }
        Ok(started)
    }

    /// Totals of the instance's counters.
    pub fn counters(&self) -> Counters {
        Counters::sum(self.workers.iter().filter(|w| w.counted).map(|w| &*w.counters))
    }

    /// Joins the threads that have ended and returns the first error among
    /// them. Threads end early only when they fail (or, for a netoccupy sink,
    /// when its sender is done), so an error here ends the instance.
    pub fn failure(&mut self) -> Option<AnomalyError> {
        for worker in &mut self.workers {
            if worker.handle.as_ref().is_some_and(JoinHandle::is_finished) {
                if let Err(error) = join(worker) {
                    return Some(error);
                }
            }
        }
        None
    }

    /// Waits for every thread (they must have been told to stop); returns their errors.
    pub fn join(&mut self) -> Vec<AnomalyError> {
        self.workers
            .iter_mut()
            .filter_map(|worker| join(worker).err())
            .collect()
    }
}

/// Sends on drop: at the end of a worker thread, however it ends.
struct NotifyOnDrop(Sender<()>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        // The receiver may be gone already (the main thread stopped waiting); nothing to tell then.
        let _ = self.0.send(());
    }
}

fn join(worker: &mut Worker) -> Result<(), AnomalyError> {
    let Some(handle) = worker.handle.take() else {
        return Ok(());
    };
    handle.join().unwrap_or_else(|_| {
        Err(AnomalyError::Kernel {
            kernel: worker.name,
            what: "thread".into(),
            source: std::io::Error::other("panicked"),
        })
    })
}
