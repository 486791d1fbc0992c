//! The flow registry shared by the replay and the forwarder: the initiator
//! registers each connection's 5-tuple with its RTT and loss rates before it
//! connects, and the forwarder looks every packet up here.

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::sync::{PoisonError, RwLock};
use std::time::Duration;

use super::packet::{Endpoints, Protocol};
use super::EmulateError;

/// Which way a packet travels through the stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the initiator's namespace to the acceptor's.
    ToAcceptor,
    /// From the acceptor's namespace back to the initiator's.
    ToInitiator,
}

/// A flow as the initiator sees it: its own address and port, and the
/// acceptor's. Packets in both directions map to the same key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub protocol: Protocol,
    pub initiator: SocketAddrV4,
    pub acceptor: SocketAddrV4,
}

impl FlowKey {
    /// The key of a packet travelling in `direction` between `endpoints`.
    pub(crate) fn of_packet(direction: Direction, endpoints: &Endpoints) -> FlowKey {
        let (initiator, acceptor) = match direction {
            Direction::ToAcceptor => (endpoints.source, endpoints.destination),
            Direction::ToInitiator => (endpoints.destination, endpoints.source),
        };
        FlowKey {
            protocol: endpoints.protocol,
            initiator,
            acceptor,
        }
    }
}

/// What the stage applies to one flow: the round-trip time it adds (half in
/// each direction) and the loss rate of each direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowParams {
    pub rtt: Duration,
    /// Probability in [0, 1] that a packet towards the acceptor is dropped.
    pub loss_to_acceptor: f64,
    /// Probability in [0, 1] that a packet towards the initiator is dropped.
    pub loss_to_initiator: f64,
}

impl FlowParams {
    /// A lossless flow with round-trip time `rtt`.
    pub fn with_rtt(rtt: Duration) -> FlowParams {
        FlowParams {
            rtt,
            loss_to_acceptor: 0.0,
            loss_to_initiator: 0.0,
        }
    }

    /// The delay added in each direction: half the RTT (the odd nanosecond,
    /// if any, goes towards the initiator so the two halves add up exactly).
    pub fn one_way_delay(&self, direction: Direction) -> Duration {
        let half = self.rtt / 2;
        match direction {
            Direction::ToAcceptor => half,
            Direction::ToInitiator => self.rtt - half,
        }
    }

    /// The loss rate applied to packets travelling in `direction`.
    pub fn loss(&self, direction: Direction) -> f64 {
        match direction {
            Direction::ToAcceptor => self.loss_to_acceptor,
            Direction::ToInitiator => self.loss_to_initiator,
        }
    }

    /// Rejects loss rates outside [0, 1] (and NaN).
    pub fn validate(&self) -> Result<(), EmulateError> {
        for (name, loss) in [
            ("loss_to_acceptor", self.loss_to_acceptor),
            ("loss_to_initiator", self.loss_to_initiator),
        ] {
            if !(0.0..=1.0).contains(&loss) {
                return Err(EmulateError::InvalidConfig(format!(
                    "{name} must be within [0, 1], got {loss}"
                )));
            }
        }
        Ok(())
    }
}

/// 5-tuple → parameters, read once per forwarded packet. Registration is
/// rare (once per connection) and lookups are many, so a read-write lock
/// over a hash map is enough: readers never wait for each other.
#[derive(Debug, Default)]
pub struct FlowTable {
    flows: RwLock<HashMap<FlowKey, FlowParams>>,
}

impl FlowTable {
    pub fn new() -> FlowTable {
        FlowTable::default()
    }

    /// Registers (or replaces) a flow's parameters. Call it after binding the
    /// initiator's socket and before connecting, so the handshake is delayed
    /// like the rest of the connection.
    pub fn register(&self, key: FlowKey, params: FlowParams) -> Result<(), EmulateError> {
        params.validate()?;
        self.flows
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, params);
        Ok(())
    }

    /// Forgets a flow (e.g. when its connection has closed), returning its
    /// parameters if it was registered.
    pub fn unregister(&self, key: &FlowKey) -> Option<FlowParams> {
        self.flows.write().unwrap_or_else(PoisonError::into_inner).remove(key)
    }

    /// The parameters registered for `key`.
    pub fn get(&self, key: &FlowKey) -> Option<FlowParams> {
        self.flows
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .copied()
    }

    /// Number of registered flows.
    pub fn len(&self) -> usize {
        self.flows.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoints(source: &str, destination: &str) -> Endpoints {
        Endpoints {
            protocol: Protocol::Tcp,
            source: source.parse().expect("addr"),
            destination: destination.parse().expect("addr"),
        }
    }

    #[test]
    fn both_directions_of_a_packet_find_the_registered_flow() {
        let table = FlowTable::new();
        let key = FlowKey {
            protocol: Protocol::Tcp,
            initiator: "10.77.0.1:40000".parse().expect("addr"),
            acceptor: "10.77.0.2:80".parse().expect("addr"),
        };
        let params = FlowParams::with_rtt(Duration::from_millis(20));
        table.register(key, params).expect("valid");
        let out = endpoints("10.77.0.1:40000", "10.77.0.2:80");
        let back = endpoints("10.77.0.2:80", "10.77.0.1:40000");
        assert_eq!(
            table.get(&FlowKey::of_packet(Direction::ToAcceptor, &out)),
            Some(params)
        );
        assert_eq!(
            table.get(&FlowKey::of_packet(Direction::ToInitiator, &back)),
            Some(params)
        );
        // The same packet read as travelling the other way is another flow.
        assert_eq!(table.get(&FlowKey::of_packet(Direction::ToInitiator, &out)), None);
        assert_eq!(table.unregister(&key), Some(params));
        assert!(table.is_empty());
    }

    #[test]
    fn one_way_delays_add_up_to_the_rtt() {
        let params = FlowParams::with_rtt(Duration::from_nanos(5_000_001));
        let sum = params.one_way_delay(Direction::ToAcceptor) + params.one_way_delay(Direction::ToInitiator);
        assert_eq!(sum, params.rtt);
    }

    #[test]
    fn rejects_loss_outside_unit_interval() {
        let table = FlowTable::new();
        let key = FlowKey {
            protocol: Protocol::Udp,
            initiator: "10.0.0.1:1".parse().expect("addr"),
            acceptor: "10.0.0.2:2".parse().expect("addr"),
        };
        for loss in [-0.1, 1.5, f64::NAN] {
            let params = FlowParams {
                loss_to_initiator: loss,
                ..FlowParams::with_rtt(Duration::ZERO)
            };
            assert!(table.register(key, params).is_err(), "{loss}");
        }
    }
}
