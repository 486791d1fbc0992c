#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use rumqttc::mqttbytes::v4::{Packet, PubAck, PubComp, PubRec, PubRel, Publish, Subscribe};
use rumqttc::mqttbytes::QoS;

use super::{Limits, Link, Next, Refusal, Router};

const LIMITS: Limits = Limits {
    max_connections: 3,
    max_inflight: 2,
    max_queued: 4,
};

fn connect(router: &mut Router, id: &str, clean: bool, link: u64) -> Arc<Link> {
    let link = Link::new(link);
    router.attach(id.to_string(), clean, None, &link).unwrap();
    link
}

/// Every packet `link`'s writer would send now.
fn output(router: &mut Router, id: &str, link: &Link) -> Vec<Packet> {
    let mut out = BytesMut::new();
    assert!(router.take_output(id, link.id, &mut out));
    let mut packets = Vec::new();
    while !out.is_empty() {
        packets.push(Packet::read(&mut out, 1 << 20).unwrap());
    }
    packets
}

fn publish(topic: &str, qos: QoS, pkid: u16) -> Packet {
    let mut p = Publish::new(topic, qos, vec![7u8; 3]);
    p.pkid = pkid;
    Packet::Publish(p)
}

fn subscribe(router: &mut Router, id: &str, link: &Link, filter: &str, qos: QoS) {
    let next = router.incoming(id, link.id, Packet::Subscribe(Subscribe::new(filter, qos)));
    assert_eq!(next, Ok(Next::Continue));
    output(router, id, link);
}

#[test]
fn delivers_at_the_lower_qos_with_window_and_acks() {
    let mut r = Router::new(LIMITS);
    let sub = connect(&mut r, "sub", true, 1);
    let dev = connect(&mut r, "dev", true, 2);
    assert!(matches!(output(&mut r, "sub", &sub)[..], [Packet::ConnAck(_)]));
    subscribe(&mut r, "sub", &sub, "fleet/+/t", QoS::AtLeastOnce);
    for pkid in 1..=3 {
        r.incoming("dev", 2, publish("fleet/d1/t", QoS::ExactlyOnce, pkid))
            .unwrap();
    }
    r.incoming("dev", 2, publish("other", QoS::AtLeastOnce, 4)).unwrap();
    let acks = output(&mut r, "dev", &dev);
    assert_eq!(acks.len(), 5, "CONNACK, three PUBRECs, one PUBACK: {acks:?}");
    // Window 2: two QoS 1 deliveries, the third after an ack.
    let first = output(&mut r, "sub", &sub);
    assert_eq!(first.len(), 2);
    assert!(first
        .iter()
        .all(|p| matches!(p, Packet::Publish(p) if p.qos == QoS::AtLeastOnce && p.topic == "fleet/d1/t")));
    assert!(output(&mut r, "sub", &sub).is_empty());
    let Packet::Publish(p) = &first[0] else { unreachable!() };
    r.incoming("sub", 1, Packet::PubAck(PubAck::new(p.pkid))).unwrap();
    assert_eq!(output(&mut r, "sub", &sub).len(), 1);
}

#[test]
fn qos2_retransmission_is_routed_once() {
    let mut r = Router::new(LIMITS);
    let sub = connect(&mut r, "sub", true, 1);
    let dev = connect(&mut r, "dev", true, 2);
    subscribe(&mut r, "sub", &sub, "#", QoS::ExactlyOnce);
    r.incoming("dev", 2, publish("a", QoS::ExactlyOnce, 9)).unwrap();
    r.incoming("dev", 2, publish("a", QoS::ExactlyOnce, 9)).unwrap();
    r.incoming("dev", 2, Packet::PubRel(PubRel::new(9))).unwrap();
    let to_dev = output(&mut r, "dev", &dev);
    assert!(matches!(
        to_dev[1..],
        [Packet::PubRec(_), Packet::PubRec(_), Packet::PubComp(_)]
    ));
    let delivered = output(&mut r, "sub", &sub);
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    // The subscriber's side of QoS 2: PUBREC → PUBREL, PUBCOMP frees the slot.
    let Packet::Publish(p) = &delivered[0] else {
        unreachable!()
    };
    r.incoming("sub", 1, Packet::PubRec(PubRec::new(p.pkid))).unwrap();
    assert!(matches!(output(&mut r, "sub", &sub)[..], [Packet::PubRel(_)]));
    r.incoming("sub", 1, Packet::PubComp(PubComp::new(p.pkid))).unwrap();
}

#[test]
fn persistent_session_keeps_filters_and_resends_unacked_with_dup() {
    let mut r = Router::new(LIMITS);
    let sub = connect(&mut r, "sub", false, 1);
    let _dev = connect(&mut r, "dev", true, 2);
    subscribe(&mut r, "sub", &sub, "a/#", QoS::AtLeastOnce);
    r.incoming("dev", 2, publish("a/1", QoS::AtLeastOnce, 1)).unwrap();
    assert_eq!(output(&mut r, "sub", &sub).len(), 1);
    r.detach("sub", 1, false);
    // Queued while away: QoS 1 yes, QoS 0 no.
    r.incoming("dev", 2, publish("a/2", QoS::AtLeastOnce, 2)).unwrap();
    r.incoming("dev", 2, publish("a/3", QoS::AtMostOnce, 0)).unwrap();
    let back = Link::new(3);
    r.attach("sub".into(), false, None, &back).unwrap();
    let packets = output(&mut r, "sub", &back);
    let [Packet::ConnAck(ack), Packet::Publish(resent), Packet::Publish(queued)] = &packets[..] else {
        panic!("{packets:?}")
    };
    assert!(ack.session_present);
    assert!(resent.dup && resent.topic == "a/1");
    assert!(!queued.dup && queued.topic == "a/2");
}

#[test]
fn clean_session_forgets_and_takeover_closes_the_old_link() {
    let mut r = Router::new(LIMITS);
    let old = connect(&mut r, "sub", false, 1);
    subscribe(&mut r, "sub", &old, "#", QoS::AtMostOnce);
    let new = connect(&mut r, "sub", true, 2);
    assert_eq!(r.incoming("sub", 1, Packet::PingReq), Ok(Next::Detached));
    assert!(!r.take_output("sub", 1, &mut BytesMut::new()));
    let packets = output(&mut r, "sub", &new);
    assert!(matches!(&packets[..], [Packet::ConnAck(a)] if !a.session_present));
    let _dev = connect(&mut r, "dev", true, 3);
    r.incoming("dev", 3, publish("x", QoS::AtMostOnce, 0)).unwrap();
    assert!(
        output(&mut r, "sub", &new).is_empty(),
        "the clean session has no filters"
    );
}

#[test]
fn limits_refuse_and_drop() {
    let mut r = Router::new(LIMITS);
    let sub = connect(&mut r, "sub", true, 1);
    connect(&mut r, "a", true, 2);
    connect(&mut r, "b", true, 3);
    assert_eq!(
        r.attach("c".into(), true, None, &Link::new(4)),
        Err(Refusal::ServerUnavailable)
    );
    assert_eq!(
        r.attach(String::new(), false, None, &Link::new(5)),
        Err(Refusal::IdentifierRejected)
    );
    subscribe(&mut r, "sub", &sub, "#", QoS::AtMostOnce);
    for _ in 0..10 {
        r.incoming("a", 2, publish("x", QoS::AtMostOnce, 0)).unwrap();
    }
    assert_eq!(r.dropped, 6, "a queue holds four");
    assert_eq!(output(&mut r, "sub", &sub).len(), 4);
}

#[test]
fn will_is_published_only_without_disconnect() {
    let mut r = Router::new(LIMITS);
    let sub = connect(&mut r, "sub", true, 1);
    subscribe(&mut r, "sub", &sub, "wills/#", QoS::AtMostOnce);
    for (id, link, graceful) in [("quiet", 2, true), ("gone", 3, false)] {
        let will = super::Message {
            topic: Arc::from(format!("wills/{id}")),
            payload: Bytes::from_static(b"bye"),
            qos: 0,
        };
        r.attach(id.into(), true, Some(will), &Link::new(link)).unwrap();
        r.detach(id, link, graceful);
    }
    let packets = output(&mut r, "sub", &sub);
    assert!(
        matches!(&packets[..], [Packet::Publish(p)] if p.topic == "wills/gone"),
        "{packets:?}"
    );
}

#[test]
fn invalid_publish_and_broker_packets_end_the_connection() {
    let mut r = Router::new(LIMITS);
    connect(&mut r, "dev", true, 1);
    assert!(r.incoming("dev", 1, publish("a/+", QoS::AtMostOnce, 0)).is_err());
    assert!(r.incoming("dev", 1, Packet::PingResp).is_err());
    assert_eq!(r.incoming("dev", 1, Packet::Disconnect), Ok(Next::Disconnect));
}
