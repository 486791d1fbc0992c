//! Errors of the MQTT fleet building blocks.

use std::path::PathBuf;

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
    /// The embedded broker cannot listen on its address.
    #[error("embedded broker: cannot listen on {addr}: {source}")]
    BrokerListen {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// A broker URL that is not `mqtt://host[:port]` or `mqtts://host[:port]`.
    #[error("broker url `{url}`: {reason}")]
    InvalidUrl { url: String, reason: &'static str },
    /// An `mqtts://` endpoint without a TLS configuration (see `Endpoint::with_tls`).
    #[error("{endpoint}: TLS is not configured for this endpoint (build one with `Tls::load`)")]
    TlsNotConfigured { endpoint: String },
    /// A client did not get a CONNACK in time.
    #[error("client `{client_id}`: no CONNACK from {endpoint} within {waited_ms} ms (last error: {last_error})")]
    ConnectTimeout {
        client_id: String,
        endpoint: String,
        waited_ms: u64,
        last_error: String,
    },
    /// The TLS handshake failed in a way retrying cannot fix (certificate not trusted,
    /// client certificate missing or rejected).
    #[error("client `{client_id}`: TLS with {endpoint} failed: {reason}")]
    TlsHandshake {
        client_id: String,
        endpoint: String,
        reason: String,
    },
    /// The broker refused the connection (bad credentials, client id rejected, ...).
    #[error("client `{client_id}`: connection refused by the broker: {reason}")]
    ConnectRefused { client_id: String, reason: String },
    /// The client was closed; nothing more can be published.
    #[error("client `{client_id}` is closed")]
    Closed { client_id: String },
    /// Client options no client can work with (rumqttc would even panic on some).
    #[error("client `{client_id}`: {reason}")]
    InvalidClientOptions { client_id: String, reason: &'static str },
    /// A QoS other than 0, 1 or 2.
    #[error("invalid QoS {0} (expected 0, 1 or 2)")]
    InvalidQos(u8),
    /// The broker published no version on `topic` in time (version.rs).
    #[error("nothing on {topic} within {waited_ms} ms")]
    NoVersion { topic: &'static str, waited_ms: u128 },
    /// The subscriber could not subscribe.
    #[error("subscriber `{client_id}`: cannot subscribe to `{filter}`: {reason}")]
    Subscribe {
        client_id: String,
        filter: String,
        reason: String,
    },

    // ---- TLS files (tls.rs); `what` is the broker property naming the file ----
    // Contents are never quoted: a key file is a secret.
    /// A certificate or key file cannot be read.
    #[error("{what} `{}`: cannot read it: {source}", path.display())]
    TlsFile {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file that is not well-formed PEM.
    #[error("{what} `{}`: not valid PEM: {reason}", path.display())]
    TlsPem {
        what: &'static str,
        path: PathBuf,
        reason: &'static str,
    },
    /// A certificate file without any `CERTIFICATE` section.
    #[error("{what} `{}`: no PEM certificate (`-----BEGIN CERTIFICATE-----`) in it; DER files must be converted to PEM first", path.display())]
    TlsNoCertificate { what: &'static str, path: PathBuf },
    /// A CA certificate that cannot be used as a trust anchor.
    #[error("{what} `{}`: certificate {index} of the file cannot be trusted as a CA: {reason}", path.display())]
    TlsBadCertificate {
        what: &'static str,
        path: PathBuf,
        index: usize,
        reason: String,
    },
    /// A key file without a private key section.
    #[error("client_key `{}`: no PEM private key (PKCS#8 `PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY`) in it", path.display())]
    TlsNoKey { path: PathBuf },
    /// The client certificate and key cannot be used together (unsupported or
    /// malformed key, key not matching the certificate, ...).
    #[error("client_cert `{}` with client_key `{}`: {reason}", cert.display(), key.display())]
    TlsClientAuth {
        cert: PathBuf,
        key: PathBuf,
        reason: String,
    },
    /// Only one of `client_cert` and `client_key` is given.
    #[error("`{given}` is set but `{missing}` is not: mutual TLS needs both (or neither)")]
    TlsHalfClientAuth { given: &'static str, missing: &'static str },
    /// No `ca_file`, and no usable CA certificate in the system's store.
    #[error("no `ca_file` is set and the system has no usable CA certificates ({detail})")]
    TlsNoSystemRoots { detail: String },
    /// The TLS configuration could not be built (should not happen with the ring provider).
    #[error("TLS configuration: {0}")]
    TlsConfig(String),
}
