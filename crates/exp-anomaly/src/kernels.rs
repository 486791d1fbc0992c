//! Inside the child: running the kernel threads of one instance, each with
//! its own counters, and collecting how they ended. Which threads an anomaly
//! needs is [`crate::plan`]'s business.

use std::sync::atomic::AtomicU32;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::config;
use crate::counters::{Counters, KernelCounters};
use crate::ffi::{self, Ctx};
use crate::job::{kernel_error, Job};
use crate::AnomalyError;

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
