//! What devices and the subscriber share: their settings and how they are
//! checked, the subscriber's rumqttc options (plain TCP or TLS), reconnect
//! backoff, and how a first connection attempt is given up early.

use std::time::Duration;

use rumqttc::{MqttOptions, NetworkOptions};

use crate::url::{Endpoint, Scheme};
use crate::MqttError;

/// Per-device client settings (from the plan's `fleet` block).
#[derive(Debug, Clone)]
pub struct DeviceOptions {
    pub client_id: String,
    /// Rounded down to whole seconds (MQTT's unit); zero disables keep-alive.
    pub keep_alive: Duration,
    pub clean_session: bool,
    /// Username and password, already read from the environment.
    pub credentials: Option<(String, String)>,
    pub max_inflight: u16,
    pub max_packet_bytes: usize,
}

/// Checks what a device or the subscriber cannot work with (rumqttc would
/// even panic on some of it).
pub(crate) fn validate(endpoint: &Endpoint, o: &DeviceOptions) -> Result<(), MqttError> {
    let invalid = |reason| MqttError::InvalidClientOptions {
        client_id: o.client_id.clone(),
        reason,
    };
    if o.client_id.is_empty() {
        return Err(invalid("the client id is empty"));
    }
    if o.max_inflight == 0 {
        return Err(invalid("max_inflight must be at least 1"));
    }
    if endpoint.scheme == Scheme::Mqtts && endpoint.tls.is_none() {
        return Err(MqttError::TlsNotConfigured {
            endpoint: endpoint.to_string(),
        });
    }
    Ok(())
}

/// rumqttc options (for the subscriber), checked first.
pub(crate) fn mqtt_options(endpoint: &Endpoint, o: &DeviceOptions) -> Result<MqttOptions, MqttError> {
    validate(endpoint, o)?;
    let mut opts = MqttOptions::new(o.client_id.clone(), endpoint.host.clone(), endpoint.port);
    if let Some(tls) = &endpoint.tls {
        // rumqttc verifies the broker's certificate against the host given above.
        opts.set_transport(tls.transport());
    }
    opts.set_keep_alive(Duration::from_secs(o.keep_alive.as_secs()));
    opts.set_clean_session(o.clean_session);
    opts.set_inflight(o.max_inflight);
    // Incoming and outgoing; headers add a little on top of the payload.
    let packet = o.max_packet_bytes.saturating_add(1024);
    opts.set_max_packet_size(packet, packet);
    if let Some((user, pass)) = &o.credentials {
        opts.set_credentials(user.clone(), pass.clone());
    }
    Ok(opts)
}

pub(crate) fn network_options() -> NetworkOptions {
    let mut net = NetworkOptions::new();
    // Latency is what we measure: do not let Nagle hold small publishes back.
    net.set_tcp_nodelay(true);
    net.set_connection_timeout(5);
    net
}

/// Why a first connection attempt ended without waiting for the timeout.
pub(crate) enum Refused {
    /// The broker said no (CONNACK or SUBACK).
    Broker(String),
    /// A TLS failure retrying cannot fix (see `tls::rejection`).
    Tls(String),
}

/// Reconnect backoff: quick first retries (a restarted broker is back within ~1 s), capped.
pub(crate) const BACKOFF_MIN: Duration = Duration::from_millis(50);
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(2);
