//! The RTT-emulation stage end to end, in namespaces each test creates and
//! removes (RAII, also when an assertion fails). Needs root, CAP_NET_ADMIN,
//! CAP_SYS_ADMIN, /dev/net/tun and `ip`: on a machine without them (the
//! build script's `rtt_emulation` cfg) every test is reported as ignored.

use std::io::{Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::process::Command;
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use exp_traffic::emulate::{
    cleanup_stale_namespaces, preflight, Bottleneck, Direction, FlowKey, FlowParams, Protocol, Side, StageConfig,
    Testbed,
};

const PREFIX: &str = "expc";
const WAIT: Duration = Duration::from_secs(10);

/// One testbed at a time: the tests measure time through forwarder threads,
/// and a bulk transfer through another testbed on the same two cores would
/// delay their packets by milliseconds (a 5 ms RTT measured 6.1 ms with the
/// tests in parallel under a CI build's load).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A testbed holding the lock; the testbed is dropped (namespaces removed)
/// before the lock is released.
struct Serial {
    testbed: Testbed,
    _lock: MutexGuard<'static, ()>,
}

impl std::ops::Deref for Serial {
    type Target = Testbed;

    fn deref(&self) -> &Testbed {
        &self.testbed
    }
}

/// A testbed holding the lock. The tests that call it are ignored where the
/// build script found no RTT emulation, so a failing preflight here is a
/// failure, not a skip.
fn new_testbed(config: StageConfig) -> Serial {
    let lock = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let Err(e) = preflight() {
        panic!("RTT emulation was available at build time but not now: {e}");
    }
    Serial {
        testbed: Testbed::create(PREFIX, config).expect("testbed"),
        _lock: lock,
    }
}

fn namespaces() -> String {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn testbed_drop_removes_namespaces_and_devices() {
    let testbed = new_testbed(StageConfig::default());
    let names = [Side::Initiator, Side::Acceptor].map(|side| testbed.namespace_name(side).to_string());
    let listed = namespaces();
    for name in &names {
        assert!(listed.contains(name.as_str()), "{name} missing from {listed}");
        let link = Command::new("ip")
            .args(["-n", name, "link", "show", "expc0"])
            .output()
            .expect("ip link");
        assert!(link.status.success(), "no TUN device in {name}");
    }
    drop(testbed);
    let listed = namespaces();
    for name in &names {
        assert!(!listed.contains(name.as_str()), "{name} left behind: {listed}");
    }
    let root_links = Command::new("ip").args(["link", "show"]).output().expect("ip link");
    assert!(
        !String::from_utf8_lossy(&root_links.stdout).contains("expc0"),
        "TUN leaked into the root namespace"
    );
}

#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn per_connection_rtts_are_measured_by_tcp_ping_pong() {
    const EXCHANGES: usize = 20;
    let rtts_ms = [5u64, 20, 80];
    // Unregistered traffic is not delayed: only the registration adds delay.
    let testbed = new_testbed(StageConfig::default());
    let acceptor_ip = testbed.address(Side::Acceptor);
    let (port_tx, port_rx) = mpsc::channel();
    let echo = testbed
        .spawn_in(Side::Acceptor, move || {
            let listener = TcpListener::bind((acceptor_ip, 0)).expect("bind");
            port_tx
                .send(listener.local_addr().expect("addr").port())
                .expect("send port");
            for _ in 0..rtts_ms.len() {
                let (mut stream, _) = listener.accept().expect("accept");
                stream.set_nodelay(true).expect("nodelay");
                stream.set_read_timeout(Some(WAIT)).expect("timeout");
                let mut byte = [0u8; 1];
                for _ in 0..EXCHANGES {
                    stream.read_exact(&mut byte).expect("request");
                    stream.write_all(&byte).expect("response");
                }
            }
        })
        .expect("spawn echo");
    let port = port_rx.recv_timeout(WAIT).expect("echo port");
    let acceptor = SocketAddrV4::new(acceptor_ip, port);
    let initiator_ip = testbed.address(Side::Initiator);
    let flows = testbed.flows().clone();
    let medians = testbed
        .run_in(Side::Initiator, move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let mut medians = Vec::new();
                for rtt_ms in rtts_ms {
                    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
                    socket.bind(SocketAddr::from((initiator_ip, 0))).expect("bind");
                    let SocketAddr::V4(local) = socket.local_addr().expect("local") else {
                        panic!("not v4")
                    };
                    let key = FlowKey {
                        protocol: Protocol::Tcp,
                        initiator: local,
                        acceptor,
                    };
                    let params = FlowParams::with_rtt(Duration::from_millis(rtt_ms));
                    flows.register(key, params).expect("register");
                    let mut stream = socket.connect(acceptor.into()).await.expect("connect");
                    stream.set_nodelay(true).expect("nodelay");
                    let mut samples = Vec::new();
                    for i in 0..EXCHANGES {
                        use tokio::io::{AsyncReadExt, AsyncWriteExt};
                        let started = Instant::now();
                        stream.write_all(&[i as u8]).await.expect("request");
                        let mut byte = [0u8; 1];
                        stream.read_exact(&mut byte).await.expect("response");
                        assert_eq!(byte[0], i as u8);
                        samples.push(started.elapsed());
                    }
                    samples.sort();
                    medians.push(samples[EXCHANGES / 2]);
                }
                medians
            })
        })
        .expect("initiator");
    echo.join().expect("echo thread").expect("echo namespace");
    let stats = testbed.stats();
    eprintln!(
        "lateness to acceptor mean {:?} max {:?}; to initiator mean {:?} max {:?}",
        stats.to_acceptor.mean_lateness(),
        stats.to_acceptor.lateness_max,
        stats.to_initiator.mean_lateness(),
        stats.to_initiator.lateness_max
    );
    // Each flow is delayed by its own RTT: never less (the stage holds every
    // packet its flow's delay), and not much more. A loaded machine wakes
    // the forwarder and both ends late, so the bound above is loose (a CI
    // run with a CPU hog on both cores measured 20 ms as 22.4 ms); the
    // stage's accuracy on a quiet machine is what `bench/traffic-replay.sh`
    // and the lateness printed above show.
    for (rtt_ms, median) in rtts_ms.iter().zip(&medians) {
        let assigned = Duration::from_millis(*rtt_ms);
        eprintln!("assigned {rtt_ms} ms, measured median {median:?}");
        assert!(
            *median >= assigned && *median <= assigned.mul_f64(1.1) + Duration::from_millis(10),
            "RTT {rtt_ms} ms measured as {median:?}"
        );
    }
}

/// Sends `count` UDP datagrams from the initiator to the acceptor and
/// returns how many arrived: the receiver stops once all have, or 2 s after
/// the sender finished (datagrams in flight take the 2 ms RTT), so a slow
/// sender on a loaded machine is not taken for loss.
fn udp_delivered(testbed: &Testbed, count: usize) -> usize {
    use std::sync::atomic::{AtomicBool, Ordering};
    let acceptor_ip = testbed.address(Side::Acceptor);
    let sent_all = Arc::new(AtomicBool::new(false));
    let (port_tx, port_rx) = mpsc::channel();
    let finished = sent_all.clone();
    let receiver = testbed
        .spawn_in(Side::Acceptor, move || {
            let socket = UdpSocket::bind((acceptor_ip, 0)).expect("bind");
            socket
                .set_read_timeout(Some(Duration::from_millis(100)))
                .expect("timeout");
            port_tx
                .send(socket.local_addr().expect("addr").port())
                .expect("send port");
            let mut buffer = [0u8; 64];
            let mut received = 0;
            let mut quiet_since: Option<Instant> = None;
            while received < count {
                if socket.recv(&mut buffer).is_ok() {
                    received += 1;
                } else if finished.load(Ordering::SeqCst) {
                    let since = *quiet_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= Duration::from_secs(2) {
                        break;
                    }
                }
            }
            received
        })
        .expect("spawn receiver");
    let port = port_rx.recv_timeout(WAIT).expect("receiver port");
    let initiator_ip = testbed.address(Side::Initiator);
    testbed
        .run_in(Side::Initiator, move || {
            let socket = UdpSocket::bind((initiator_ip, 0)).expect("bind");
            for i in 0..count {
                socket.send_to(&[i as u8], (acceptor_ip, port)).expect("send");
                std::thread::sleep(Duration::from_millis(1));
            }
        })
        .expect("sender");
    sent_all.store(true, Ordering::SeqCst);
    receiver.join().expect("receiver thread").expect("receiver namespace")
}

#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn loss_applies_per_direction() {
    let lossy = |to_acceptor, to_initiator| StageConfig {
        default: FlowParams {
            loss_to_acceptor: to_acceptor,
            loss_to_initiator: to_initiator,
            ..FlowParams::with_rtt(Duration::from_millis(2))
        },
        ..StageConfig::default()
    };
    let testbed = new_testbed(lossy(1.0, 0.0));
    assert_eq!(udp_delivered(&testbed, 50), 0, "100 % loss towards the acceptor");
    assert!(testbed.stats().to_acceptor.lost >= 50);
    drop(testbed);

    let testbed = new_testbed(lossy(0.0, 0.0));
    assert_eq!(udp_delivered(&testbed, 50), 50, "no loss");
    assert_eq!(testbed.stats().to_acceptor.lost, 0);
    drop(testbed);

    let testbed = new_testbed(lossy(0.0, 1.0));
    assert_eq!(udp_delivered(&testbed, 50), 50, "loss only on the way back");
}

#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn bottleneck_bounds_throughput_and_queues() {
    const RATE: u64 = 20_000_000;
    let config = StageConfig {
        default: FlowParams::with_rtt(Duration::from_millis(10)),
        bottleneck: Some(Bottleneck {
            rate_bits_per_s: RATE,
            queue_bytes: 256 * 1024,
        }),
        seed: 1,
    };
    let testbed = new_testbed(config);
    let acceptor_ip = testbed.address(Side::Acceptor);
    let (port_tx, port_rx) = mpsc::channel();
    let receiver = testbed
        .spawn_in(Side::Acceptor, move || {
            let listener = TcpListener::bind((acceptor_ip, 0)).expect("bind");
            port_tx
                .send(listener.local_addr().expect("addr").port())
                .expect("send port");
            let (mut stream, _) = listener.accept().expect("accept");
            stream.set_read_timeout(Some(WAIT)).expect("timeout");
            let mut buffer = vec![0u8; 64 * 1024];
            let (mut first, mut last, mut bytes) = (None, Instant::now(), 0u64);
            loop {
                let n = stream.read(&mut buffer).expect("read");
                if n == 0 {
                    break;
                }
                // Bytes of the first read arrived before the clock started.
                if first.is_none() {
                    first = Some(Instant::now());
                } else {
                    bytes += n as u64;
                }
                last = Instant::now();
            }
            (bytes, last - first.expect("some data arrived"))
        })
        .expect("spawn receiver");
    let port = port_rx.recv_timeout(WAIT).expect("port");
    testbed
        .run_in(Side::Initiator, move || {
            let mut stream = TcpStream::connect_timeout(&SocketAddr::from((acceptor_ip, port)), WAIT).expect("connect");
            stream.set_write_timeout(Some(WAIT)).expect("timeout");
            let chunk = vec![0u8; 64 * 1024];
            let deadline = Instant::now() + Duration::from_secs(2);
            while Instant::now() < deadline {
                stream.write_all(&chunk).expect("write");
            }
        })
        .expect("sender");
    let (bytes, elapsed) = receiver.join().expect("receiver thread").expect("receiver namespace");
    let mbit_per_s = bytes as f64 * 8.0 / elapsed.as_secs_f64() / 1e6;
    let samples = testbed.backlog_samples(Direction::ToAcceptor);
    let peak = samples.iter().map(|s| s.bytes).max().unwrap_or(0);
    eprintln!(
        "goodput {mbit_per_s:.2} Mbit/s over {elapsed:?}; {} samples, peak backlog {peak} B",
        samples.len()
    );
    assert!(bytes > 0);
    assert!(
        mbit_per_s <= 21.0,
        "{mbit_per_s:.2} Mbit/s through a 20 Mbit/s bottleneck"
    );
    // Every 10 ms: ~200 in 2 s on a quiet machine, fewer when the sampling
    // thread waits for a CPU.
    assert!(samples.len() >= 50, "a 2 s transfer yields ~200 samples at 10 ms");
    assert!(
        samples.iter().any(|s| s.packets > 0 && s.bytes > 0),
        "backlog never grew"
    );
    assert!(
        samples.iter().all(|s| s.bytes <= 256 * 1024),
        "backlog exceeded the queue"
    );
}

#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn stale_namespaces_of_dead_processes_are_removed() {
    let testbed = new_testbed(StageConfig::default());
    // Pid 4194303 is the largest pid_max allows; nothing runs there here.
    let dead_pid = 4_194_303;
    assert!(!std::path::Path::new(&format!("/proc/{dead_pid}")).exists());
    let stale = format!("{PREFIX}-{dead_pid}-0-i");
    let added = Command::new("ip")
        .args(["netns", "add", &stale])
        .status()
        .expect("ip netns add");
    assert!(added.success());
    let removed = cleanup_stale_namespaces(PREFIX).expect("cleanup");
    assert!(removed.contains(&stale), "{removed:?}");
    let listed = namespaces();
    assert!(!listed.contains(stale.as_str()));
    assert!(
        listed.contains(testbed.namespace_name(Side::Initiator)),
        "a live testbed was removed"
    );
}

#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn runtime_worker_threads_inherit_the_namespace() {
    let testbed = new_testbed(StageConfig::default());
    let initiator_ip = testbed.address(Side::Initiator);
    // The initiator's address exists only in its namespace, so binding it
    // from a tokio worker thread proves the worker was cloned in there.
    let bound = testbed
        .run_in(Side::Initiator, move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let task = tokio::spawn(async move { tokio::net::TcpListener::bind((initiator_ip, 0)).await.is_ok() });
                task.await.expect("task")
            })
        })
        .expect("initiator");
    assert!(bound, "worker thread could not bind the initiator's address");
    let outside = std::net::TcpListener::bind((initiator_ip, 0));
    assert!(
        outside.is_err(),
        "the initiator's address is visible outside its namespace"
    );
}
