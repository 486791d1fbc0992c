//! What an acceptor allows, whatever a preamble asks: bytes per connection
//! and in total, concurrent connections overall and per source address,
//! how long and how large a preamble may be.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::records::Refusal;

/// An acceptor's limits. [`Limits::default`] holds `expc serve`'s defaults,
/// sized for the specs of this repository (the bandwidth specs ask 1 TB of
/// one connection, which their windows cut short).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes one connection may ask the acceptor to send; a preamble
    /// asking more is refused before anything is sent.
    pub bytes_per_connection: u64,
    /// Most bytes the acceptor sends over its lifetime; once reached,
    /// running connections are cut and new ones refused.
    pub total_bytes: u64,
    /// Most connections open at once (those still sending their preamble
    /// included); more are closed at once.
    pub concurrent: usize,
    /// Most connections open at once from one source address.
    pub per_source: usize,
    /// Longest a new connection may take to deliver its preamble.
    pub preamble_timeout: Duration,
    /// Longest preamble body accepted, bytes (at most
    /// [`MAX_BODY`](super::preamble::MAX_BODY)); memory grows only as its
    /// bytes arrive.
    pub max_preamble: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            bytes_per_connection: 1 << 40,
            total_bytes: 10 << 40,
            concurrent: 4096,
            per_source: 1024,
            preamble_timeout: Duration::from_secs(10),
            max_preamble: 1 << 20,
        }
    }
}

impl Limits {
    /// The in-process acceptor's: only the preamble's time and size are
    /// bounded (the replay's own preflight bounds its connections).
    pub fn in_process() -> Limits {
        Limits {
            bytes_per_connection: u64::MAX,
            total_bytes: u64::MAX,
            concurrent: usize::MAX,
            per_source: usize::MAX,
            preamble_timeout: Duration::from_secs(30),
            max_preamble: super::preamble::MAX_BODY,
        }
    }
}

/// Open connections, overall and per source address.
#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_source: HashMap<IpAddr, usize>,
}

/// Admits connections within the concurrency limits; each admitted one
/// holds a [`Slot`] until it closes.
#[derive(Debug, Clone)]
pub(crate) struct Admission {
    open: Arc<Mutex<Open>>,
    concurrent: usize,
    per_source: usize,
}

/// A connection's place among the open ones, given back on drop.
#[derive(Debug)]
pub(crate) struct Slot {
    open: Arc<Mutex<Open>>,
    source: IpAddr,
}

impl Admission {
    pub(crate) fn new(limits: &Limits) -> Admission {
        Admission {
            open: Arc::default(),
            concurrent: limits.concurrent,
            per_source: limits.per_source,
        }
    }

    /// A slot for a new connection from `source`, or why there is none.
    pub(crate) fn admit(&self, source: IpAddr) -> Result<Slot, Refusal> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= self.concurrent {
            return Err(Refusal::Concurrent);
        }
        let from_source = open.by_source.get(&source).copied().unwrap_or(0);
        if from_source >= self.per_source {
            return Err(Refusal::PerSource);
        }
        open.total += 1;
        open.by_source.insert(source, from_source + 1);
        Ok(Slot {
            open: Arc::clone(&self.open),
            source,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Some(count) = open.by_source.get_mut(&self.source) {
            *count -= 1;
            if *count == 0 {
                open.by_source.remove(&self.source);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_bound_connections_overall_and_per_source_until_dropped() {
        let limits = Limits {
            concurrent: 3,
            per_source: 2,
            ..Limits::default()
        };
        let admission = Admission::new(&limits);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().expect("ip"), "10.0.0.2".parse().expect("ip"));
        let first = admission.admit(a).expect("first");
        let _second = admission.admit(a).expect("second");
        assert_eq!(admission.admit(a).err(), Some(Refusal::PerSource));
        let _third = admission.admit(b).expect("another source");
        assert_eq!(admission.admit(b).err(), Some(Refusal::Concurrent));
        drop(first);
        assert!(admission.admit(a).is_ok(), "a dropped slot is free again");
    }
}
