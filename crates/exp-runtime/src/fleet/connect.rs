//! The connect phase of one interval: devices connect along the ramp, and
//! nothing is sent until every one has connected or failed, so connect
//! work (TLS, CONNACKs, a broker busy accepting) never shows up as send
//! lateness or latency.
//!
//! When the interval ends or the trial stops first, the devices still
//! connecting are abandoned, and every device keeps its row: `connecting`
//! if its attempt had begun, `not_started` if its place in the ramp had
//! not come.

use std::sync::Arc;
use std::time::Instant;

use exp_mqtt::{DeviceEvent, FdBudget, HeldFds, PayloadGenerator};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::devices::{self, Attempt, DeviceJob, Slot};
use super::rows::{Connection, Fate};
use super::{fill, Setup};
use crate::cancel::Level;
use crate::executor::{ExecError, WorkloadContext};

/// How the connect phase ended.
pub struct ConnectPhase {
    /// One per device of this process, in order; `device` is `None` for
    /// those that are not connected.
    pub slots: Vec<Slot>,
    pub connections: Vec<Connection>,
    /// Descriptors of the connected devices, to be given back once they are closed.
    pub held: Vec<HeldFds>,
    /// Every device connected or failed: the send phase may begin.
    pub complete: bool,
    /// When the phase ended, on the trial clock.
    pub ended_ns: u64,
}

impl ConnectPhase {
    /// How many devices have each fate.
    pub fn tally(&self) -> Tally {
        let mut tally = Tally::default();
        for c in &self.connections {
            *match c.fate {
                Fate::Connected => &mut tally.connected,
                Fate::Failed(_) => &mut tally.failed,
                Fate::Connecting => &mut tally.connecting,
                Fate::NotStarted => &mut tally.not_started,
            } += 1;
        }
        tally
    }
}

/// Devices by fate when the connect phase ended.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub connected: u64,
    pub failed: u64,
    pub connecting: u64,
    pub not_started: u64,
}

/// Connects this process's devices from `ramp_start_ns` (trial clock) at
/// its share of `connect_rate`, until all have connected or failed, the
/// interval ends (`end`), or the trial stops.
pub async fn connect_devices(
    s: &Setup<'_>,
    ramp_start_ns: u64,
    end: Option<Instant>,
    events: mpsc::UnboundedSender<DeviceEvent>,
) -> Result<ConnectPhase, ExecError> {
    let (ctx, fleet) = (s.ctx, s.fleet);
    let name = &ctx.workload.name;
    // A split run's part ramps at its share of the rate, so that the parts
    // together connect as fast as the whole fleet would, and finish when it would.
    let rate = fleet.connect_rate_per_s * s.devices.len() as f64 / f64::from(fleet.devices.max(1));
    // Both ends of a connection to the embedded broker are in this process.
    let fds = if fleet.broker.url.is_none() { 2 } else { 1 };
    let budget = FdBudget::prepare(fds * s.devices.len() as u64);
    let mut tasks = Vec::with_capacity(s.devices.len());
    // `index` counts this process's devices; `device` is the fleet's number.
    for (index, device) in s.devices.clone().enumerate() {
        let ramp_ns = if rate.is_finite() && rate > 0.0 {
            (index as f64 / rate * 1e9) as u64
        } else {
            0
        };
        let job = DeviceJob {
            device,
            endpoint: s.endpoint.clone(),
            options: s.device_options(fill(&fleet.client_id, name, Some(device))),
            connect_at_ns: ramp_start_ns.saturating_add(ramp_ns),
            clock: ctx.clock,
            budget,
            fds,
        };
        let client_id = job.options.client_id.clone();
        let planned = (device, client_id, job.connect_at_ns);
        tasks.push((planned, tokio::spawn(devices::connect(job, events.clone()))));
    }
    drop(events);
    let mut attempts = Vec::with_capacity(tasks.len());
    let mut complete = true;
    for (_, task) in &mut tasks {
        tokio::select! {
            done = task => attempts.push(done.map_err(|e| ExecError::step("fleet", name, "a device task failed", e.to_string()))?),
            () = stopped(ctx, end) => {
                complete = false;
                break;
            }
        }
    }
    let ended_ns = ctx.clock.now_ns();
    let abandoned: Vec<_> = tasks.into_iter().skip(attempts.len()).collect();
    for (_, task) in &abandoned {
        task.abort();
    }
    for (planned, task) in abandoned {
        attempts.push(
            abandoned_attempt(planned, task, ended_ns)
                .await
                .map_err(|e| ExecError::step("fleet", name, "a device task failed", e.to_string()))?,
        );
    }
    let mut phase = ConnectPhase {
        slots: Vec::with_capacity(attempts.len()),
        connections: Vec::with_capacity(attempts.len()),
        held: Vec::new(),
        complete,
        ended_ns,
    };
    for attempt in attempts {
        let number = attempt.connection.device;
        let payload = PayloadGenerator::new(&fleet.payload, ctx.seed.wrapping_add(u64::from(number)))
            .map_err(|e| ExecError::step("fleet", name, "payload", e.to_string()))?;
        phase.slots.push(Slot {
            device: attempt.device.map(Arc::new),
            topic: fill(&fleet.topic, name, Some(number)),
            payload,
            dseq: 0,
        });
        phase.connections.push(attempt.connection);
        phase.held.extend(attempt.held);
    }
    Ok(phase)
}

/// A device whose task was aborted when the phase ended: what it had
/// reached, if it finished in the meantime; otherwise still connecting, or
/// not started if its place in the ramp was still to come.
async fn abandoned_attempt(
    (device, client_id, connect_at_ns): (u32, String, u64),
    task: JoinHandle<Attempt>,
    ended_ns: u64,
) -> Result<Attempt, tokio::task::JoinError> {
    match task.await {
        Ok(attempt) => Ok(attempt),
        Err(e) if e.is_cancelled() => {
            let started = connect_at_ns <= ended_ns;
            Ok(Attempt {
                device: None,
                held: None,
                connection: Connection {
                    device,
                    client_id,
                    connect_start_ns: started.then_some(connect_at_ns),
                    connected_ns: None,
                    fate: if started { Fate::Connecting } else { Fate::NotStarted },
                },
            })
        }
        Err(e) => Err(e),
    }
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
