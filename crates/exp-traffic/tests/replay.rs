//! Replay on loopback: every byte arrives (by the receiving side's counts),
//! structures order as they should, the acceptor survives garbage, and the
//! initiator spreads source addresses and refuses what it cannot run.

use std::collections::{BTreeSet, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use exp_traffic::cvec::{Adu, Connection, Mode, PerSide, Side, Structure};
use exp_traffic::replay::{
    loopback_sources, replay, Acceptor, AcceptorRecord, ConnectionRecord, ConnectionStatus, FlowHook, Interruption,
    ReplayConfig, ReplayError, ReplayResult, StopSignal,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn adu(side: Side, send_wait_us: u64, recv_wait_us: u64, bytes: u64) -> Adu {
    Adu {
        side,
        send_wait_us,
        recv_wait_us,
        bytes,
    }
}

use Side::{Acceptor as A, Initiator as I};

async fn run(connections: Vec<Connection>, config: impl FnOnce(&mut ReplayConfig)) -> Run {
    run_via(connections, false, config).await
}

/// Like `run`, with a shaping relay between the sides when `relayed`.
async fn run_via(connections: Vec<Connection>, relayed: bool, config: impl FnOnce(&mut ReplayConfig)) -> Run {
    let acceptor = Acceptor::bind("127.0.0.1:0".parse().expect("address"))
        .await
        .expect("acceptor binds");
    let target = if relayed {
        relay(acceptor.local_addr()).await
    } else {
        acceptor.local_addr()
    };
    let mut cfg = ReplayConfig::new(target);
    config(&mut cfg);
    let target = cfg.target;
    let result = replay(connections, cfg).await.expect("replay runs");
    // The acceptor's rows land once its side has closed, after it read the
    // initiator's FIN, which may still be on its way (through the relay):
    // wait for them (a loaded machine took more than 10 s for 4,000).
    // Connections stopped before their start never reach the acceptor.
    let reached = result
        .connections
        .iter()
        .filter(|c| c.interrupted != Some(Interruption::NotStarted))
        .count();
    let mut accepted = Vec::new();
    let deadline = std::time::Instant::now() + RECORDS_WAIT;
    while std::time::Instant::now() < deadline {
        accepted.extend(acceptor.take_records());
        if accepted.len() >= reached {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    Run {
        result,
        accepted,
        target,
    }
}

/// How long the tests wait for the acceptor's records of a replay.
const RECORDS_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

struct Run {
    result: ReplayResult,
    target: SocketAddr,
    accepted: Vec<AcceptorRecord>,
}

impl Run {
    /// Every planned byte arrived, in both directions, by the receivers'
    /// counts; every connection completed on both sides.
    fn assert_every_byte_arrived(&self, connections: &[Connection]) {
        assert_eq!(self.result.connections.len(), connections.len());
        assert_eq!(self.accepted.len(), connections.len());
        let by_id: HashMap<u64, &AcceptorRecord> = self
            .accepted
            .iter()
            .map(|r| (r.id.expect("preamble accepted"), r))
            .collect();
        for (row, planned) in self.result.connections.iter().zip(connections) {
            let accepted = by_id[&row.id];
            assert_eq!(row.status, ConnectionStatus::Complete, "{row:?}");
            assert_eq!(accepted.status, ConnectionStatus::Complete, "{accepted:?}");
            assert_eq!(accepted.received_bytes, planned.bytes(I), "{accepted:?}");
            assert_eq!(accepted.expected_received_bytes, planned.bytes(I));
            assert_eq!(row.received_bytes, planned.bytes(A), "{row:?}");
            assert_eq!(row.expected_received_bytes, planned.bytes(A));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_byte_arrives_in_every_mode() {
    let connections = vec![
        // Request/response epochs with server and think times.
        Connection::new(
            0,
            Mode::Sequential,
            vec![
                adu(I, 0, 0, 300),
                adu(A, 0, 1_000, 5_000),
                adu(I, 0, 2_000, 200),
                adu(A, 0, 500, 70_000),
                adu(I, 0, 0, 0),
                adu(A, 0, 0, 0),
            ],
        ),
        // The acceptor speaks first (a greeting), two requests in a row,
        // and the initiator half-closes before the last response.
        Connection::new(
            1_000,
            Mode::Sequential,
            vec![
                adu(A, 0, 0, 100),
                adu(I, 0, 0, 40),
                adu(I, 500, 0, 60),
                adu(A, 0, 0, 3_000),
                adu(I, 0, 0, 0),
                adu(A, 0, 100, 1_000),
                adu(A, 0, 0, 0),
            ],
        ),
        // Both sides at once, several megabytes each way.
        Connection::new(
            2_000,
            Mode::Concurrent,
            vec![
                adu(I, 0, 0, 3_000_000),
                adu(A, 0, 0, 4_000_000),
                adu(I, 1_000, 0, 2_000_000),
                adu(A, 2_000, 0, 10),
                adu(I, 0, 0, 0),
            ],
        ),
        // No FINs in the script: both sides close at the end.
        Connection::new(3_000, Mode::Sequential, vec![adu(I, 0, 0, 1), adu(A, 0, 0, 1)]),
        // A small fixed window (w line) still moves every byte.
        Connection {
            window: Some(PerSide {
                initiator: 8_192,
                acceptor: 4_096,
            }),
            ..Connection::new(
                4_000,
                Mode::Sequential,
                vec![adu(I, 0, 0, 500_000), adu(A, 0, 0, 700_000)],
            )
        },
    ];
    let run = run(connections.clone(), |_| {}).await;
    run.assert_every_byte_arrived(&connections);
    let epochs: Vec<u32> = run.result.connections.iter().map(|r| r.epochs).collect();
    assert_eq!(epochs, [2, 1, 0, 1, 1]);
    let first = &run.result.epochs[0];
    assert_eq!((first.request_bytes, first.response_bytes), (300, 5_000));
    // The greeting is no epoch; the two requests form one.
    let greeted = run.result.epochs.iter().find(|e| e.connection_id == 1);
    assert_eq!(greeted.map(|e| (e.request_bytes, e.response_bytes)), Some((100, 4_000)));
    for row in &run.result.connections {
        let tcp = row.tcp.expect("TCP_INFO read at close");
        assert!(tcp.rtt_us > 0, "{row:?}");
        assert!(row.first_byte_us <= row.last_byte_us);
        assert!(row.actual_start_us >= row.planned_start_us);
    }
    let moved: u64 = run
        .result
        .throughput
        .iter()
        .map(|s| s.initiator_to_acceptor_bytes)
        .sum();
    assert_eq!(moved, connections.iter().map(|c| c.bytes(I)).sum::<u64>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_override_and_measurement_window() {
    let connections: Vec<Connection> = (0..20)
        .map(|i| {
            Connection::new(
                i * 10_000,
                Mode::Sequential,
                vec![adu(I, 0, 0, 100_000), adu(A, 0, 0, 100_000)],
            )
        })
        .collect();
    let run = run(connections.clone(), |c| {
        c.window = Some(16_384);
        c.measure = Some(std::time::Duration::from_millis(50)..std::time::Duration::from_millis(150));
        c.interval = std::time::Duration::from_millis(10);
    })
    .await;
    run.assert_every_byte_arrived(&connections);
    let marked: Vec<bool> = run.result.connections.iter().map(|r| r.in_window).collect();
    let expected: Vec<bool> = (0..20).map(|i| (5..15).contains(&i)).collect();
    assert_eq!(marked, expected);
    assert!(run.result.active_connections.iter().any(|s| s.in_window));
    assert!(run.result.active_connections.iter().any(|s| !s.in_window));
}

/// Records what the initiator registers, and assigns a made-up RTT.
#[derive(Default)]
struct RecordingHook {
    flows: Mutex<Vec<(SocketAddr, SocketAddr)>>,
    unregistered: Mutex<usize>,
}

impl FlowHook for RecordingHook {
    fn register(&self, local: SocketAddr, peer: SocketAddr, connection: &Connection) -> Option<u64> {
        self.flows.lock().expect("lock").push((local, peer));
        Some(connection.start_us + 7)
    }

    fn unregister(&self, _local: SocketAddr, _peer: SocketAddr) {
        *self.unregistered.lock().expect("lock") += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spreads_source_addresses_and_registers_flows() {
    let connections: Vec<Connection> = (0..40)
        .map(|i| Connection::new(i * 1_000, Mode::Sequential, vec![adu(I, 0, 0, 10), adu(A, 0, 0, 10)]))
        .collect();
    let hook = Arc::new(RecordingHook::default());
    let for_config = Arc::clone(&hook);
    let run = run(connections.clone(), move |c| {
        c.source_addresses = loopback_sources(4);
        c.flow_hook = Some(for_config);
    })
    .await;
    run.assert_every_byte_arrived(&connections);
    let sources: BTreeSet<IpAddr> = run
        .result
        .connections
        .iter()
        .map(|r| r.local.expect("bound").ip())
        .collect();
    assert_eq!(sources, loopback_sources(4).into_iter().collect());
    let peers: BTreeSet<IpAddr> = run.accepted.iter().map(|r| r.peer.ip()).collect();
    assert_eq!(peers, sources, "the acceptor sees the spread addresses");
    let flows = hook.flows.lock().expect("lock").clone();
    assert_eq!(flows.len(), 40);
    for row in &run.result.connections {
        assert_eq!(row.assigned_rtt_us, Some(row.planned_start_us + 7));
        assert!(flows.contains(&(row.local.expect("bound"), run.target)));
    }
    assert_eq!(*hook.unregistered.lock().expect("lock"), 40);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_preambles_close_with_an_error_record() {
    let acceptor = Acceptor::bind("127.0.0.1:0".parse().expect("address"))
        .await
        .expect("acceptor binds");
    let garbage: [&[u8]; 4] = [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        // Right magic, unknown version.
        b"XR\x09\x00\x00\x00\x01\x00",
        // Right header, a body longer than the limit.
        b"XR\x01\xff\xff\xff\xff",
        // Right header, a body claiming a million ADUs.
        b"XR\x01\x00\x00\x00\x06\x00\x00\x00\xc0\x84\x3d",
    ];
    for bytes in garbage {
        let mut stream = TcpStream::connect(acceptor.local_addr()).await.expect("connects");
        stream.write_all(bytes).await.expect("writes");
        stream.shutdown().await.expect("half-closes");
        let mut rest = Vec::new();
        // The acceptor closes: end of stream (or a reset), never a hang.
        let _ = stream.read_to_end(&mut rest).await;
        assert!(rest.is_empty());
    }
    let mut records = Vec::new();
    let deadline = std::time::Instant::now() + RECORDS_WAIT;
    while std::time::Instant::now() < deadline {
        records.extend(acceptor.take_records());
        if records.len() == 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(records.len(), 4);
    for record in &records {
        assert_eq!(record.id, None);
        assert_eq!(record.status, ConnectionStatus::Failed);
        assert!(record.error.is_some());
    }
    // The acceptor still serves real connections afterwards.
    let connections = vec![Connection::new(
        0,
        Mode::Sequential,
        vec![adu(I, 0, 0, 5), adu(A, 0, 0, 6)],
    )];
    let result = replay(connections, ReplayConfig::new(acceptor.local_addr()))
        .await
        .expect("replay runs");
    assert_eq!(result.connections[0].status, ConnectionStatus::Complete);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_what_it_cannot_run() {
    let target: SocketAddr = "127.0.0.1:9".parse().expect("address");
    let after_fin = vec![
        Connection::new(0, Mode::Sequential, vec![adu(I, 0, 0, 1)]),
        Connection::new(0, Mode::Sequential, vec![adu(I, 0, 0, 0), adu(I, 0, 0, 1)]),
    ];
    match replay(after_fin, ReplayConfig::new(target)).await {
        Err(ReplayError::InvalidConnection { index: 1, .. }) => {}
        other => panic!("expected an invalid connection, got {other:?}"),
    }
    let mut config = ReplayConfig::new(target);
    config.fds_per_connection = 1 << 40;
    let one = vec![Connection::new(0, Mode::Sequential, vec![adu(I, 0, 0, 1)])];
    match replay(one, config).await {
        Err(ReplayError::TooManyOpen { peak: 1, needed, limit }) => assert!(needed > limit),
        other => panic!("expected the preflight to refuse, got {other:?}"),
    }
}

/// SplitMix64: a fixed-seed generator for the synthetic set.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }
}

/// 1,000 sequential connections over ~8 s, each 2–5 epochs of 1–8 kB
/// requests and 2–20 kB responses, 1–3 ms server times and 2–10 ms think
/// times.
fn synthetic_set(seed: u64) -> Vec<Connection> {
    let mut rng = SplitMix(seed);
    (0..1_000)
        .map(|_| {
            let mut adus = Vec::new();
            for epoch in 0..rng.range(2, 5) {
                let think = if epoch == 0 { 0 } else { rng.range(2_000, 10_000) };
                adus.push(adu(I, 0, think, rng.range(1_000, 8_000)));
                adus.push(adu(A, 0, rng.range(1_000, 3_000), rng.range(2_000, 20_000)));
            }
            adus.push(adu(I, 0, 0, 0));
            adus.push(adu(A, 0, 0, 0));
            Connection::new(rng.range(0, 8_000_000), Mode::Sequential, adus)
        })
        .collect()
}

fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

/// Most connections open at once among `rows`.
fn peak_open(rows: &[&ConnectionRecord]) -> i64 {
    let mut events: Vec<(u64, i64)> = rows
        .iter()
        .flat_map(|r| [(r.actual_start_us, 1), (r.end_us, -1)])
        .collect();
    events.sort_unstable();
    let (mut open, mut peak) = (0, 0);
    for (_, delta) in events {
        open += delta;
        peak = peak.max(open);
    }
    peak
}

const STRUCTURES: [Structure; 4] = [Structure::BlkConc, Structure::BlkSeq, Structure::Ab, Structure::Atbt];

/// The relay forwards at most one chunk per direction per tick, each a tick
/// after it arrived: every direction of every connection gets ≥ 2 ms
/// latency and ≤ 4 MB/s.
const RELAY_CHUNK: usize = 8 << 10;
const RELAY_TICK: std::time::Duration = std::time::Duration::from_millis(2);

/// A relay between initiator and acceptor that forwards at most
/// `RELAY_CHUNK` bytes per direction per `RELAY_TICK`: a crude stand-in for the emulation stage's RTT and
/// bottleneck. The structures differ only in how they meet latency and
/// bandwidth (round trips per exchange, one direction after the other or
/// both at once), and bare loopback has neither, so without it the
/// structures' durations differ by less than a busy machine's noise.
async fn relay(target: SocketAddr) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("relay binds");
    let addr = listener.local_addr().expect("relay address");
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            tokio::spawn(async move {
                let outbound = TcpStream::connect(target).await.expect("relay connects");
                // Nagle would hold chunks for delayed ACKs (40 ms).
                inbound.set_nodelay(true).expect("TCP_NODELAY");
                outbound.set_nodelay(true).expect("TCP_NODELAY");
                let (inbound_read, inbound_write) = inbound.into_split();
                let (outbound_read, outbound_write) = outbound.into_split();
                tokio::join!(shape(inbound_read, outbound_write), shape(outbound_read, inbound_write));
            });
        }
    });
    addr
}

async fn shape(mut from: tokio::net::tcp::OwnedReadHalf, mut to: tokio::net::tcp::OwnedWriteHalf) {
    let mut buf = [0u8; RELAY_CHUNK];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                tokio::time::sleep(RELAY_TICK).await;
                if to.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown().await;
}

/// The four structures of one synthetic set are replayed together through
/// the relay, each connection once per structure at the same start time,
/// so that whatever else loads the machine loads all four alike. The set
/// spreads its starts over 8 s rather than 2 so the four together open
/// 500 connections/s: twice that, through the relay, in a debug build, on
/// a shared 2-core machine, overloads it into second-long durations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structures_order_durations_and_concurrency() {
    // The set goes through a connection-vector file, as a trace would.
    let file = std::env::temp_dir().join(format!("expc-replay-{}.cvec", std::process::id()));
    let mut text = Vec::new();
    exp_traffic::cvec::write_alternate(&mut text, &synthetic_set(42)).expect("written");
    std::fs::write(&file, text).expect("file");
    let parsed = exp_traffic::cvec::read_file(&file, exp_traffic::cvec::Format::Auto, false);
    let _ = std::fs::remove_file(&file);
    let traced = parsed.expect("the file parses").connections;
    assert_eq!(traced.len(), 1_000);
    let same = |a: &Connection, b: &Connection| (a.start_us, &a.adus) == (b.start_us, &b.adus);
    assert!(
        synthetic_set(42).iter().zip(&traced).all(|(a, b)| same(a, b)),
        "same set through the file"
    );
    let connections: Vec<Connection> = STRUCTURES
        .iter()
        .flat_map(|structure| traced.iter().map(|c| structure.apply(c)))
        .collect();
    let run = run_via(connections.clone(), true, |c| {
        c.structure = "all four".into();
        c.interval = std::time::Duration::from_millis(100);
    })
    .await;
    run.assert_every_byte_arrived(&connections);
    let sources: BTreeSet<IpAddr> = run
        .result
        .connections
        .iter()
        .map(|r| r.local.expect("bound").ip())
        .collect();
    assert!(sources.len() > 1, "connections spread over source addresses");
    let per_structure: Vec<Vec<&ConnectionRecord>> = (0..STRUCTURES.len() as u64)
        .map(|k| {
            let ids = k * traced.len() as u64..(k + 1) * traced.len() as u64;
            run.result.connections.iter().filter(|r| ids.contains(&r.id)).collect()
        })
        .collect();
    let medians: Vec<u64> = per_structure
        .iter()
        .map(|rows| median(rows.iter().map(|r| r.duration_us).collect()))
        .collect();
    let peaks: Vec<i64> = per_structure.iter().map(|rows| peak_open(rows)).collect();
    // Little's law over the common span: total connection time.
    let open_time: Vec<u64> = per_structure
        .iter()
        .map(|rows| rows.iter().map(|r| r.duration_us).sum())
        .collect();
    eprintln!("median durations (µs) {medians:?}, peak open {peaks:?}, total open time (µs) {open_time:?}");
    let [blk_conc, blk_seq, ab, atbt] = medians[..] else {
        unreachable!()
    };
    assert!(
        blk_conc <= blk_seq && blk_seq <= ab && ab <= atbt,
        "median durations (µs) blk_conc {blk_conc}, blk_seq {blk_seq}, ab {ab}, atbt {atbt}"
    );
    assert!(
        peaks[..3].iter().all(|&p| p < peaks[3]),
        "peak open connections {peaks:?}"
    );
    assert!(
        open_time[..3].iter().all(|&t| t < open_time[3]),
        "open time {open_time:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_peer_times_out() {
    // Accepts, then never reads nor answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let target = listener.local_addr().expect("address");
    let holder = tokio::spawn(async move {
        let held = listener.accept().await;
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        drop(held);
    });
    let mut config = ReplayConfig::new(target);
    config.connection_timeout = Some(std::time::Duration::from_millis(200));
    let connections = vec![Connection::new(
        0,
        Mode::Sequential,
        vec![adu(I, 0, 0, 10), adu(A, 0, 0, 10)],
    )];
    let result = replay(connections, config).await.expect("replay runs");
    let row = &result.connections[0];
    assert_eq!(row.status, ConnectionStatus::Short);
    assert!(
        row.error.as_deref().is_some_and(|e| e.contains("still running")),
        "{row:?}"
    );
    holder.abort();
}

/// Three connections that exchange a request and a response, then think
/// for 30 s; two more that start a minute in.
fn long_connections() -> Vec<Connection> {
    let long = |start_us| {
        Connection::new(
            start_us,
            Mode::Sequential,
            vec![adu(I, 0, 0, 10_000), adu(A, 0, 0, 5_000), adu(I, 0, 30_000_000, 1_000)],
        )
    };
    vec![long(0), long(1_000), long(2_000), long(60_000_000), long(61_000_000)]
}

/// When the two tests below stop the replay: long after the first three
/// connections' exchange (milliseconds on a quiet machine), long before the
/// last two start (60 s in).
const CUT_AFTER: std::time::Duration = std::time::Duration::from_secs(3);

/// A stopped replay returns normally with a record per connection: those
/// running are cut with what they measured, the rest marked not started.
fn assert_cut_short(result: &ReplayResult) {
    assert_eq!(result.connections.len(), 5, "one record per connection");
    for row in &result.connections[..3] {
        assert_eq!(row.interrupted, Some(Interruption::Cut), "{row:?}");
        assert_eq!(row.status, ConnectionStatus::Short, "{row:?}");
        assert_eq!((row.sent_bytes, row.received_bytes), (10_000, 5_000), "{row:?}");
        assert_eq!(row.epochs, 1, "the completed exchange is kept: {row:?}");
        assert!(row.error.as_deref().is_some_and(|e| e.contains("stopped")), "{row:?}");
    }
    for row in &result.connections[3..] {
        assert_eq!(row.interrupted, Some(Interruption::NotStarted), "{row:?}");
        assert_eq!(row.status, ConnectionStatus::Failed, "{row:?}");
        assert_eq!((row.sent_bytes, row.received_bytes), (0, 0), "{row:?}");
    }
    assert_eq!(result.epochs.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_signal_cuts_running_connections_and_keeps_their_records() {
    let stop = StopSignal::new();
    let firing = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(CUT_AFTER).await;
        firing.stop();
    });
    let run = run(long_connections(), |c| c.stop = Some(stop)).await;
    assert_cut_short(&run.result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_cuts_running_connections_and_keeps_their_records() {
    let deadline = std::time::Instant::now() + CUT_AFTER;
    let run = run(long_connections(), |c| c.deadline = Some(deadline)).await;
    assert_cut_short(&run.result);
}
