//! The embedded broker: rumqttd 0.20 started in-process on 127.0.0.1.
//!
//! rumqttd's limits shape this module:
//! - It cannot bind port 0 and report the port, so a free port is chosen
//!   first (bind `127.0.0.1:0`, read the port, release it). Another process
//!   can take the port in between; rumqttd then fails to bind, its server
//!   thread ends, and `start` retries with a new port a few times.
//! - It has no shutdown API. The broker runs on its own threads (ours, plus
//!   the router and server threads rumqttd spawns) until the process exits.
//!   That is fine for `expc run` (one process per run); tests that start
//!   several brokers simply leave them running until the test binary exits.
//!   A failed start also leaks rumqttd's router thread for the same reason.
//! - It logs through `tracing`. We never install a global subscriber (that
//!   belongs to the application); without one, its events are discarded, and
//!   expc installs neither a tracing subscriber nor a `log` logger.
//! - It never sets TCP_NODELAY on accepted sockets, so small broker→client
//!   packets (acks, forwarded publishes) may wait for Nagle's algorithm; the
//!   latencies it reports include that, unlike with Mosquitto.
//! - It drops connections when thousands connect in one burst; ramping
//!   connects (~400/s held 4,000 devices) is the pacer's job, not ours.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use rumqttd::{Broker, Config, ConnectionSettings, RouterConfig, ServerSettings};

use crate::url::Endpoint;
use crate::MqttError;

/// Sizing of the embedded broker.
#[derive(Debug, Clone)]
pub struct BrokerOptions {
    /// Port to listen on; `None` picks a free one.
    pub port: Option<u16>,
    /// Clients the broker admits at once (devices plus subscribers plus slack).
    pub max_connections: usize,
    /// Largest PUBLISH payload, in bytes.
    pub max_payload_bytes: usize,
    /// Unacknowledged QoS 1/2 messages per connection.
    pub max_inflight: usize,
    /// How long to wait for the listener to accept a probe connection.
    pub ready_timeout: Duration,
}

impl BrokerOptions {
    /// Options sized for `devices` clients with the plan's inflight and packet limits.
    pub fn for_fleet(devices: u32, max_inflight: u16, max_packet_bytes: u64) -> Self {
        BrokerOptions {
            port: None,
            // Subscribers, the readiness probe and reconnecting clients whose
            // old connection the broker has not reaped yet need headroom.
            max_connections: (devices as usize).saturating_mul(2).saturating_add(64),
            max_payload_bytes: usize::try_from(max_packet_bytes).unwrap_or(usize::MAX),
            max_inflight: usize::from(max_inflight.max(1)),
            ready_timeout: Duration::from_secs(10),
        }
    }
}

impl Default for BrokerOptions {
    fn default() -> Self {
        BrokerOptions::for_fleet(1000, 100, 256 * 1024)
    }
}

/// A running embedded broker. Dropping it does not stop the broker (see the module docs).
#[derive(Debug)]
pub struct EmbeddedBroker {
    addr: SocketAddr,
}

/// Attempts at finding a port rumqttd can bind; a lost race is rare, so a few suffice.
const PORT_ATTEMPTS: u32 = 4;

impl EmbeddedBroker {
    /// Starts rumqttd on 127.0.0.1 and waits until it accepts connections.
    pub fn start(options: BrokerOptions) -> Result<EmbeddedBroker, MqttError> {
        let started = Instant::now();
        // A fixed port cannot be retried elsewhere: one attempt only.
        let attempts = if options.port.is_some() { 1 } else { PORT_ATTEMPTS };
        let mut last_addr = SocketAddr::from((Ipv4Addr::LOCALHOST, options.port.unwrap_or(0)));
        for attempt in 1..=attempts {
            let port = match options.port {
                Some(p) => p,
                None => free_port()?,
            };
            let addr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
            last_addr = addr;
            let config = config(addr, &options);
            let handle = thread::Builder::new()
                .name(format!("exp-mqtt-broker-{port}"))
                .spawn(move || {
                    let mut broker = Broker::new(config);
                    // Returns only when every server thread has ended, e.g. after a
                    // failed bind; the error is visible to `start` as a finished thread.
                    let _ = broker.start();
                })
                .map_err(MqttError::BrokerThread)?;
            let deadline = started + options.ready_timeout;
            loop {
                if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                    return Ok(EmbeddedBroker { addr });
                }
                if handle.is_finished() || Instant::now() >= deadline {
                    break;
                }
                thread::sleep(Duration::from_millis(10));
            }
            if Instant::now() >= deadline {
                return Err(not_ready(addr, started, attempt));
            }
        }
        Err(not_ready(last_addr, started, attempts))
    }

    /// The address the broker listens on (always 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The broker as an `mqtt://` endpoint for devices and subscribers.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint::tcp(self.addr.ip().to_string(), self.addr.port())
    }
}

fn not_ready(addr: SocketAddr, started: Instant, attempts: u32) -> MqttError {
    let waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    MqttError::BrokerNotReady {
        addr,
        waited_ms,
        attempts,
    }
}

/// A port that was free a moment ago (the race is documented in the module docs).
pub fn free_port() -> Result<u16, MqttError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(MqttError::FreePort)?;
    Ok(listener.local_addr().map_err(MqttError::FreePort)?.port())
}

fn config(addr: SocketAddr, options: &BrokerOptions) -> Config {
    let connections = ConnectionSettings {
        // u16 milliseconds: the time a client has to send CONNECT after TCP connect.
        connection_timeout_ms: 10_000,
        max_payload_size: options.max_payload_bytes,
        max_inflight_count: options.max_inflight,
        auth: None,
        external_auth: None,
        // Subscribers may subscribe to filters nobody configured in advance.
        dynamic_filters: true,
    };
    let server = ServerSettings {
        name: "v4-1".to_string(),
        listen: addr,
        tls: None,
        // rumqttd sleeps this long after every accept; connect pacing is done by the client side.
        next_connection_delay_ms: 0,
        connections,
    };
    let router = RouterConfig {
        max_connections: options.max_connections,
        // Per-connection outgoing queue; a subscriber receiving the whole fleet needs room.
        max_outgoing_packet_count: 200_000,
        // Per-topic commit log kept in memory: 16 segments of 4 MiB (or one payload).
        max_segment_size: options.max_payload_bytes.max(4 * 1024 * 1024),
        max_segment_count: 16,
        custom_segment: None,
        initialized_filters: None,
        shared_subscriptions_strategy: Default::default(),
    };
    Config {
        id: 0,
        router,
        v4: Some(HashMap::from([("v4-1".to_string(), server)])),
        v5: None,
        ws: None,
        cluster: None,
        console: None,
        bridge: None,
        prometheus: None,
        metrics: None,
    }
}
