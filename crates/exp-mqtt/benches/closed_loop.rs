//! One device's closed loop at window 1 over loopback, the path
//! `examples/throughput.rs` runs for every message: `publish` writes the
//! PUBLISH (plain TCP: src/device/wire.rs), the device's task reads the
//! PUBACK and reports `Acked` on the event channel, the loop publishes the next. The broker is a stub on its own
//! thread that answers CONNECT with CONNACK and each PUBLISH with PUBACK and
//! does nothing else, so what changes the figure is the client's work (and
//! the system calls and wake-ups on both sides, which a round trip always
//! has). Everything on the client runs on one thread (current_thread runtime).
//! Run: `cargo bench -p exp-mqtt --bench closed_loop`.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use exp_mqtt::{Device, DeviceEventKind, DeviceOptions, Endpoint};

/// Answers one connection until it closes: CONNACK, PUBACK, PINGRESP.
fn stub_broker(mut conn: TcpStream) {
    conn.set_nodelay(true).unwrap();
    let mut buf = Vec::with_capacity(1 << 16);
    let mut chunk = [0u8; 1 << 16];
    let mut replies = Vec::new();
    loop {
        let n = match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut at = 0;
        while let Some((kind, body, next)) = frame(&buf[at..]) {
            match kind >> 4 {
                1 => replies.extend_from_slice(&[0x20, 2, 0, 0]),
                3 if kind & 0x06 != 0 => {
                    // Topic length, topic, then the packet id.
                    let topic_len = usize::from(u16::from_be_bytes([body[0], body[1]]));
                    let id = &body[2 + topic_len..4 + topic_len];
                    replies.extend_from_slice(&[0x40, 2, id[0], id[1]]);
                }
                12 => replies.extend_from_slice(&[0xD0, 0]),
                14 => return,
                _ => {}
            }
            at += next;
        }
        buf.drain(..at);
        if !replies.is_empty() {
            if conn.write_all(&replies).is_err() {
                return;
            }
            replies.clear();
        }
    }
}

/// One whole packet at the start of `b`: its first byte, its body and its length.
fn frame(b: &[u8]) -> Option<(u8, &[u8], usize)> {
    let (mut len, mut shift, mut i) = (0usize, 0, 1);
    loop {
        let byte = *b.get(i)?;
        len |= usize::from(byte & 0x7F) << shift;
        i += 1;
        if byte & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    let end = i + len;
    (b.len() >= end).then(|| (b[0], &b[i..end], end))
}

fn bench(c: &mut Criterion) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || stub_broker(conn));
        }
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let options = DeviceOptions {
        client_id: "bench".into(),
        keep_alive: Duration::from_secs(30),
        clean_session: true,
        credentials: None,
        max_inflight: 1,
        max_packet_bytes: 164,
    };
    let endpoint = Endpoint::tcp("127.0.0.1", port);
    let device = rt
        .block_on(Device::connect(0, &endpoint, options, tx, Duration::from_secs(5)))
        .unwrap();
    let payload = vec![b'x'; 100];

    let mut group = c.benchmark_group("closed_loop");
    group.throughput(Throughput::Elements(1));
    group.bench_function("qos1_100B_window1", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    device.publish("bench/0", 1, &payload).unwrap();
                    loop {
                        match rx.recv().await.unwrap().kind {
                            DeviceEventKind::Acked { .. } => break,
                            DeviceEventKind::Connected { .. } => {}
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                }
                start.elapsed()
            })
        });
    });
    group.finish();
    rt.block_on(device.close(Duration::from_secs(1)));
}

criterion_group!(benches, bench);
criterion_main!(benches);
