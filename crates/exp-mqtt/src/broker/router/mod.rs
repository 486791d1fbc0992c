//! The broker's state: sessions, their subscriptions, and what waits to be
//! written to each client. Connection tasks change it under one lock and
//! afterwards wake the connections it queued output for ([`Router::take_wakes`]).
//!
//! Delivery follows MQTT 3.1.1: a message goes to every session with a
//! matching filter at the lower of the two QoS levels, once per session
//! (the highest matching filter's QoS); incoming QoS 2 is routed on PUBLISH
//! and its packet id kept until PUBREL, so a retransmission is not routed
//! twice. A persistent session (`clean_session = false`) keeps its filters,
//! its unacknowledged messages and its queued QoS 1/2 messages while
//! disconnected, and resends what was unacknowledged, with DUP set, on
//! reconnect. Retained messages are not stored (fleets do not publish them).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use rumqttc::mqttbytes::v4::{ConnAck, ConnectReturnCode, Packet, Publish, SubAck, SubscribeReasonCode};
use rumqttc::mqttbytes::QoS;
use tokio::sync::Notify;

use super::topic;
use crate::frame;

/// One client connection's signals: `wake` it to write what was queued for
/// it, `close` it (another connection took its session over).
#[derive(Debug)]
pub(super) struct Link {
    pub id: u64,
    pub wake: Notify,
    pub close: Notify,
}

impl Link {
    pub fn new(id: u64) -> Arc<Link> {
        Arc::new(Link {
            id,
            wake: Notify::new(),
            close: Notify::new(),
        })
    }
}

/// A message as routed: cheap to clone for every matching session.
#[derive(Debug, Clone)]
pub(super) struct Message {
    pub topic: Arc<str>,
    pub payload: Bytes,
    pub qos: u8,
}

/// A QoS 1/2 message written to the client and not yet acknowledged.
#[derive(Debug)]
struct Inflight {
    message: Message,
    /// PUBREC arrived, PUBREL sent: only PUBCOMP is awaited.
    released: bool,
}

#[derive(Debug, Default)]
struct Session {
    clean: bool,
    link: Option<Arc<Link>>,
    filters: Vec<(String, u8)>,
    /// Encoded acknowledgements and retransmissions, written before `queue`.
    control: BytesMut,
    queue: VecDeque<Message>,
    inflight: BTreeMap<u16, Inflight>,
    last_pkid: u16,
    /// Incoming QoS 2 packet ids routed and not yet released.
    awaiting_release: HashSet<u16>,
    will: Option<Message>,
}

/// Why a CONNECT is refused (its CONNACK return code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    IdentifierRejected,
    ServerUnavailable,
}

/// A packet the broker does not accept from a client: the connection ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Violation(pub &'static str);

/// What the connection does after a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    Continue,
    /// The client sent DISCONNECT.
    Disconnect,
    /// This connection no longer owns the session (taken over).
    Detached,
}

/// Limits the broker was started with.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub max_connections: usize,
    pub max_inflight: usize,
    /// Messages kept per session beyond its inflight window; more are dropped.
    pub max_queued: usize,
}

#[derive(Debug)]
pub(super) struct Router {
    limits: Limits,
    sessions: HashMap<String, Session>,
    /// Client ids of the sessions with at least one filter (routing looks only at these).
    subscribed: Vec<String>,
    connected: usize,
    assigned_ids: u64,
    wakes: Vec<Arc<Link>>,
    /// Messages dropped because a session's queue was full.
    pub dropped: u64,
}

impl Router {
    pub fn new(limits: Limits) -> Router {
        Router {
            limits,
            sessions: HashMap::new(),
            subscribed: Vec::new(),
            connected: 0,
            assigned_ids: 0,
            wakes: Vec::new(),
            dropped: 0,
        }
    }

    /// Attaches `link` to the client's session after a CONNECT and queues the
    /// CONNACK (and any retransmissions) for its writer. Returns the client
    /// id, assigned when the client sent none.
    pub fn attach(
        &mut self,
        client_id: String,
        clean: bool,
        will: Option<Message>,
        link: &Arc<Link>,
    ) -> Result<String, Refusal> {
        let client_id = match client_id.is_empty() {
            true if !clean => return Err(Refusal::IdentifierRejected),
            true => {
                self.assigned_ids += 1;
                format!("expc-broker-assigned-{}", self.assigned_ids)
            }
            false => client_id,
        };
        let taken_over = self.sessions.get(&client_id).and_then(|s| s.link.clone());
        if taken_over.is_none() && self.connected >= self.limits.max_connections {
            return Err(Refusal::ServerUnavailable);
        }
        if let Some(old) = taken_over {
            old.wake.notify_one();
            old.close.notify_one();
        } else {
            self.connected += 1;
        }
        if clean {
            self.remove_session(&client_id);
        }
        let present = self.sessions.contains_key(&client_id);
        let session = self.sessions.entry(client_id.clone()).or_default();
        session.clean = clean;
        session.will = will;
        session.link = Some(Arc::clone(link));
        session.control.clear();
        // Four fixed bytes: encoding cannot fail.
        let _ = ConnAck::new(ConnectReturnCode::Success, present).write(&mut session.control);
        for (pkid, sent) in &session.inflight {
            match sent.released {
                true => session.control.put_slice(&frame::ack(frame::PUBREL, *pkid)),
                false => encode_publish(&mut session.control, &sent.message, *pkid, true),
            }
        }
        self.wakes.push(Arc::clone(link));
        Ok(client_id)
    }

    /// Ends `link`'s hold on the session: a clean session is removed, and
    /// without DISCONNECT the will is published.
    pub fn detach(&mut self, client_id: &str, link: u64, graceful: bool) {
        let Some(session) = self.sessions.get_mut(client_id) else {
            return;
        };
        if session.link.as_ref().is_none_or(|l| l.id != link) {
            return;
        }
        session.link = None;
        self.connected -= 1;
        let will = session.will.take();
        if session.clean {
            self.remove_session(client_id);
        }
        if let (false, Some(will)) = (graceful, will) {
            self.route(&will);
        }
    }

    fn remove_session(&mut self, client_id: &str) {
        if self.sessions.remove(client_id).is_some() {
            self.subscribed.retain(|c| c != client_id);
        }
    }

    /// Handles one packet from the client holding `link`.
    pub fn incoming(&mut self, client_id: &str, link: u64, packet: Packet) -> Result<Next, Violation> {
        let Some(session) = self.sessions.get_mut(client_id) else {
            return Ok(Next::Detached);
        };
        let link = match &session.link {
            Some(l) if l.id == link => Arc::clone(l),
            _ => return Ok(Next::Detached),
        };
        match packet {
            Packet::Publish(publish) => return self.publish(client_id, link, publish),
            Packet::PubRel(rel) => {
                session.awaiting_release.remove(&rel.pkid);
                session.control.put_slice(&frame::ack(frame::PUBCOMP, rel.pkid));
            }
            Packet::PubAck(ack) => {
                session.inflight.remove(&ack.pkid);
            }
            Packet::PubRec(rec) => {
                if let Some(sent) = session.inflight.get_mut(&rec.pkid) {
                    sent.released = true;
                }
                session.control.put_slice(&frame::ack(frame::PUBREL, rec.pkid));
            }
            Packet::PubComp(comp) => {
                session.inflight.remove(&comp.pkid);
            }
            Packet::Subscribe(subscribe) => {
                let mut codes = Vec::with_capacity(subscribe.filters.len());
                for filter in subscribe.filters {
                    if !topic::valid_filter(&filter.path) {
                        codes.push(SubscribeReasonCode::Failure);
                        continue;
                    }
                    let qos = filter.qos as u8;
                    session.filters.retain(|(f, _)| *f != filter.path);
                    session.filters.push((filter.path, qos));
                    codes.push(SubscribeReasonCode::Success(filter.qos));
                }
                SubAck::new(subscribe.pkid, codes)
                    .write(&mut session.control)
                    .map_err(|_| Violation("a SUBACK that does not encode"))?;
                if !session.filters.is_empty() && !self.subscribed.iter().any(|c| c == client_id) {
                    self.subscribed.push(client_id.to_string());
                }
            }
            Packet::Unsubscribe(unsubscribe) => {
                session.filters.retain(|(f, _)| !unsubscribe.topics.contains(f));
                session
                    .control
                    .put_slice(&frame::ack(frame::UNSUBACK, unsubscribe.pkid));
                if session.filters.is_empty() {
                    self.subscribed.retain(|c| c != client_id);
                }
            }
            Packet::PingReq => session.control.put_slice(&[0xD0, 0]),
            Packet::Disconnect => return Ok(Next::Disconnect),
            Packet::Connect(_) => return Err(Violation("a second CONNECT")),
            _ => return Err(Violation("a packet only a broker sends")),
        }
        self.wakes.push(link);
        Ok(Next::Continue)
    }

    fn publish(&mut self, client_id: &str, link: Arc<Link>, publish: Publish) -> Result<Next, Violation> {
        if !topic::valid_name(&publish.topic) {
            return Err(Violation("a PUBLISH to an invalid topic name"));
        }
        let message = Message {
            topic: Arc::from(publish.topic),
            payload: publish.payload,
            qos: publish.qos as u8,
        };
        let Some(session) = self.sessions.get_mut(client_id) else {
            return Ok(Next::Detached);
        };
        let route = match publish.qos {
            QoS::AtMostOnce => true,
            QoS::AtLeastOnce => {
                session.control.put_slice(&frame::ack(frame::PUBACK, publish.pkid));
                true
            }
            QoS::ExactlyOnce => {
                session.control.put_slice(&frame::ack(frame::PUBREC, publish.pkid));
                session.awaiting_release.insert(publish.pkid)
            }
        };
        if message.qos > 0 {
            self.wakes.push(link);
        }
        if route {
            self.route(&message);
        }
        Ok(Next::Continue)
    }

    /// Queues `message` for every session with a matching filter.
    fn route(&mut self, message: &Message) {
        for client_id in &self.subscribed {
            let Some(session) = self.sessions.get_mut(client_id) else {
                continue;
            };
            let granted = session
                .filters
                .iter()
                .filter(|(filter, _)| topic::matches(filter, &message.topic))
                .map(|(_, qos)| *qos)
                .max();
            let Some(granted) = granted else {
                continue;
            };
            let qos = granted.min(message.qos);
            match &session.link {
                // Offline persistent sessions keep QoS 1/2 only (3.1.2.4).
                None if qos == 0 => continue,
                Some(link) => self.wakes.push(Arc::clone(link)),
                None => {}
            }
            if session.queue.len() >= self.limits.max_queued {
                self.dropped += 1;
                continue;
            }
            session.queue.push_back(Message { qos, ..message.clone() });
        }
    }

    /// Moves what `link`'s client should receive next into `out`: control
    /// packets, then queued messages while the inflight window has room.
    /// `false` once the link no longer holds the session.
    pub fn take_output(&mut self, client_id: &str, link: u64, out: &mut BytesMut) -> bool {
        let Some(session) = self.sessions.get_mut(client_id) else {
            return false;
        };
        if session.link.as_ref().is_none_or(|l| l.id != link) {
            return false;
        }
        out.extend_from_slice(&session.control);
        session.control.clear();
        while session.inflight.len() < self.limits.max_inflight {
            let Some(message) = session.queue.pop_front() else {
                break;
            };
            if message.qos == 0 {
                encode_publish(out, &message, 0, false);
                continue;
            }
            let pkid = next_pkid(session);
            encode_publish(out, &message, pkid, false);
            session.inflight.insert(
                pkid,
                Inflight {
                    message,
                    released: false,
                },
            );
        }
        true
    }

    /// The links to wake for what the last calls queued.
    pub fn take_wakes(&mut self) -> Vec<Arc<Link>> {
        std::mem::take(&mut self.wakes)
    }
}

/// The next packet id not in flight (the window is below 65,535, so one is free).
fn next_pkid(session: &mut Session) -> u16 {
    loop {
        session.last_pkid = session.last_pkid.checked_add(1).unwrap_or(1);
        if !session.inflight.contains_key(&session.last_pkid) {
            return session.last_pkid;
        }
    }
}

/// A PUBLISH frame (retain off) for `message` at its QoS.
pub(super) fn encode_publish(out: &mut BytesMut, message: &Message, pkid: u16, dup: bool) {
    let topic = message.topic.as_bytes();
    let id_len = if message.qos > 0 { 2 } else { 0 };
    let remaining = 2 + topic.len() + id_len + message.payload.len();
    // Never above the limit: a message goes out at most at the QoS it came
    // in with, so its frame is at most as long as the one that brought it.
    let Some((length, length_len)) = frame::remaining_length(remaining) else {
        return;
    };
    out.reserve(1 + length_len + remaining);
    out.put_u8(0x30 | u8::from(dup) << 3 | message.qos << 1);
    out.put_slice(&length[..length_len]);
    // Topics arrive in MQTT frames, so they fit a u16 length.
    out.put_u16(u16::try_from(topic.len()).unwrap_or(u16::MAX));
    out.put_slice(topic);
    if message.qos > 0 {
        out.put_u16(pkid);
    }
    out.put_slice(&message.payload);
}

#[cfg(test)]
mod tests;
