//! Shared by the broker tests: a small fleet driver and the outcome bookkeeping.
#![allow(clippy::unwrap_used, dead_code)]

pub mod mosquitto;
pub mod pki;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;
use exp_mqtt::{Device, DeviceEvent, DeviceEventKind, DeviceOptions, Endpoint, Received, Subscriber, SubscriberEvent};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

pub const TOPIC_PREFIX: &str = "fleet";

pub fn options(client_id: String) -> DeviceOptions {
    DeviceOptions {
        client_id,
        keep_alive: Duration::from_secs(30),
        clean_session: true,
        credentials: None,
        max_inflight: 20,
        max_packet_bytes: 64 * 1024,
    }
}

/// What happened to one message.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Written,
    Acked { latency: Duration },
    Lost(String),
}

#[derive(Debug, Default)]
pub struct FleetResult {
    /// (device, seq) → sent instant.
    pub published: BTreeMap<(u32, u64), Instant>,
    /// (device, seq) → every outcome reported (a correct run has exactly one each).
    pub outcomes: HashMap<(u32, u64), Vec<Outcome>>,
    pub connects: HashMap<u32, u32>,
    pub disconnects: u32,
}

impl FleetResult {
    pub fn count(&self, pred: impl Fn(&Outcome) -> bool) -> usize {
        self.outcomes.values().filter(|o| o.iter().any(&pred)).count()
    }

    pub fn acked(&self) -> Vec<(u32, u64)> {
        let mut v: Vec<_> = self
            .outcomes
            .iter()
            .filter(|(_, o)| o.iter().any(|o| matches!(o, Outcome::Acked { .. })))
            .map(|(k, _)| *k)
            .collect();
        v.sort_unstable();
        v
    }

    /// Every published message has exactly one outcome, and nothing unpublished has one.
    pub fn assert_accounted(&self) {
        for key in self.published.keys() {
            let o = self.outcomes.get(key).map(Vec::as_slice).unwrap_or(&[]);
            assert_eq!(o.len(), 1, "message {key:?} has outcomes {o:?}");
        }
        for key in self.outcomes.keys() {
            assert!(self.published.contains_key(key), "outcome for unpublished {key:?}");
        }
    }
}

pub fn payload(device: u32, seq: u64) -> Bytes {
    Bytes::from(format!("{device}:{seq}"))
}

pub fn parse_payload(p: &[u8]) -> Option<(u32, u64)> {
    let s = std::str::from_utf8(p).ok()?;
    let (d, q) = s.split_once(':')?;
    Some((d.parse().ok()?, q.parse().ok()?))
}

/// Runs `devices` devices, each publishing `messages` messages `gap` apart, then closes them.
/// `during` runs concurrently (e.g. to kill the broker).
pub async fn run_fleet(
    endpoint: &Endpoint,
    tag: &str,
    devices: u32,
    messages: u64,
    qos: u8,
    gap: Duration,
    grace: Duration,
) -> FleetResult {
    let (tx, mut rx) = unbounded_channel::<DeviceEvent>();
    let mut tasks = Vec::new();
    for d in 0..devices {
        let endpoint = endpoint.clone();
        let tx = tx.clone();
        let opts = options(format!("{tag}-dev-{d}"));
        tasks.push(tokio::spawn(async move {
            let device = Device::connect(d, &endpoint, opts, tx, Duration::from_secs(10))
                .await
                .unwrap();
            let topic = format!("{TOPIC_PREFIX}/{d}");
            let mut sent = Vec::new();
            for seq in 0..messages {
                let ticket = device.publish(&topic, qos, &payload(d, seq)).unwrap();
                assert_eq!(ticket.seq, seq);
                sent.push(((d, seq), ticket.sent_at));
                tokio::time::sleep(gap).await;
            }
            device.close(grace).await;
            sent
        }));
        // A gentle ramp: brokers dislike connect bursts.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    drop(tx);
    let mut result = FleetResult::default();
    for t in tasks {
        result.published.extend(t.await.unwrap());
    }
    while let Some(ev) = rx.recv().await {
        let key = |seq| (ev.device, seq);
        let (k, o) = match ev.kind {
            DeviceEventKind::Connected { .. } => {
                *result.connects.entry(ev.device).or_default() += 1;
                continue;
            }
            DeviceEventKind::Disconnected { .. } => {
                result.disconnects += 1;
                continue;
            }
            DeviceEventKind::Written { seq, .. } => (key(seq), Outcome::Written),
            DeviceEventKind::Acked {
                seq,
                written_at,
                acked_at,
            } => (
                key(seq),
                Outcome::Acked {
                    latency: acked_at.duration_since(written_at),
                },
            ),
            DeviceEventKind::Lost { seq, reason, .. } => (key(seq), Outcome::Lost(format!("{reason:?}"))),
        };
        result.outcomes.entry(k).or_default().push(o);
    }
    result
}

pub async fn subscribe(
    endpoint: &Endpoint,
    id: &str,
    filter: &str,
) -> (Subscriber, UnboundedReceiver<SubscriberEvent>) {
    let (tx, rx) = unbounded_channel();
    let sub = Subscriber::connect(
        endpoint,
        options(id.to_string()),
        vec![filter.to_string()],
        tx,
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    (sub, rx)
}

/// Collects messages until `done` says so or `timeout` passes.
pub async fn collect(
    rx: &mut UnboundedReceiver<SubscriberEvent>,
    into: &mut Vec<Received>,
    timeout: Duration,
    done: impl Fn(&[Received]) -> bool,
) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !done(into) {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(SubscriberEvent::Message(m))) => into.push(m),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return,
        }
    }
}

/// Collects messages until `n` distinct (device, seq) payloads arrived or `timeout` passes.
pub async fn collect_distinct(
    rx: &mut UnboundedReceiver<SubscriberEvent>,
    n: usize,
    timeout: Duration,
) -> Vec<Received> {
    let mut received = Vec::new();
    collect(rx, &mut received, timeout, |r| {
        r.iter()
            .filter_map(|m| parse_payload(&m.payload))
            .collect::<std::collections::HashSet<_>>()
            .len()
            >= n
    })
    .await;
    received
}

/// Every acknowledged message was received at least once.
pub fn assert_delivered(result: &FleetResult, received: &[Received]) {
    let seen: std::collections::HashSet<(u32, u64)> =
        received.iter().filter_map(|m| parse_payload(&m.payload)).collect();
    let missing: Vec<_> = result.acked().into_iter().filter(|k| !seen.contains(k)).collect();
    assert!(
        missing.is_empty(),
        "{} acked messages never delivered, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
}
