//! Devices and a subscriber against a real Mosquitto (`apt-get install mosquitto`).
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::mosquitto::Mosquitto;
use common::{assert_delivered, collect, collect_distinct, run_fleet, subscribe, Outcome};

/// The broker's own count of PUBLISH packets received, from its `$SYS` tree.
async fn sys_publish_received(m: &Mosquitto, at_least: u64) -> u64 {
    let (sub, mut rx) = subscribe(&m.endpoint(), "sys-reader", "$SYS/broker/publish/messages/received").await;
    let mut msgs = Vec::new();
    // Published every second (sys_interval 1) and retained; wait until it catches up.
    collect(&mut rx, &mut msgs, Duration::from_secs(5), |r| {
        r.last()
            .and_then(|m| std::str::from_utf8(&m.payload).ok()?.parse::<u64>().ok())
            .is_some_and(|n| n >= at_least)
    })
    .await;
    sub.close().await;
    let last = msgs
        .last()
        .expect("no $SYS/broker/publish/messages/received from mosquitto");
    std::str::from_utf8(&last.payload).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qos1_fleet_delivered_and_counted_by_broker() {
    let m = Mosquitto::start();
    let endpoint = m.endpoint();
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

    result.assert_accounted();
    assert_eq!(result.acked().len(), 1000, "every QoS 1 message is acked");
    let received = collect_distinct(&mut rx, 1000, Duration::from_secs(10)).await;
    assert_delivered(&result, &received);
    sub.close().await;

    // No reconnects happened, so there were no retransmissions: the broker saw exactly our publishes.
    assert_eq!(sys_publish_received(&m, 1000).await, 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qos2_smoke() {
    let m = Mosquitto::start();
    let result = run_fleet(
        &m.endpoint(),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_killed_and_restarted_mid_run() {
    let mut m = Mosquitto::start();
    let endpoint = m.endpoint();
    // 20 devices × 250 messages, 20 ms apart: about 5 s of publishing each.
    let (sub, mut seen) = subscribe(&endpoint, "fault-watch", "fleet/#").await;
    let run = tokio::spawn({
        let endpoint = endpoint.clone();
        async move {
            run_fleet(
                &endpoint,
                "fault",
                20,
                250,
                1,
                Duration::from_millis(20),
                Duration::from_secs(5),
            )
            .await
        }
    });
    // The broker dies once every device is connected and publishing (a
    // loaded machine may take seconds to connect them all), …
    let mut received = Vec::new();
    collect(&mut seen, &mut received, Duration::from_secs(30), |r| {
        r.iter()
            .filter_map(|m| common::parse_payload(&m.payload))
            .map(|(device, _)| device)
            .collect::<std::collections::HashSet<_>>()
            .len()
            == 20
    })
    .await;
    sub.close().await;
    m.kill();
    // … stays down for a second, and comes back on the same port.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    // The guard comes back through the handle, so it is killed whatever happens to the test.
    let restarted = tokio::task::spawn_blocking(move || {
        m.restart();
        m
    });
    let result = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .unwrap()
        .unwrap();
    let m = restarted.await.unwrap();

    assert_eq!(result.published.len(), 5000);
    result.assert_accounted();
    let acked = result.acked().len();
    let lost = result.count(|o| matches!(o, Outcome::Lost(_)));
    let mut reasons = std::collections::BTreeMap::<String, usize>::new();
    for o in result.outcomes.values().flatten() {
        if let Outcome::Lost(r) = o {
            *reasons.entry(r.split('(').next().unwrap_or(r).to_string()).or_default() += 1;
        }
    }
    eprintln!(
        "fault run: {acked} acked, {lost} lost {reasons:?}, {} disconnects",
        result.disconnects
    );
    assert_eq!(acked + lost, 5000, "every message is acked or reported lost");
    assert!(lost > 0, "a killed broker loses something");
    assert!(acked > 1000, "devices reconnected and kept publishing: {acked} acked");
    assert!(result.disconnects >= 20, "every device saw the outage");
    assert!(
        result.connects.values().all(|&c| c >= 2),
        "every device reconnected: {:?}",
        result.connects
    );
    drop(m);
}

/// Mosquitto drops a client silent for 1.5 × its keep-alive (checked
/// coarsely: a silent raw client with a 1 s keep-alive was dropped after
/// 5.1 s); an idle device must ping to stay connected.
#[tokio::test]
async fn an_idle_device_pings_and_keeps_its_connection() {
    let m = Mosquitto::start();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut options = common::options("idle".to_string());
    options.keep_alive = Duration::from_secs(1);
    let device = exp_mqtt::Device::connect(0, &m.endpoint(), options, tx, Duration::from_secs(5))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(7000)).await;
    device.publish("fleet/idle", 1, b"still here").unwrap();
    device.close(Duration::from_secs(5)).await;
    let mut kinds = Vec::new();
    while let Some(event) = rx.recv().await {
        kinds.push(event.kind);
    }
    assert!(
        matches!(
            kinds[..],
            [
                exp_mqtt::DeviceEventKind::Connected { .. },
                exp_mqtt::DeviceEventKind::Acked { seq: 0, .. }
            ]
        ),
        "one connection, one ack: {kinds:?}"
    );
}

/// A first attempt that fails for a reason retrying can fix (nothing
/// listens yet) is retried until the broker is there.
#[tokio::test]
async fn a_device_waits_for_a_broker_that_is_still_starting() {
    let mut m = Mosquitto::start();
    m.kill();
    let endpoint = m.endpoint();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let connecting = tokio::spawn(async move {
        let options = common::options("early".to_string());
        exp_mqtt::Device::connect(0, &endpoint, options, tx, Duration::from_secs(10)).await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let m = tokio::task::spawn_blocking(move || {
        m.restart();
        m
    })
    .await
    .unwrap();
    let device = connecting.await.unwrap().expect("connected once the broker was up");
    device.close(Duration::from_secs(1)).await;
    drop(m);
}
