//! A subscriber: one client on wildcard filters at QoS 1 that reports every
//! PUBLISH it receives with its receive instant (delivery latency, and the
//! at-least-once check against the devices' acknowledgements).
//!
//! It reconnects like a device and re-subscribes after every CONNACK, because
//! a restarted broker without persistence has forgotten the subscription.
//! Messages published while it is disconnected are, of course, not seen.

use std::time::{Duration, Instant};

use bytes::Bytes;
use rumqttc::{AsyncClient, ConnectionError, Event, EventLoop, Packet, QoS, SubscribeFilter, SubscribeReasonCode};
use tokio::sync::{mpsc::UnboundedSender, oneshot};
use tokio::task::JoinHandle;

use crate::client::{mqtt_options, network_options, DeviceOptions, Refused, BACKOFF_MAX, BACKOFF_MIN};
use crate::url::Endpoint;
use crate::MqttError;

/// One received PUBLISH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub topic: String,
    pub payload: Bytes,
    pub received_at: Instant,
    /// The broker marked it as a redelivery.
    pub dup: bool,
    pub qos: u8,
}

/// What the subscriber's task reports besides messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubscriberEvent {
    Message(Received),
    /// Subscribed (again) after a CONNACK.
    Subscribed {
        at: Instant,
    },
    Disconnected {
        at: Instant,
        error: String,
    },
}

/// A running subscriber; its task stops when it is closed or dropped.
pub struct Subscriber {
    client: AsyncClient,
    task: Option<JoinHandle<()>>,
}

impl Subscriber {
    /// Connects, subscribes to `filters` at QoS 1 and waits (at most `timeout`) for the SUBACK.
    pub async fn connect(
        endpoint: &Endpoint,
        options: DeviceOptions,
        filters: Vec<String>,
        events: UnboundedSender<SubscriberEvent>,
        timeout: Duration,
    ) -> Result<Subscriber, MqttError> {
        let opts = mqtt_options(endpoint, &options)?;
        // Requests are only SUBSCRIBE and the acks rumqttc sends itself.
        let (client, mut eventloop) = AsyncClient::new(opts, 64);
        eventloop.set_network_options(network_options());
        let (ready_tx, ready_rx) = oneshot::channel();
        let task = tokio::spawn(drive(client.clone(), eventloop, filters.clone(), events, ready_tx));
        let client_id = options.client_id;
        let filter = filters.join(", ");
        match tokio::time::timeout(timeout, ready_rx).await {
            Ok(Ok(Ok(()))) => Ok(Subscriber {
                client,
                task: Some(task),
            }),
            Ok(Ok(Err(refused))) => {
                task.abort();
                Err(match refused {
                    Refused::Broker(reason) => MqttError::Subscribe {
                        client_id,
                        filter,
                        reason,
                    },
                    Refused::Tls(reason) => MqttError::TlsHandshake {
                        client_id,
                        endpoint: endpoint.to_string(),
                        reason,
                    },
                })
            }
            Ok(Err(_)) | Err(_) => {
                task.abort();
                let waited_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
                let last_error = "no SUBACK".to_string();
                Err(MqttError::ConnectTimeout {
                    client_id,
                    endpoint: endpoint.to_string(),
                    waited_ms,
                    last_error,
                })
            }
        }
    }

    /// Disconnects and stops the task.
    pub async fn close(mut self) {
        let _ = self.client.try_disconnect();
        if let Some(mut task) = self.task.take() {
            if tokio::time::timeout(Duration::from_millis(500), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        // A subscriber dropped without `close` must not keep a connection open.
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn drive(
    client: AsyncClient,
    mut eventloop: EventLoop,
    filters: Vec<String>,
    events: UnboundedSender<SubscriberEvent>,
    ready: oneshot::Sender<Result<(), Refused>>,
) {
    let emit = |e| {
        let _ = events.send(e);
    };
    let mut ready = Some(ready);
    let mut backoff = BACKOFF_MIN;
    let mut connected = false;
    loop {
        let event = eventloop.poll().await;
        let now = Instant::now();
        match event {
            Ok(Event::Incoming(Packet::Publish(p))) => emit(SubscriberEvent::Message(Received {
                topic: p.topic,
                payload: p.payload,
                received_at: now,
                dup: p.dup,
                qos: p.qos as u8,
            })),
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                connected = true;
                backoff = BACKOFF_MIN;
                let subs = filters
                    .iter()
                    .map(|f| SubscribeFilter::new(f.clone(), QoS::AtLeastOnce));
                if let Err(e) = client.try_subscribe_many(subs) {
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(Err(Refused::Broker(e.to_string())));
                    }
                    return;
                }
            }
            Ok(Event::Incoming(Packet::SubAck(ack))) => {
                if ack
                    .return_codes
                    .iter()
                    .any(|c| matches!(c, SubscribeReasonCode::Failure))
                {
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(Err(Refused::Broker("the broker refused the subscription".to_string())));
                        return;
                    }
                }
                emit(SubscriberEvent::Subscribed { at: now });
                if let Some(ready) = ready.take() {
                    let _ = ready.send(Ok(()));
                }
            }
            Ok(Event::Outgoing(rumqttc::Outgoing::Disconnect)) | Err(ConnectionError::RequestsDone) => return,
            Ok(_) => {}
            Err(e) => {
                // As for devices: a TLS failure retrying cannot fix ends the first connect at once.
                if let Some(reason) = crate::tls::rejection(&e) {
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(Err(Refused::Tls(reason)));
                        return;
                    }
                }
                if connected {
                    connected = false;
                    emit(SubscriberEvent::Disconnected {
                        at: now,
                        error: e.to_string(),
                    });
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(BACKOFF_MAX);
            }
        }
    }
}
