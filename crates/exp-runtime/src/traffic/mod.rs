//! The traffic executor: replays connection vectors on real TCP sockets in
//! every active window of the workload and writes the traffic tables.
//!
//! Each active window replays the workload's connections from the window's
//! start, each at its scheduled time. A window with an end (its own, or the
//! trial's) replays only the connections scheduled to start before it, and
//! none runs past it (the replay's deadline is the window's end: running
//! connections are cut there and recorded `interrupted`), so a time-scaled run keeps the trace's connection rate and
//! replays fewer connections rather than starting them faster. The
//! measurement window (`measure`, scaled like the rest of the timeline)
//! marks rows outside it; they are written, but left out of the metrics.
//!
//! `vectors` prepares the connections, `network` runs the sides (loopback,
//! namespaces with the delay stage, or an `expc serve` server), `tables`
//! writes rows and `metrics` sums up the trial; `check` holds its checks
//! before a run.

mod audit;
pub(crate) mod check;
mod metrics;
mod network;
mod tables;
mod vectors;

use std::time::Duration;

use exp_plan::Traffic;

use crate::cancel::Level;
use crate::executor::{ExecError, WorkloadContext, WorkloadSummary};
use crate::schedule::Interval;
use network::Network;
use tables::RowKey;
use vectors::Prepared;

/// How long a cancelled window's replay may take to finish its connections
/// (and keep its records) before it is dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

pub async fn run(ctx: WorkloadContext, traffic: Traffic) -> Result<WorkloadSummary, ExecError> {
    // The compiler resolved the trace's path against the spec's directory.
    let name = ctx.workload.name.as_str();
    let failed = |step: &'static str| move |e| ExecError::step("traffic", name, step, e);
    let prepared = Prepared::load(&traffic, ctx.seed)
        .map_err(|e| ExecError::step("traffic", name, "connection vectors", e.to_string()))?;
    // The sides (namespaces included) exist only from the first window on:
    // the blocks of a trial that run one after another do not hold a
    // testbed each all trial long.
    let first = ctx.intervals.first().map_or(0, |i| i.start_ns);
    if !ctx.cancel.sleep_until_async(ctx.clock.at(first)).await {
        return Ok(summary(metrics::Totals::default(), prepared.skipped, &ctx.bounds));
    }
    let network = Network::start(&traffic, ctx.seed, ctx.clock.now_ns())
        .await
        .map_err(failed("network"))?;
    let key = RowKey {
        workload: ctx.workload.name.clone(),
        structure: traffic.structure.clone(),
        rtt_mode: vectors::rtt_label(&traffic.rtt),
    };
    let replayed = windows(&ctx, &traffic, &prepared, &network, &key).await;
    let queue = match (&network, traffic.bottleneck_bit_per_s) {
        (Network::Namespaces(e), Some(rate)) => network::DIRECTIONS
            .iter()
            .try_for_each(|(direction, label)| {
                tables::write_queue(
                    &ctx.tables,
                    &key,
                    label,
                    e.started_ns,
                    &e.testbed.backlog_samples(*direction),
                )
            })
            .and_then(|()| match &e.capacity {
                Some(capacity) => tables::write_stage(&ctx.tables, &key.workload, rate, capacity),
                None => Ok(()),
            }),
        _ => Ok(()),
    };
    let stopped = network.stop().await;
    let mut totals = replayed?;
    if traffic.bottleneck_bit_per_s.is_some() {
        // Queueing at the bottleneck adds to every RTT by design: TCP's
        // smoothed RTT no longer measures the delay stage (V0202 not audited).
        totals.rtts_us.clear();
    }
    queue?;
    stopped.map_err(failed("stopping the network"))?;
    Ok(summary(totals, prepared.skipped, &ctx.bounds))
}

/// The trial's metrics and its audit's findings.
fn summary(mut totals: metrics::Totals, skipped: usize, bounds: &exp_results::validity::Bounds) -> WorkloadSummary {
    let findings = audit::findings(&mut totals, bounds);
    totals.summary(skipped, findings)
}

/// Replays every active window in turn.
async fn windows(
    ctx: &WorkloadContext,
    traffic: &Traffic,
    prepared: &Prepared,
    network: &Network,
    key: &RowKey,
) -> Result<metrics::Totals, ExecError> {
    let mut totals = metrics::Totals::default();
    for (index, interval) in ctx.intervals.iter().enumerate() {
        if !ctx.cancel.sleep_until_async(ctx.clock.at(interval.start_ns)).await {
            break;
        }
        let length = window_length(interval, ctx.trial_end_ns);
        let mut connections = prepared.within(length);
        if let Some(split) = ctx.split {
            // A split run's part replays every N-th connection (in start
            // order, so each part's load is spread over the window like the
            // whole's); connections keep their ids.
            let (k, n) = (split.index as usize, split.count as usize);
            connections = connections.into_iter().skip(k).step_by(n).collect();
        }
        if connections.is_empty() {
            continue;
        }
        let mut config = network.config(traffic);
        config.interval = Duration::from_nanos(traffic.interval_ns.max(1));
        config.connection_timeout = length;
        config.measure = traffic.measure.as_ref().map(|m| {
            Duration::from_nanos(crate::schedule::scale(m.start_ns, ctx.time_scale))
                ..Duration::from_nanos(crate::schedule::scale(m.end_ns, ctx.time_scale))
        });
        // The window's end (and Ctrl-C, below) stop the replay, which then
        // returns what it measured: no row of the window is lost.
        config.deadline = interval.end_ns.or(ctx.trial_end_ns).map(|end| ctx.clock.at(end));
        let stop_replay = exp_traffic::replay::StopSignal::new();
        config.stop = Some(stop_replay.clone());
        config.counts = Some(ctx.live.connections.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let replay = network.replay(connections, config, stopped);
        tokio::pin!(replay);
        let result = tokio::select! {
            result = &mut replay => result,
            _ = ctx.cancel.reached(Level::Stop) => {
                stop_replay.stop();
                match tokio::time::timeout(CANCEL_GRACE, &mut replay).await {
                    Ok(result) => result,
                    Err(_) => {
                        // Last resort: abandon the window, its connections end now.
                        let _ = stop.send(());
                        let _ = replay.await;
                        let why = format!(
                            "window {index}: the replay did not stop within {CANCEL_GRACE:?} of the \
                             interrupt; its rows were lost"
                        );
                        return Err(ExecError::step("traffic", &ctx.workload.name, "replay", why));
                    }
                }
            }
        }
        .map_err(|e| ExecError::step("traffic", &ctx.workload.name, "replay", e))?;
        let Some(mut result) = result else {
            break;
        };
        if let Some(split) = ctx.split {
            renumber(&mut result, split);
        }
        let origin_ns = exp_results::unix_ns(result.origin).saturating_sub(ctx.clock.start_unix_ns);
        tables::write_window(&ctx.tables, key, index as u64, origin_ns, &result, &prepared.paths)?;
        totals.add(&result);
        if ctx.cancel.is_cancelled() {
            break;
        }
    }
    Ok(totals)
}

/// A split run's part replayed connections `k, k + n, k + 2n, …` of the
/// window as its `0, 1, 2, …`: their rows get the whole window's ids back.
fn renumber(result: &mut exp_traffic::replay::ReplayResult, split: crate::shard::ShardSpec) {
    let global = |id: u64| u64::from(split.index) + id * u64::from(split.count);
    for connection in &mut result.connections {
        connection.id = global(connection.id);
    }
    for epoch in &mut result.epochs {
        epoch.connection_id = global(epoch.connection_id);
    }
}

/// The window's length, from its end or the trial's; `None` lets the
/// replay run every connection to its end.
fn window_length(interval: &Interval, trial_end_ns: Option<u64>) -> Option<Duration> {
    interval
        .end_ns
        .or(trial_end_ns)
        .map(|end| Duration::from_nanos(end.saturating_sub(interval.start_ns)))
}

#[cfg(test)]
mod tests;
