//! Just enough IPv4 parsing to find a packet's flow: protocol, addresses and
//! TCP/UDP ports. Anything else (IPv6, ICMP, non-first fragments, truncated
//! headers) has no flow and gets the stage's default parameters.

use std::net::{Ipv4Addr, SocketAddrV4};

/// Transport protocol of a packet and its flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    Tcp,
    Udp,
}

/// The transport endpoints of one IPv4 TCP or UDP packet, as sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Endpoints {
    pub protocol: Protocol,
    pub source: SocketAddrV4,
    pub destination: SocketAddrV4,
}

const IPV4_MIN_HEADER: usize = 20;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

/// Endpoints of `packet` (an IP packet as read from a TUN without the
/// packet-information prefix), or `None` when it is not IPv4 TCP/UDP with
/// its ports present.
pub(crate) fn endpoints(packet: &[u8]) -> Option<Endpoints> {
    let first = *packet.first()?;
    if first >> 4 != 4 {
        return None;
    }
    let header_len = usize::from(first & 0x0f) * 4;
    if header_len < IPV4_MIN_HEADER || packet.len() < header_len + 4 {
        return None;
    }
    let fragment_offset = u16::from_be_bytes([packet[6], packet[7]]) & 0x1fff;
    if fragment_offset != 0 {
        return None;
    }
    let protocol = match packet[9] {
        PROTO_TCP => Protocol::Tcp,
        PROTO_UDP => Protocol::Udp,
        _ => return None,
    };
    let address = |at: usize| Ipv4Addr::new(packet[at], packet[at + 1], packet[at + 2], packet[at + 3]);
    let port = |at: usize| u16::from_be_bytes([packet[at], packet[at + 1]]);
    Some(Endpoints {
        protocol,
        source: SocketAddrV4::new(address(12), port(header_len)),
        destination: SocketAddrV4::new(address(16), port(header_len + 2)),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal IPv4 packet with a transport header carrying only ports.
    pub(crate) fn ipv4(protocol: u8, src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16) -> Vec<u8> {
        let mut packet = vec![0u8; 40];
        packet[0] = 0x45;
        packet[9] = protocol;
        packet[12..16].copy_from_slice(&src);
        packet[16..20].copy_from_slice(&dst);
        packet[20..22].copy_from_slice(&sport.to_be_bytes());
        packet[22..24].copy_from_slice(&dport.to_be_bytes());
        packet
    }

    #[test]
    fn parses_tcp_and_udp_ports() {
        let tcp = endpoints(&ipv4(6, [10, 77, 0, 1], 40000, [10, 77, 0, 2], 80)).expect("tcp");
        assert_eq!(tcp.protocol, Protocol::Tcp);
        assert_eq!(tcp.source, "10.77.0.1:40000".parse().expect("addr"));
        assert_eq!(tcp.destination, "10.77.0.2:80".parse().expect("addr"));
        let udp = endpoints(&ipv4(17, [1, 2, 3, 4], 5, [6, 7, 8, 9], 10)).expect("udp");
        assert_eq!(udp.protocol, Protocol::Udp);
    }

    #[test]
    fn honours_ip_options_in_header_length() {
        let mut packet = vec![0u8; 48];
        packet[0] = 0x46; // 24-byte header
        packet[9] = 6;
        packet[24..26].copy_from_slice(&1234u16.to_be_bytes());
        packet[26..28].copy_from_slice(&80u16.to_be_bytes());
        let e = endpoints(&packet).expect("tcp with options");
        assert_eq!(e.source.port(), 1234);
        assert_eq!(e.destination.port(), 80);
    }

    #[test]
    fn rejects_what_has_no_flow() {
        assert_eq!(endpoints(&ipv4(1, [1, 1, 1, 1], 0, [2, 2, 2, 2], 0)), None, "icmp");
        let mut v6 = ipv4(6, [1, 1, 1, 1], 1, [2, 2, 2, 2], 2);
        v6[0] = 0x60;
        assert_eq!(endpoints(&v6), None, "ipv6");
        let mut fragment = ipv4(6, [1, 1, 1, 1], 1, [2, 2, 2, 2], 2);
        fragment[7] = 8;
        assert_eq!(endpoints(&fragment), None, "non-first fragment");
        assert_eq!(endpoints(&[0x45, 0, 0]), None, "truncated");
        assert_eq!(endpoints(&[]), None, "empty");
    }
}
