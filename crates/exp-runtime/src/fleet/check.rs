//! A fleet's checks before a run (E1006, E1007), reached through
//! `kinds.rs`: the limits a compiled plan meets (QoS, its numbers' bounds,
//! a gap the pacer can keep) and its preflight (a broker it can reach and
//! hold): what would otherwise fail every trial, found before anything
//! starts.

use exp_diagnostics::limits::{MAX_PLAN_INTEGER, MIN_MEAN_GAP_NS};
use exp_diagnostics::{Code, Diagnostic};
use exp_mqtt::MqttError;
use exp_plan::{FirstSend, Fleet, Payload, Warmup};

use crate::findings::{out_of_bounds, shape, Finding, Host};

/// The most devices the embedded broker is trusted with: the largest fleet
/// it was measured with on the 2-core reference machine (10,000 devices
/// connecting at 1,000/s, 2 messages/s each, with and without a subscriber:
/// every device that had descriptors connected, nothing was lost). It runs
/// on one thread, beside the fleet's own.
pub const EMBEDDED_BROKER_MAX_DEVICES: u32 = 10000;

/// A fleet's QoS, numbers and gap.
pub(crate) fn limits(name: &str, fleet: &Fleet) -> Vec<Finding> {
    let mut problems = Vec::new();
    if fleet.qos > 2 {
        problems.push((
            format!("qos {name}"),
            Diagnostic::error(
                Code::E1006,
                format!("fleet `{name}`: QoS {} is not an MQTT level (0, 1 or 2)", fleet.qos),
            ),
        ));
    }
    problems.extend(out_of_bounds(Code::E1007, "fleet", name, fleet_numbers(fleet)));
    // A gap that cannot be sampled is reported by the fleet's own check.
    let mean = exp_stats::Sampler::new(&fleet.gap).ok().and_then(|s| s.mean());
    if let Some(mean) = mean.filter(|m| m.is_nan() || *m < MIN_MEAN_GAP_NS as f64) {
        problems.push((
            format!("gap {name}"),
            Diagnostic::error(
                Code::E0606,
                format!("fleet `{name}`: a device's mean gap is {mean:.0} ns, less than {MIN_MEAN_GAP_NS} ns"),
            )
            .help("for more load, add devices rather than shortening their gap"),
        ));
    }
    problems
}

/// A fleet's numbers with the bounds the language gives their properties
/// (exp-check's `registry/fleet.rs`): outside them the runtime would divide
/// by zero, overflow a duration or size a broker for nothing.
fn fleet_numbers(fleet: &Fleet) -> Vec<(&'static str, f64, (f64, f64))> {
    let ns = |n: u64| n as f64;
    let mut numbers = vec![
        ("devices", f64::from(fleet.devices), (1.0, 1e6)),
        ("connect_rate_per_s", fleet.connect_rate_per_s, (0.001, f64::MAX)),
        match fleet.warmup {
            Warmup::Ratio(ratio) => ("warmup.ratio", ratio, (0.0, 0.99)),
            Warmup::Ns(span) => ("warmup.ns", ns(span), (0.0, MAX_PLAN_INTEGER)),
        },
        ("keep_alive_ns", ns(fleet.keep_alive_ns), (1e9, 65535e9)),
        ("ack_timeout_ns", ns(fleet.ack_timeout_ns), (1e6, MAX_PLAN_INTEGER)),
        ("max_inflight", f64::from(fleet.broker.max_inflight), (1.0, 65535.0)),
        (
            "max_packet_bytes",
            ns(fleet.broker.max_packet_bytes),
            (1024.0, 268_435_455.0),
        ),
    ];
    if let Some(messages) = fleet.messages {
        numbers.push(("messages", ns(messages), (1.0, MAX_PLAN_INTEGER)));
    }
    if let Some(port) = fleet.broker.port {
        numbers.push(("port", f64::from(port), exp_plan::bounds::PORT));
    }
    numbers.extend(shape("gap.shape", &fleet.gap));
    if let FirstSend::Dist(offsets) = &fleet.first_send {
        numbers.extend(shape("first_send.shape", offsets));
    }
    match &fleet.payload {
        Payload::Json { size_bytes, .. } => {
            numbers.push(("payload.size_bytes", ns(*size_bytes), (1.0, MAX_PLAN_INTEGER)))
        }
        Payload::Raw { size } => numbers.extend(shape("payload.size.shape", size)),
    }
    numbers
}

/// The broker a fleet names must be usable: a URL this build can connect to
/// (with usable TLS files for `mqtts://`), credentials that are set, and a
/// fleet the embedded broker can hold. The broker is never a plan field,
/// so it is reached on a variant's first look only (a field of a million
/// values would otherwise connect a million times).
pub(crate) fn preflight(name: &str, fleet: &Fleet, host: &Host) -> Vec<Finding> {
    let mut found = Vec::new();
    match &fleet.broker.url {
        Some(_) if !host.first_look => {}
        // Builds the endpoint as a trial would, TLS configuration included, so a
        // missing or unusable certificate or key is reported here, naming the file.
        Some(url) => match super::broker::external(url, &fleet.broker) {
            Err(e) => found.push(broker_error(name, &e)),
            Ok(endpoint) => found.extend(unreachable(name, url, &endpoint)),
        },
        None if super::broker::tls_files(&fleet.broker) != exp_mqtt::TlsFiles::default() => found.push((
            format!("tls {name}"),
            Diagnostic::error(
                Code::E1006,
                format!("fleet `{name}` names TLS files, but the embedded broker speaks plain MQTT only"),
            )
            .help("give the broker an `mqtts://` url, or remove `ca_file`, `client_cert` and `client_key`"),
        )),
        None if fleet.devices > EMBEDDED_BROKER_MAX_DEVICES => found.push((
            format!("embedded {name}"),
            Diagnostic::error(
                Code::E1006,
                format!(
                    "fleet `{name}` has {} devices, more than the embedded broker was measured with ({EMBEDDED_BROKER_MAX_DEVICES})",
                    fleet.devices
                ),
            )
            .note("the embedded broker runs on one thread of expc's own process, beside the fleet")
            .help("point the fleet at an external broker: `broker { url = \"mqtt://host:1883\" }`"),
        )),
        None => {}
    }
    // Settings the checker cannot see through (a JSON payload too small for its fields, a gap
    // without a mean for uniform first sends) would otherwise fail every trial.
    let settings = exp_mqtt::PayloadGenerator::new(&fleet.payload, 0)
        .and_then(|payload| exp_mqtt::FleetSchedule::new(&fleet.gap, &fleet.first_send, 0).map(|_| payload));
    match settings {
        Err(e) => found.push((
            format!("settings {name}"),
            Diagnostic::error(Code::E1007, format!("fleet `{name}`: {e}"))
                .help("e.g. `payload = json(size = 256B, fields = [temperature, humidity])`"),
        )),
        Ok(payload) => found.extend(oversized(name, fleet, &payload)),
    }
    for var in [&fleet.broker.username_env, &fleet.broker.password_env]
        .into_iter()
        .flatten()
        .filter(|_| host.first_look)
    {
        if std::env::var_os(var).is_none() {
            // The name only: the value is a secret and never printed.
            found.push((
                format!("env {var}"),
                Diagnostic::error(
                    Code::E1006,
                    format!("fleet `{name}` reads broker credentials from `{var}`, which is not set"),
                )
                .help(format!("export {var}=... before running")),
            ));
        }
    }
    found
}

/// Payloads the devices could not send: a message (payload, topic and a
/// few header bytes) longer than `max_packet_bytes` is dropped by the
/// client, so a fleet whose payloads exceed it would run and drop
/// everything (`raw(size = 1TB)`).
fn oversized(name: &str, fleet: &Fleet, payload: &exp_mqtt::PayloadGenerator) -> Option<(String, Diagnostic)> {
    const HEADER_BYTES: u64 = 16;
    let limit = fleet.broker.max_packet_bytes;
    let room = limit.saturating_sub(fleet.topic.len() as u64 + HEADER_BYTES);
    let share = payload.share_longer_than(room);
    (share > 0.01).then(|| {
        (
            format!("payload size {name}"),
            Diagnostic::error(
                Code::E1007,
                format!(
                    "fleet `{name}`: {:.0} % of its payloads are longer than fit in a packet of `max_packet_bytes` = {limit} bytes, and would all be dropped",
                    share * 100.0
                ),
            )
            .help("make the payloads smaller, or raise the broker's `max_packet_bytes` (the broker must accept such packets too)"),
        )
    })
}

/// An external broker that cannot be used, with help for the kind of problem.
fn broker_error(name: &str, e: &MqttError) -> (String, Diagnostic) {
    let (key, help) = match e {
        MqttError::InvalidUrl { .. } => (
            "url",
            "write the broker as `mqtt://host:port`, or `mqtts://host:port` for TLS (with `ca_file`, `client_cert`, `client_key`)",
        ),
        MqttError::TlsFile { .. } => ("tls", "in a spec, a relative path is resolved against the spec's folder"),
        MqttError::TlsHalfClientAuth { .. } => (
            "tls",
            "for mutual TLS give both `client_cert` and `client_key`; otherwise neither",
        ),
        MqttError::TlsNoKey { .. } | MqttError::TlsClientAuth { .. } => (
            "tls",
            "`client_cert` is the PEM certificate chain of this client, `client_key` its PEM private key",
        ),
        _ => (
            "tls",
            "`ca_file` is a PEM file of the CA certificate(s) that signed the broker's certificate",
        ),
    };
    (
        format!("{key} {name}"),
        Diagnostic::error(Code::E1006, format!("fleet `{name}`: {e}")).help(help),
    )
}

/// How long preflight waits for a broker to accept a TCP connection.
const REACH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// A broker nobody listens for: every device would retry until the trial
/// ends, so the run would measure nothing. Only a TCP connection is tried
/// (no MQTT, no TLS handshake): the broker is up, not necessarily willing.
fn unreachable(name: &str, url: &str, endpoint: &exp_mqtt::Endpoint) -> Option<(String, Diagnostic)> {
    use std::net::{TcpStream, ToSocketAddrs};
    let why = match (endpoint.host.as_str(), endpoint.port).to_socket_addrs() {
        Err(e) => format!("its host does not resolve: {e}"),
        Ok(addrs) => {
            let mut last = String::from("it resolves to no address");
            for addr in addrs {
                match TcpStream::connect_timeout(&addr, REACH_TIMEOUT) {
                    Ok(_) => return None,
                    Err(e) => last = format!("{addr}: {e}"),
                }
            }
            last
        }
    };
    Some((
        format!("unreachable {name}"),
        Diagnostic::error(
            Code::E1006,
            format!("fleet `{name}`: the broker at {url} cannot be reached ({why})"),
        )
        .help("start the broker before the run, or correct the fleet's `broker { url }`"),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    static ONLINE: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();

    /// A variant's first look (`true`), or a field's value set into a copy.
    fn host(first_look: bool) -> Host<'static> {
        Host {
            online_cpus: &ONLINE,
            spec_dir: std::path::Path::new("."),
            first_look,
        }
    }

    fn fleet(url: Option<&str>, devices: u32) -> Fleet {
        let mut f = super::super::test_fleet(devices);
        f.broker.url = url.map(str::to_string);
        f
    }

    #[test]
    fn brokers_are_checked() {
        assert!(preflight("f", &fleet(None, 100), &host(true)).is_empty());
        // Something listens: reachable (preflight speaks no MQTT to it).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("mqtt://127.0.0.1:{}", listener.local_addr().unwrap().port());
        assert!(preflight("f", &fleet(Some(&url), 100_000), &host(true)).is_empty());
        drop(listener);
        let found = preflight("f", &fleet(Some(&url), 10), &host(true));
        assert_eq!(found.len(), 1, "nobody listens any more");
        assert!(found[0].1.message.contains(&url), "{}", found[0].1.message);
        // A field's values are checked without reaching the broker again,
        // but a fleet too big for the embedded broker is still one.
        assert!(preflight("f", &fleet(Some(&url), 10), &host(false)).is_empty());
        let big = fleet(None, EMBEDDED_BROKER_MAX_DEVICES + 1);
        assert_eq!(preflight("f", &big, &host(false)).len(), 1);
        assert_eq!(
            preflight("f", &fleet(None, EMBEDDED_BROKER_MAX_DEVICES + 1), &host(true)).len(),
            1
        );
        assert_eq!(preflight("f", &fleet(Some("http://h"), 10), &host(true)).len(), 1);
        let mut f = fleet(None, 10);
        f.broker.password_env = Some("EXPC_UNIT_TEST_UNSET_PASSWORD".into());
        let found = preflight("f", &f, &host(true));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1.code, Code::E1006);
    }

    #[test]
    fn tls_files_are_loaded_in_preflight() {
        let missing = std::env::temp_dir().join("expc-unit-test-no-such-dir/missing-ca.pem");
        let mut f = fleet(Some("mqtts://127.0.0.1:8883"), 10);
        f.broker.ca_file = Some(missing.display().to_string());
        let found = preflight("f", &f, &host(true));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1.code, Code::E1006);
        assert!(found[0].1.message.contains("missing-ca.pem"), "{}", found[0].1.message);
        // Only one half of a client identity.
        let mut f = fleet(Some("mqtts://127.0.0.1:8883"), 10);
        f.broker.client_key = Some("key.pem".into());
        assert!(preflight("f", &f, &host(true))[0].1.message.contains("client_cert"));
        // TLS files where no TLS is spoken.
        let mut f = fleet(Some("mqtt://127.0.0.1:1883"), 10);
        f.broker.ca_file = Some("ca.pem".into());
        assert_eq!(preflight("f", &f, &host(true)).len(), 1);
        let mut f = fleet(None, 10);
        f.broker.ca_file = Some("ca.pem".into());
        assert_eq!(preflight("f", &f, &host(true)).len(), 1);
    }
}
