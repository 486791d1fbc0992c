//! A fleet's devices in one interval: each connects at its place in the
//! ramp (one task per device); once all have connected or failed, the pacer
//! thread publishes every fire itself through [`Publishers`].
//!
//! Why the pacer publishes: handing each fire to a per-device task cost a
//! task wake-up per message, and under load the wake waited behind socket
//! work on the runtime's workers, which showed up as milliseconds of send
//! lateness. `Device::publish` never blocks (over plain TCP it writes what
//! the socket takes at once and leaves the rest to the device's task), so
//! calling it on the pacer thread keeps sends on their deadlines and saves
//! a hop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use exp_mqtt::{Device, DeviceEvent, DeviceEventKind, DeviceOptions, Endpoint, Fire, FireSink, LostReason};
use exp_mqtt::{FdBudget, HeldFds, PayloadGenerator, SendOutcome};
use exp_plan::{Fleet, Warmup};
use exp_stats::Sampler;
use tokio::sync::mpsc;

use super::collector::Msg;
use super::rows::{Connection, Fate, MessageRow, Status};
use crate::clock::TrialClock;
use crate::schedule::scale;

/// How long one device waits for its CONNACK.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a device needs to connect.
pub struct DeviceJob {
    /// The device's number in the whole fleet (a split run's part runs a
    /// block of them): its events, rows and payload headers all carry it.
    pub device: u32,
    pub endpoint: Endpoint,
    pub options: DeviceOptions,
    /// When to start connecting (the connect ramp), on the trial clock.
    pub connect_at_ns: u64,
    pub clock: TrialClock,
    /// Where the descriptors of its connection come from, and how many it
    /// takes (two with the embedded broker: both ends are in this process).
    pub budget: FdBudget,
    pub fds: u64,
}

/// How one device's connect ended.
pub struct Attempt {
    pub device: Option<Device>,
    /// The descriptors set aside for a connected device, until it is closed.
    pub held: Option<HeldFds>,
    pub connection: Connection,
}

/// Connects one device at its place in the ramp.
pub async fn connect(job: DeviceJob, events: mpsc::UnboundedSender<DeviceEvent>) -> Attempt {
    tokio::time::sleep_until(tokio::time::Instant::from_std(job.clock.at(job.connect_at_ns))).await;
    let connect_start_ns = job.clock.now_ns();
    let mut connection = Connection {
        device: job.device,
        client_id: job.options.client_id.clone(),
        connect_start_ns: Some(connect_start_ns),
        connected_ns: None,
        fate: Fate::Connecting,
    };
    // No descriptors for its connection: it fails at once, and opens nothing.
    let connected = match job.budget.take(job.fds) {
        Err(shortage) => Err(shortage.to_string()),
        Ok(held) => Device::connect(job.device, &job.endpoint, job.options, events, CONNECT_TIMEOUT)
            .await
            .map(|device| (device, held))
            .map_err(|e| e.to_string()),
    };
    match connected {
        Ok((device, held)) => {
            (connection.connected_ns, connection.fate) = (Some(job.clock.now_ns()), Fate::Connected);
            Attempt {
                device: Some(device),
                held: Some(held),
                connection,
            }
        }
        Err(why) => {
            connection.fate = Fate::Failed(why);
            Attempt {
                device: None,
                held: None,
                connection,
            }
        }
    }
}

/// One device as the pacer sees it: `None` if it never connected.
pub struct Slot {
    pub device: Option<Arc<Device>>,
    pub topic: String,
    pub payload: PayloadGenerator,
    /// The device client's next sequence number, which acks and deliveries are keyed by.
    pub dseq: u64,
}

/// Which messages are warm-up, in the pacer's terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WarmupRule {
    /// Each device's messages with a lower pacer `seq`.
    FirstMessages(u64),
    /// Messages scheduled before this time on the trial clock.
    ScheduledBefore(u64),
}

impl WarmupRule {
    /// A warm-up share is of the messages a device is expected to send in
    /// the interval (`length_ns` from the schedule's start); a warm-up span
    /// starts with the interval (connecting included) and is scaled like it.
    pub fn of(fleet: &Fleet, interval_start_ns: u64, length_ns: Option<u64>, time_scale: f64) -> WarmupRule {
        let ratio = match fleet.warmup {
            Warmup::Ns(span) => {
                return WarmupRule::ScheduledBefore(interval_start_ns.saturating_add(scale(span, time_scale)));
            }
            Warmup::Ratio(ratio) => ratio,
        };
        let gap_mean = Sampler::new(&fleet.gap).ok().and_then(|g| g.mean());
        let expected = match (fleet.messages, length_ns, gap_mean) {
            (Some(m), _, _) => m as f64,
            (None, Some(len), Some(gap)) if gap > 0.0 => len as f64 / gap,
            _ => 0.0,
        };
        WarmupRule::FirstMessages((expected * ratio).ceil() as u64)
    }

    pub(super) fn covers(self, seq: u64, scheduled_ns: u64) -> bool {
        match self {
            WarmupRule::FirstMessages(n) => seq < n,
            WarmupRule::ScheduledBefore(end_ns) => scheduled_ns < end_ns,
        }
    }
}

/// The pacer's sink: builds each due message, announces it to the collector
/// and publishes it, on the pacer thread.
pub struct Publishers {
    pub slots: Vec<Slot>,
    pub qos: u8,
    pub clock: TrialClock,
    /// The schedule's start on the trial clock: pacer deadlines are relative to it.
    pub offset_ns: u64,
    pub warmup: WarmupRule,
    pub out: mpsc::UnboundedSender<Msg>,
    pub buffer: Vec<u8>,
}

impl Publishers {
    /// The row of a fire that is not (yet) sent: dropped, `reason`.
    fn unsent_row(&self, fire: Fire, reason: &'static str) -> MessageRow {
        let scheduled_ns = self.offset_ns.saturating_add(fire.deadline_ns);
        MessageRow {
            device: fire.device,
            seq: fire.seq,
            scheduled_ns,
            sent_ns: None,
            lateness_ns: fire.lateness_ns(),
            ack_latency_ns: None,
            delivery_latency_ns: None,
            bytes: 0,
            status: Status::Dropped,
            reason: Some(reason),
            warmup: self.warmup.covers(fire.seq, scheduled_ns),
        }
    }
}

impl FireSink for Publishers {
    fn send(&mut self, slot: usize, fire: Fire) -> SendOutcome {
        let mut row = self.unsent_row(fire, "not_connected");
        let Some(s) = self.slots.get_mut(slot) else {
            return SendOutcome::Closed;
        };
        let Some(device) = &s.device else {
            let _ = self.out.send(Msg::Unsent(row));
            return SendOutcome::Sent;
        };
        // A device far behind (its broker slow or gone, this runner starved)
        // holds the send back: the pacer offers it again, and the wait shows
        // as lateness instead of a queue that grows.
        if !device.has_room() {
            return SendOutcome::Later;
        }
        let scheduled_ns = row.scheduled_ns;
        let sent_ns = self.clock.now_ns();
        let dseq = s.dseq;
        s.payload
            .build(fire.device, dseq, self.clock.unix_ns_at(sent_ns), &mut self.buffer);
        row.sent_ns = Some(sent_ns);
        row.lateness_ns = sent_ns.saturating_sub(scheduled_ns);
        row.bytes = self.buffer.len() as u64;
        (row.status, row.reason) = (Status::Pending, None);
        // Announced first: the collector must know the message before its ack can arrive.
        let _ = self.out.send(Msg::Sent {
            row,
            dseq,
            at: Instant::now(),
        });
        match device.publish(&s.topic, self.qos, &self.buffer) {
            Ok(_) => s.dseq += 1,
            // Refused before it took a sequence number (a closed client): the next message reuses it.
            Err(e) => {
                let kind = DeviceEventKind::Lost {
                    seq: dseq,
                    at: Instant::now(),
                    reason: LostReason::NotQueued(e.to_string()),
                };
                let _ = self.out.send(Msg::Device(DeviceEvent {
                    device: fire.device,
                    kind,
                }));
            }
        }
        SendOutcome::Sent
    }

    /// Still held back when the sending ended: never sent.
    fn abandon(&mut self, _slot: usize, fire: Fire) {
        let row = self.unsent_row(fire, "not_queued");
        let _ = self.out.send(Msg::Unsent(row));
    }
}

/// Closes every device once the pacer has let go of them, giving each
/// `grace` (zero when the run is being killed) to collect its acknowledgements.
pub async fn close_all(devices: Vec<Arc<Device>>, grace: Duration) {
    let closing: Vec<_> = devices
        .into_iter()
        // The pacer thread has ended, so these are the last references.
        .filter_map(Arc::into_inner)
        .map(|d| tokio::spawn(d.close(grace)))
        .collect();
    for c in closing {
        let _ = c.await;
    }
}
