//! The device's mirror of rumqttc's packet-id bookkeeping (see `device.rs` for why).

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub(super) seq: u64,
    pub(super) written_at: Instant,
}

/// Our mirror of rumqttc's packet-id bookkeeping (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Tracker {
    pub(super) next_seq: u64,
    /// Submitted to rumqttc (channel or `pending`), not yet on the wire.
    pub(super) fifo: VecDeque<u64>,
    /// How many of `fifo`'s front entries sit in rumqttc's `pending` after the last error.
    pub(super) in_pending: usize,
    /// QoS 1 waiting for PUBACK, QoS 2 waiting for PUBREC.
    pub(super) awaiting_ack: HashMap<u16, Pending>,
    /// QoS 2 waiting for PUBCOMP.
    pub(super) awaiting_comp: HashMap<u16, Pending>,
    /// A publish rumqttc parked because its packet id was still in use.
    pub(super) collision: Option<(u16, u64)>,
    pub(super) last_error: Option<String>,
    pub(super) closed: bool,
}

impl Tracker {
    pub(super) fn outstanding(&self) -> usize {
        self.fifo.len() + self.awaiting_ack.len() + self.awaiting_comp.len() + usize::from(self.collision.is_some())
    }

    /// A publish went to the socket: returns its seq if it is a QoS 0 message (done now).
    pub(super) fn on_publish_written(&mut self, pkid: u16, now: Instant) -> Option<u64> {
        if pkid == 0 {
            self.in_pending = self.in_pending.saturating_sub(1);
            return self.fifo.pop_front();
        }
        if self.awaiting_ack.contains_key(&pkid) {
            // Retransmission after a resumed session: same message, same pkid.
            return None;
        }
        let seq = match self.collision {
            Some((c, seq)) if c == pkid => {
                self.collision = None;
                Some(seq)
            }
            _ => {
                self.in_pending = self.in_pending.saturating_sub(1);
                self.fifo.pop_front()
            }
        };
        if let Some(seq) = seq {
            self.awaiting_ack.insert(pkid, Pending { seq, written_at: now });
        }
        None
    }

    pub(super) fn on_collision(&mut self, pkid: u16) {
        self.in_pending = self.in_pending.saturating_sub(1);
        if let Some(seq) = self.fifo.pop_front() {
            self.collision = Some((pkid, seq));
        }
    }

    /// After a reconnect: if the broker has no session, rumqttc drops what it would have
    /// retransmitted. Returns those messages' seqs.
    pub(super) fn on_connack(&mut self, session_present: bool) -> Vec<u64> {
        if session_present {
            return Vec::new();
        }
        let k = self.in_pending.min(self.fifo.len());
        self.in_pending = 0;
        let mut lost: Vec<u64> = self.fifo.drain(..k).collect();
        lost.extend(self.awaiting_ack.drain().map(|(_, p)| p.seq));
        lost.extend(self.awaiting_comp.drain().map(|(_, p)| p.seq));
        lost.extend(self.collision.take().map(|(_, seq)| seq));
        lost.sort_unstable();
        lost
    }

    pub(super) fn drain_all(&mut self) -> Vec<u64> {
        self.in_pending = self.fifo.len();
        let mut all = self.on_connack(false);
        all.extend(self.fifo.drain(..));
        all.sort_unstable();
        all
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn submitted(n: u64) -> Tracker {
        let mut t = Tracker::default();
        t.fifo.extend(0..n);
        t.next_seq = n;
        t
    }

    #[test]
    fn first_publish_of_a_pkid_takes_the_oldest_message_and_retransmissions_do_not() {
        let now = Instant::now();
        let mut t = submitted(3);
        assert_eq!(t.on_publish_written(1, now), None);
        assert_eq!(t.on_publish_written(1, now), None); // retransmission
        assert_eq!(t.on_publish_written(0, now), Some(1)); // QoS 0: done when written
        assert_eq!(t.awaiting_ack[&1].seq, 0);
        assert_eq!(t.outstanding(), 2);
    }

    #[test]
    fn collision_resolves_to_the_parked_message() {
        let now = Instant::now();
        let mut t = submitted(2);
        t.on_publish_written(1, now);
        t.on_collision(1);
        t.awaiting_ack.remove(&1);
        assert_eq!(t.on_publish_written(1, now), None);
        assert_eq!(t.awaiting_ack[&1].seq, 1);
        assert!(t.fifo.is_empty());
    }

    #[test]
    fn lost_session_drops_inflight_and_what_rumqttc_held_in_pending() {
        let now = Instant::now();
        let mut t = submitted(5);
        t.on_publish_written(1, now); // seq 0 in flight
        t.in_pending = 2; // seqs 1, 2 were drained into rumqttc's pending; 3, 4 still in its channel
        assert_eq!(t.on_connack(true), Vec::<u64>::new());
        assert_eq!(t.on_connack(false), vec![0, 1, 2]);
        assert_eq!(t.fifo, [3, 4]);
        assert_eq!(t.drain_all(), vec![3, 4]);
        assert_eq!(t.outstanding(), 0);
    }
}
