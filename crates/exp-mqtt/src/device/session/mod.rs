//! A device's MQTT 3.1.1 session state, apart from the socket: messages
//! queued by `publish`, packet ids, what is in flight, and what each
//! acknowledgement, reconnect or close means for every message.
//!
//! The device assigns packet ids itself, so correlating an acknowledgement
//! with its message is exact. A PUBLISH is encoded once, when it is queued,
//! with its packet id filled in when it goes out; that same frame (with the
//! DUP flag) is what a resumed session retransmits.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};

use super::{DeviceEventKind, LostReason};
use crate::frame;

/// A PUBLISH encoded but not yet sent (no packet id yet).
struct Queued {
    seq: u64,
    qos: u8,
    frame: BytesMut,
    /// Where the packet id goes (QoS 1 and 2 only).
    pkid_at: usize,
}

/// A QoS 1 or 2 message on the wire, waiting for PUBACK, or (QoS 2) for
/// PUBREC and then PUBCOMP.
struct InFlight {
    pkid: u16,
    seq: u64,
    qos: u8,
    written_at: Instant,
    /// The PUBLISH as sent, for retransmission; empty once PUBREC released it.
    frame: Bytes,
    released: bool,
}

/// What the device task should write, and the events it now owes.
#[derive(Default)]
pub(super) struct Out {
    pub(super) frames: Vec<Bytes>,
    pub(super) events: Vec<DeviceEventKind>,
}

pub(super) struct Session {
    pub(super) next_seq: u64,
    pub(super) closed: bool,
    pub(super) last_error: Option<String>,
    queued: VecDeque<Queued>,
    in_flight: VecDeque<InFlight>,
    last_pkid: u16,
    max_in_flight: usize,
    max_queued: usize,
    /// Bytes of the frames in `queued`.
    queued_bytes: usize,
    max_packet_bytes: usize,
}

/// The most a device queues unwritten, in bytes, beyond its first message:
/// a fleet whose runner falls behind holds its sends back (the pacer waits,
/// `has_room`) instead of buffering without a useful bound (4,000 devices ×
/// 200 messages × 2 KiB could hold 1.6 GB).
const MAX_QUEUED_BYTES: usize = 64 * 1024;

fn ack_frame(kind: u8, pkid: u16) -> Bytes {
    Bytes::copy_from_slice(&frame::ack(kind, pkid))
}

impl Session {
    /// `max_in_flight` is capped below 65,535 so a free packet id always exists.
    pub(super) fn new(max_in_flight: u16, max_packet_bytes: usize) -> Session {
        let max_in_flight = usize::from(max_in_flight.clamp(1, u16::MAX - 1));
        Session {
            next_seq: 0,
            closed: false,
            last_error: None,
            queued: VecDeque::new(),
            in_flight: VecDeque::new(),
            last_pkid: 0,
            max_in_flight,
            // Room for a full window plus a burst; beyond that `publish` reports NotQueued.
            max_queued: max_in_flight.saturating_mul(2).max(16),
            queued_bytes: 0,
            max_packet_bytes,
        }
    }

    /// Messages published and not yet written (QoS 0), acknowledged or lost.
    pub(super) fn outstanding(&self) -> usize {
        self.queued.len() + self.in_flight.len()
    }

    /// Whether any message waits to be written (it may still wait for the window).
    pub(super) fn has_queued(&self) -> bool {
        !self.queued.is_empty()
    }

    /// Whether `queue` would take another message now.
    pub(super) fn has_room(&self) -> bool {
        self.queued.len() < self.max_queued && (self.queued.is_empty() || self.queued_bytes < MAX_QUEUED_BYTES)
    }

    /// Takes the next sequence number and queues the message; a message that
    /// cannot be queued keeps its number and is returned as lost.
    pub(super) fn queue(&mut self, topic: &str, qos: u8, payload: &[u8]) -> Result<u64, (u64, LostReason)> {
        let seq = self.next_seq;
        self.next_seq += 1;
        if !self.has_room() {
            let reason = format!(
                "the device's queue is full ({} messages, {} bytes): it is disconnected or far behind",
                self.queued.len(),
                self.queued_bytes
            );
            return Err((seq, LostReason::NotQueued(reason)));
        }
        match encode_publish(topic, qos, payload, self.max_packet_bytes) {
            Ok((frame, pkid_at)) => {
                self.queued_bytes += frame.len();
                self.queued.push_back(Queued {
                    seq,
                    qos,
                    frame,
                    pkid_at,
                });
                Ok(seq)
            }
            Err(reason) => Err((seq, LostReason::NotQueued(reason.to_string()))),
        }
    }

    /// Moves queued messages onto the wire while the in-flight window has room.
    pub(super) fn take_sendable(&mut self, now: Instant, out: &mut Out) {
        while let Some(front) = self.queued.front() {
            if front.qos > 0 && self.in_flight.len() >= self.max_in_flight {
                break;
            }
            let Some(Queued {
                seq,
                qos,
                mut frame,
                pkid_at,
            }) = self.queued.pop_front()
            else {
                break;
            };
            self.queued_bytes -= frame.len();
            if qos == 0 {
                out.frames.push(frame.freeze());
                out.events.push(DeviceEventKind::Written { seq, at: now });
                continue;
            }
            let pkid = self.free_pkid();
            frame[pkid_at..pkid_at + 2].copy_from_slice(&pkid.to_be_bytes());
            let frame = frame.freeze();
            out.frames.push(frame.clone());
            self.in_flight.push_back(InFlight {
                pkid,
                seq,
                qos,
                written_at: now,
                frame,
                released: false,
            });
        }
    }

    /// Ids are handed out in turn, skipping any still in flight (only
    /// possible after 65,535 messages with a very old one unacknowledged).
    fn free_pkid(&mut self) -> u16 {
        loop {
            self.last_pkid = self.last_pkid.checked_add(1).unwrap_or(1);
            let pkid = self.last_pkid;
            if !self.in_flight.iter().any(|m| m.pkid == pkid) {
                return pkid;
            }
        }
    }

    /// Acknowledgements come in order, so the search almost always stops at the front.
    fn position(&self, pkid: u16, qos: u8, released: bool) -> Option<usize> {
        self.in_flight
            .iter()
            .position(|m| m.pkid == pkid && m.qos == qos && m.released == released)
    }

    fn acked(&mut self, at: usize, now: Instant) -> Option<DeviceEventKind> {
        let m = self.in_flight.remove(at)?;
        Some(DeviceEventKind::Acked {
            seq: m.seq,
            written_at: m.written_at,
            acked_at: now,
        })
    }

    /// PUBACK: a QoS 1 message is done. Unknown ids (a duplicate ack) are ignored.
    pub(super) fn on_puback(&mut self, pkid: u16, now: Instant) -> Option<DeviceEventKind> {
        let at = self.position(pkid, 1, false)?;
        self.acked(at, now)
    }

    /// PUBREC: the broker has a QoS 2 message; answer PUBREL (also for an id
    /// we no longer know, as the protocol asks, so the broker can finish).
    pub(super) fn on_pubrec(&mut self, pkid: u16) -> Bytes {
        if let Some(at) = self.position(pkid, 2, false) {
            let m = &mut self.in_flight[at];
            m.released = true;
            m.frame = Bytes::new();
        }
        ack_frame(frame::PUBREL, pkid)
    }

    /// PUBCOMP: a QoS 2 message is done.
    pub(super) fn on_pubcomp(&mut self, pkid: u16, now: Instant) -> Option<DeviceEventKind> {
        let at = self.position(pkid, 2, true)?;
        self.acked(at, now)
    }

    /// After a (re)connect. A resumed session retransmits every message in
    /// flight (PUBLISH with DUP, or PUBREL once released) before anything
    /// new; without a session the broker has forgotten them, so they are
    /// lost. Queued messages never reached the wire and go out either way.
    pub(super) fn on_connack(&mut self, session_present: bool, now: Instant, out: &mut Out) {
        if !session_present {
            out.events
                .extend(self.in_flight.drain(..).map(|m| DeviceEventKind::Lost {
                    seq: m.seq,
                    at: now,
                    reason: LostReason::SessionLost,
                }));
            return;
        }
        for m in &self.in_flight {
            out.frames.push(if m.released {
                ack_frame(frame::PUBREL, m.pkid)
            } else {
                let mut dup = BytesMut::from(&m.frame[..]);
                dup[0] |= 0x08;
                dup.freeze()
            });
        }
    }

    /// Everything still outstanding, in sequence order; the session is empty afterwards.
    pub(super) fn drain_all(&mut self) -> Vec<u64> {
        let mut all: Vec<u64> = self.in_flight.drain(..).map(|m| m.seq).collect();
        all.extend(self.queued.drain(..).map(|q| q.seq));
        self.queued_bytes = 0;
        all.sort_unstable();
        all
    }
}

/// Why a message has no PUBLISH packet; its text is the message's
/// [`LostReason::NotQueued`].
#[derive(Debug, thiserror::Error)]
enum Unencodable {
    #[error("the topic is {0} bytes long (at most 65,535)")]
    TopicTooLong(usize),
    #[error("the packet's remaining length {0} exceeds MQTT's 268,435,455")]
    RemainingLength(usize),
    #[error("the packet is {total} bytes, above the largest the device sends ({max})")]
    PacketTooLarge { total: usize, max: usize },
}

/// Encodes a PUBLISH (retain off, DUP off) with a zero packet id to be
/// filled in; returns the frame and where the id goes.
fn encode_publish(
    topic: &str,
    qos: u8,
    payload: &[u8],
    max_packet_bytes: usize,
) -> Result<(BytesMut, usize), Unencodable> {
    let topic_len = u16::try_from(topic.len()).map_err(|_| Unencodable::TopicTooLong(topic.len()))?;
    let id_len = if qos > 0 { 2 } else { 0 };
    let remaining = 2 + topic.len() + id_len + payload.len();
    let (length, length_len) = frame::remaining_length(remaining).ok_or(Unencodable::RemainingLength(remaining))?;
    let total = 1 + length_len + remaining;
    if total > max_packet_bytes {
        return Err(Unencodable::PacketTooLarge {
            total,
            max: max_packet_bytes,
        });
    }
    let mut frame = BytesMut::with_capacity(total);
    frame.put_u8(0x30 | (qos << 1));
    frame.put_slice(&length[..length_len]);
    frame.put_u16(topic_len);
    frame.put_slice(topic.as_bytes());
    let pkid_at = frame.len();
    if qos > 0 {
        frame.put_u16(0);
    }
    frame.put_slice(payload);
    Ok((frame, pkid_at))
}

#[cfg(test)]
mod tests;
