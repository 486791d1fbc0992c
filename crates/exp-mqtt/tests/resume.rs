//! Reconnects with messages in flight, through a proxy the test controls:
//! it holds the broker's acknowledgements back, so the device has messages
//! written but unacknowledged, then cuts every connection. Mosquitto keeps
//! running, so a persistent session (`clean_session = false`) survives and
//! the device must retransmit; a clean one must report those messages lost.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::mosquitto::Mosquitto;
use exp_mqtt::{BrokerOptions, Device, DeviceEvent, DeviceEventKind, EmbeddedBroker, Endpoint, LostReason};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::unbounded_channel;
use tokio::sync::watch;

/// Forwards connections to `upstream`; can hold the broker's bytes back and cut everything.
struct Proxy {
    port: u16,
    hold_acks: Arc<AtomicBool>,
    /// Bytes from the broker read while holding: the acks being held back.
    held: Arc<AtomicU64>,
    cut: watch::Sender<u64>,
}

impl Proxy {
    async fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hold_acks = Arc::new(AtomicBool::new(false));
        let held = Arc::new(AtomicU64::new(0));
        let (cut, _) = watch::channel(0u64);
        let (hold, held_bytes, cuts) = (Arc::clone(&hold_acks), Arc::clone(&held), cut.subscribe());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let broker = TcpStream::connect(("127.0.0.1", upstream)).await.unwrap();
                // Only cuts from now on end this connection.
                let mut cut = cuts.clone();
                cut.borrow_and_update();
                tokio::spawn(pipe(client, broker, Arc::clone(&hold), Arc::clone(&held_bytes), cut));
            }
        });
        Proxy {
            port,
            hold_acks,
            held,
            cut,
        }
    }

    fn cut_all(&self) {
        self.cut.send_modify(|n| *n += 1);
    }
}

/// Copies both ways until either side closes or the connections are cut.
async fn pipe(
    client: TcpStream,
    broker: TcpStream,
    hold: Arc<AtomicBool>,
    held: Arc<AtomicU64>,
    mut cut: watch::Receiver<u64>,
) {
    let (mut client_rx, mut client_tx) = client.into_split();
    let (mut broker_rx, mut broker_tx) = broker.into_split();
    let up = async {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = client_rx.read(&mut buf).await {
            if broker_tx.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    };
    let down = async {
        let mut buf = [0u8; 4096];
        let mut pending = Vec::new();
        loop {
            // Reading goes on while holding (reads are cancel-safe), so the
            // test can count what is held; held bytes wait in `pending`
            // until released or cut.
            match tokio::time::timeout(Duration::from_millis(5), broker_rx.read(&mut buf)).await {
                Ok(Ok(0) | Err(_)) => break,
                Ok(Ok(n)) => {
                    if hold.load(Ordering::SeqCst) {
                        held.fetch_add(n as u64, Ordering::SeqCst);
                    }
                    pending.extend_from_slice(&buf[..n]);
                }
                Err(_elapsed) => {}
            }
            if !hold.load(Ordering::SeqCst) && !pending.is_empty() {
                if client_tx.write_all(&pending).await.is_err() {
                    break;
                }
                pending.clear();
            }
        }
    };
    tokio::select! {
        // Checked first, so held bytes never leak out after a cut.
        biased;
        _ = cut.changed() => {}
        () = up => {}
        () = down => {}
    }
}

/// Publishes 5 messages while acks are held, cuts the connection, waits for
/// the device to settle, and returns every outcome by seq plus the
/// `session_present` flag of each CONNACK.
async fn in_flight_across_a_cut(
    broker: u16,
    clean_session: bool,
    tag: &str,
) -> (BTreeMap<u64, Vec<DeviceEventKind>>, Vec<bool>) {
    let proxy = Proxy::start(broker).await;
    let (tx, mut rx) = unbounded_channel::<DeviceEvent>();
    let mut options = common::options(format!("{tag}-resume"));
    options.clean_session = clean_session;
    let endpoint = Endpoint::tcp("127.0.0.1", proxy.port);
    let device = Device::connect(0, &endpoint, options, tx, Duration::from_secs(5))
        .await
        .unwrap();

    let topic = "fleet/resume";
    device.publish(topic, 1, b"before").unwrap();
    tokio::time::timeout(Duration::from_secs(5), async {
        while device.outstanding() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    proxy.hold_acks.store(true, Ordering::SeqCst);
    for i in 0..5 {
        device.publish(topic, 1, format!("held {i}").as_bytes()).unwrap();
    }
    // Written, and the broker has them: its five PUBACKs (4 bytes each)
    // reached the proxy, which holds them.
    tokio::time::timeout(Duration::from_secs(10), async {
        while proxy.held.load(Ordering::SeqCst) < 5 * 4 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the broker acknowledged the five messages");
    assert_eq!(device.outstanding(), 5, "acks are held, so all five are in flight");
    proxy.cut_all();
    proxy.hold_acks.store(false, Ordering::SeqCst);
    // Published once the device knows, so it is not written into the dead connection.
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        let disconnected = matches!(event.kind, DeviceEventKind::Disconnected { .. });
        events.push(event);
        if disconnected {
            break;
        }
    }
    device.publish(topic, 1, b"after").unwrap();
    device.close(Duration::from_secs(5)).await;
    while let Some(event) = rx.recv().await {
        events.push(event);
    }

    let mut outcomes = BTreeMap::<u64, Vec<DeviceEventKind>>::new();
    let mut sessions = Vec::new();
    for event in events {
        match event.kind {
            DeviceEventKind::Connected { session_present, .. } => sessions.push(session_present),
            DeviceEventKind::Disconnected { .. } => {}
            kind @ (DeviceEventKind::Written { seq, .. }
            | DeviceEventKind::Acked { seq, .. }
            | DeviceEventKind::Lost { seq, .. }) => outcomes.entry(seq).or_default().push(kind),
        }
    }
    (outcomes, sessions)
}

fn one_outcome_each(outcomes: &BTreeMap<u64, Vec<DeviceEventKind>>) {
    assert_eq!(outcomes.keys().copied().collect::<Vec<_>>(), (0..7).collect::<Vec<_>>());
    assert!(outcomes.values().all(|o| o.len() == 1), "{outcomes:?}");
}

fn assert_resumed((outcomes, sessions): (BTreeMap<u64, Vec<DeviceEventKind>>, Vec<bool>)) {
    assert_eq!(sessions, [false, true], "a new session, then the same one resumed");
    one_outcome_each(&outcomes);
    let acked = outcomes
        .values()
        .filter(|o| matches!(o[0], DeviceEventKind::Acked { .. }))
        .count();
    assert_eq!(acked, 7, "nothing lost: {outcomes:?}");
}

fn assert_clean((outcomes, sessions): (BTreeMap<u64, Vec<DeviceEventKind>>, Vec<bool>)) {
    assert_eq!(sessions, [false, false]);
    one_outcome_each(&outcomes);
    for (seq, o) in &outcomes {
        match (seq, &o[0]) {
            (1..=5, DeviceEventKind::Lost { reason, .. }) => assert_eq!(*reason, LostReason::SessionLost),
            (0 | 6, DeviceEventKind::Acked { .. }) => {}
            other => panic!("unexpected outcome {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_resumed_session_retransmits_what_was_in_flight() {
    let broker = Mosquitto::start();
    assert_resumed(in_flight_across_a_cut(broker.port(), false, "persistent").await);
}

#[tokio::test]
async fn a_clean_session_loses_what_was_in_flight_and_nothing_else() {
    let broker = Mosquitto::start();
    assert_clean(in_flight_across_a_cut(broker.port(), true, "clean").await);
}

#[tokio::test]
async fn the_embedded_broker_resumes_and_forgets_sessions_alike() {
    let broker = EmbeddedBroker::start(BrokerOptions::default()).unwrap();
    let port = broker.addr().port();
    assert_resumed(in_flight_across_a_cut(port, false, "persistent").await);
    assert_clean(in_flight_across_a_cut(port, true, "clean").await);
}
