//! RTT emulation in the packet path.
//!
//! The machines this runs on have no netem, so the delay stage is built in
//! userspace in the style of the network-emulation shells: the initiator and
//! the acceptor live in two network namespaces, each with a TUN device, and a
//! forwarder in this process moves IP packets between the two TUN fds. It
//! holds each packet until its flow's one-way delay (RTT/2) has passed, drops
//! it with the flow's loss rate for that direction, and optionally sends it
//! through a rate-limited bottleneck with a byte-bounded drop-tail queue
//! whose backlog is sampled every 10 ms. TCP therefore sees the delay in its
//! ACK clock; nothing sleeps in the application.
//!
//! Flows are registered by the initiator before it connects
//! ([`FlowTable::register`], 5-tuple → [`FlowParams`]), so per-connection
//! RTTs are exact; unregistered packets get the stage's default parameters.
//! [`RttMode`] turns the language's RTT modes into per-connection RTTs
//! (and, for `paths`, the path each connection takes).
//!
//! Everything here needs root (CAP_NET_ADMIN); [`preflight`] says so.

mod capacity;
mod flow;
mod forwarder;
mod link;
mod netns;
mod packet;
mod pipeline;
mod rtt;
mod sys;
mod testbed;

pub use capacity::{measure_capacity, Capacity};
pub use flow::{Direction, FlowKey, FlowParams, FlowTable};
pub use link::{BacklogSample, Bottleneck};
pub use netns::cleanup_stale_namespaces;
pub use packet::Protocol;
pub use pipeline::{DirectionStats, LossRng};
pub use rtt::{Assigned, Assignment, PathRtts, Paths, RttMode};
pub use testbed::{Side, StageConfig, StageStats, Testbed};

use std::path::Path;

/// Why the emulation could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum EmulateError {
    #[error(
        "RTT emulation needs root: it creates network namespaces and TUN devices \
         (CAP_NET_ADMIN), but the effective uid is {uid}; run as root or use `rtt = none`"
    )]
    NeedsRoot { uid: u32 },
    #[error("/dev/net/tun is missing: the kernel has no TUN support, which the delay stage needs")]
    NoTun,
    /// Root without CAP_SYS_ADMIN and CAP_NET_ADMIN (an unprivileged
    /// container) cannot create network namespaces.
    #[error("the delay stage needs CAP_SYS_ADMIN and CAP_NET_ADMIN to create network namespaces (effective capabilities {effective:#x}); run privileged")]
    MissingCapabilities { effective: u64 },
    #[error("`{command}` failed: {stderr}")]
    Command { command: String, stderr: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid emulation setting: {0}")]
    InvalidConfig(String),
    #[error("a thread running in namespace {namespace} panicked")]
    ThreadPanicked { namespace: String },
}

impl EmulateError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        EmulateError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Checks what the delay stage needs before anything is created: root
/// (effective uid 0), `/dev/net/tun`, and a working `ip` (iproute2).
pub fn preflight() -> Result<(), EmulateError> {
    let uid = effective_uid()?;
    if uid != 0 {
        return Err(EmulateError::NeedsRoot { uid });
    }
    let effective = effective_capabilities()?;
    if effective & NEEDED_CAPABILITIES != NEEDED_CAPABILITIES {
        return Err(EmulateError::MissingCapabilities { effective });
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err(EmulateError::NoTun);
    }
    netns::ip(&["-V"]).map(|_| ())
}

/// CAP_NET_ADMIN (12) and CAP_SYS_ADMIN (21).
const NEEDED_CAPABILITIES: u64 = (1 << 12) | (1 << 21);

/// The effective capability set (exp-host reads /proc).
fn effective_capabilities() -> Result<u64, EmulateError> {
    exp_host::effective_capabilities().map_err(|e| EmulateError::io("reading /proc/self/status", host_io(e)))
}

/// The effective uid (exp-host reads /proc, so no unsafe call is needed).
pub fn effective_uid() -> Result<u32, EmulateError> {
    exp_host::effective_uid().map_err(|e| EmulateError::io("reading /proc/self/status", host_io(e)))
}

/// A host reader's error as the I/O error this module reports.
fn host_io(error: exp_host::HostError) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, error.to_string())
}
