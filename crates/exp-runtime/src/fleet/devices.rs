//! One task per device: connect at its place in the ramp, then publish on
//! every fire of the pacer until the pacer ends, then close with a grace.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use exp_mqtt::{Device, DeviceEvent, DeviceOptions, Endpoint, Fire, PayloadGenerator};
use tokio::sync::mpsc;

use super::collector::Msg;
use super::tables::{MessageRow, Status};
use crate::clock::TrialClock;

/// How long one device waits for its CONNACK.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a device task needs to know; shared parts are cloned per device.
pub struct DeviceJob {
    pub index: u32,
    pub endpoint: Endpoint,
    pub options: DeviceOptions,
    pub topic: String,
    pub qos: u8,
    /// When to start connecting (the connect ramp).
    pub connect_at: Instant,
    pub clock: TrialClock,
    /// Set before the first fire: when the schedule started.
    pub phase: Arc<OnceLock<SendPhase>>,
    /// Told once this device's connect attempt is over (connected or failed).
    pub settled: mpsc::UnboundedSender<()>,
    pub payload: PayloadGenerator,
    pub grace: Duration,
}

/// Fixed when the fleet's send phase starts, after the connect ramp.
#[derive(Debug, Clone, Copy)]
pub struct SendPhase {
    /// The schedule's start on the trial clock: pacer deadlines are relative to it.
    pub offset_ns: u64,
    /// Messages with a lower pacer `seq` are warm-up.
    pub warmup_messages: u64,
}

/// How one device's connection went, for the `mqtt_devices` table.
pub struct Connection {
    pub device: u32,
    pub client_id: String,
    pub connect_start_ns: u64,
    pub connected_ns: Option<u64>,
    pub status: String,
}

pub async fn run(
    mut job: DeviceJob,
    mut fires: mpsc::UnboundedReceiver<Fire>,
    events: mpsc::UnboundedSender<DeviceEvent>,
    out: mpsc::UnboundedSender<Msg>,
    kill: crate::cancel::Cancel,
) -> Connection {
    tokio::time::sleep_until(tokio::time::Instant::from_std(job.connect_at)).await;
    let connect_start_ns = job.clock.now_ns();
    let client_id = job.options.client_id.clone();
    let connected = Device::connect(job.index, &job.endpoint, job.options.clone(), events, CONNECT_TIMEOUT).await;
    let (device, connection) = match connected {
        Ok(device) => (
            Some(device),
            Connection {
                device: job.index,
                client_id,
                connect_start_ns,
                connected_ns: Some(job.clock.now_ns()),
                status: "connected".into(),
            },
        ),
        Err(e) => (
            None,
            Connection {
                device: job.index,
                client_id,
                connect_start_ns,
                connected_ns: None,
                status: format!("failed: {e}"),
            },
        ),
    };
    let _ = job.settled.send(());
    drop(job.settled);
    let mut buffer = Vec::new();
    let mut dseq = 0u64;
    while let Some(fire) = fires.recv().await {
        let phase = job.phase.get().copied().unwrap_or(SendPhase {
            offset_ns: 0,
            warmup_messages: 0,
        });
        let scheduled_ns = phase.offset_ns.saturating_add(fire.deadline_ns);
        let mut row = MessageRow {
            device: fire.device,
            seq: fire.seq,
            scheduled_ns,
            sent_ns: None,
            lateness_ns: fire.lateness_ns(),
            ack_latency_ns: None,
            delivery_latency_ns: None,
            bytes: 0,
            status: Status::Dropped,
            reason: Some("not_connected"),
            warmup: fire.seq < phase.warmup_messages,
        };
        let Some(device) = &device else {
            let _ = out.send(Msg::Unsent(row));
            continue;
        };
        let sent_ns = job.clock.now_ns();
        // The payload carries the client's sequence number, which acks and deliveries are keyed by.
        job.payload
            .build(fire.device, dseq, job.clock.unix_ns_at(sent_ns), &mut buffer);
        row.sent_ns = Some(sent_ns);
        // What a device sees: the pacer's lateness plus the hop to this task.
        row.lateness_ns = sent_ns.saturating_sub(scheduled_ns);
        row.bytes = buffer.len() as u64;
        row.status = Status::Pending;
        row.reason = None;
        let at = Instant::now();
        let _ = out.send(Msg::Sent {
            row: row.clone(),
            dseq,
            at,
        });
        match device.publish(&job.topic, job.qos, Bytes::copy_from_slice(&buffer)) {
            Ok(_) => dseq += 1,
            // Refused before it took a sequence number (closed client): the next message reuses it.
            Err(e) => {
                // Nothing was queued: the announced message will never be acked.
                let _ = out.send(Msg::Device(DeviceEvent {
                    device: job.index,
                    kind: exp_mqtt::DeviceEventKind::Lost {
                        seq: dseq,
                        at: Instant::now(),
                        reason: exp_mqtt::LostReason::NotQueued(e.to_string()),
                    },
                }));
            }
        }
    }
    if let Some(device) = device {
        let grace = if kill.level() == crate::cancel::Level::Kill {
            Duration::ZERO
        } else {
            job.grace
        };
        device.close(grace).await;
    }
    connection
}
