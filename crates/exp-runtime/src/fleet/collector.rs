//! Joins what happens to each message — sent, acknowledged or lost, and
//! delivered to the subscriber — into one `mqtt_messages` row.
//!
//! Everything arrives on one channel, and a device announces a message
//! (`Msg::Sent`) before publishing it, so its acknowledgement and delivery
//! are always seen after it. A row is flushed once its outcome is final and
//! its delivery is in (or not expected, or waited for `delivery_wait`), so
//! memory stays bounded however long the run.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use exp_mqtt::{parse_header, DeviceEvent, DeviceEventKind, LostReason, SubscriberEvent};
use tokio::sync::{mpsc, oneshot};

use super::rows::{DeviceTally, MessageRow, Status};
use super::tables::Rows;
use crate::live::WorkloadCounters;

/// Rows per batch handed to the writer thread.
pub(super) const BATCH_ROWS: usize = 4096;
const FLUSH_EVERY: Duration = Duration::from_millis(250);
/// How often the collector takes what has arrived. It is never woken per
/// message: a wake-up per message (or per pacer pass) cost a worker
/// thread's context switch, most of the runner's CPU at fleet scale, while
/// every time it records was taken where the event happened.
const POLL_EVERY: Duration = Duration::from_millis(2);

/// Where the collector hears from: announcements and other runner messages,
/// and the events of the device clients and of the subscriber, straight
/// from the clients (no forwarding task).
pub struct Inputs {
    pub announced: mpsc::UnboundedReceiver<Msg>,
    pub devices: mpsc::UnboundedReceiver<DeviceEvent>,
    pub subscriber: Option<mpsc::UnboundedReceiver<SubscriberEvent>>,
}

/// Moves everything queued in `rx` to `into`; false once `rx` is closed and empty.
fn drain<T>(rx: &mut mpsc::UnboundedReceiver<T>, into: &mut Vec<T>) -> bool {
    loop {
        match rx.try_recv() {
            Ok(item) => into.push(item),
            Err(mpsc::error::TryRecvError::Empty) => return true,
            Err(mpsc::error::TryRecvError::Disconnected) => return false,
        }
    }
}

pub enum Msg {
    /// Announced just before the publish; `dseq` is the device client's sequence number.
    Sent {
        row: MessageRow,
        dseq: u64,
        at: Instant,
    },
    /// A fire that was not published (device not connected, publish refused).
    Unsent(MessageRow),
    /// A device event the runner makes itself (a publish refused before it was queued).
    Device(DeviceEvent),
    Sub(SubscriberEvent),
    /// Sent once every device is closed: the collector then reports when nothing waits for a delivery.
    DevicesDone(oneshot::Sender<()>),
}

struct Pending {
    row: MessageRow,
    sent_at: Instant,
    /// When the outcome (ack, written, lost) became final.
    final_at: Option<Instant>,
    delivered: bool,
}

/// Totals over non-warmup messages, for the summary.
#[derive(Debug, Default, Clone)]
pub struct Totals {
    pub messages: u64,
    pub completed: u64,
    pub lost: u64,
    pub ack_sum_ns: f64,
    /// Acknowledgement latencies measured from the scheduled send time
    /// instead of the actual one (late sends included: no coordinated
    /// omission), summed over the same messages as `ack_sum_ns`.
    pub ack_from_schedule_sum_ns: f64,
    pub ack_count: u64,
    pub delivery_sum_ns: f64,
    pub delivery_count: u64,
    pub lateness_sum_ns: f64,
    /// Every non-warmup acknowledgement and delivery latency, for the
    /// percentiles `repeat until` may read (8 bytes a message, as `lateness`).
    pub ack_ns: Vec<u64>,
    pub delivery_ns: Vec<u64>,
    /// Lateness of every fire, warmup included: the pacer's own quality.
    pub lateness: Vec<u64>,
    /// Over every interval (summed, resp. the longest), for the summary.
    pub disconnects: u64,
    pub longest_outage: Duration,
    /// Resident memory the connected fleet added to the runner, per device.
    pub rss_per_device: Option<f64>,
    /// Devices not connected when the connect phase ended (failed, still
    /// connecting, not started), summed over the intervals.
    pub not_connected: u64,
    /// Per device, for the `mqtt_devices` table.
    pub devices: HashMap<u32, DeviceCounts>,
    /// First and last send of a completed non-warmup message, ns since the trial's start.
    pub span_ns: Option<(u64, u64)>,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct DeviceCounts {
    pub disconnects: u64,
    /// Connections after the first.
    pub reconnects: u64,
    /// Messages whose status is not `ok`, warm-up included.
    pub errors: u64,
    /// Time spent disconnected between a connection breaking and coming back.
    pub outage: Duration,
    connected_once: bool,
    down_since: Option<Instant>,
}

impl DeviceCounts {
    pub fn tally(&self) -> DeviceTally {
        DeviceTally {
            disconnects: self.disconnects,
            reconnects: self.reconnects,
            errors: self.errors,
        }
    }
}

pub struct Collector {
    fleet: String,
    pending: HashMap<(u32, u64), Pending>,
    ready: Vec<MessageRow>,
    subscribed: bool,
    delivery_wait: Duration,
    ack_timeout: Duration,
    totals: Totals,
    done: Option<oneshot::Sender<()>>,
    /// Each final row counted for watchers (`crate::live`).
    live: Arc<WorkloadCounters>,
}

impl Collector {
    pub fn new(
        fleet: &str,
        subscribed: bool,
        delivery_wait: Duration,
        ack_timeout: Duration,
        live: Arc<WorkloadCounters>,
    ) -> Self {
        Collector {
            fleet: fleet.to_string(),
            pending: HashMap::new(),
            ready: Vec::new(),
            subscribed,
            delivery_wait,
            ack_timeout,
            totals: Totals::default(),
            done: None,
            live,
        }
    }

    /// Runs until every input is closed; returns the totals.
    pub async fn run(mut self, mut inputs: Inputs, writer: Rows) -> Totals {
        let mut poll = tokio::time::interval(POLL_EVERY);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_flush = Instant::now();
        let (mut announced, mut events, mut deliveries) = (Vec::new(), Vec::new(), Vec::new());
        let mut open = true;
        while open {
            poll.tick().await;
            // Events first, then announcements: a message is announced
            // before it is published, so every event taken here finds its
            // message among the announcements taken after it.
            let devices_open = drain(&mut inputs.devices, &mut events);
            let subscriber_open = match &mut inputs.subscriber {
                Some(rx) => drain(rx, &mut deliveries),
                None => false,
            };
            let announced_open = drain(&mut inputs.announced, &mut announced);
            open = devices_open || subscriber_open || announced_open;
            for msg in announced.drain(..) {
                self.handle(msg);
            }
            for event in events.drain(..) {
                self.device_event(event);
            }
            for event in deliveries.drain(..) {
                self.handle(Msg::Sub(event));
            }
            let now = Instant::now();
            if now.duration_since(last_flush) >= FLUSH_EVERY {
                self.expire(now);
                writer.send_messages(&self.fleet, std::mem::take(&mut self.ready));
                last_flush = now;
            }
            if self.ready.len() >= BATCH_ROWS {
                writer.send_messages(&self.fleet, std::mem::take(&mut self.ready));
            }
            if self.done.is_some()
                && self
                    .pending
                    .values()
                    .all(|p| !self.subscribed || p.delivered || p.final_at.is_none())
            {
                if let Some(done) = self.done.take() {
                    let _ = done.send(());
                }
            }
        }
        // A device still down at the end was down until now.
        let now = Instant::now();
        for counts in self.totals.devices.values_mut() {
            if let Some(down) = counts.down_since.take() {
                counts.outage += now.saturating_duration_since(down);
            }
        }
        // Whatever is still pending is final now: no more acks or deliveries can come.
        let rest: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        for p in rest {
            let mut row = p.row;
            if p.final_at.is_none() {
                (row.status, row.reason) = (Status::Timeout, Some("unacked"));
            }
            self.finish(row);
        }
        writer.send_messages(&self.fleet, std::mem::take(&mut self.ready));
        self.totals
    }

    fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Sent { row, dseq, at } => {
                self.totals.lateness.push(row.lateness_ns);
                self.pending.insert(
                    (row.device, dseq),
                    Pending {
                        row,
                        sent_at: at,
                        final_at: None,
                        delivered: false,
                    },
                );
            }
            Msg::Unsent(row) => {
                self.totals.lateness.push(row.lateness_ns);
                self.finish(row);
            }
            Msg::Device(event) => self.device_event(event),
            Msg::Sub(SubscriberEvent::Message(received)) => {
                let Some(header) = parse_header(&received.payload) else {
                    return;
                };
                let key = (header.device, header.seq);
                if let Some(p) = self.pending.get_mut(&key) {
                    if !p.delivered {
                        p.delivered = true;
                        p.row.delivery_latency_ns = Some(ns(received.received_at.saturating_duration_since(p.sent_at)));
                    }
                    if p.final_at.is_some() {
                        self.flush_key(key);
                    }
                }
            }
            Msg::Sub(_) => {}
            Msg::DevicesDone(done) => self.done = Some(done),
        }
    }

    fn device_event(&mut self, event: DeviceEvent) {
        let device = event.device;
        let counts = self.totals.devices.entry(device).or_default();
        let (seq, (status, reason), ack) = match event.kind {
            DeviceEventKind::Disconnected { at, .. } => {
                counts.disconnects += 1;
                counts.down_since = Some(at);
                return;
            }
            DeviceEventKind::Connected { at, .. } => {
                counts.reconnects += u64::from(counts.connected_once);
                counts.connected_once = true;
                if let Some(down) = counts.down_since.take() {
                    counts.outage += at.saturating_duration_since(down);
                }
                return;
            }
            DeviceEventKind::Written { seq, .. } => (seq, (Status::Ok, None), None),
            DeviceEventKind::Acked { seq, acked_at, .. } => (seq, (Status::Ok, None), Some(acked_at)),
            DeviceEventKind::Lost { seq, reason, .. } => (seq, lost_status(&reason), None),
        };
        let key = (device, seq);
        let (subscribed, ack_timeout) = (self.subscribed, self.ack_timeout);
        let Some(p) = self.pending.get_mut(&key) else {
            return;
        };
        if p.final_at.is_some() {
            return;
        }
        let latency = ack.map(|a| a.saturating_duration_since(p.sent_at));
        (p.row.status, p.row.reason) = if latency.is_some_and(|l| l > ack_timeout) {
            (Status::Timeout, Some("late_ack"))
        } else {
            (status, reason)
        };
        p.row.ack_latency_ns = latency.map(ns);
        p.final_at = Some(Instant::now());
        if !subscribed || p.delivered || p.row.status != Status::Ok {
            self.flush_key(key);
        }
    }

    /// Flushes final rows whose delivery did not come within `delivery_wait`.
    fn expire(&mut self, now: Instant) {
        let wait = self.delivery_wait;
        let keys: Vec<(u32, u64)> = self
            .pending
            .iter()
            .filter(|(_, p)| p.final_at.is_some_and(|f| now.saturating_duration_since(f) >= wait))
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            self.flush_key(key);
        }
    }

    fn flush_key(&mut self, key: (u32, u64)) {
        if let Some(p) = self.pending.remove(&key) {
            self.finish(p.row);
        }
    }

    fn finish(&mut self, row: MessageRow) {
        self.live
            .message(row.sent_ns.is_some(), row.status == Status::Ok, row.ack_latency_ns);
        if row.status != Status::Ok {
            self.totals.devices.entry(row.device).or_default().errors += 1;
        }
        if !row.warmup {
            let t = &mut self.totals;
            t.messages += 1;
            t.lateness_sum_ns += row.lateness_ns as f64;
            if row.status == Status::Ok {
                t.completed += 1;
                if let Some(sent) = row.sent_ns {
                    t.span_ns = Some(t.span_ns.map_or((sent, sent), |(a, b)| (a.min(sent), b.max(sent))));
                }
            } else {
                t.lost += 1;
            }
            if let Some(a) = row.ack_latency_ns {
                t.ack_sum_ns += a as f64;
                t.ack_from_schedule_sum_ns += a.saturating_add(row.lateness_ns) as f64;
                t.ack_count += 1;
                t.ack_ns.push(a);
            }
            if let Some(d) = row.delivery_latency_ns {
                t.delivery_sum_ns += d as f64;
                t.delivery_count += 1;
                t.delivery_ns.push(d);
            }
        }
        self.ready.push(row);
    }
}

fn lost_status(reason: &LostReason) -> (Status, Option<&'static str>) {
    match reason {
        LostReason::NotQueued(_) => (Status::Dropped, Some("not_queued")),
        LostReason::SessionLost => (Status::Error, Some("session_lost")),
        LostReason::Unacked => (Status::Timeout, Some("unacked")),
    }
}

pub fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The nearest-rank 99th percentile of sorted values.
pub(super) fn p99(sorted: &[u64]) -> Option<u64> {
    let n = sorted.len();
    sorted.get((n * 99).div_ceil(100).max(1) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p99_is_a_nearest_rank() {
        assert_eq!(p99(&[]), None);
        assert_eq!(p99(&[5]), Some(5));
        let v: Vec<u64> = (1..=200).collect();
        assert_eq!(p99(&v), Some(198));
    }
}
