//! The MQTT fleet executor: `devices` clients, each its own connection,
//! publishing on a central pacer's schedule; every message's fate (ack,
//! delivery, loss) goes to the `messages` table, every connection to
//! `fleet_connections`.
//!
//! Runs as an async task on the runner's tokio runtime: device clients and
//! the subscriber are tokio tasks, the pacer and the table writers are
//! threads of their own so neither timing nor a full results queue stalls
//! the runtime.

mod broker;
mod check;
mod collector;
mod devices;
mod tables;

use std::time::{Duration, Instant};

use exp_mqtt::{DeviceOptions, Endpoint, FleetSchedule, Pacer, PacerConfig, PayloadGenerator, Subscriber};
use exp_plan::Fleet;
use exp_stats::Sampler;
use tokio::sync::{mpsc, oneshot};

pub use broker::size_for_plan;
pub use check::check;
use collector::{Collector, Msg, Totals};
use devices::{Connection, DeviceJob};
use tables::{connections_schema, messages_schema, Writer};

use crate::executor::{ExecError, WorkloadContext, WorkloadSummary};
use crate::schedule::Interval;

/// Deliveries still missing after this long (or `ack_timeout`, if shorter)
/// are recorded as not delivered, so pending rows cannot pile up.
const MAX_DELIVERY_WAIT: Duration = Duration::from_secs(5);

pub async fn run(ctx: WorkloadContext, fleet: Fleet) -> Result<WorkloadSummary, ExecError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        ExecError::Failed(format!("fleet `{}`: {what}: {e}", ctx.workload.name))
    };
    let endpoint = match &fleet.broker.url {
        Some(url) => Endpoint::parse(url).map_err(|e| failed("broker", &e))?,
        None => broker::embedded(&fleet)
            .await
            .map_err(|e| failed("embedded broker", &e))?,
    };
    let credentials = credentials(&fleet).map_err(|e| failed("credentials", &e))?;
    let schedule = FleetSchedule::new(&fleet.gap, &fleet.first_send, ctx.seed).map_err(|e| failed("schedule", &e))?;
    PayloadGenerator::new(&fleet.payload, ctx.seed).map_err(|e| failed("payload", &e))?;

    let messages = Writer::start(ctx.tables.sink(&messages_schema()), messages_schema())?;
    let connections = Writer::start(ctx.tables.sink(&connections_schema()), connections_schema())?;
    let cpu_start = (Instant::now(), self_cpu_ns());
    let mut totals = Totals::default();
    let mut failure = None;
    for interval in &ctx.intervals {
        if !ctx.cancel.sleep_until_async(ctx.clock.at(interval.start_ns)).await {
            break;
        }
        let setup = Setup {
            ctx: &ctx,
            fleet: &fleet,
            endpoint: &endpoint,
            credentials: &credentials,
            schedule: &schedule,
        };
        match run_interval(&setup, interval, &messages).await {
            Ok((t, conns)) => {
                merge(&mut totals, t);
                connections
                    .rows()
                    .send(conns.into_iter().map(|c| connection_row(c, &totals)).collect());
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let written = tokio::task::spawn_blocking(move || messages.finish().and(connections.finish()))
        .await
        .map_err(|e| ExecError::Failed(format!("table writer: {e}")))?;
    if let Some(e) = failure {
        return Err(e);
    }
    written?;
    let cpu_ratio =
        self_cpu_ns().saturating_sub(cpu_start.1) as f64 / cpu_start.0.elapsed().as_secs_f64().max(1e-9) / 1e9;
    Ok(summary(&fleet, &mut totals, cpu_ratio))
}

struct Setup<'a> {
    ctx: &'a WorkloadContext,
    fleet: &'a Fleet,
    endpoint: &'a Endpoint,
    credentials: &'a Option<(String, String)>,
    schedule: &'a FleetSchedule,
}

async fn run_interval(
    s: &Setup<'_>,
    interval: &Interval,
    messages: &Writer,
) -> Result<(Totals, Vec<Connection>), ExecError> {
    let (ctx, fleet) = (s.ctx, s.fleet);
    let name = &ctx.workload.name;
    let end_ns = interval.end_ns.or(ctx.trial_end_ns);
    let delivery_wait = Duration::from_nanos(fleet.ack_timeout_ns).min(MAX_DELIVERY_WAIT);
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let collector = tokio::spawn(Collector::new(fleet.subscribe, delivery_wait).run(out_rx, messages.rows()));

    let options = |client_id: String| DeviceOptions {
        client_id,
        keep_alive: Duration::from_nanos(fleet.keep_alive_ns),
        clean_session: fleet.clean_session,
        credentials: s.credentials.clone(),
        max_inflight: fleet.broker.max_inflight,
        max_packet_bytes: usize::try_from(fleet.broker.max_packet_bytes).unwrap_or(usize::MAX),
    };
    let subscriber = if fleet.subscribe {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let filter = fill(&fleet.topic, name, None);
        let sub = Subscriber::connect(
            s.endpoint,
            options(format!("{name}-subscriber")),
            vec![filter],
            tx,
            Duration::from_secs(10),
        )
        .await
        .map_err(|e| ExecError::Failed(format!("fleet `{name}`: subscriber: {e}")))?;
        let out = out_tx.clone();
        tokio::spawn(async move {
            while let Some(e) = rx.recv().await {
                let _ = out.send(Msg::Sub(e));
            }
        });
        Some(sub)
    } else {
        None
    };
    // Setting up (the broker, the subscriber) takes time: the schedule starts
    // once it is done, so the first sends are not counted late for it.
    let offset_ns = interval.start_ns.max(ctx.clock.now_ns());
    let start = ctx.clock.at(offset_ns);
    let (dev_tx, mut dev_rx) = mpsc::unbounded_channel();
    let out = out_tx.clone();
    tokio::spawn(async move {
        while let Some(e) = dev_rx.recv().await {
            let _ = out.send(Msg::Device(e));
        }
    });

    // Warm-up is a share of the messages a device is expected to send in this interval.
    let length_ns = end_ns.map(|e| e.saturating_sub(offset_ns));
    let expected = match (
        fleet.messages,
        length_ns,
        Sampler::new(&fleet.gap).ok().and_then(|g| g.mean()),
    ) {
        (Some(m), _, _) => m as f64,
        (None, Some(len), Some(gap)) if gap > 0.0 => len as f64 / gap,
        _ => 0.0,
    };
    let warmup_messages = (expected * fleet.warmup_ratio).ceil() as u64;
    let mut fire_senders = Vec::with_capacity(fleet.devices as usize);
    let mut tasks = Vec::with_capacity(fleet.devices as usize);
    for index in 0..fleet.devices {
        let (tx, rx) = mpsc::unbounded_channel();
        fire_senders.push(tx);
        let ramp = if fleet.connect_rate_per_s.is_finite() && fleet.connect_rate_per_s > 0.0 {
            Duration::from_secs_f64(f64::from(index) / fleet.connect_rate_per_s)
        } else {
            Duration::ZERO
        };
        let payload = PayloadGenerator::new(&fleet.payload, ctx.seed.wrapping_add(u64::from(index)))
            .map_err(|e| ExecError::Failed(format!("fleet `{name}`: payload: {e}")))?;
        let job = DeviceJob {
            index,
            endpoint: s.endpoint.clone(),
            options: options(fill(&fleet.client_id, name, Some(index))),
            topic: fill(&fleet.topic, name, Some(index)),
            qos: fleet.qos,
            connect_at: start + ramp,
            clock: ctx.clock,
            offset_ns,
            warmup_messages,
            payload,
            grace: Duration::from_nanos(fleet.ack_timeout_ns),
        };
        tasks.push(tokio::spawn(devices::run(
            job,
            rx,
            dev_tx.clone(),
            out_tx.clone(),
            ctx.cancel.clone(),
        )));
    }
    drop(dev_tx);
    let schedules = (0..fleet.devices).map(|d| s.schedule.device(d)).collect();
    let config = PacerConfig {
        end_ns: length_ns,
        messages: fleet.messages,
        ..PacerConfig::default()
    };
    let pacer = Pacer::start(start, schedules, fire_senders, config)
        .map_err(|e| ExecError::Failed(format!("fleet `{name}`: {e}")))?;

    // Until the interval ends, the pacer runs out of messages, or the trial is stopped.
    let end = end_ns.map(|e| ctx.clock.at(e));
    loop {
        let now = Instant::now();
        if pacer.is_finished() || end.is_some_and(|e| now >= e) {
            break;
        }
        let next = end.map_or(now + Duration::from_millis(50), |e| {
            e.min(now + Duration::from_millis(50))
        });
        if !ctx.cancel.sleep_until_async(next).await {
            break;
        }
    }
    pacer.stop();
    // Joining ends the pacer thread, which drops the fire channels: the device tasks then close.
    tokio::task::spawn_blocking(move || pacer.join())
        .await
        .map_err(|e| ExecError::Failed(format!("fleet `{name}`: pacer: {e}")))?
        .map_err(|e| ExecError::Failed(format!("fleet `{name}`: {e}")))?;
    let mut connections = Vec::with_capacity(tasks.len());
    for task in tasks {
        match task.await {
            Ok(c) => connections.push(c),
            Err(e) => return Err(ExecError::Failed(format!("fleet `{name}`: a device task failed: {e}"))),
        }
    }
    // Deliveries may trail the acks: wait for them, but not forever.
    let (done_tx, done_rx) = oneshot::channel();
    let _ = out_tx.send(Msg::DevicesDone(done_tx));
    let _ = tokio::time::timeout(delivery_wait, done_rx).await;
    if let Some(sub) = subscriber {
        sub.close().await;
    }
    drop(out_tx);
    let totals = collector
        .await
        .map_err(|e| ExecError::Failed(format!("fleet `{name}`: collector: {e}")))?;
    if fleet.devices > 0 && connections.iter().all(|c| c.connected_ns.is_none()) {
        let first = connections.first().map(|c| c.status.clone()).unwrap_or_default();
        return Err(ExecError::Failed(format!(
            "fleet `{name}`: no device connected ({first})"
        )));
    }
    Ok((totals, connections))
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

fn connection_row(c: Connection, totals: &Totals) -> Vec<exp_results::Cell> {
    let reconnects = totals.disconnects.get(&c.device).copied().unwrap_or(0);
    vec![
        u64::from(c.device).into(),
        c.client_id.into(),
        c.connected_ns.into(),
        c.connect_ms.into(),
        reconnects.into(),
        c.status.into(),
    ]
}

fn merge(into: &mut Totals, t: Totals) {
    into.messages += t.messages;
    into.completed += t.completed;
    into.lost += t.lost;
    into.ack_sum_ns += t.ack_sum_ns;
    into.ack_count += t.ack_count;
    into.delivery_sum_ns += t.delivery_sum_ns;
    into.delivery_count += t.delivery_count;
    into.lateness_sum_ns += t.lateness_sum_ns;
    into.lateness.extend(t.lateness);
    into.disconnects = t.disconnects;
    into.span_ns = match (into.span_ns, t.span_ns) {
        (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
        (a, b) => a.or(b),
    };
}

fn summary(fleet: &Fleet, t: &mut Totals, cpu_ratio: f64) -> WorkloadSummary {
    let mut s = WorkloadSummary::default();
    let mut put = |k: &str, v: f64| {
        s.metrics.insert(k.to_string(), v);
    };
    if t.ack_count > 0 {
        put("ack_latency", t.ack_sum_ns / t.ack_count as f64);
    }
    if t.delivery_count > 0 {
        put("delivery_latency", t.delivery_sum_ns / t.delivery_count as f64);
    }
    if t.messages > 0 {
        put("send_lateness", t.lateness_sum_ns / t.messages as f64);
    }
    if let Some((first, last)) = t.span_ns.filter(|(a, b)| b > a) {
        put(
            "throughput",
            t.completed.saturating_sub(1) as f64 / ((last - first) as f64 / 1e9),
        );
    }
    put("messages_lost", t.lost as f64);
    put("runner_cpu_ratio", cpu_ratio);
    t.lateness.sort_unstable();
    if let Some(p99) = p99(&t.lateness) {
        put("send_lateness_p99", p99 as f64);
        put("contended", if p99 > fleet.lateness_bound_ns { 1.0 } else { 0.0 });
    }
    s
}

/// The nearest-rank 99th percentile of sorted values.
fn p99(sorted: &[u64]) -> Option<u64> {
    let n = sorted.len();
    sorted.get((n * 99).div_ceil(100).max(1) - 1).copied()
}

/// CPU time of this process (all threads), from /proc/self/stat.
fn self_cpu_ns() -> u64 {
    let ticks = exp_host::clock_ticks_per_s().max(1);
    exp_host::pid_stat(std::process::id()).ok().flatten().map_or(0, |s| {
        (s.utime_ticks + s.stime_ticks).saturating_mul(1_000_000_000 / ticks)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_filled() {
        assert_eq!(fill("{fleet}-{index}", "plant", Some(7)), "plant-7");
        assert_eq!(fill("{fleet}/{device}/telemetry", "plant", None), "plant/+/telemetry");
    }

    #[test]
    fn p99_is_a_nearest_rank() {
        assert_eq!(p99(&[]), None);
        assert_eq!(p99(&[5]), Some(5));
        let v: Vec<u64> = (1..=200).collect();
        assert_eq!(p99(&v), Some(198));
    }
}
