//! The versions of the brokers a run's fleets publish to, for the
//! manifest's `brokers` (docs/running.md, "Provenance"): read once per run
//! and broker, after the first active interval of the first fleet using
//! it (its connection never takes one a device needed), from Mosquitto's
//! `$SYS/broker/version`. The
//! embedded broker is the one built into this expc.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use exp_mqtt::{DeviceOptions, Endpoint};
use exp_plan::Fleet;
use tokio::task::JoinHandle;

/// How long a broker has to send its retained version once subscribed.
const WAIT: Duration = Duration::from_secs(2);

/// URL (or `embedded`) → the version, or `unknown: …` with the reason.
#[derive(Clone, Default)]
pub struct BrokerVersions(Arc<Mutex<BTreeMap<String, String>>>);

impl BrokerVersions {
    /// Everything recorded so far.
    pub fn take(&self) -> BTreeMap<String, String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Records `fleet`'s broker unless this run has it: the embedded one at
    /// once, an external one by a task reading its version (the handle, to
    /// be awaited before the fleet's summary, so the run ends with it).
    pub(crate) fn probe(&self, fleet: &Fleet, endpoint: &Endpoint, options: DeviceOptions) -> Option<JoinHandle<()>> {
        let key = fleet.broker.url.clone().unwrap_or_else(|| "embedded".to_string());
        let mut known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if known.contains_key(&key) {
            return None;
        }
        if fleet.broker.url.is_none() {
            known.insert(
                key,
                format!(
                    "exp-mqtt broker (MQTT 3.1.1), embedded in expc {}",
                    env!("CARGO_PKG_VERSION")
                ),
            );
            return None;
        }
        known.insert(key.clone(), "unknown: still reading when the run ended".to_string());
        drop(known);
        let (versions, endpoint) = (self.clone(), endpoint.clone());
        Some(tokio::spawn(async move {
            let version = exp_mqtt::broker_version(&endpoint, options, WAIT)
                .await
                .unwrap_or_else(|why| format!("unknown: {why}"));
            versions
                .0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key, version);
        }))
    }
}
