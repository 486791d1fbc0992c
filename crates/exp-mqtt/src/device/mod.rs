//! One emulated device: its own MQTT 3.1.1 client and TCP connection.
//!
//! A device is a small client of its own (not rumqttc's `AsyncClient`):
//! [`Session`](session::Session) holds the protocol state, [`Link`](link::Link)
//! the socket, and one task per device drives both. rumqttc's codec
//! (`mqttbytes`) decodes what the broker sends. Why not rumqttc's client:
//! it allocates about 33 KB per client up front (framed read and write
//! buffers, a 65,536-bit QoS 2 id set, in-flight slots) against a budget of
//! 50 KB per device, it wakes a request channel and a `select!` over its
//! whole state for every message, and it assigns packet ids privately, so
//! matching acknowledgements to messages meant mirroring its bookkeeping.
//! Here the device assigns packet ids itself and every message ends as
//! `Written` (QoS 0), `Acked`, or `Lost`, exactly once.
//!
//! `publish` queues under a lock and never blocks, so it can run on the
//! pacer thread. Over plain TCP it also writes the message itself
//! ([`Wire`](wire::Wire)); over TLS, or when the socket is full, it wakes
//! the task to write. On a broken connection the task reconnects
//! with backoff; a resumed session (`clean_session = false`) retransmits
//! what was in flight, a new one loses it (`SessionLost`); messages queued
//! but never written go out on the new connection either way.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc::UnboundedSender, oneshot, Notify};
use tokio::task::JoinHandle;

mod driver;
mod link;
mod session;
mod wire;

use driver::Driver;
use session::{Out, Session};
use wire::Wire;

pub use crate::client::DeviceOptions;
use crate::client::{validate, Refused};
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
    /// The device's queue was full (it is disconnected or far behind) or the packet too large.
    NotQueued(String),
    /// The broker did not resume the session after a reconnect; the message will not be retransmitted.
    SessionLost,
    /// Still unacknowledged when the device was closed.
    Unacked,
}

/// A connected device. Publishing is synchronous and never blocks.
///
/// Dropping a device without [`Device::close`] aborts its task: a task left
/// running would keep its connection and the event channel open, and
/// whoever waits for that channel to close would wait for ever.
pub struct Device {
    index: u32,
    client_id: String,
    shared: Arc<Shared>,
    events: UnboundedSender<DeviceEvent>,
    task: Option<JoinHandle<()>>,
}

/// What `publish` and the device's task share.
struct Shared {
    state: Mutex<State>,
    /// Wakes the task: a message waits to be written, or the device is closing.
    wake: Notify,
}

/// Everything under the device's one lock. Writes to the socket happen
/// under it too, so frames never interleave.
struct State {
    session: Session,
    /// The connection's write side while connected over plain TCP.
    wire: Option<Wire>,
    /// `publish`'s scratch space, kept so a message allocates nothing here.
    out: Out,
}

impl State {
    /// Writes what the in-flight window lets out, if the connection can be
    /// written from here; returns whether the task must act: there is no
    /// wire (TLS, or between connections), or the socket did not take it all.
    fn write_through(&mut self, now: Instant) -> bool {
        let Some(wire) = self.wire.as_mut().filter(|w| w.is_clear()) else {
            return true;
        };
        self.session.take_sendable(now, &mut self.out);
        wire.push(&self.out.frames, now);
        self.out.frames.clear();
        !wire.is_clear()
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent between statements, so a panic elsewhere does not corrupt it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
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
        validate(endpoint, &options)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                session: Session::new(options.max_inflight, options.max_packet_bytes),
                wire: None,
                out: Out::default(),
            }),
            wake: Notify::new(),
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        let client_id = options.client_id.clone();
        let driver = Driver {
            index,
            endpoint: endpoint.clone(),
            options,
            shared: Arc::clone(&shared),
            events: events.clone(),
        };
        // Aborted if this future is dropped before the device is handed
        // out (its caller gave up waiting): otherwise the driver would go on
        // reconnecting to an unreachable broker for ever, holding the event
        // channel open, and whoever waits for that channel to close would hang.
        let task = tokio::spawn(driver.run(ready_tx));
        let mut guard = AbortOnDrop(Some(task.abort_handle()));
        match tokio::time::timeout(timeout, ready_rx).await {
            Ok(Ok(Ok(()))) => {
                guard.disarm();
                Ok(Device {
                    index,
                    client_id,
                    shared,
                    events,
                    task: Some(task),
                })
            }
            Ok(Ok(Err(refused))) => {
                drop(guard);
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
                drop(guard);
                let last_error = shared
                    .state()
                    .session
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "none".to_string());
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
    /// a message that cannot be queued is reported `Lost` at once (the ticket is still returned).
    pub fn publish(&self, topic: &str, qos: u8, payload: &[u8]) -> Result<MessageTicket, MqttError> {
        if qos > 2 {
            return Err(MqttError::InvalidQos(qos));
        }
        // One clock read per message: the send instant is also the write's.
        let sent_at = Instant::now();
        let (queued, wake_task) = {
            let mut state = self.shared.state();
            if state.session.closed {
                return Err(MqttError::Closed {
                    client_id: self.client_id.clone(),
                });
            }
            let queued = state.session.queue(topic, qos, payload);
            let wake_task = queued.is_ok() && state.write_through(sent_at);
            // QoS 0 messages just written.
            for kind in state.out.events.drain(..) {
                self.emit(kind);
            }
            (queued, wake_task)
        };
        match queued {
            Ok(seq) => {
                if wake_task {
                    self.shared.wake.notify_one();
                }
                Ok(MessageTicket { seq, sent_at })
            }
            Err((seq, reason)) => {
                self.emit(DeviceEventKind::Lost {
                    seq,
                    at: sent_at,
                    reason,
                });
                Ok(MessageTicket { seq, sent_at })
            }
        }
    }

    /// Whether `publish` would queue a message now rather than report it
    /// lost: the device is open and has not fallen far behind.
    pub fn has_room(&self) -> bool {
        let state = self.shared.state();
        !state.session.closed && state.session.has_room()
    }

    /// Messages published and not yet written (QoS 0), acknowledged or lost.
    pub fn outstanding(&self) -> usize {
        self.shared.state().session.outstanding()
    }

    /// Waits up to `grace` for outstanding acknowledgements, disconnects, and
    /// reports everything still unacknowledged as `Lost { Unacked }`.
    pub async fn close(mut self, grace: Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        while self.outstanding() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.shared.state().session.closed = true;
        self.shared.wake.notify_one();
        // The task ends once DISCONNECT is written; don't wait long for a dead broker.
        if let Some(mut task) = self.task.take() {
            if tokio::time::timeout(Duration::from_millis(500), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
        let now = Instant::now();
        for seq in self.shared.state().session.drain_all() {
            let reason = LostReason::Unacked;
            self.emit(DeviceEventKind::Lost { seq, at: now, reason });
        }
    }

    fn emit(&self, kind: DeviceEventKind) {
        report(&self.events, self.index, kind);
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

fn report(events: &UnboundedSender<DeviceEvent>, device: u32, kind: DeviceEventKind) {
    // A dropped receiver means nobody records results any more; nothing to do then.
    let _ = events.send(DeviceEvent { device, kind });
}

/// Aborts a spawned task when dropped, unless disarmed.
struct AbortOnDrop(Option<tokio::task::AbortHandle>);

impl AbortOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}
