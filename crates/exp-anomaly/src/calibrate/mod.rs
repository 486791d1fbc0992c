//! Calibration: how faithfully the anomaly kernels reach their targets on
//! this machine. Every number comes from the OS (/proc, read through
//! exp-host), not from the kernels' own counters: CPU time from
//! /proc/<pid>/task/*/schedstat, resident memory from /proc/<pid>/statm, a
//! core's busy time from /proc/stat.
//!
//! Three procedures, each returning its measurements as typed values for the
//! caller to show: [`cpuoccupy`] (achieved vs target utilisation, on an idle
//! core and next to a busy competitor), [`memory`] (growth of the resident
//! set of memleak and memeater vs their configured rate) and
//! [`interference`] (a STREAM copy loop's throughput alone and next to membw
//! and cachecopy). They run anomaly instances as children of this process
//! through a [`Lab`], and block for as long as they measure.

mod cpu;
mod interference;
mod memory;

use std::path::PathBuf;
use std::time::Duration;

use exp_plan::{Anomaly, AnomalyParams};

use crate::{AnomalyError, ChildFailure, ExitKind, Instance, InstanceConfig, Launcher};

pub use cpu::{cpuoccupy, ContendedCore, CpuPoint, CpuoccupyReport, IdleCore};
pub use interference::{interference, InterferenceCase, InterferenceReport};
pub use memory::{memory, MemoryCase, MemoryReport};

/// Everything that can stop a calibration.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error("core {core} is not online (online: {online:?})")]
    CoreOffline { core: u32, online: Vec<u32> },
    #[error("target {0} is not a percentage")]
    NotAPercentage(f64),
    #[error("core {0} is not in /proc/stat")]
    CoreNotInProcStat(u32),
    /// One of the measured anomaly instances failed.
    #[error("the anomaly failed: {0}")]
    AnomalyFailed(#[source] ChildFailure),
    /// A memory case whose kernel never grew by two steps within the window.
    #[error("{case}: fewer than two steps seen")]
    TooFewSteps { case: String },
    #[error("not a memory anomaly")]
    NotAMemoryAnomaly,
    /// Starting, sampling or stopping an instance, or the victim's copy loop.
    #[error(transparent)]
    Anomaly(#[from] AnomalyError),
    /// Reading /proc through exp-host.
    #[error(transparent)]
    Host(#[from] exp_host::HostError),
}

/// Checks that each of `cores` is online.
pub fn ensure_online(cores: &[u32]) -> Result<(), CalibrateError> {
    let online = exp_host::online_cpus();
    match cores.iter().find(|core| !online.contains(core)) {
        Some(&core) => Err(CalibrateError::CoreOffline { core, online }),
        None => Ok(()),
    }
}

/// Starts anomaly instances as children of this process and cleans up after
/// them: dropping the lab removes its scratch directory.
pub struct Lab {
    launcher: Launcher,
    scratch: PathBuf,
    next: u32,
}

impl Lab {
    /// A lab that starts its children with `launcher` and gives each a
    /// directory inside `scratch` (which it removes when dropped).
    pub fn new(launcher: Launcher, scratch: PathBuf) -> Lab {
        Lab {
            launcher,
            scratch,
            next: 0,
        }
    }

    fn start(&mut self, cores: Vec<u32>, params: AnomalyParams, run_for: Duration) -> Result<Instance, CalibrateError> {
        self.next += 1;
        let config = InstanceConfig {
            instance: format!("calibrate-{}", self.next),
            anomaly: Anomaly { cores, params },
            seed: u64::from(self.next),
            scratch_dir: self.scratch.join(self.next.to_string()),
            run_for,
        };
        Ok(crate::spawn(&self.launcher, &config)?)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// Stops an instance; a failure of it is an error.
fn finish(instance: Instance) -> Result<(), CalibrateError> {
    match instance.stop(Duration::from_secs(2))?.status {
        ExitKind::Failed(failure) => Err(CalibrateError::AnomalyFailed(failure)),
        _ => Ok(()),
    }
}

/// Time the children get to start up before measuring.
const WARMUP: Duration = Duration::from_millis(500);
/// Margin beyond the measured window in each child's `run_for`.
const MARGIN: Duration = Duration::from_secs(3);
