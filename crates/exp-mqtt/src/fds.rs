//! Open files for a fleet's connections.
//!
//! A device holds one socket; with the embedded broker, which runs in this
//! process, the broker's end of the connection is a second descriptor. When
//! the process has none left, a device's `connect` fails with EMFILE and
//! retries with backoff, and a connection that did open waits in the
//! broker's backlog (its accept loop pauses on EMFILE) until its device's
//! CONNACK timeout: devices that neither connect nor fail for seconds. So a device connects only with
//! descriptors for both ends set aside for it ([`FdBudget::take`]); one
//! that cannot have them fails at once, with the reason, like any device
//! that failed to connect.
//!
//! The set-aside is counted process-wide (two fleets of one trial share the
//! process's limit): the descriptors open when a budget is made, less those
//! devices already hold, plus [`RESERVE`] for everything else the process
//! opens meanwhile (table files, /proc reads, a subscriber, pipes).

use std::sync::atomic::{AtomicU64, Ordering};

/// Descriptors kept free for what the process opens besides device connections.
pub const RESERVE: u64 = 64;

/// Descriptors set aside for device connections, over every fleet of the process.
static HELD: AtomicU64 = AtomicU64::new(0);

/// No descriptors left for a connection: the limit and what was open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "no file descriptor left for its connection: the process may open {limit} (`ulimit -n`), \
     {open} were open or set aside for other devices, {RESERVE} are kept for everything else"
)]
pub struct FdShortage {
    pub limit: u64,
    pub open: u64,
}

/// How many descriptors device connections may take, as of when it was made.
#[derive(Debug, Clone, Copy)]
pub struct FdBudget {
    /// The soft `RLIMIT_NOFILE` in force.
    limit: u64,
    /// Descriptors open that no device holds.
    others: u64,
}

impl FdBudget {
    /// Counts what is open and raises the soft open-files limit, up to the
    /// hard one, so that `wanted` more descriptors fit besides the reserve.
    /// The hard limit is left alone: whoever set it meant it.
    pub fn prepare(wanted: u64) -> FdBudget {
        let held = HELD.load(Ordering::SeqCst);
        // Held descriptors may not be open yet (a device still connecting):
        // counted as open, which errs on the safe side.
        let others = open_descriptors().saturating_sub(held);
        let need = others
            .saturating_add(held)
            .saturating_add(wanted)
            .saturating_add(RESERVE);
        FdBudget {
            limit: raise_soft_limit(need),
            others,
        }
    }

    /// A budget with a given limit, for tests.
    pub fn with_limit(limit: u64, others: u64) -> FdBudget {
        FdBudget { limit, others }
    }

    /// Sets `fds` descriptors aside for one connection, until the returned
    /// guard is dropped; or says why not.
    pub fn take(&self, fds: u64) -> Result<HeldFds, FdShortage> {
        let mut held = HELD.load(Ordering::SeqCst);
        loop {
            let open = self.others.saturating_add(held);
            if open.saturating_add(fds).saturating_add(RESERVE) > self.limit {
                return Err(FdShortage {
                    limit: self.limit,
                    open,
                });
            }
            match HELD.compare_exchange(held, held + fds, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return Ok(HeldFds(fds)),
                Err(now) => held = now,
            }
        }
    }
}

/// Descriptors set aside for one connection; given back when dropped.
#[derive(Debug)]
pub struct HeldFds(u64);

impl Drop for HeldFds {
    fn drop(&mut self) {
        HELD.fetch_sub(self.0, Ordering::SeqCst);
    }
}

/// Entries of /proc/self/fd (the read itself holds one, counted too).
fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count() as u64)
}

/// Raises the soft `RLIMIT_NOFILE` to `wanted`, at most to the hard limit;
/// returns the soft limit in force (`u64::MAX` if it cannot be read).
#[allow(unsafe_code)]
fn raise_soft_limit(wanted: u64) -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a live, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return u64::MAX;
    }
    // rlim_t is u64 on 64-bit Linux, not on every target.
    #[allow(clippy::unnecessary_cast)]
    let (soft, hard) = (limit.rlim_cur as u64, limit.rlim_max as u64);
    let target = wanted.min(hard);
    if target <= soft {
        return soft;
    }
    let raised = libc::rlimit {
        rlim_cur: target as libc::rlim_t,
        rlim_max: limit.rlim_max,
    };
    // SAFETY: passes a pointer to a live rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        target
    } else {
        soft
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counter is process-wide, so one test takes and gives back, in order.
    #[test]
    fn connections_take_what_is_left_and_give_it_back() {
        let before = HELD.load(Ordering::SeqCst);
        let budget = FdBudget::with_limit(before + 100 + RESERVE + 10, 100);
        let first = budget.take(6).expect("6 of 10 fit");
        let second = budget.take(4).expect("4 more fit");
        let shortage = budget.take(1).expect_err("the budget is spent");
        assert_eq!(shortage.open, before + 100 + 10);
        assert!(shortage.to_string().contains("ulimit -n"), "{shortage}");
        drop(first);
        let third = budget.take(5).expect("given back");
        drop((second, third));
        assert_eq!(HELD.load(Ordering::SeqCst), before);

        // A prepared budget holds what it was prepared for: the soft limit
        // is raised if need be (the hard limit here is far above 100).
        let budget = FdBudget::prepare(100);
        assert!(budget.limit >= budget.others + 100 + RESERVE);
        drop(budget.take(100).expect("prepared for 100"));
        assert_eq!(HELD.load(Ordering::SeqCst), before);
    }
}
