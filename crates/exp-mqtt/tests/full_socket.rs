//! A device whose socket fills up. Over plain TCP `publish` writes what the
//! socket takes at once and leaves the rest to the device's task
//! (src/device/wire.rs). A broker that stops reading for a while must still
//! get every PUBLISH whole and in order, and every message must end acked.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::thread;
use std::time::{Duration, Instant};

use exp_mqtt::{Device, DeviceEventKind, DeviceOptions, Endpoint};
use tokio::sync::mpsc;

const MESSAGES: u32 = 400;
const PAYLOAD: usize = 8 * 1024;

fn payload(i: u32) -> Vec<u8> {
    let mut p = vec![(i % 251) as u8; PAYLOAD];
    p[..4].copy_from_slice(&i.to_be_bytes());
    p
}

/// One MQTT packet: its first byte and its body.
fn read_packet(s: &mut TcpStream) -> (u8, Vec<u8>) {
    let mut first = [0u8; 1];
    s.read_exact(&mut first).unwrap();
    let (mut length, mut shift) = (0usize, 0);
    loop {
        let mut b = [0u8; 1];
        s.read_exact(&mut b).unwrap();
        length |= usize::from(b[0] & 0x7f) << shift;
        shift += 7;
        if b[0] & 0x80 == 0 {
            break;
        }
    }
    let mut body = vec![0; length];
    s.read_exact(&mut body).unwrap();
    (first[0], body)
}

/// Accepts one device, acknowledges its CONNECT, reads nothing for `stall`,
/// then checks and acknowledges every PUBLISH until DISCONNECT. Returns the
/// message numbers in the order they arrived.
fn stalling_broker(listener: TcpListener, stall: Duration) -> Vec<u32> {
    let (mut s, _) = listener.accept().unwrap();
    assert_eq!(read_packet(&mut s).0, 0x10, "CONNECT first");
    s.write_all(&[0x20, 2, 0, 0]).unwrap();
    thread::sleep(stall);
    let mut order = Vec::new();
    loop {
        let (first, body) = read_packet(&mut s);
        match first >> 4 {
            3 => {
                let topic_len = usize::from(u16::from_be_bytes([body[0], body[1]]));
                let pkid = &body[2 + topic_len..4 + topic_len];
                let message = &body[4 + topic_len..];
                let i = u32::from_be_bytes(message[..4].try_into().unwrap());
                assert_eq!(message, payload(i), "message {i} arrived whole");
                order.push(i);
                s.write_all(&[0x40, 2, pkid[0], pkid[1]]).unwrap();
            }
            14 => return order,
            other => panic!("unexpected packet type {other}"),
        }
    }
}

#[allow(unsafe_code)]
fn set_small_receive_buffer(listener: &TcpListener) {
    let small: libc::c_int = 4096;
    // SAFETY: a valid socket, and a pointer to a c_int with its size, as SO_RCVBUF takes.
    let set = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            std::ptr::from_ref(&small).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(set, 0, "{}", std::io::Error::last_os_error());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_socket_delays_messages_but_loses_and_garbles_none() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    // Accepted sockets inherit it: the device's socket fills long before the broker reads again.
    set_small_receive_buffer(&listener);
    let port = listener.local_addr().unwrap().port();
    let broker = thread::spawn(move || stalling_broker(listener, Duration::from_millis(500)));

    let endpoint = Endpoint::parse(&format!("mqtt://127.0.0.1:{port}")).unwrap();
    let options = DeviceOptions {
        client_id: "full-socket".to_string(),
        keep_alive: Duration::ZERO,
        clean_session: true,
        credentials: None,
        max_inflight: 1000,
        max_packet_bytes: 64 * 1024,
    };
    let (tx, mut events) = mpsc::unbounded_channel();
    let device = Device::connect(0, &endpoint, options, tx, Duration::from_secs(5))
        .await
        .unwrap();
    // Like the pacer: a device without room holds the next message back.
    let mut held_back = 0u32;
    for i in 0..MESSAGES {
        while !device.has_room() {
            held_back += 1;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let ticket = device.publish("full/0", 1, &payload(i)).unwrap();
        assert_eq!(ticket.seq, u64::from(i));
    }
    assert!(
        held_back > 0,
        "the socket never filled: the test did not test the slow path"
    );

    let mut acked = vec![false; MESSAGES as usize];
    let deadline = Instant::now() + Duration::from_secs(20);
    while acked.iter().any(|a| !a) {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = tokio::time::timeout(left, events.recv()).await.unwrap().unwrap();
        match event.kind {
            DeviceEventKind::Acked { seq, .. } => {
                assert!(!acked[seq as usize], "message {seq} acked twice");
                acked[seq as usize] = true;
            }
            DeviceEventKind::Connected { .. } => {}
            other => panic!("unexpected event {other:?}"),
        }
    }
    device.close(Duration::from_secs(1)).await;
    let order = broker.join().unwrap();
    assert_eq!(order, (0..MESSAGES).collect::<Vec<_>>(), "every message once, in order");
}
