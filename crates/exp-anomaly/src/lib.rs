//! HPC performance anomalies (after the HPAS suite), run as C kernels in
//! supervised child processes.
//!
//! The kernels live in `runtime-c/` (C11, one file per kernel, `expk.h`) and
//! are compiled into this crate by `build.rs`; netoccupy is written in Rust
//! (`std::net`). Each anomaly instance runs in its own child process, which
//! the parent starts by re-executing a program that calls [`child_main`]
//! (expc: `expc __anomaly-kernel`). That way a memory anomaly can never take
//! the runner down, the parent can always kill it, and the child dies with the
//! parent (`PR_SET_PDEATHSIG`).
//!
//! Parent side: [`spawn`] → [`Instance`] (`sample`, `try_wait`, `stop`,
//! `kill`). Child side: [`child_main`]. The two talk through the child's
//! stdin (the [`InstanceConfig`] as JSON) and stdout (one JSON line of
//! [`Counters`] about every 100 ms, and a final one).
//!
//! [`calibrate`] measures, from the OS, how faithfully the kernels reach their
//! targets on this machine (`expc calibrate` shows the results); [`bench`]
//! holds its STREAM copy loop.
//!
//! Nothing here prints, except [`child_main`], whose stdout and stderr are
//! the protocol with the parent.

mod child;
mod cleanup;
mod config;
mod counters;
mod exit;
mod ffi;
mod instance;
mod job;
#[cfg(test)]
mod kernel_tests;
mod kernels;
mod net;
mod plan;
mod proc;
mod sizes;

pub mod bench;

/// The C compiler the kernels were built with: its path and the first line
/// of its `--version`.
pub const KERNEL_COMPILER: &str = env!("EXPK_COMPILER");
/// The flags they were built with (cc-rs's, optimisation and warnings included).
pub const KERNEL_FLAGS: &str = env!("EXPK_FLAGS");
pub mod calibrate;

use std::path::PathBuf;

pub use child::child_main;
pub use config::{validate, InstanceConfig, Launcher};
pub use counters::Counters;
pub use exit::{ChildFailure, ExitKind};
pub use instance::{spawn, Instance, Outcome, Sample};
pub use sizes::{configured_growth_bytes_per_s, disk_need_bytes, memory_need_bytes};

/// Environment variable through which [`spawn`] tells the child its parent's
/// pid, so the child can tell whether its parent died before
/// `PR_SET_PDEATHSIG` was in place.
pub const PARENT_PID_ENV: &str = "EXP_ANOMALY_PARENT_PID";

/// Everything that can go wrong starting, watching or ending an anomaly.
#[derive(Debug, thiserror::Error)]
pub enum AnomalyError {
    /// The anomaly's parameters cannot be run (checked before anything starts).
    #[error("invalid anomaly configuration: {0}")]
    Config(String),
    #[error("cannot encode or decode the instance configuration: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cannot start the anomaly child `{}`: {source}", program.display())]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The child ended before it took its configuration; `stderr` says why.
    #[error(
        "the anomaly child did not take its configuration: {source}{}",
        stderr_suffix(stderr)
    )]
    Handover {
        #[source]
        source: std::io::Error,
        stderr: String,
    },
    #[error("cannot prepare the directory {}: {source}", path.display())]
    Directory {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Proc {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Reading or parsing /proc through exp-host.
    #[error(transparent)]
    Host(#[from] exp_host::HostError),
    /// Signalling or waiting for the child failed.
    #[error("cannot {action} the anomaly child {pid}: {source}")]
    Process {
        action: &'static str,
        pid: u32,
        #[source]
        source: std::io::Error,
    },
    /// The child ended, but its files could not all be removed.
    #[error("cannot remove {}: {source}", path.display())]
    Cleanup {
        path: PathBuf,
        #[source]
        source: std::io::Error,
        /// How the child ended: the instance is over all the same.
        outcome: Box<Outcome>,
    },
    /// A kernel could not run or went wrong (inside the child, or in [`bench`]).
    #[error("{kernel}: {what}: {source}")]
    Kernel {
        kernel: &'static str,
        what: String,
        #[source]
        source: std::io::Error,
    },
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("; it said: {}", stderr.trim())
    }
}

/// `error` and its sources, as one line: `a: b: c`.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // Our messages already embed their direct source; do not say it twice.
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
