//! The optional bottleneck: a link of fixed rate fed by a byte-bounded
//! drop-tail FIFO. The link serialises packets one after another, so a
//! packet's departure time is known when it is queued; the queue itself is
//! then just the packets whose departure lies in the future, which is what
//! the backlog samples count.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::EmulateError;

/// A rate-limited link with a large queue, applied in each direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bottleneck {
    /// Link rate in bit/s (IP bytes, headers included).
    pub rate_bits_per_s: u64,
    /// Queue capacity in bytes, the packet being sent included; packets that
    /// would overflow it are dropped at the tail.
    pub queue_bytes: usize,
}

impl Bottleneck {
    pub fn validate(&self) -> Result<(), EmulateError> {
        if self.rate_bits_per_s == 0 {
            return Err(EmulateError::InvalidConfig("bottleneck rate must be positive".into()));
        }
        if self.queue_bytes == 0 {
            return Err(EmulateError::InvalidConfig(
                "bottleneck queue must hold at least one byte".into(),
            ));
        }
        Ok(())
    }

    /// Time the link needs to send `bytes`.
    pub fn transmission_time(&self, bytes: usize) -> Duration {
        let nanos = (bytes as u128 * 8 * 1_000_000_000).div_ceil(u128::from(self.rate_bits_per_s.max(1)));
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

/// The bottleneck queue's backlog at one moment (one direction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BacklogSample {
    /// Time since the testbed started.
    pub at: Duration,
    pub packets: usize,
    pub bytes: usize,
}

/// The state of one direction's bottleneck.
#[derive(Debug)]
pub(crate) struct Link {
    config: Bottleneck,
    /// When the link finishes sending everything queued so far.
    free_at: Option<Instant>,
    /// Departure time and size of every packet not yet sent, oldest first.
    queued: VecDeque<(Instant, usize)>,
    queued_bytes: usize,
}

impl Link {
    pub(crate) fn new(config: Bottleneck) -> Link {
        Link {
            config,
            free_at: None,
            queued: VecDeque::new(),
            queued_bytes: 0,
        }
    }

    /// Forgets packets the link has finished sending by `now`.
    fn expire(&mut self, now: Instant) {
        while let Some(&(departure, size)) = self.queued.front() {
            if departure > now {
                break;
            }
            self.queued.pop_front();
            self.queued_bytes -= size;
        }
    }

    /// Queues a packet of `size` bytes arriving at `now` and returns when it
    /// has been sent, or `None` when the queue is full (tail drop). A packet
    /// arriving at an empty queue is always accepted.
    pub(crate) fn enqueue(&mut self, size: usize, now: Instant) -> Option<Instant> {
        self.expire(now);
        if !self.queued.is_empty() && self.queued_bytes + size > self.config.queue_bytes {
            return None;
        }
        let start = match self.free_at {
            Some(free) if free > now => free,
            _ => now,
        };
        let departure = start + self.config.transmission_time(size);
        self.free_at = Some(departure);
        self.queued.push_back((departure, size));
        self.queued_bytes += size;
        Some(departure)
    }

    /// Packets and bytes queued or being sent at `now`.
    pub(crate) fn backlog(&mut self, now: Instant) -> (usize, usize) {
        self.expire(now);
        (self.queued.len(), self.queued_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MBIT: u64 = 1_000_000;

    #[test]
    fn serialises_back_to_back_packets_at_the_link_rate() {
        let config = Bottleneck {
            rate_bits_per_s: 8 * MBIT,
            queue_bytes: 1_000_000,
        };
        assert_eq!(config.transmission_time(1000), Duration::from_millis(1));
        let mut link = Link::new(config);
        let t0 = Instant::now();
        let departures: Vec<_> = (0..3).map(|_| link.enqueue(1000, t0).expect("room")).collect();
        assert_eq!(departures[0] - t0, Duration::from_millis(1));
        assert_eq!(departures[2] - t0, Duration::from_millis(3));
        assert_eq!(link.backlog(t0), (3, 3000));
        assert_eq!(link.backlog(t0 + Duration::from_millis(1)), (2, 2000));
        assert_eq!(link.backlog(t0 + Duration::from_millis(3)), (0, 0));
        // An idle link starts sending at once.
        let later = t0 + Duration::from_millis(10);
        assert_eq!(link.enqueue(1000, later), Some(later + Duration::from_millis(1)));
    }

    #[test]
    fn drops_at_the_tail_when_the_queue_is_full() {
        let mut link = Link::new(Bottleneck {
            rate_bits_per_s: 8 * MBIT,
            queue_bytes: 2500,
        });
        let t0 = Instant::now();
        assert!(link.enqueue(1000, t0).is_some());
        assert!(link.enqueue(1000, t0).is_some());
        assert!(link.enqueue(1000, t0).is_none(), "third packet overflows 2500 bytes");
        assert!(link.enqueue(500, t0).is_some(), "a smaller one still fits");
        // Once the first has left there is room again.
        assert!(link.enqueue(1000, t0 + Duration::from_millis(1)).is_some());
        // An oversized packet is accepted into an empty queue.
        let idle = t0 + Duration::from_secs(1);
        assert!(link.enqueue(9000, idle).is_some());
    }

    #[test]
    fn rejects_degenerate_settings() {
        assert!(Bottleneck {
            rate_bits_per_s: 0,
            queue_bytes: 1
        }
        .validate()
        .is_err());
        assert!(Bottleneck {
            rate_bits_per_s: 1,
            queue_bytes: 0
        }
        .validate()
        .is_err());
        assert!(Bottleneck {
            rate_bits_per_s: 1,
            queue_bytes: 1
        }
        .validate()
        .is_ok());
    }
}
