//! The MQTT fleet executor: `devices` clients, each its own connection,
//! publishing on a central pacer's schedule; every message's fate (ack,
//! delivery, loss) goes to the `mqtt_messages` table, every device's
//! connection to `mqtt_devices`.
//!
//! An interval has a connect phase (devices connect along the ramp,
//! `connect.rs`) and a send phase (the pacer publishes on every device's
//! schedule); when the interval ends during the connect phase, the send
//! phase never begins and its messages are recorded unsent (`unsent.rs`),
//! and the trial fails unless it was stopped. Runs as an
//! async task on the runner's tokio runtime: device clients and
//! the subscriber are tokio tasks, the pacer and the table writers are
//! threads of their own so neither timing nor a full results queue stalls
//! the runtime.

mod audit;
pub(crate) mod broker;
pub(crate) mod check;
mod collector;
mod connect;
pub(crate) mod cpu;
mod devices;
mod metrics;
mod rows;
mod send;
mod tables;
mod unsent;
mod version;

use std::sync::Arc;
use std::time::Duration;

use exp_mqtt::{Device, DeviceOptions, Endpoint, FleetSchedule, PayloadGenerator, Subscriber, SubscriberEvent};
use exp_plan::Fleet;
use tokio::sync::{mpsc, oneshot};

use collector::{Collector, Inputs, Msg, Totals};
use connect::{ConnectPhase, Tally};
use devices::WarmupRule;
use rows::{device_row, Connection};
use tables::{devices_schema, messages_schema, Writer};
use unsent::NeverSent;
pub use version::BrokerVersions;

use crate::cancel::Level;
use crate::executor::{ExecError, WorkloadContext, WorkloadSummary};
use crate::schedule::Interval;

/// Deliveries still missing after this long (or `ack_timeout`, if shorter)
/// are recorded as not delivered, so pending rows cannot pile up.
const MAX_DELIVERY_WAIT: Duration = Duration::from_secs(5);

pub async fn run(ctx: WorkloadContext, fleet: Fleet) -> Result<WorkloadSummary, ExecError> {
    let failed = |step: &'static str, e: &dyn std::fmt::Display| {
        ExecError::step("fleet", &ctx.workload.name, step, e.to_string())
    };
    let endpoint = broker::endpoint(&fleet).await.map_err(|e| failed("broker", &e))?;
    let credentials = credentials(&fleet).map_err(|e| failed("credentials", &e))?;
    let schedule = FleetSchedule::new(&fleet.gap, &fleet.first_send, ctx.seed).map_err(|e| failed("schedule", &e))?;
    PayloadGenerator::new(&fleet.payload, ctx.seed).map_err(|e| failed("payload", &e))?;

    // A split run's part runs a block of the devices, numbered as in the whole fleet.
    let devices = match ctx.split {
        Some(split) => {
            let share = crate::split::share(u64::from(fleet.devices), split);
            share.start as u32..share.end as u32
        }
        None => 0..fleet.devices,
    };
    let messages = Writer::start(ctx.tables.sink(&messages_schema()), messages_schema())?;
    let device_schema = devices_schema();
    let connections = Writer::start(ctx.tables.sink(&device_schema), device_schema.clone())?;
    let cpu = cpu::CpuMeter::start();
    let mut totals = Totals::default();
    let mut failure = None;
    let mut version_probe = None;
    for interval in &ctx.intervals {
        if !ctx.cancel.sleep_until_async(ctx.clock.at(interval.start_ns)).await {
            break;
        }
        let setup = Setup {
            ctx: &ctx,
            fleet: &fleet,
            devices: devices.clone(),
            endpoint: &endpoint,
            credentials: &credentials,
            schedule: &schedule,
        };
        let outcome = run_interval(&setup, interval, &messages).await;
        // After the interval, never beside it: the probe's own connection
        // must not take a connection a device needed (a broker that limits them).
        if version_probe.is_none() {
            let options = setup.device_options(format!("{}-broker-version", ctx.workload.name));
            version_probe = Some(ctx.brokers.probe(&fleet, &endpoint, options));
        }
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        // Every device's row, also of an interval that failed.
        let tallies = &outcome.totals.devices;
        let rows = outcome.connections.into_iter().map(|c| {
            let tally = tallies.get(&c.device).map(|d| d.tally()).unwrap_or_default();
            device_row(&device_schema, &ctx.workload.name, c, tally)
        });
        match rows.collect() {
            Ok(rows) => connections.rows().send(rows),
            Err(e) => {
                failure = Some(e.into());
                break;
            }
        }
        metrics::merge(&mut totals, outcome.totals);
        if let Some(e) = outcome.failure {
            failure = Some(e);
            break;
        }
    }
    if let Some(Some(probe)) = version_probe {
        // At most its 2 s wait, which a fleet's interval has long covered.
        let _ = probe.await;
    }
    let written = tokio::task::spawn_blocking(move || messages.finish().and(connections.finish()))
        .await
        .map_err(|e| ExecError::step("fleet", &ctx.workload.name, "table writer", e.to_string()))?;
    if let Some(e) = failure {
        return Err(e);
    }
    written?;
    Ok(metrics::summary(&fleet, &mut totals, cpu.read(), &ctx.bounds))
}

struct Setup<'a> {
    ctx: &'a WorkloadContext,
    fleet: &'a Fleet,
    /// The devices this process runs: all, or a split run's block.
    devices: std::ops::Range<u32>,
    endpoint: &'a Endpoint,
    credentials: &'a Option<(String, String)>,
    schedule: &'a FleetSchedule,
}

impl Setup<'_> {
    fn device_options(&self, client_id: String) -> DeviceOptions {
        let fleet = self.fleet;
        DeviceOptions {
            client_id,
            keep_alive: Duration::from_nanos(fleet.keep_alive_ns),
            clean_session: fleet.clean_session,
            credentials: self.credentials.clone(),
            max_inflight: fleet.broker.max_inflight,
            max_packet_bytes: usize::try_from(fleet.broker.max_packet_bytes).unwrap_or(usize::MAX),
        }
    }
}

/// What one interval left: its totals, every device's connection, and
/// why the trial fails, if it does, once the rows are written.
struct IntervalOutcome {
    totals: Totals,
    connections: Vec<Connection>,
    failure: Option<ExecError>,
}

async fn run_interval(s: &Setup<'_>, interval: &Interval, messages: &Writer) -> Result<IntervalOutcome, ExecError> {
    let (ctx, fleet) = (s.ctx, s.fleet);
    let name = &ctx.workload.name;
    let end_ns = interval.end_ns.or(ctx.trial_end_ns);
    let ack_timeout = Duration::from_nanos(fleet.ack_timeout_ns);
    let delivery_wait = ack_timeout.min(MAX_DELIVERY_WAIT);
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let (dev_tx, dev_rx) = mpsc::unbounded_channel();
    let (sub_tx, sub_rx) = if fleet.subscribe {
        let (tx, rx) = mpsc::unbounded_channel();
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let inputs = Inputs {
        announced: out_rx,
        devices: dev_rx,
        subscriber: sub_rx,
    };
    let collector = Collector::new(name, fleet.subscribe, delivery_wait, ack_timeout, ctx.live.clone());
    let collector = tokio::spawn(collector.run(inputs, messages.rows()));

    let subscriber = match sub_tx {
        Some(tx) => Some(subscribe(s, tx).await?),
        None => None,
    };
    let ramp_start_ns = interval.start_ns.max(ctx.clock.now_ns());
    let rss_before = cpu::rss_bytes();
    let end = end_ns.map(|e| ctx.clock.at(e));
    let mut phase = connect::connect_devices(s, ramp_start_ns, end, dev_tx).await?;
    let devices: Vec<Arc<Device>> = phase.slots.iter().filter_map(|s| s.device.clone()).collect();
    // The slots' handles to the devices must be gone before they can be closed.
    let slots = std::mem::take(&mut phase.slots);
    let rss_per_device = match phase.complete {
        true => send::send(s, interval, slots, &out_tx, rss_before).await?,
        false => {
            drop(slots);
            None
        }
    };
    // Acks still on their way get their time, unless the user insists.
    let grace = (ctx.cancel.level() != Level::Kill).then_some(ack_timeout);
    devices::close_all(devices, grace.unwrap_or_default()).await;
    phase.held.clear();
    // Deliveries may trail the acks: wait for them, but not forever.
    let (done_tx, done_rx) = oneshot::channel();
    let _ = out_tx.send(Msg::DevicesDone(done_tx));
    let _ = tokio::time::timeout(delivery_wait, done_rx).await;
    if let Some(sub) = subscriber {
        sub.close().await;
    }
    drop(out_tx);
    let mut totals = collector
        .await
        .map_err(|e| ExecError::step("fleet", name, "collector", e.to_string()))?;
    totals.rss_per_device = rss_per_device;
    let tally = phase.tally();
    totals.not_connected = phase.connections.len() as u64 - tally.connected;
    // Stopped by Ctrl-C or another workload's failure: that is the trial's story, not the fleet's.
    let stopped = ctx.cancel.level() >= Level::Stop;
    let failure = if !phase.complete {
        never_sent(s, interval, &phase, &mut totals).await?;
        (!stopped).then(|| unfinished(s, tally))
    } else if tally.connected == 0 && !phase.connections.is_empty() && !stopped {
        Some(none_connected(name, &phase.connections))
    } else {
        None
    };
    Ok(IntervalOutcome {
        totals,
        connections: phase.connections,
        failure,
    })
}

/// The rows of an interval whose send phase never began (`unsent.rs`),
/// from the interval's planned start (not when the fleet got to it: the
/// rows are the same in every run of the spec) to its end or the moment
/// the connect phase was given up, whichever came first.
async fn never_sent(
    s: &Setup<'_>,
    interval: &Interval,
    phase: &ConnectPhase,
    totals: &mut Totals,
) -> Result<(), ExecError> {
    let (ctx, fleet) = (s.ctx, s.fleet);
    let end_ns = interval.end_ns.or(ctx.trial_end_ns);
    let unsent = NeverSent {
        fleet: ctx.workload.name.clone(),
        schedule: s.schedule.clone(),
        origin_ns: interval.start_ns,
        cut_ns: end_ns.map_or(phase.ended_ns, |e| e.min(phase.ended_ns)),
        messages: fleet.messages,
        warmup: WarmupRule::of(
            fleet,
            interval.start_ns,
            end_ns.map(|e| e.saturating_sub(interval.start_ns)),
            ctx.time_scale,
        ),
    };
    let devices: Vec<(u32, &'static str)> = phase
        .connections
        .iter()
        .map(|c| (c.device, c.fate.unsent_reason()))
        .collect();
    let sink = ctx.tables.sink(&messages_schema());
    let cancel = ctx.cancel.clone();
    let mut counted = std::mem::take(totals);
    let live = ctx.live.clone();
    let (counted, written) = tokio::task::spawn_blocking(move || {
        let written = unsent.write(&devices, &sink, &cancel, (&mut counted, &live));
        (counted, written)
    })
    .await
    .map_err(|e| ExecError::step("fleet", &ctx.workload.name, "unsent rows", e.to_string()))?;
    *totals = counted;
    written
}

/// The interval's error when it ended during the connect phase, with
/// what held it up: a ramp longer than the interval, or devices waiting
/// for a broker that does not answer.
fn unfinished(s: &Setup<'_>, tally: Tally) -> ExecError {
    let Tally {
        connected,
        failed,
        connecting,
        not_started,
    } = tally;
    let fleet = s.fleet;
    let mut why = format!(
        "the interval ended before every device had connected or failed, so nothing was sent \
         (every scheduled message is recorded as `dropped`): of {} devices, {connected} connected, \
         {failed} failed, {connecting} were still waiting for their CONNACK (up to {} s each) \
         and {not_started} had not started",
        s.devices.len(),
        devices::CONNECT_TIMEOUT.as_secs(),
    );
    if not_started > 0 {
        why.push_str(&format!(
            "; the connect ramp of {} devices at {}/s takes {:.1} s: raise `connect_rate`, lengthen the window, or use fewer devices",
            fleet.devices,
            fleet.connect_rate_per_s,
            f64::from(fleet.devices) / fleet.connect_rate_per_s
        ));
    }
    ExecError::step("fleet", &s.ctx.workload.name, "connecting", why)
}

/// The interval's error when not one device connected, with the first one's reason.
fn none_connected(name: &str, connections: &[Connection]) -> ExecError {
    let why = connections
        .first()
        .map_or_else(|| "no device".to_string(), |c| c.fate.status());
    ExecError::step("fleet", name, "connecting", format!("no device connected ({why})"))
}

/// The fleet's subscriber, on every device's topic, for delivery latency.
async fn subscribe(s: &Setup<'_>, events: mpsc::UnboundedSender<SubscriberEvent>) -> Result<Subscriber, ExecError> {
    let name = &s.ctx.workload.name;
    Subscriber::connect(
        s.endpoint,
        s.device_options(format!("{name}-subscriber")),
        vec![fill(&s.fleet.topic, name, None)],
        events,
        Duration::from_secs(10),
    )
    .await
    .map_err(|e| ExecError::step("fleet", name, "subscriber", e.to_string()))
}

/// Fills `{fleet}`, `{device}` and `{index}`; without an index, the MQTT wildcard `+`.
fn fill(template: &str, fleet: &str, index: Option<u32>) -> String {
    let index = index.map_or_else(|| "+".to_string(), |i| i.to_string());
    template
        .replace("{fleet}", fleet)
        .replace("{device}", &index)
        .replace("{index}", &index)
}

/// A credential variable the plan names is unset (preflight found it set:
/// the environment changed since, or it is not Unicode).
#[derive(Debug, thiserror::Error)]
#[error("environment variable `{0}` is not set")]
struct CredentialUnset(String);

/// Reads the credentials the plan names (preflight checked they are set).
fn credentials(fleet: &Fleet) -> Result<Option<(String, String)>, CredentialUnset> {
    let read = |name: &Option<String>| -> Result<Option<String>, CredentialUnset> {
        match name {
            Some(var) => std::env::var(var).map(Some).map_err(|_| CredentialUnset(var.clone())),
            None => Ok(None),
        }
    };
    let user = read(&fleet.broker.username_env)?;
    let pass = read(&fleet.broker.password_env)?;
    Ok(match (user, pass) {
        (None, None) => None,
        (user, pass) => Some((user.unwrap_or_default(), pass.unwrap_or_default())),
    })
}

/// A fleet of `devices` on the embedded broker, constant 50 ms gaps, for unit tests.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
fn test_fleet(devices: u32) -> Fleet {
    serde_json::from_value(serde_json::json!({
        "devices": devices, "client_id": "{fleet}-{index}", "topic": "{fleet}/{device}/t",
        "qos": 1, "keep_alive_ns": 60_000_000_000u64, "clean_session": true,
        "gap": {"unit": "ns", "family": "constant", "value": 50_000_000.0}, "first_send": "uniform",
        "payload": {"json": {"size_bytes": 256, "fields": ["temperature"]}},
        "messages": null, "connect_rate_per_s": 400.0, "warmup": {"ratio": 0.0}, "subscribe": false,
        "ack_timeout_ns": 10_000_000_000u64, "lateness_bound_ns": null,
        "broker": {"url": null, "port": null, "ca_file": null, "client_cert": null, "client_key": null,
                   "username_env": null, "password_env": null, "max_inflight": 100, "max_packet_bytes": 262144}
    }))
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_filled() {
        assert_eq!(fill("{fleet}-{index}", "plant", Some(7)), "plant-7");
        assert_eq!(fill("{fleet}/{device}/telemetry", "plant", None), "plant/+/telemetry");
    }
}
