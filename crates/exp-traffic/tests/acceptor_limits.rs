//! The acceptor's limits on loopback: silent connections time out, the
//! concurrency limits close connections at once, and the total byte limit
//! cuts running connections and refuses new ones; every refusal recorded
//! with its reason and nothing sent.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use exp_traffic::cvec::{Adu, Mode, Side};
use exp_traffic::replay::preamble::{encode, Script};
use exp_traffic::replay::{Acceptor, AcceptorConfig, AcceptorRecord, Limits, Refusal};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(20);

async fn acceptor(limits: Limits) -> Acceptor {
    let config = AcceptorConfig { secret: None, limits };
    Acceptor::bind_with("127.0.0.1:0".parse().expect("address"), config)
        .await
        .expect("binds")
}

/// The acceptor answers `answer` bytes to nothing.
fn preamble(answer: u64) -> Vec<u8> {
    encode(&Script {
        id: 0,
        mode: Mode::Concurrent,
        window: None,
        adus: vec![Adu {
            side: Side::Acceptor,
            send_wait_us: 0,
            recv_wait_us: 0,
            bytes: answer,
        }],
    })
}

/// Bytes read until the acceptor closes (a reset counts as closed).
async fn drain(stream: &mut TcpStream) -> u64 {
    let read = async {
        let mut total = 0u64;
        let mut buf = [0u8; 16 << 10];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break total,
                Ok(n) => total += n as u64,
            }
        }
    };
    tokio::time::timeout(WAIT, read).await.expect("the acceptor closes")
}

async fn exchange(address: SocketAddr, preamble: &[u8]) -> u64 {
    let mut stream = TcpStream::connect(address).await.expect("connects");
    stream.write_all(preamble).await.expect("preamble sent");
    stream.shutdown().await.expect("FIN");
    drain(&mut stream).await
}

/// Polls the acceptor's records until `n` have arrived (bounded).
async fn records(acceptor: &Acceptor, n: usize) -> Vec<AcceptorRecord> {
    let start = Instant::now();
    let mut found = Vec::new();
    while found.len() < n {
        assert!(start.elapsed() < WAIT, "{} of {n} records: {found:?}", found.len());
        found.extend(acceptor.take_records());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_connection_times_out_with_nothing_sent() {
    let acceptor = acceptor(Limits {
        preamble_timeout: Duration::from_millis(200),
        ..Limits::default()
    })
    .await;
    let mut silent = TcpStream::connect(acceptor.local_addr()).await.expect("connects");
    assert_eq!(drain(&mut silent).await, 0);
    let got = records(&acceptor, 1).await;
    assert_eq!(got[0].refusal, Some(Refusal::Timeout), "{got:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_limits_close_extra_connections_at_once() {
    let acceptor = acceptor(Limits {
        concurrent: 2,
        per_source: 1,
        ..Limits::default()
    })
    .await;
    let address = acceptor.local_addr();
    // One silent connection from 127.0.0.1 holds its source's only slot.
    let _held = TcpStream::connect(address).await.expect("connects");
    let mut same_source = TcpStream::connect(address).await.expect("connects");
    assert_eq!(drain(&mut same_source).await, 0);
    // Another source gets the second slot and is served...
    let other = tokio::net::TcpSocket::new_v4().expect("socket");
    other.bind("127.0.0.2:0".parse().expect("address")).expect("binds");
    let mut served = other.connect(address).await.expect("connects");
    served.write_all(&preamble(1000)).await.expect("sent");
    // ... while a third from yet another is over the total.
    let third = tokio::net::TcpSocket::new_v4().expect("socket");
    third.bind("127.0.0.3:0".parse().expect("address")).expect("binds");
    let mut over = third.connect(address).await.expect("connects");
    assert_eq!(drain(&mut over).await, 0);
    served.shutdown().await.expect("FIN");
    assert_eq!(drain(&mut served).await, 1000);
    let mut refusals: Vec<Option<Refusal>> = records(&acceptor, 3).await.iter().map(|r| r.refusal).collect();
    refusals.sort();
    assert_eq!(refusals, [None, Some(Refusal::Concurrent), Some(Refusal::PerSource)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_total_byte_limit_cuts_and_then_refuses() {
    let acceptor = acceptor(Limits {
        total_bytes: 600_000,
        bytes_per_connection: 500_000,
        ..Limits::default()
    })
    .await;
    let address = acceptor.local_addr();
    assert_eq!(exchange(address, &preamble(400_000)).await, 400_000);
    // 200,000 left: the next connection gets them and is cut.
    assert_eq!(exchange(address, &preamble(400_000)).await, 200_000);
    assert_eq!(acceptor.sent_bytes(), 600_000);
    assert_eq!(exchange(address, &preamble(100)).await, 0, "nothing left to send");
    assert_eq!(
        exchange(address, &preamble(600_000)).await,
        0,
        "more than one connection may ask"
    );
    let got = records(&acceptor, 4).await;
    let refusals: Vec<Option<Refusal>> = got.iter().map(|r| r.refusal).collect();
    assert_eq!(refusals.iter().filter(|r| r.is_none()).count(), 2, "{got:?}");
    assert!(refusals.contains(&Some(Refusal::TotalBytes)), "{got:?}");
    assert!(refusals.contains(&Some(Refusal::ConnectionBytes)), "{got:?}");
    let short = got.iter().find(|r| r.sent_bytes == 200_000).expect("the cut one");
    assert!(
        short.error.as_deref().is_some_and(|e| e.contains("total byte limit")),
        "{short:?}"
    );
}
