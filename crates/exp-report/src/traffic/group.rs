//! Accumulating one group's rows (workload × structure × RTT mode) and
//! turning them into statistics.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use exp_results::schemas::{STATUS_COMPLETE, STATUS_FAILED, STATUS_INTERRUPTED, STATUS_NOT_STARTED};
use exp_results::ResultsError;

use super::read::Frame;
use crate::mqtt::Quantiles;

/// What rows are grouped by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupKey {
    pub structure: String,
    pub rtt_mode: String,
    pub workload: String,
}

/// The statistics of one group (in-window rows only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrafficGroup {
    pub trial: Option<u32>,
    pub point: Option<u32>,
    pub repetition: Option<u32>,
    pub workload: String,
    pub structure: String,
    pub rtt_mode: String,
    /// Connections in the measurement window, and how they ended.
    pub connections: u64,
    pub complete: u64,
    pub short: u64,
    pub failed: u64,
    /// Connection rows outside the measurement window (left out).
    pub outside_window: u64,
    /// Initiator → acceptor and back, bytes moved by in-window connections.
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// Durations of connections that connected (complete or short), ns.
    pub duration_ns: Option<Quantiles>,
    /// Response times of every exchange (request first byte → response last byte), ns.
    pub response_time_ns: Option<Quantiles>,
    /// Most connections open at once within the measurement window.
    pub peak_active: u64,
    /// Mean rate over the in-window intervals, bit/s, per direction.
    pub to_acceptor_bit_per_s: Option<f64>,
    pub to_initiator_bit_per_s: Option<f64>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Accumulator {
    connections: u64,
    complete: u64,
    failed: u64,
    outside: u64,
    sent: u64,
    received: u64,
    durations: Vec<f64>,
    responses: Vec<f64>,
    peak: u64,
    /// Direction → (bytes, ns) over in-window intervals.
    rates: BTreeMap<String, (u64, u64)>,
}

pub(crate) type Reader = fn(&Path, &mut BTreeMap<GroupKey, Accumulator>) -> Result<(), ResultsError>;

const KEY: [&str; 3] = ["workload", "structure", "rtt_mode"];

/// The group keys of every row of `frame`.
fn keys(frame: &Frame) -> Result<Vec<GroupKey>, ResultsError> {
    let workload = frame.str(KEY[0])?;
    let structure = frame.str(KEY[1])?;
    let rtt = frame.str(KEY[2])?;
    Ok((0..frame.height())
        .map(|i| GroupKey {
            workload: workload[i].clone().unwrap_or_default(),
            structure: structure[i].clone().unwrap_or_default(),
            rtt_mode: rtt[i].clone().unwrap_or_default(),
        })
        .collect())
}

fn columns<'a>(more: &[&'a str]) -> Vec<&'a str> {
    KEY.iter().copied().chain(more.iter().copied()).collect()
}

pub(crate) fn add_connections(path: &Path, groups: &mut BTreeMap<GroupKey, Accumulator>) -> Result<(), ResultsError> {
    let wanted = ["status", "duration_ns", "sent_bytes", "received_bytes", "in_window"];
    let frame = Frame::read(path, &columns(&wanted))?;
    let keys = keys(&frame)?;
    let status = frame.str("status")?;
    let duration = frame.u64("duration_ns")?;
    let sent = frame.u64("sent_bytes")?;
    let received = frame.u64("received_bytes")?;
    let in_window = frame.bool("in_window")?;
    for (i, key) in keys.into_iter().enumerate() {
        let acc = groups.entry(key).or_default();
        if in_window[i] == Some(false) {
            acc.outside += 1;
            continue;
        }
        // Never tried: a stopped replay's record, not a connection.
        if status[i].as_deref() == Some(STATUS_NOT_STARTED) {
            continue;
        }
        acc.connections += 1;
        acc.sent += sent[i].unwrap_or(0);
        acc.received += received[i].unwrap_or(0);
        match status[i].as_deref() {
            Some(STATUS_FAILED) => acc.failed += 1,
            other => {
                if other == Some(STATUS_COMPLETE) {
                    acc.complete += 1;
                }
                // A cut connection's duration is the stop's, not its own.
                if let (Some(d), false) = (duration[i], other == Some(STATUS_INTERRUPTED)) {
                    acc.durations.push(d as f64);
                }
            }
        }
    }
    Ok(())
}

pub(crate) fn add_epochs(path: &Path, groups: &mut BTreeMap<GroupKey, Accumulator>) -> Result<(), ResultsError> {
    let frame = Frame::read(path, &columns(&["response_time_ns", "in_window"]))?;
    let keys = keys(&frame)?;
    let response = frame.u64("response_time_ns")?;
    let in_window = frame.bool("in_window")?;
    for (i, key) in keys.into_iter().enumerate() {
        if let (Some(r), false) = (response[i], in_window[i] == Some(false)) {
            groups.entry(key).or_default().responses.push(r as f64);
        }
    }
    Ok(())
}

pub(crate) fn add_active(path: &Path, groups: &mut BTreeMap<GroupKey, Accumulator>) -> Result<(), ResultsError> {
    let frame = Frame::read(path, &columns(&["peak", "in_window"]))?;
    let keys = keys(&frame)?;
    let peak = frame.u64("peak")?;
    let in_window = frame.bool("in_window")?;
    for (i, key) in keys.into_iter().enumerate() {
        if in_window[i] != Some(false) {
            let acc = groups.entry(key).or_default();
            acc.peak = acc.peak.max(peak[i].unwrap_or(0));
        }
    }
    Ok(())
}

pub(crate) fn add_throughput(path: &Path, groups: &mut BTreeMap<GroupKey, Accumulator>) -> Result<(), ResultsError> {
    let frame = Frame::read(path, &columns(&["direction", "bytes", "duration_ns", "in_window"]))?;
    let keys = keys(&frame)?;
    let direction = frame.str("direction")?;
    let bytes = frame.u64("bytes")?;
    let duration = frame.u64("duration_ns")?;
    let in_window = frame.bool("in_window")?;
    for (i, key) in keys.into_iter().enumerate() {
        if in_window[i] == Some(false) {
            continue;
        }
        let (Some(d), Some(b), Some(ns)) = (direction[i].clone(), bytes[i], duration[i]) else {
            continue;
        };
        let rate = groups.entry(key).or_default().rates.entry(d).or_default();
        rate.0 += b;
        rate.1 += ns;
    }
    Ok(())
}

impl Accumulator {
    pub fn merge(&mut self, other: &Accumulator) {
        self.connections += other.connections;
        self.complete += other.complete;
        self.failed += other.failed;
        self.outside += other.outside;
        self.sent += other.sent;
        self.received += other.received;
        self.durations.extend_from_slice(&other.durations);
        self.responses.extend_from_slice(&other.responses);
        self.peak = self.peak.max(other.peak);
        for (direction, (bytes, ns)) in &other.rates {
            let rate = self.rates.entry(direction.clone()).or_default();
            rate.0 += bytes;
            rate.1 += ns;
        }
    }

    pub fn finish(
        mut self,
        key: GroupKey,
        trial: Option<u32>,
        point: Option<u32>,
        repetition: Option<u32>,
    ) -> TrafficGroup {
        let rate = |direction: &str| {
            self.rates
                .get(direction)
                .filter(|(_, ns)| *ns > 0)
                .map(|(bytes, ns)| *bytes as f64 * 8.0 * 1e9 / *ns as f64)
        };
        TrafficGroup {
            trial,
            point,
            repetition,
            to_acceptor_bit_per_s: rate("to_acceptor"),
            to_initiator_bit_per_s: rate("to_initiator"),
            workload: key.workload,
            structure: key.structure,
            rtt_mode: key.rtt_mode,
            connections: self.connections,
            complete: self.complete,
            short: self.connections - self.complete - self.failed,
            failed: self.failed,
            outside_window: self.outside,
            sent_bytes: self.sent,
            received_bytes: self.received,
            duration_ns: Quantiles::of(&mut self.durations),
            response_time_ns: Quantiles::of(&mut self.responses),
            peak_active: self.peak,
        }
    }
}
