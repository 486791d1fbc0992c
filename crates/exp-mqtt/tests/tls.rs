//! `mqtts://` against a real Mosquitto with a TLS listener, certificates made
//! by `openssl` at test time (`apt-get install mosquitto openssl`).
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::mosquitto::Mosquitto;
use common::pki::Pki;
use common::{assert_delivered, collect_distinct, options, run_fleet, subscribe};
use exp_mqtt::{Device, Endpoint, MqttError, Subscriber, Tls, TlsFiles};

/// The broker's endpoint under `host`, with a TLS configuration loaded from `files`.
fn endpoint(m: &Mosquitto, host: &str, files: &TlsFiles) -> Endpoint {
    Endpoint::parse(&format!("mqtts://{host}:{}", m.port()))
        .unwrap()
        .with_tls(Tls::load(files).unwrap())
        .unwrap()
}

/// The connect timeout of [`refused`]: long, so that a failure retrying
/// cannot fix is seen to end the attempt at once rather than at the timeout.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(60);

/// Connects one device and returns its error (it must fail).
async fn refused(endpoint: &Endpoint, id: &str) -> MqttError {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    Device::connect(0, endpoint, options(id.into()), tx, REFUSAL_TIMEOUT)
        .await
        .err()
        .expect("the connection should have failed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qos1_over_tls_is_acked_and_delivered() {
    let pki = Pki::generate("expc-test-CA");
    let m = Mosquitto::start_with(&pki.listener(false));
    // Loaded once; every device and the subscriber share it, as a fleet's do.
    let endpoint = endpoint(&m, "127.0.0.1", &pki.trust());
    let (sub, mut rx) = subscribe(&endpoint, "tls-sub", "fleet/#").await;
    let result = run_fleet(
        &endpoint,
        "tls",
        10,
        20,
        1,
        Duration::from_millis(5),
        Duration::from_secs(10),
    )
    .await;
    result.assert_accounted();
    assert_eq!(result.acked().len(), 200, "every QoS 1 message is acked");
    let received = collect_distinct(&mut rx, 200, Duration::from_secs(10)).await;
    assert_delivered(&result, &received);
    sub.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_needs_the_client_certificate() {
    let pki = Pki::generate("expc-test-CA");
    let m = Mosquitto::start_with(&pki.listener(true));
    let result = run_fleet(
        &endpoint(&m, "127.0.0.1", &pki.mutual()),
        "mtls",
        5,
        10,
        1,
        Duration::from_millis(5),
        Duration::from_secs(10),
    )
    .await;
    result.assert_accounted();
    assert_eq!(result.acked().len(), 50);

    // Without a client certificate the broker ends the handshake; the error says why.
    let err = refused(&endpoint(&m, "127.0.0.1", &pki.trust()), "no-cert").await;
    let text = err.to_string();
    assert!(matches!(err, MqttError::TlsHandshake { .. }), "{text}");
    assert!(text.contains("client_cert"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_broker_certificate_is_refused() {
    let pki = Pki::generate("expc-test-CA");
    let other = Pki::generate("expc-other-CA");
    let m = Mosquitto::start_with(&pki.listener(false));

    // Signed by a CA we do not trust: fails at once, not after the timeout.
    let started = std::time::Instant::now();
    let err = refused(&endpoint(&m, "127.0.0.1", &other.trust()), "wrong-ca").await;
    let text = err.to_string();
    assert!(matches!(err, MqttError::TlsHandshake { .. }), "{text}");
    assert!(
        text.contains("UnknownIssuer") && text.contains("not signed by a CA in `ca_file`"),
        "{text}"
    );
    assert!(started.elapsed() < REFUSAL_TIMEOUT / 2, "took {:?}", started.elapsed());

    // The subscriber checks the same way.
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let sub = Subscriber::connect(
        &endpoint(&m, "127.0.0.1", &other.trust()),
        options("wrong-ca-sub".into()),
        vec!["fleet/#".into()],
        tx,
        Duration::from_secs(5),
    )
    .await;
    assert!(matches!(sub, Err(MqttError::TlsHandshake { .. })));

    // The right CA, but a host the certificate does not name (it names 127.0.0.1 only).
    let text = refused(&endpoint(&m, "localhost", &pki.trust()), "wrong-name")
        .await
        .to_string();
    assert!(text.contains("does not name the host"), "{text}");
}

#[test]
fn a_client_key_of_another_certificate_is_refused() {
    let pki = Pki::generate("expc-test-CA");
    let other = Pki::generate("expc-other-CA");
    let files = TlsFiles {
        client_key: Some(other.path("client.key")),
        ..pki.mutual()
    };
    let err = Tls::load(&files).unwrap_err();
    assert!(matches!(err, MqttError::TlsClientAuth { .. }), "{err}");
}
