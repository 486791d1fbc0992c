//! One emulated device: one rumqttc client with its own TCP connection.
//!
//! A task drives the rumqttc `EventLoop` without ever cancelling `poll()`
//! (cancelling it mid-write can drop an ack rumqttc already accounted for).
//! rumqttc assigns packet ids itself and only tells us through events, so the
//! [`Tracker`] replays its bookkeeping: publishes enter rumqttc's request
//! channel in `seq` order; each first `Outgoing::Publish(pkid)` (or
//! `AwaitAck` on a packet-id collision) belongs to the oldest submitted
//! message; PUBACK / PUBREC→PUBCOMP close it. On a connection error rumqttc
//! moves unacked publishes and the not-yet-read channel into `pending` and
//! retransmits them if the broker resumes the session; if the session is gone
//! (`session_present == false`) it drops them, and so do we — as `Lost`.
//! Every message thus ends as `Written` (QoS 0), `Acked`, or `Lost`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rumqttc::{AsyncClient, ConnectionError, Event, EventLoop, Outgoing, Packet, QoS};
use tokio::sync::{mpsc::UnboundedSender, oneshot};
use tokio::task::JoinHandle;

mod tracker;

use tracker::Tracker;

pub use crate::client::DeviceOptions;
use crate::client::{mqtt_options, network_options, Refused, BACKOFF_MAX, BACKOFF_MIN};
use crate::url::Endpoint;
use crate::MqttError;

/// What `publish` hands back: the message's number on this device and its send instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageTicket {
    pub seq: u64,
    pub sent_at: Instant,
}

/// A report from a device's task (or from `publish`/`close`), tagged with the device index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceEvent {
    pub device: u32,
    pub kind: DeviceEventKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceEventKind {
    Connected {
        at: Instant,
        session_present: bool,
    },
    /// The connection broke (reported once per outage; reconnects continue).
    Disconnected {
        at: Instant,
        error: String,
    },
    /// A QoS 0 message was handed to the socket; it gets no acknowledgement.
    Written {
        seq: u64,
        at: Instant,
    },
    /// PUBACK (QoS 1) or PUBCOMP (QoS 2) arrived.
    Acked {
        seq: u64,
        written_at: Instant,
        acked_at: Instant,
    },
    Lost {
        seq: u64,
        at: Instant,
        reason: LostReason,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LostReason {
    /// rumqttc's request queue was full (the device is disconnected or far behind) or refused it.
    NotQueued(String),
    /// The broker did not resume the session after a reconnect; the message will not be retransmitted.
    SessionLost,
    /// Still unacknowledged when the device was closed.
    Unacked,
}

/// A connected device. Publishing is synchronous and never blocks.
pub struct Device {
    index: u32,
    client_id: String,
    client: AsyncClient,
    tracker: Arc<Mutex<Tracker>>,
    events: UnboundedSender<DeviceEvent>,
    task: JoinHandle<()>,
}

fn rumqttc_qos(qos: u8) -> Result<QoS, MqttError> {
    match qos {
        0 => Ok(QoS::AtMostOnce),
        1 => Ok(QoS::AtLeastOnce),
        2 => Ok(QoS::ExactlyOnce),
        q => Err(MqttError::InvalidQos(q)),
    }
}

impl Device {
    /// Connects and waits (at most `timeout`) for the first CONNACK.
    pub async fn connect(
        index: u32,
        endpoint: &Endpoint,
        options: DeviceOptions,
        events: UnboundedSender<DeviceEvent>,
        timeout: Duration,
    ) -> Result<Device, MqttError> {
        let opts = mqtt_options(endpoint, &options)?;
        // Room for a full window plus a burst; beyond that `publish` reports NotQueued.
        let capacity = usize::from(options.max_inflight).saturating_mul(2).max(16);
        let (client, mut eventloop) = AsyncClient::new(opts, capacity);
        eventloop.set_network_options(network_options());
        // rumqttc reserves room for 100 buffered incoming events (14 KiB per
        // client); a device handles each event as it comes, so the queue
        // grows to a few entries at most.
        eventloop.state.events = std::collections::VecDeque::new();
        let tracker = Arc::new(Mutex::new(Tracker::default()));
        let (ready_tx, ready_rx) = oneshot::channel();
        let task = tokio::spawn(drive(index, eventloop, Arc::clone(&tracker), events.clone(), ready_tx));
        let client_id = options.client_id;
        match tokio::time::timeout(timeout, ready_rx).await {
            Ok(Ok(Ok(()))) => Ok(Device {
                index,
                client_id,
                client,
                tracker,
                events,
                task,
            }),
            Ok(Ok(Err(refused))) => {
                task.abort();
                Err(match refused {
                    Refused::Broker(reason) => MqttError::ConnectRefused { client_id, reason },
                    Refused::Tls(reason) => MqttError::TlsHandshake {
                        client_id,
                        endpoint: endpoint.to_string(),
                        reason,
                    },
                })
            }
            Ok(Err(_)) | Err(_) => {
                task.abort();
                let last_error = lock(&tracker).last_error.clone().unwrap_or_else(|| "none".to_string());
                let waited_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
                Err(MqttError::ConnectTimeout {
                    client_id,
                    endpoint: endpoint.to_string(),
                    waited_ms,
                    last_error,
                })
            }
        }
    }

    pub fn index(&self) -> u32 {
        self.index
    }

    /// Queues one message. The ticket's `seq` identifies it in later `Written`/`Acked`/`Lost` events;
    /// a message rumqttc cannot queue is reported `Lost` at once (the ticket is still returned).
    pub fn publish(&self, topic: &str, qos: u8, payload: Bytes) -> Result<MessageTicket, MqttError> {
        let qos = rumqttc_qos(qos)?;
        let mut t = lock(&self.tracker);
        if t.closed {
            return Err(MqttError::Closed {
                client_id: self.client_id.clone(),
            });
        }
        let seq = t.next_seq;
        t.next_seq += 1;
        let sent_at = Instant::now();
        // Pushed before sending, under the lock, so the task sees fifo order == channel order.
        t.fifo.push_back(seq);
        if let Err(e) = self.client.try_publish(topic, qos, false, Vec::from(payload)) {
            t.fifo.pop_back();
            let reason = LostReason::NotQueued(e.to_string());
            self.emit(DeviceEventKind::Lost {
                seq,
                at: Instant::now(),
                reason,
            });
        }
        Ok(MessageTicket { seq, sent_at })
    }

    /// Messages published and not yet written (QoS 0), acknowledged or lost.
    pub fn outstanding(&self) -> usize {
        lock(&self.tracker).outstanding()
    }

    /// Waits up to `grace` for outstanding acknowledgements, disconnects, and
    /// reports everything still unacknowledged as `Lost { Unacked }`.
    pub async fn close(self, grace: Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        while self.outstanding() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        lock(&self.tracker).closed = true;
        // The task ends when rumqttc has written DISCONNECT; don't wait long for a dead broker.
        let _ = self.client.try_disconnect();
        let Device {
            index,
            tracker,
            events,
            mut task,
            ..
        } = self;
        if tokio::time::timeout(Duration::from_millis(500), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
        let now = Instant::now();
        for seq in lock(&tracker).drain_all() {
            let kind = DeviceEventKind::Lost {
                seq,
                at: now,
                reason: LostReason::Unacked,
            };
            let _ = events.send(DeviceEvent { device: index, kind });
        }
    }

    fn emit(&self, kind: DeviceEventKind) {
        // A dropped receiver means nobody records results any more; nothing to do then.
        let _ = self.events.send(DeviceEvent {
            device: self.index,
            kind,
        });
    }
}

fn lock(tracker: &Mutex<Tracker>) -> std::sync::MutexGuard<'_, Tracker> {
    // The tracker stays consistent between statements, so a panic elsewhere does not corrupt it.
    tracker.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Drives the event loop until the device is closed.
async fn drive(
    index: u32,
    mut eventloop: EventLoop,
    tracker: Arc<Mutex<Tracker>>,
    events: UnboundedSender<DeviceEvent>,
    ready: oneshot::Sender<Result<(), Refused>>,
) {
    let emit = |kind| {
        let _ = events.send(DeviceEvent { device: index, kind });
    };
    let mut ready = Some(ready);
    let mut backoff = BACKOFF_MIN;
    let mut connected = false;
    loop {
        let event = eventloop.poll().await;
        let now = Instant::now();
        // The guard must not live across an await (the task must be Send): decide, then sleep.
        let retry = {
            let mut t = lock(&tracker);
            match event {
                Ok(Event::Incoming(Packet::ConnAck(ack))) => {
                    for seq in t.on_connack(ack.session_present) {
                        emit(DeviceEventKind::Lost {
                            seq,
                            at: now,
                            reason: LostReason::SessionLost,
                        });
                    }
                    connected = true;
                    backoff = BACKOFF_MIN;
                    emit(DeviceEventKind::Connected {
                        at: now,
                        session_present: ack.session_present,
                    });
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(Ok(()));
                    }
                    false
                }
                Ok(Event::Outgoing(Outgoing::Publish(pkid))) => {
                    if let Some(seq) = t.on_publish_written(pkid, now) {
                        emit(DeviceEventKind::Written { seq, at: now });
                    }
                    false
                }
                Ok(Event::Outgoing(Outgoing::AwaitAck(pkid))) => {
                    t.on_collision(pkid);
                    false
                }
                Ok(Event::Incoming(Packet::PubAck(ack))) => {
                    if let Some(p) = t.awaiting_ack.remove(&ack.pkid) {
                        emit(DeviceEventKind::Acked {
                            seq: p.seq,
                            written_at: p.written_at,
                            acked_at: now,
                        });
                    }
                    false
                }
                Ok(Event::Incoming(Packet::PubRec(rec))) => {
                    if let Some(p) = t.awaiting_ack.remove(&rec.pkid) {
                        t.awaiting_comp.insert(rec.pkid, p);
                    }
                    false
                }
                Ok(Event::Incoming(Packet::PubComp(comp))) => {
                    if let Some(p) = t.awaiting_comp.remove(&comp.pkid) {
                        emit(DeviceEventKind::Acked {
                            seq: p.seq,
                            written_at: p.written_at,
                            acked_at: now,
                        });
                    }
                    false
                }
                Ok(Event::Outgoing(Outgoing::Disconnect)) | Err(ConnectionError::RequestsDone) => return,
                Ok(_) => false,
                Err(e) => {
                    if t.closed {
                        return;
                    }
                    // Bad credentials, a rejected client id or an untrusted certificate:
                    // fail the first connect instead of retrying until it times out.
                    let refused = match &e {
                        ConnectionError::ConnectionRefused(code) => Some(Refused::Broker(format!("{code:?}"))),
                        e => crate::tls::rejection(e).map(Refused::Tls),
                    };
                    if let Some(refused) = refused {
                        if let Some(ready) = ready.take() {
                            let _ = ready.send(Err(refused));
                            return;
                        }
                    }
                    // Publishes rumqttc moved to `pending` without a packet id came from the front of our fifo.
                    t.in_pending = eventloop
                        .pending
                        .iter()
                        .filter(|r| matches!(r, rumqttc::Request::Publish(p) if p.pkid == 0))
                        .count();
                    t.last_error = Some(e.to_string());
                    if connected {
                        connected = false;
                        emit(DeviceEventKind::Disconnected {
                            at: now,
                            error: e.to_string(),
                        });
                    }
                    true
                }
            }
        };
        if retry {
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }
}
