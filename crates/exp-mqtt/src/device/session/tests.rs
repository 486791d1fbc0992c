#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use rumqttc::{Packet, QoS};

use super::*;

const MAX_PACKET: usize = 1 << 20;

/// Frames are checked with rumqttc's own decoder, not ours.
fn decode(frame: &Bytes) -> Packet {
    let mut buf = BytesMut::from(&frame[..]);
    let packet = Packet::read(&mut buf, MAX_PACKET).unwrap();
    assert!(buf.is_empty(), "one frame, one packet");
    packet
}

fn publish_of(frame: &Bytes) -> rumqttc::Publish {
    match decode(frame) {
        Packet::Publish(p) => p,
        other => panic!("not a PUBLISH: {other:?}"),
    }
}

fn sent(s: &mut Session) -> Out {
    let mut out = Out::default();
    s.take_sendable(Instant::now(), &mut out);
    out
}

fn acked_seq(event: Option<DeviceEventKind>) -> Option<u64> {
    match event {
        Some(DeviceEventKind::Acked { seq, .. }) => Some(seq),
        _ => None,
    }
}

#[test]
fn qos1_frames_decode_with_their_packet_ids_and_acks_close_them() {
    let mut s = Session::new(10, MAX_PACKET);
    assert_eq!(s.queue("plant/7/telemetry", 1, b"hello").unwrap(), 0);
    assert_eq!(s.queue("plant/7/telemetry", 1, b"world").unwrap(), 1);
    let out = sent(&mut s);
    assert!(out.events.is_empty(), "QoS 1 is done at its ack, not when written");
    let p: Vec<_> = out.frames.iter().map(publish_of).collect();
    assert_eq!((p[0].pkid, p[1].pkid), (1, 2));
    assert_eq!(p[0].topic, "plant/7/telemetry");
    assert_eq!((p[0].qos, p[0].dup, p[0].retain), (QoS::AtLeastOnce, false, false));
    assert_eq!(&p[1].payload[..], b"world");
    assert_eq!(s.outstanding(), 2);

    let now = Instant::now();
    assert_eq!(acked_seq(s.on_puback(2, now)), Some(1), "out of order is fine");
    assert_eq!(s.on_puback(2, now), None, "a duplicate ack is ignored");
    assert_eq!(acked_seq(s.on_puback(1, now)), Some(0));
    assert_eq!(s.outstanding(), 0);
}

#[test]
fn qos0_is_written_not_held() {
    let mut s = Session::new(10, MAX_PACKET);
    s.queue("t", 0, b"x").unwrap();
    let out = sent(&mut s);
    assert!(matches!(out.events[..], [DeviceEventKind::Written { seq: 0, .. }]));
    assert_eq!(publish_of(&out.frames[0]).qos, QoS::AtMostOnce);
    assert_eq!(s.outstanding(), 0);
}

#[test]
fn the_window_holds_messages_back_until_acks_free_it() {
    let mut s = Session::new(2, MAX_PACKET);
    for _ in 0..3 {
        s.queue("t", 1, b"x").unwrap();
    }
    assert_eq!(sent(&mut s).frames.len(), 2);
    assert_eq!(s.outstanding(), 3);
    assert!(sent(&mut s).frames.is_empty());
    s.on_puback(1, Instant::now());
    let out = sent(&mut s);
    assert_eq!(publish_of(&out.frames[0]).pkid, 3);
}

#[test]
fn qos2_releases_on_pubrec_and_completes_on_pubcomp() {
    let mut s = Session::new(10, MAX_PACKET);
    s.queue("t", 2, b"x").unwrap();
    let out = sent(&mut s);
    assert_eq!(publish_of(&out.frames[0]).qos, QoS::ExactlyOnce);
    assert_eq!(
        s.on_pubcomp(1, Instant::now()),
        None,
        "PUBCOMP before PUBREC means nothing"
    );
    let rel = s.on_pubrec(1);
    assert!(matches!(decode(&rel), Packet::PubRel(r) if r.pkid == 1));
    assert_eq!(acked_seq(s.on_pubcomp(1, Instant::now())), Some(0));
    // The protocol wants a PUBREL even for an id we no longer know.
    assert!(matches!(decode(&s.on_pubrec(9)), Packet::PubRel(r) if r.pkid == 9));
}

#[test]
fn a_resumed_session_retransmits_with_dup_and_a_lost_one_drops_what_was_in_flight() {
    let mut s = Session::new(10, MAX_PACKET);
    for _ in 0..2 {
        s.queue("t", 2, b"payload").unwrap();
    }
    sent(&mut s);
    s.on_pubrec(2);
    s.queue("t", 1, b"later").unwrap(); // queued, not yet written

    let mut out = Out::default();
    s.on_connack(true, Instant::now(), &mut out);
    assert!(out.events.is_empty());
    let first = publish_of(&out.frames[0]);
    assert!(first.dup && first.pkid == 1 && &first.payload[..] == b"payload");
    assert!(matches!(decode(&out.frames[1]), Packet::PubRel(r) if r.pkid == 2));

    let mut out = Out::default();
    s.on_connack(false, Instant::now(), &mut out);
    assert!(out.frames.is_empty());
    let lost: Vec<_> = out
        .events
        .iter()
        .map(|e| match e {
            DeviceEventKind::Lost {
                seq,
                reason: LostReason::SessionLost,
                ..
            } => *seq,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(lost, [0, 1]);
    assert_eq!(s.outstanding(), 1, "the queued message still goes out");
    assert_eq!(publish_of(&sent(&mut s).frames[0]).pkid, 3);
}

#[test]
fn packet_ids_wrap_and_skip_ids_still_in_flight() {
    let mut s = Session::new(100, MAX_PACKET);
    s.queue("t", 1, b"old").unwrap();
    sent(&mut s); // pkid 1 stays in flight
    for _ in 2..=u16::MAX {
        s.queue("t", 1, b"x").unwrap();
        let out = sent(&mut s);
        let pkid = publish_of(&out.frames[0]).pkid;
        s.on_puback(pkid, Instant::now());
    }
    s.queue("t", 1, b"wrapped").unwrap();
    assert_eq!(publish_of(&sent(&mut s).frames[0]).pkid, 2);
}

#[test]
fn remaining_lengths_decode_across_their_byte_boundaries() {
    let mut s = Session::new(10, MAX_PACKET);
    // Remaining length = 2 + topic + 2 + payload: 127, 128, 16,383, 16,384.
    for remaining in [127usize, 128, 16_383, 16_384] {
        let payload = vec![7u8; remaining - 5];
        s.queue("t", 1, &payload).unwrap();
        let out = sent(&mut s);
        let p = publish_of(&out.frames[0]);
        assert_eq!(p.payload.len(), remaining - 5);
        s.on_puback(p.pkid, Instant::now());
    }
}

#[test]
fn messages_that_cannot_be_queued_are_lost_with_a_reason_and_keep_their_number() {
    let mut s = Session::new(1, 64);
    let (seq, reason) = s.queue("t", 1, &[0; 100]).unwrap_err();
    assert_eq!(seq, 0);
    assert!(
        matches!(&reason, LostReason::NotQueued(r) if r.contains("above the largest")),
        "{reason:?}"
    );
    for _ in 0..16 {
        s.queue("t", 1, b"x").unwrap();
    }
    let (seq, reason) = s.queue("t", 1, b"x").unwrap_err();
    assert_eq!(seq, 17);
    assert!(
        matches!(&reason, LostReason::NotQueued(r) if r.contains("queue is full")),
        "{reason:?}"
    );
    assert_eq!(s.drain_all(), (1..=16).collect::<Vec<_>>());
    assert_eq!(s.outstanding(), 0);
}

#[test]
fn an_ack_keeps_the_time_the_message_was_written() {
    let mut s = Session::new(10, MAX_PACKET);
    s.queue("t", 1, b"x").unwrap();
    let written = Instant::now();
    s.take_sendable(written, &mut Out::default());
    let acked = written + Duration::from_millis(3);
    match s.on_puback(1, acked) {
        Some(DeviceEventKind::Acked {
            written_at, acked_at, ..
        }) => assert_eq!((written_at, acked_at), (written, acked)),
        other => panic!("{other:?}"),
    }
}
