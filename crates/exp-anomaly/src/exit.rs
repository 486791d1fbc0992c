//! How an anomaly child ended, told from its wait status, the signal the
//! parent sent it, the reason its last report gave, and its stderr.

use std::fmt;

use crate::counters::EndReason;
use crate::ffi::{Signal, WaitStatus};

/// How an instance ended (see [`crate::Outcome`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitKind {
    /// Ran until its `run_for` was over and exited by itself.
    Finished,
    /// Ended cleanly after [`crate::Instance::stop`]'s SIGTERM.
    Stopped,
    /// Killed with SIGKILL by [`crate::Instance::kill`], or by `stop` after the grace period.
    Killed,
    /// Failed: how, and what it wrote on stderr.
    Failed(ChildFailure),
}

/// How a child failed. `stderr` is what it wrote there, trimmed (possibly
/// empty). Displayed as the message users see: the child's own words if it
/// exited with an error, else how it died, followed by its words if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildFailure {
    /// Exited by itself with a status other than 0 (a kernel failed, or its
    /// configuration was unusable; see [`crate::child_main`]).
    Exited { code: i32, stderr: String },
    /// Killed by a SIGKILL the parent did not send (the out-of-memory killer?).
    KilledElsewhere { stderr: String },
    /// Killed by `signal`, other than the parent's SIGTERM or SIGKILL.
    Signaled { signal: i32, stderr: String },
}

impl ChildFailure {
    /// What the child wrote on stderr, trimmed; empty if nothing.
    pub fn stderr(&self) -> &str {
        match self {
            ChildFailure::Exited { stderr, .. }
            | ChildFailure::KilledElsewhere { stderr }
            | ChildFailure::Signaled { stderr, .. } => stderr,
        }
    }
}

impl fmt::Display for ChildFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChildFailure::Exited { code, stderr } if stderr.is_empty() => write!(f, "exited with status {code}"),
            ChildFailure::Exited { stderr, .. } => f.write_str(stderr),
            ChildFailure::KilledElsewhere { .. } => {
                f.write_str("killed by SIGKILL from elsewhere (the out-of-memory killer?)")?;
                stderr_suffix(f, self.stderr())
            }
            ChildFailure::Signaled { signal, stderr } => {
                write!(f, "killed by signal {signal}")?;
                stderr_suffix(f, stderr)
            }
        }
    }
}

fn stderr_suffix(f: &mut fmt::Formatter<'_>, stderr: &str) -> fmt::Result {
    if stderr.is_empty() {
        Ok(())
    } else {
        write!(f, ": {stderr}")
    }
}

impl std::error::Error for ChildFailure {}

/// How the child ended, from its wait status, the signal we sent it, and the
/// reason its last report gave.
pub(crate) fn classify(status: WaitStatus, sent: Option<Signal>, end: Option<EndReason>, stderr: &str) -> ExitKind {
    let stderr = stderr.trim().to_string();
    match status {
        WaitStatus::Exited(0) => match (sent, end) {
            (_, Some(EndReason::Deadline)) | (None, _) => ExitKind::Finished,
            (Some(_), _) => ExitKind::Stopped,
        },
        WaitStatus::Exited(code) => ExitKind::Failed(ChildFailure::Exited { code, stderr }),
        WaitStatus::Signaled(libc::SIGKILL) if sent == Some(Signal::Kill) => ExitKind::Killed,
        // SIGTERM before the child had installed its handler ends it by default: still our stop.
        WaitStatus::Signaled(libc::SIGTERM) if sent.is_some() => ExitKind::Stopped,
        WaitStatus::Signaled(libc::SIGKILL) => ExitKind::Failed(ChildFailure::KilledElsewhere { stderr }),
        WaitStatus::Signaled(signal) => ExitKind::Failed(ChildFailure::Signaled { signal, stderr }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_endings() {
        let deadline = Some(EndReason::Deadline);
        let signal = Some(EndReason::Signal);
        assert_eq!(classify(WaitStatus::Exited(0), None, deadline, ""), ExitKind::Finished);
        assert_eq!(
            classify(WaitStatus::Exited(0), Some(Signal::Term), signal, ""),
            ExitKind::Stopped
        );
        // Reached its deadline just before our SIGTERM: it finished.
        assert_eq!(
            classify(WaitStatus::Exited(0), Some(Signal::Term), deadline, ""),
            ExitKind::Finished
        );
        assert_eq!(
            classify(WaitStatus::Signaled(libc::SIGTERM), Some(Signal::Term), None, ""),
            ExitKind::Stopped
        );
        assert_eq!(
            classify(WaitStatus::Signaled(libc::SIGKILL), Some(Signal::Kill), None, ""),
            ExitKind::Killed
        );
        let ExitKind::Failed(failure) = classify(
            WaitStatus::Exited(1),
            None,
            Some(EndReason::Failed),
            "memleak: no memory\n",
        ) else {
            panic!("a non-zero exit is a failure")
        };
        assert_eq!(
            failure,
            ChildFailure::Exited {
                code: 1,
                stderr: "memleak: no memory".into()
            }
        );
        assert_eq!(failure.to_string(), "memleak: no memory");
        let ExitKind::Failed(failure) = classify(WaitStatus::Exited(2), None, None, "") else {
            panic!("a non-zero exit is a failure")
        };
        assert_eq!(failure.to_string(), "exited with status 2");
        let ExitKind::Failed(failure) = classify(WaitStatus::Signaled(libc::SIGKILL), None, None, "") else {
            panic!("an unexpected SIGKILL is a failure")
        };
        let text = failure.to_string();
        assert!(text.contains("out-of-memory"), "{text}");
    }

    #[test]
    fn failures_read_as_before() {
        let killed = ChildFailure::KilledElsewhere {
            stderr: "cachecopy: out of memory".into(),
        };
        assert_eq!(
            killed.to_string(),
            "killed by SIGKILL from elsewhere (the out-of-memory killer?): cachecopy: out of memory"
        );
        let signaled = |stderr: &str| ChildFailure::Signaled {
            signal: libc::SIGSEGV,
            stderr: stderr.into(),
        };
        assert_eq!(signaled("").to_string(), "killed by signal 11");
        assert_eq!(signaled("oops").to_string(), "killed by signal 11: oops");
        assert_eq!(signaled("oops").stderr(), "oops");
    }
}
