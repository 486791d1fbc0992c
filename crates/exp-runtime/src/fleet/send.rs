//! The send phase of one interval: the pacer thread fires every device's
//! schedule from the moment the connect phase ended, on absolute deadlines,
//! and publishes through [`Publishers`] until the interval ends, the
//! messages run out, or the trial is stopped.

use std::time::{Duration, Instant};

use exp_mqtt::{Pacer, PacerConfig};
use tokio::sync::mpsc;

use super::collector::Msg;
use super::cpu;
use super::devices::{Publishers, Slot, WarmupRule};
use super::Setup;
use crate::executor::{ExecError, WorkloadContext};
use crate::schedule::Interval;

/// Send phase: the schedule starts now, on absolute deadlines, until the
/// interval ends, the pacer runs out of messages, or the trial is stopped.
/// Returns the resident memory the connected fleet added, per device.
pub async fn send(
    s: &Setup<'_>,
    interval: &Interval,
    slots: Vec<Slot>,
    out: &mpsc::UnboundedSender<Msg>,
    rss_before: Option<u64>,
) -> Result<Option<f64>, ExecError> {
    let (ctx, fleet) = (s.ctx, s.fleet);
    let name = &ctx.workload.name;
    let end_ns = interval.end_ns.or(ctx.trial_end_ns);
    let offset_ns = ctx.clock.now_ns();
    let length_ns = end_ns.map(|e| e.saturating_sub(offset_ns));
    let first = s.devices.start;
    let schedules = (0..slots.len() as u32).map(|d| s.schedule.device(first + d)).collect();
    let sink = Publishers {
        slots,
        qos: fleet.qos,
        clock: ctx.clock,
        offset_ns,
        warmup: WarmupRule::of(fleet, interval.start_ns, length_ns, ctx.time_scale),
        out: out.clone(),
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
    sending(ctx, &pacer, end_ns.map(|e| ctx.clock.at(e))).await;
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
    Ok(rss_per_device)
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
