//! Devices and a subscriber against the embedded broker.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{assert_delivered, collect_distinct, run_fleet, subscribe, Outcome};
use exp_mqtt::{BrokerOptions, EmbeddedBroker, Endpoint};

/// A broker of the test's own; dropping it stops it.
fn broker() -> EmbeddedBroker {
    EmbeddedBroker::start(BrokerOptions::for_fleet(200, 20, 64 * 1024)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qos1_fleet_every_message_acked_and_delivered() {
    let broker = broker();
    let endpoint = broker.endpoint();
    let (sub, mut rx) = subscribe(&endpoint, "q1-sub", "fleet/#").await;
    let result = run_fleet(
        &endpoint,
        "q1",
        50,
        20,
        1,
        Duration::from_millis(5),
        Duration::from_secs(10),
    )
    .await;

    assert_eq!(result.published.len(), 1000);
    result.assert_accounted();
    let acked = result.acked();
    assert_eq!(
        acked.len(),
        1000,
        "every QoS 1 message is acked; lost: {:?}, connects {}, disconnects {}",
        result
            .outcomes
            .values()
            .flatten()
            .filter(|o| matches!(o, Outcome::Lost(_)))
            .collect::<Vec<_>>(),
        result.connects.values().sum::<u32>(),
        result.disconnects
    );
    let latencies: Vec<Duration> = result
        .outcomes
        .values()
        .flatten()
        .filter_map(|o| match o {
            Outcome::Acked { latency } => Some(*latency),
            _ => None,
        })
        .collect();
    assert!(latencies
        .iter()
        .all(|l| *l > Duration::ZERO && *l < Duration::from_secs(10)));

    let received = collect_distinct(&mut rx, 1000, Duration::from_secs(10)).await;
    assert_delivered(&result, &received);
    assert!(received.iter().all(|m| m.topic.starts_with("fleet/") && m.qos == 1));
    sub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qos0_smoke() {
    let broker = broker();
    let endpoint = broker.endpoint();
    let result = run_fleet(
        &endpoint,
        "q0",
        5,
        10,
        0,
        Duration::from_millis(2),
        Duration::from_secs(5),
    )
    .await;
    result.assert_accounted();
    assert_eq!(result.count(|o| *o == Outcome::Written), 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qos2_smoke() {
    let broker = broker();
    let endpoint = broker.endpoint();
    let result = run_fleet(
        &endpoint,
        "q2",
        5,
        10,
        2,
        Duration::from_millis(2),
        Duration::from_secs(10),
    )
    .await;
    result.assert_accounted();
    assert_eq!(result.acked().len(), 50);
}

#[test]
fn second_broker_gets_its_own_port_and_a_dropped_one_stops() {
    let a = broker();
    let b = EmbeddedBroker::start(BrokerOptions::default()).unwrap();
    assert_ne!(a.addr().port(), b.addr().port());
    assert!(b.addr().ip().is_loopback());
    let mut open = std::net::TcpStream::connect(a.addr()).unwrap();
    let addr = a.addr();
    drop(a);
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "nothing listens after the drop"
    );
    // The open connection was closed with the broker (reset if it was
    // still in the backlog, ended if it had been accepted).
    use std::io::Read;
    open.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    match open.read(&mut [0u8; 8]) {
        Ok(n) => assert_eq!(n, 0),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset),
    }
}

/// A fixed port is bound again as soon as the broker that had it stops.
#[test]
fn a_fixed_port_is_reused_after_a_stop() {
    let first = broker();
    let port = first.addr().port();
    drop(first);
    let options = BrokerOptions {
        port: Some(port),
        ..BrokerOptions::default()
    };
    assert_eq!(EmbeddedBroker::start(options).unwrap().addr().port(), port);
}

#[tokio::test]
async fn mqtts_without_tls_configuration_is_typed() {
    let endpoint = Endpoint::parse("mqtts://127.0.0.1:1").unwrap();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let err = exp_mqtt::Device::connect(0, &endpoint, common::options("tls".into()), tx, Duration::from_secs(1))
        .await
        .err()
        .unwrap();
    assert!(matches!(err, exp_mqtt::MqttError::TlsNotConfigured { .. }), "{err}");
}

/// A device dropped without `close` (its connect task finished just as the
/// trial was stopped) must not leave its task running: the task holds the
/// event channel, and the fleet's collector waits for that channel to close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_device_ends_its_task_and_closes_its_events() {
    let broker = broker();
    let endpoint = broker.endpoint();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let device = exp_mqtt::Device::connect(
        0,
        &endpoint,
        common::options("dropped".into()),
        tx,
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    drop(device);
    let closed = tokio::time::timeout(Duration::from_secs(5), async { while rx.recv().await.is_some() {} }).await;
    assert!(
        closed.is_ok(),
        "the dropped device's task still holds its event channel open"
    );
}

/// A clean-session CONNECT (MQTT 3.1.1) for `client_id`.
fn connect_frame(client_id: &str) -> Vec<u8> {
    let mut frame = bytes::BytesMut::new();
    rumqttc::Connect::new(client_id).write(&mut frame).unwrap();
    frame.to_vec()
}

/// Malformed bytes, before or after a valid CONNECT, end that connection
/// only: the broker neither panics nor stops serving the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_ends_one_connection_and_the_broker_serves_on() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // tokio catches a task's panic, so count the broker thread's panics here.
    static BROKER_PANICS: AtomicUsize = AtomicUsize::new(0);
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current()
            .name()
            .is_some_and(|n| n.starts_with("exp-mqtt-broker"))
        {
            BROKER_PANICS.fetch_add(1, Ordering::SeqCst);
        }
        default_hook(info);
    }));
    let broker = broker();
    let endpoint = broker.endpoint();
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 0..300u32 {
        let mut bytes = if i % 2 == 0 {
            connect_frame(&format!("junk-{i}"))
        } else {
            Vec::new()
        };
        let start = bytes.len();
        let len = next() % 64 + 1;
        bytes.extend((0..len).map(|_| next() as u8));
        // A third start like a packet the broker knows (PUBLISH, SUBSCRIBE,
        // PUBREL, UNSUBSCRIBE, PINGREQ, DISCONNECT), with a random rest.
        if i % 3 == 0 {
            bytes[start] = [0x32, 0x82, 0x62, 0xA2, 0xC0, 0xE0][(next() % 6) as usize];
        }
        let mut stream = tokio::net::TcpStream::connect(broker.addr()).await.unwrap();
        let _ = stream.write_all(&bytes).await;
        let _ = stream.shutdown().await;
        // The broker closes (or answers and then closes): never hangs past its timeouts.
        let mut sink = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(12), stream.read_to_end(&mut sink)).await;
        assert!(read.is_ok(), "connection {i} was neither answered nor closed");
        if i % 2 == 0 {
            assert_eq!(
                sink.get(..4),
                Some(&[0x20, 2, 0, 0][..]),
                "connection {i}: CONNACK first"
            );
        }
    }
    assert_eq!(
        BROKER_PANICS.load(Ordering::SeqCst),
        0,
        "the broker panicked on malformed input"
    );
    let (sub, mut rx) = subscribe(&endpoint, "after-junk-sub", "fleet/#").await;
    let result = run_fleet(
        &endpoint,
        "after-junk",
        10,
        10,
        1,
        Duration::from_millis(2),
        Duration::from_secs(10),
    )
    .await;
    result.assert_accounted();
    assert_eq!(result.acked().len(), 100);
    let received = collect_distinct(&mut rx, 100, Duration::from_secs(10)).await;
    assert_delivered(&result, &received);
    sub.close().await;
}
