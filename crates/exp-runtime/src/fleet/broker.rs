//! The embedded broker, shared by every trial of the process (starting it
//! is cheap, but a fixed `port` would have to be released and bound again
//! between trials). It is sized once for the largest fleet of the plan; a
//! trial that needs more (another plan in the same process, or a fixed
//! port) gets another. Brokers run until the process exits.

use std::sync::Mutex;

use std::path::PathBuf;

use exp_mqtt::{BrokerOptions, EmbeddedBroker, Endpoint, MqttError, Scheme, Tls, TlsFiles};
use exp_plan::{Broker, Fleet, Plan, WorkloadConfig};

/// What a broker was started for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Size {
    devices: u32,
    max_inflight: u16,
    max_packet_bytes: u64,
}

impl Size {
    fn of(fleet: &Fleet) -> Size {
        Size {
            devices: fleet.devices,
            max_inflight: fleet.broker.max_inflight,
            max_packet_bytes: fleet.broker.max_packet_bytes,
        }
    }

    fn max(self, other: Size) -> Size {
        Size {
            devices: self.devices.max(other.devices),
            max_inflight: self.max_inflight.max(other.max_inflight),
            max_packet_bytes: self.max_packet_bytes.max(other.max_packet_bytes),
        }
    }

    fn covers(self, need: Size) -> bool {
        self.max(need) == self
    }
}

struct Started {
    size: Size,
    port: Option<u16>,
    endpoint: Endpoint,
    /// Held so the broker keeps running: dropping it stops it.
    _broker: EmbeddedBroker,
}

static PLAN_SIZE: Mutex<Size> = Mutex::new(Size {
    devices: 0,
    max_inflight: 0,
    max_packet_bytes: 0,
});
static BROKERS: Mutex<Vec<Started>> = Mutex::new(Vec::new());

/// Records the largest embedded-broker fleet of the plan, so the first
/// broker started is big enough for every trial.
pub fn size_for_plan(plan: &Plan) {
    let mut size = Size::default();
    for workload in &plan.workloads {
        let embedded = workload.variants.iter().filter_map(|v| match &v.config {
            WorkloadConfig::Fleet(f) if f.broker.url.is_none() => Some(Size::of(f)),
            _ => None,
        });
        let Some(variants) = embedded.reduce(Size::max) else {
            continue;
        };
        size = size.max(variants);
        // A field sets one property at a time: its largest value is
        // reached with the others at theirs, so the largest of each is enough
        // (read from the plan's values, not a fleet materialised per value).
        let largest = |pointer| {
            workload
                .field_values(pointer)
                .filter_map(serde_json::Value::as_u64)
                .max()
                .unwrap_or(0)
        };
        size = size.max(Size {
            devices: u32::try_from(largest("/config/fleet/devices")).unwrap_or(u32::MAX),
            max_inflight: u16::try_from(largest("/config/fleet/broker/max_inflight")).unwrap_or(u16::MAX),
            max_packet_bytes: largest("/config/fleet/broker/max_packet_bytes"),
        });
    }
    if let Ok(mut s) = PLAN_SIZE.lock() {
        *s = s.max(size);
    }
}

/// Where the fleet's devices connect: the URL the plan names, or an
/// embedded broker.
pub async fn endpoint(fleet: &Fleet) -> Result<Endpoint, MqttError> {
    match &fleet.broker.url {
        // Reads a few small files (and, without `ca_file`, the system's CA store):
        // milliseconds, once per trial, so not worth a blocking thread.
        Some(url) => external(url, &fleet.broker),
        None => embedded(fleet).await,
    }
}

/// The endpoint of an external broker; for `mqtts://` with its TLS
/// configuration, loaded here once and shared by all the fleet's devices.
/// Preflight calls it too, so unreadable or unusable files stop the run
/// before anything starts.
pub fn external(url: &str, broker: &Broker) -> Result<Endpoint, MqttError> {
    let endpoint = Endpoint::parse(url)?;
    let files = tls_files(broker);
    match endpoint.scheme {
        Scheme::Mqtts => endpoint.with_tls(Tls::load(&files)?),
        // TLS files with a plain URL would silently not be used: refuse them.
        Scheme::Mqtt if files != TlsFiles::default() => Err(MqttError::InvalidUrl {
            url: url.to_string(),
            reason: "`ca_file`, `client_cert` and `client_key` need an mqtts:// URL",
        }),
        Scheme::Mqtt => Ok(endpoint),
    }
}

/// The broker's TLS files; the plan already holds them resolved against the spec's folder.
pub fn tls_files(broker: &Broker) -> TlsFiles {
    TlsFiles {
        ca_file: broker.ca_file.as_ref().map(PathBuf::from),
        client_cert: broker.client_cert.as_ref().map(PathBuf::from),
        client_key: broker.client_key.as_ref().map(PathBuf::from),
    }
}

/// The endpoint of an embedded broker big enough for `fleet`, started if needed.
async fn embedded(fleet: &Fleet) -> Result<Endpoint, MqttError> {
    let need = Size::of(fleet);
    let port = fleet.broker.port;
    let planned = PLAN_SIZE.lock().map(|s| *s).unwrap_or_default();
    // Starting blocks (it waits for the listener), so it runs off the async workers.
    let started = tokio::task::spawn_blocking(move || {
        let mut brokers = BROKERS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(b) = brokers
            .iter()
            .find(|b| b.port == port && (port.is_some() || b.size.covers(need)))
        {
            return Ok(b.endpoint.clone());
        }
        let size = need.max(planned);
        let mut options = BrokerOptions::for_fleet(size.devices, size.max_inflight, size.max_packet_bytes);
        options.port = port;
        let broker = EmbeddedBroker::start(options)?;
        let endpoint = broker.endpoint();
        brokers.push(Started {
            size,
            port,
            endpoint: endpoint.clone(),
            _broker: broker,
        });
        Ok(endpoint)
    })
    .await;
    started.unwrap_or_else(|e| {
        Err(MqttError::BrokerThread(std::io::Error::other(format!(
            "the thread starting it failed: {e}"
        ))))
    })
}
