//! The passes over one trial's files that count and collect values, per
//! fleet. Each pass reads only its columns, chunk by chunk, and keeps one
//! value per counted row at most, so a trial's memory is bounded by one
//! column of it (the latencies are collected in separate passes for that).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::phases::{PhaseCount, PhaseStats, Phases};
use super::stats::Quantiles;
use super::Failure;
use crate::part_chunks::for_each_chunk;

pub(crate) use exp_results::schemas::MESSAGE_OK as OK;

/// Per-fleet values, in the order fleets are first seen; a trial has a
/// handful of fleets, so a linear search with a one-entry cache is fastest.
#[derive(Debug)]
pub(crate) struct Fleets<T> {
    entries: Vec<(String, T)>,
    last: usize,
}

impl<T> Default for Fleets<T> {
    fn default() -> Self {
        Fleets {
            entries: Vec::new(),
            last: 0,
        }
    }
}

impl<T: Default> Fleets<T> {
    pub fn get(&mut self, fleet: &str) -> &mut T {
        self.get_or(fleet, T::default)
    }

    /// The fleet's value, made by `init` when the fleet is new.
    pub fn get_or(&mut self, fleet: &str, init: impl FnOnce() -> T) -> &mut T {
        if self.entries.get(self.last).is_none_or(|(name, _)| name != fleet) {
            self.last = match self.entries.iter().position(|(name, _)| name == fleet) {
                Some(i) => i,
                None => {
                    self.entries.push((fleet.to_string(), init()));
                    self.entries.len() - 1
                }
            };
        }
        &mut self.entries[self.last].1
    }

    pub fn take(&mut self, fleet: &str) -> Option<T> {
        let i = self.entries.iter().position(|(name, _)| name == fleet)?;
        Some(std::mem::take(&mut self.entries[i].1))
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(name, _)| name.as_str())
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut T)> {
        self.entries.iter_mut().map(|(name, value)| (name.as_str(), value))
    }
}

/// What became of a fleet's messages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Rows: every message the pacer fired.
    pub scheduled: u64,
    /// `sent_ns` not null: handed to the client.
    pub sent: u64,
    /// `status` = `ok`: acknowledged (QoS 1/2) or written (QoS 0).
    pub acknowledged: u64,
    /// `delivered_ns` not null: the subscriber received it.
    pub delivered: u64,
    /// `status` ≠ `ok`.
    pub lost: u64,
    /// `lost` by status and reason, most frequent first.
    pub losses: Vec<Loss>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loss {
    /// `timeout`, `error`, `dropped`, … (`null` if the row had none).
    pub status: Option<String>,
    pub reason: Option<String>,
    pub count: u64,
}

#[derive(Debug, Default)]
struct Tally {
    counts: Counts,
    losses: BTreeMap<(Option<String>, Option<String>), u64>,
}

impl Tally {
    fn finish(mut self) -> Counts {
        let mut losses: Vec<Loss> = self
            .losses
            .into_iter()
            .map(|((status, reason), count)| Loss { status, reason, count })
            .collect();
        // Stable: equal counts stay in (status, reason) order.
        losses.sort_by_key(|l| std::cmp::Reverse(l.count));
        self.counts.losses = losses;
        self.counts
    }
}

/// The first pass: counts and the send span of completed messages.
#[derive(Debug, Default)]
pub(crate) struct Overview {
    measured: Tally,
    warmup: Tally,
    /// Completed (ok) non-warm-up messages and their first and last `sent_ns`.
    completed: u64,
    span: Option<(u64, u64)>,
    /// Sent non-warm-up messages by phase, when the trial has phases.
    phases: Vec<PhaseCount>,
}

#[derive(Debug, Default)]
pub(crate) struct OverviewResult {
    pub counts: Counts,
    pub warmup: Counts,
    pub throughput_per_s: Option<f64>,
    /// Indexed by phase; empty without phases.
    pub phases: Vec<PhaseCount>,
}

impl Overview {
    pub fn finish(self) -> OverviewResult {
        // (n − 1) / span, as the runtime's `throughput` metric: n sends delimit n − 1 gaps.
        let throughput_per_s = match self.span {
            Some((first, last)) if last > first && self.completed >= 2 => {
                Some((self.completed - 1) as f64 / ((last - first) as f64 / 1e9))
            }
            _ => None,
        };
        OverviewResult {
            counts: self.measured.finish(),
            warmup: self.warmup.finish(),
            throughput_per_s,
            phases: self.phases,
        }
    }
}

/// With `phases`, also counts each phase's sent non-warm-up messages.
pub(crate) fn overview(files: &[&Path], phases: Option<&Phases>) -> Result<Fleets<Overview>, Failure> {
    let mut fleets = Fleets::<Overview>::default();
    let required = ["fleet", "status", "warmup", "sent_ns", "delivered_ns"];
    for (index, path) in files.iter().enumerate() {
        for_each_chunk(path, &required, &["reason"], |chunk| {
            let fleet = chunk.str("fleet")?;
            let status = chunk.str("status")?;
            let reason = chunk.str_or_null("reason")?;
            let warmup = chunk.bool("warmup")?;
            let sent = chunk.u64("sent_ns")?;
            let delivered = chunk.u64("delivered_ns")?;
            let rows = fleet.iter().zip(status.iter()).zip(reason.iter()).zip(warmup.iter());
            for ((((fleet, status), reason), warmup), (sent, delivered)) in rows.zip(sent.iter().zip(delivered.iter()))
            {
                let o = fleets.get(fleet.unwrap_or_default());
                // A missing flag counts as measured: the row is not known to be warm-up.
                let warmup = warmup.unwrap_or(false);
                let tally = if warmup { &mut o.warmup } else { &mut o.measured };
                let c = &mut tally.counts;
                c.scheduled += 1;
                c.sent += u64::from(sent.is_some());
                c.delivered += u64::from(delivered.is_some());
                if status == Some(OK) {
                    c.acknowledged += 1;
                } else {
                    c.lost += 1;
                    let key = (status.map(str::to_string), reason.map(str::to_string));
                    *tally.losses.entry(key).or_default() += 1;
                }
                if let (false, Some(OK), Some(sent)) = (warmup, status, sent) {
                    o.completed += 1;
                    o.span = Some(o.span.map_or((sent, sent), |(a, b)| (a.min(sent), b.max(sent))));
                }
                if let (false, Some(phases), Some(sent)) = (warmup, phases, sent) {
                    if o.phases.is_empty() {
                        o.phases = vec![PhaseCount::default(); phases.len()];
                    }
                    if let Some(c) = o.phases.get_mut(phases.of(sent)) {
                        c.n += 1;
                        c.ok += u64::from(status == Some(OK));
                        c.delivered += u64::from(delivered.is_some());
                    }
                }
            }
            Ok(())
        })
        .map_err(|e| (index, e))?;
    }
    Ok(fleets)
}

/// Which non-warm-up rows a value pass takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Taken {
    /// `status` is `ok`.
    Completed,
    /// `sent_ns` is not null.
    Sent,
}

/// `column` of the non-warm-up rows `taken` that have it, per fleet in one
/// group, or with `phases` in one group per phase (by `sent_ns`) and a last
/// one for the rows taken that were not sent (none for [`Taken::Sent`]), so
/// that the groups together hold the fleet's values. `expected` (an upper bound of a fleet's and
/// group's values, from the counts) sizes each vector once: growing by
/// doubling would hold up to three times the values while copying.
pub(crate) fn values(
    files: &[&Path],
    column: &str,
    taken: Taken,
    phases: Option<&Phases>,
    expected: &dyn Fn(&str, usize) -> usize,
) -> Result<Fleets<Vec<Vec<f64>>>, Failure> {
    let mut fleets = Fleets::<Vec<Vec<f64>>>::default();
    let groups = phases.map_or(1, |p| p.len() + 1);
    let mut required = vec!["fleet", "warmup", column];
    match taken {
        Taken::Completed => required.push("status"),
        Taken::Sent => required.push("sent_ns"),
    }
    let by_sent = phases.is_some() || taken == Taken::Sent;
    if by_sent && !required.contains(&"sent_ns") {
        required.push("sent_ns");
    }
    for (index, path) in files.iter().enumerate() {
        for_each_chunk(path, &required, &[], |chunk| {
            let fleet = chunk.str("fleet")?;
            let warmup = chunk.bool("warmup")?;
            let values = chunk.u64(column)?;
            // Each row's group, `None` for a row not taken.
            let mut slots: Vec<Option<u32>> = vec![Some(0); fleet.len()];
            if taken == Taken::Completed {
                for (slot, status) in slots.iter_mut().zip(chunk.str("status")?.iter()) {
                    if status != Some(OK) {
                        *slot = None;
                    }
                }
            }
            if by_sent {
                for (slot, sent) in slots.iter_mut().zip(chunk.u64("sent_ns")?.iter()) {
                    *slot = match (sent, phases) {
                        (None, Some(p)) if taken == Taken::Completed => slot.and_then(|_| u32::try_from(p.len()).ok()),
                        (None, _) => None,
                        (Some(t), Some(p)) => slot.and_then(|_| u32::try_from(p.of(t)).ok()),
                        (Some(_), None) => *slot,
                    };
                }
            }
            let rows = fleet.iter().zip(warmup.iter()).zip(values.iter()).zip(slots);
            for (((fleet, warmup), value), slot) in rows {
                if let (Some(false) | None, Some(v), Some(slot)) = (warmup, value, slot) {
                    let fleet = fleet.unwrap_or_default();
                    let slot = slot as usize;
                    let of_fleet = fleets.get_or(fleet, || vec![Vec::new(); groups]);
                    if let Some(group) = of_fleet.get_mut(slot) {
                        if group.capacity() == 0 {
                            group.reserve_exact(expected(fleet, slot));
                        }
                        group.push(v as f64);
                    }
                }
            }
            Ok(())
        })
        .map_err(|e| (index, e))?;
    }
    Ok(fleets)
}

/// How a fleet's devices connected (the `mqtt_devices` table).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Connections {
    /// Rows: one per device and active interval.
    pub devices: u64,
    /// `connected_ns` not null.
    pub connected: u64,
    /// Time to CONNACK of the connected ones.
    pub connect_latency_ns: Option<Quantiles>,
    pub disconnects: u64,
    pub reconnects: u64,
}

#[derive(Debug, Default)]
pub(crate) struct ConnectionsAcc {
    counts: Connections,
    latency: Vec<f64>,
}

impl ConnectionsAcc {
    pub fn finish(mut self) -> Connections {
        self.counts.connect_latency_ns = Quantiles::of(&mut self.latency);
        self.counts
    }
}

pub(crate) fn connections(files: &[&Path]) -> Result<Fleets<ConnectionsAcc>, Failure> {
    let mut fleets = Fleets::<ConnectionsAcc>::default();
    let required = [
        "fleet",
        "connected_ns",
        "connect_latency_ns",
        "disconnects",
        "reconnects",
    ];
    for (index, path) in files.iter().enumerate() {
        for_each_chunk(path, &required, &[], |chunk| {
            let fleet = chunk.str("fleet")?;
            let connected = chunk.u64("connected_ns")?;
            let latency = chunk.u64("connect_latency_ns")?;
            let disconnects = chunk.u64("disconnects")?;
            let reconnects = chunk.u64("reconnects")?;
            let rows = fleet.iter().zip(connected.iter()).zip(latency.iter());
            let more = disconnects.iter().zip(reconnects.iter());
            for (((fleet, connected), latency), (disconnects, reconnects)) in rows.zip(more) {
                let acc = fleets.get(fleet.unwrap_or_default());
                acc.counts.devices += 1;
                acc.counts.connected += u64::from(connected.is_some());
                acc.counts.disconnects += disconnects.unwrap_or(0);
                acc.counts.reconnects += reconnects.unwrap_or(0);
                if let Some(l) = latency {
                    acc.latency.push(l as f64);
                }
            }
            Ok(())
        })
        .map_err(|e| (index, e))?;
    }
    Ok(fleets)
}

/// The trial's `contended` flag from the `trials` table (`None` if it has no such column).
pub(crate) fn contended(files: &[&Path]) -> Result<Option<bool>, Failure> {
    let mut flag = None;
    for (index, path) in files.iter().enumerate() {
        for_each_chunk(path, &[], &["contended"], |chunk| {
            if chunk.has("contended") {
                flag = flag.or(chunk.bool("contended")?.iter().flatten().next());
            }
            Ok(())
        })
        .map_err(|e| (index, e))?;
    }
    Ok(flag)
}

/// A value pass: its column, rows, the counts bounding a fleet's and a
/// phase's values, and where its quantiles go.
pub(super) struct Pass {
    pub column: &'static str,
    pub taken: Taken,
    pub fleet_count: fn(&Counts) -> u64,
    pub phase_count: fn(&PhaseCount) -> u64,
    pub phase_field: fn(&mut PhaseStats) -> &mut Option<Quantiles>,
}

pub(super) const PASSES: [Pass; 3] = [
    Pass {
        column: "ack_latency_ns",
        taken: Taken::Completed,
        fleet_count: |c| c.acknowledged,
        phase_count: |c| c.ok,
        phase_field: |s| &mut s.ack_latency_ns,
    },
    Pass {
        column: "delivery_latency_ns",
        taken: Taken::Completed,
        fleet_count: |c| c.delivered,
        phase_count: |c| c.delivered,
        phase_field: |s| &mut s.delivery_latency_ns,
    },
    Pass {
        column: "lateness_ns",
        taken: Taken::Sent,
        fleet_count: |c| c.sent,
        phase_count: |c| c.n,
        phase_field: |s| &mut s.lateness_ns,
    },
];
