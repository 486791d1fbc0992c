//! Errors of the MQTT fleet building blocks.

use exp_stats::SampleError;

/// Why a fleet component could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum MqttError {
    // ---- payloads and schedules (payload.rs, schedule.rs) ----
    /// A JSON payload names a sensor field we cannot generate.
    #[error("payload: unknown field `{name}` (known fields: {known})")]
    UnknownPayloadField { name: String, known: &'static str },
    /// A JSON payload names the same field twice (JSON keys must be unique).
    #[error("payload: field `{name}` is listed twice")]
    DuplicatePayloadField { name: String },
    /// The mandatory part of a JSON payload does not fit the requested size.
    #[error("payload: {size_bytes} bytes cannot hold the header and fields; the minimum is {minimum} bytes")]
    PayloadTooSmall { size_bytes: u64, minimum: u64 },
    /// A JSON payload larger than an MQTT packet can carry.
    #[error("payload: {size_bytes} bytes exceed the MQTT maximum of {maximum} bytes")]
    PayloadTooLarge { size_bytes: u64, maximum: u64 },
    /// A distribution in the plan cannot be sampled.
    #[error("{what}: {source}")]
    InvalidDistribution {
        what: &'static str,
        #[source]
        source: SampleError,
    },
    /// `first_send: uniform` spreads over one mean gap, which must be finite and ≥ 0.
    #[error("first send: uniform offsets need a gap distribution with a finite, non-negative mean; give `first_send` a distribution instead")]
    NoMeanGap,
    /// The pacer thread could not be started.
    #[error("pacer: cannot start its thread: {0}")]
    PacerThread(#[source] std::io::Error),
    /// The pacer thread panicked (a bug).
    #[error("pacer: its thread panicked")]
    PacerPanicked,

    // ---- brokers, URLs, devices and subscribers (broker.rs, url.rs, device.rs, subscriber.rs) ----
    /// No free loopback port could be found for the embedded broker.
    #[error("embedded broker: cannot find a free port on 127.0.0.1: {0}")]
    FreePort(#[source] std::io::Error),
    /// The embedded broker's thread could not be started.
    #[error("embedded broker: cannot start its thread: {0}")]
    BrokerThread(#[source] std::io::Error),
    /// The embedded broker never accepted a connection.
    #[error("embedded broker: not listening on {addr} after {waited_ms} ms ({attempts} attempt(s))")]
    BrokerNotReady {
        addr: std::net::SocketAddr,
        waited_ms: u64,
        attempts: u32,
    },
    /// A broker URL that is not `mqtt://host[:port]` or `mqtts://host[:port]`.
    #[error("broker url `{url}`: {reason}")]
    InvalidUrl { url: String, reason: &'static str },
    /// A feature this build does not have (e.g. `mqtts://`, which needs TLS).
    #[error("{what} is not supported by this build: {why}")]
    Unsupported { what: &'static str, why: &'static str },
    /// A client did not get a CONNACK in time.
    #[error("client `{client_id}`: no CONNACK from {endpoint} within {waited_ms} ms (last error: {last_error})")]
    ConnectTimeout {
        client_id: String,
        endpoint: String,
        waited_ms: u64,
        last_error: String,
    },
    /// The broker refused the connection (bad credentials, client id rejected, ...).
    #[error("client `{client_id}`: connection refused by the broker: {reason}")]
    ConnectRefused { client_id: String, reason: String },
    /// The client was closed; nothing more can be published.
    #[error("client `{client_id}` is closed")]
    Closed { client_id: String },
    /// Client options rumqttc would reject (it panics on some of them, so we check first).
    #[error("client `{client_id}`: {reason}")]
    InvalidClientOptions { client_id: String, reason: &'static str },
    /// A QoS other than 0, 1 or 2.
    #[error("invalid QoS {0} (expected 0, 1 or 2)")]
    InvalidQos(u8),
    /// The subscriber could not subscribe.
    #[error("subscriber `{client_id}`: cannot subscribe to `{filter}`: {reason}")]
    Subscribe {
        client_id: String,
        filter: String,
        reason: String,
    },
}
