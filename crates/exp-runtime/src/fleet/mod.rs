//! The MQTT fleet executor: `devices` clients, each its own connection,
//! publishing on a central pacer's schedule; every message's fate (ack,
//! delivery, loss) goes to the `mqtt_messages` table, every device's
//! connection to `mqtt_devices`.
//!
//! An interval has a connect phase (devices connect along the ramp) and a
//! send phase (the pacer publishes on every device's schedule). Runs as an
//! async task on the runner's tokio runtime: device clients and
//! the subscriber are tokio tasks, the pacer and the table writers are
//! threads of their own so neither timing nor a full results queue stalls
//! the runtime.

mod broker;
mod check;
mod collector;
mod cpu;
mod devices;
mod metrics;
mod rows;
mod tables;

use std::sync::Arc;
use std::time::{Duration, Instant};

use exp_mqtt::{
    Device, DeviceEvent, DeviceOptions, Endpoint, FleetSchedule, Pacer, PacerConfig, PayloadGenerator, Subscriber,
    SubscriberEvent,
};
use exp_plan::{Fleet, Warmup};
use exp_stats::Sampler;
use tokio::sync::{mpsc, oneshot};

pub use broker::size_for_plan;
pub(crate) use check::preflight;
use collector::{Collector, Inputs, Msg, Totals};
use devices::{DeviceJob, Publishers, Slot, WarmupRule};
use rows::{device_row, Connection};
use tables::{devices_schema, messages_schema, Writer};

use crate::cancel::Level;
use crate::executor::{ExecError, WorkloadContext, WorkloadSummary};
use crate::schedule::{scale, Interval};

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
        match run_interval(&setup, interval, &messages).await {
            Ok((t, conns)) => {
                let rows = conns.into_iter().map(|c| {
                    let tally = t.devices.get(&c.device).map(|d| d.tally()).unwrap_or_default();
                    device_row(&device_schema, &ctx.workload.name, c, tally)
                });
                match rows.collect() {
                    Ok(rows) => connections.rows().send(rows),
                    Err(e) => {
                        failure = Some(e.into());
                        break;
                    }
                }
                metrics::merge(&mut totals, t);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let written = tokio::task::spawn_blocking(move || messages.finish().and(connections.finish()))
        .await
        .map_err(|e| ExecError::step("fleet", &ctx.workload.name, "table writer", e.to_string()))?;
    if let Some(e) = failure {
        return Err(e);
    }
    written?;
    Ok(metrics::summary(&fleet, &mut totals, cpu.read()))
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

async fn run_interval(
    s: &Setup<'_>,
    interval: &Interval,
    messages: &Writer,
) -> Result<(Totals, Vec<Connection>), ExecError> {
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
    let collector = Collector::new(name, fleet.subscribe, delivery_wait, ack_timeout);
    let collector = tokio::spawn(collector.run(inputs, messages.rows()));

    let subscriber = match sub_tx {
        Some(tx) => Some(subscribe(s, tx).await?),
        None => None,
    };
    let ramp_start = ctx.clock.at(interval.start_ns.max(ctx.clock.now_ns()));
    let rss_before = cpu::rss_bytes();
    let end = end_ns.map(|e| ctx.clock.at(e));
    let (slots, connections) = connect_devices(s, ramp_start, end, dev_tx).await?;
    let devices: Vec<Arc<Device>> = slots.iter().filter_map(|s| s.device.clone()).collect();

    // Send phase: the schedule starts now, on absolute deadlines.
    let offset_ns = ctx.clock.now_ns();
    let length_ns = end_ns.map(|e| e.saturating_sub(offset_ns));
    let first = s.devices.start;
    let schedules = (0..slots.len() as u32).map(|d| s.schedule.device(first + d)).collect();
    let sink = Publishers {
        slots,
        qos: fleet.qos,
        clock: ctx.clock,
        offset_ns,
        warmup: warmup_rule(fleet, interval.start_ns, length_ns, ctx.time_scale),
        out: out_tx.clone(),
        buffer: Vec::new(),
    };
    let config = PacerConfig {
        end_ns: length_ns,
        messages: fleet.messages,
        // Above the embedded broker, which shares this process, the pacer
        // would starve the system under test (see exp-mqtt's pacer/thread.rs).
        nice: if fleet.broker.url.is_some() {
            PacerConfig::default().nice
        } else {
            0
        },
        ..PacerConfig::default()
    };
    let pacer = Pacer::start(ctx.clock.at(offset_ns), schedules, sink, config)
        .map_err(|e| ExecError::step("fleet", name, "devices", e.to_string()))?;

    sending(ctx, &pacer, end).await;
    pacer.stop();
    // Measured while every device is still connected, before any closes.
    let device_count = s.devices.len() as u32;
    let rss_per_device = rss_before.zip(cpu::rss_bytes()).and_then(|(before, now)| {
        (device_count > 0).then(|| now.saturating_sub(before) as f64 / f64::from(device_count))
    });
    // Joining ends the pacer thread, which drops its handles to the devices.
    tokio::task::spawn_blocking(move || pacer.join())
        .await
        .map_err(|e| ExecError::step("fleet", name, "pacer", e.to_string()))?
        .map_err(|e| ExecError::step("fleet", name, "devices", e.to_string()))?;
    // Acks still on their way get their time, unless the user insists.
    let grace = (ctx.cancel.level() != Level::Kill).then_some(ack_timeout);
    devices::close_all(devices, grace.unwrap_or_default()).await;
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
    if device_count > 0 && connections.iter().all(|c| c.connected_ns.is_none()) {
        return Err(none_connected(name, &connections));
    }
    Ok((totals, connections))
}

/// Until the interval ends, the pacer runs out of messages, or the trial is stopped.
async fn sending(ctx: &WorkloadContext, pacer: &Pacer, end: Option<Instant>) {
    loop {
        let now = Instant::now();
        if pacer.is_finished() || end.is_some_and(|e| now >= e) {
            return;
        }
        let next = end.map_or(now + Duration::from_millis(50), |e| {
            e.min(now + Duration::from_millis(50))
        });
        if !ctx.cancel.sleep_until_async(next).await {
            return;
        }
    }
}

/// The interval's error when not one device connected, with the first one's reason.
fn none_connected(name: &str, connections: &[Connection]) -> ExecError {
    let why = connections.first().map_or_else(
        || "none had connected when the interval ended or the trial stopped".to_string(),
        |c| c.status.clone(),
    );
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

/// Connect phase: devices connect along the ramp; nothing is sent until
/// every one has connected or failed, so connect work (TLS, CONNACKs, a
/// broker busy accepting) never shows up as send lateness or latency.
/// Devices still connecting when the interval ends or the trial stops are
/// aborted.
async fn connect_devices(
    s: &Setup<'_>,
    ramp_start: Instant,
    end: Option<Instant>,
    events: mpsc::UnboundedSender<DeviceEvent>,
) -> Result<(Vec<Slot>, Vec<Connection>), ExecError> {
    let (ctx, fleet) = (s.ctx, s.fleet);
    let name = &ctx.workload.name;
    let mut connecting = Vec::with_capacity(s.devices.len());
    // A split run's part ramps at its share of the rate, so that the parts
    // together connect as fast as the whole fleet would, and finish when it would.
    let rate = fleet.connect_rate_per_s * s.devices.len() as f64 / f64::from(fleet.devices.max(1));
    // `index` counts this process's devices; `device` is the fleet's number.
    for (index, device) in s.devices.clone().enumerate() {
        let ramp = if rate.is_finite() && rate > 0.0 {
            Duration::from_secs_f64(index as f64 / rate)
        } else {
            Duration::ZERO
        };
        let job = DeviceJob {
            device,
            endpoint: s.endpoint.clone(),
            options: s.device_options(fill(&fleet.client_id, name, Some(device))),
            connect_at: ramp_start + ramp,
            clock: ctx.clock,
        };
        connecting.push(tokio::spawn(devices::connect(job, events.clone())));
    }
    drop(events);
    let mut slots = Vec::with_capacity(connecting.len());
    let mut connections = Vec::with_capacity(connecting.len());
    let mut pending = connecting.into_iter();
    while let Some(mut task) = pending.next() {
        let index = slots.len() as u32;
        let (device, connection) = tokio::select! {
            done = &mut task => done.map_err(|e| ExecError::step("fleet", name, "a device task failed", e.to_string()))?,
            () = stopped(ctx, end) => {
                task.abort();
                pending.for_each(|t| t.abort());
                break;
            }
        };
        let number = s.devices.start + index;
        let payload = PayloadGenerator::new(&fleet.payload, ctx.seed.wrapping_add(u64::from(number)))
            .map_err(|e| ExecError::step("fleet", name, "payload", e.to_string()))?;
        slots.push(Slot {
            device: device.map(Arc::new),
            topic: fill(&fleet.topic, name, Some(number)),
            payload,
            dseq: 0,
        });
        connections.push(connection);
    }
    Ok((slots, connections))
}

/// A warm-up share is of the messages a device is expected to send in the
/// interval; a warm-up span starts with the interval (connecting included)
/// and is scaled like it.
fn warmup_rule(fleet: &Fleet, interval_start_ns: u64, length_ns: Option<u64>, time_scale: f64) -> WarmupRule {
    let ratio = match fleet.warmup {
        Warmup::Ns(span) => {
            return WarmupRule::ScheduledBefore(interval_start_ns.saturating_add(scale(span, time_scale)));
        }
        Warmup::Ratio(ratio) => ratio,
    };
    let gap_mean = Sampler::new(&fleet.gap).ok().and_then(|g| g.mean());
    let expected = match (fleet.messages, length_ns, gap_mean) {
        (Some(m), _, _) => m as f64,
        (None, Some(len), Some(gap)) if gap > 0.0 => len as f64 / gap,
        _ => 0.0,
    };
    WarmupRule::FirstMessages((expected * ratio).ceil() as u64)
}

/// Resolves when the trial is stopped or the interval's end passes.
async fn stopped(ctx: &WorkloadContext, end: Option<Instant>) {
    match end {
        Some(end) => {
            ctx.cancel.sleep_until_async(end).await;
        }
        None => ctx.cancel.reached(Level::Stop).await,
    }
}

/// Fills `{fleet}`, `{device}` and `{index}`; without an index, the MQTT wildcard `+`.
fn fill(template: &str, fleet: &str, index: Option<u32>) -> String {
    let index = index.map_or_else(|| "+".to_string(), |i| i.to_string());
    template
        .replace("{fleet}", fleet)
        .replace("{device}", &index)
        .replace("{index}", &index)
}

/// Reads the credentials the plan names (preflight checked they are set).
fn credentials(fleet: &Fleet) -> Result<Option<(String, String)>, String> {
    let read = |name: &Option<String>| -> Result<Option<String>, String> {
        match name {
            Some(var) => std::env::var(var)
                .map(Some)
                .map_err(|_| format!("environment variable `{var}` is not set")),
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
