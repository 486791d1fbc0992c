//! Summaries of connections and traces: epochs, bytes per side, RTTs.

use super::{Connection, Side};

/// One request/response exchange: a run of consecutive initiator data units
/// followed by the run of acceptor data units that answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Epoch {
    /// Initiator bytes (0 when the acceptor speaks first).
    pub request_bytes: u64,
    /// Acceptor bytes (0 for a request without an answer).
    pub response_bytes: u64,
    /// The wait before the response's first unit (the acceptor's server time).
    pub server_time_us: u64,
    /// The wait before the request's first unit (the initiator's think time;
    /// 0 for the first epoch unless the file has a leading `t`).
    pub think_time_us: u64,
}

impl Connection {
    /// Data units (not FINs) sent by `side`.
    pub fn data_units(&self, side: Side) -> usize {
        self.adus.iter().filter(|a| a.side == side && a.bytes > 0).count()
    }

    /// Bytes sent by both sides.
    pub fn total_bytes(&self) -> u64 {
        self.adus.iter().fold(0u64, |sum, a| sum.saturating_add(a.bytes))
    }

    /// Whether `side` sends a FIN unit.
    pub fn has_fin(&self, side: Side) -> bool {
        self.adus.iter().any(|a| a.side == side && a.bytes == 0)
    }

    /// The request/response exchanges, in order, from the data units in list
    /// order (FINs ignored). This is the `NEPOCHS` of a `SEQ` header. For a
    /// concurrent connection the grouping follows the list order too, which
    /// says nothing about timing there.
    pub fn epochs(&self) -> Vec<Epoch> {
        let mut epochs: Vec<Epoch> = Vec::new();
        let mut previous: Option<Side> = None;
        for adu in self.adus.iter().filter(|a| a.bytes > 0) {
            let wait = adu.send_wait_us.max(adu.recv_wait_us);
            match (adu.side, previous) {
                // A request continues the current epoch's request run only
                // if the previous unit was also the initiator's.
                (Side::Initiator, Some(Side::Initiator)) => {
                    if let Some(e) = epochs.last_mut() {
                        e.request_bytes = e.request_bytes.saturating_add(adu.bytes);
                    }
                }
                (Side::Initiator, _) => epochs.push(Epoch {
                    request_bytes: adu.bytes,
                    think_time_us: wait,
                    ..Epoch::default()
                }),
                (Side::Acceptor, Some(Side::Acceptor)) => {
                    if let Some(e) = epochs.last_mut() {
                        e.response_bytes = e.response_bytes.saturating_add(adu.bytes);
                    }
                }
                (Side::Acceptor, Some(Side::Initiator)) => {
                    if let Some(e) = epochs.last_mut() {
                        e.response_bytes = adu.bytes;
                        e.server_time_us = wait;
                    }
                }
                (Side::Acceptor, None) => epochs.push(Epoch {
                    response_bytes: adu.bytes,
                    server_time_us: wait,
                    ..Epoch::default()
                }),
            }
            previous = Some(adu.side);
        }
        epochs
    }
}

/// The `r` values of the connections that have one, sorted ascending.
pub fn rtts_us(connections: &[Connection]) -> Vec<u64> {
    let mut rtts: Vec<u64> = connections.iter().filter_map(|c| c.min_rtt_us).collect();
    rtts.sort_unstable();
    rtts
}

/// Mean of the connections' `r` values; `None` when none has one.
pub fn mean_rtt_us(connections: &[Connection]) -> Option<f64> {
    let rtts = rtts_us(connections);
    if rtts.is_empty() {
        return None;
    }
    Some(rtts.iter().map(|&r| r as f64).sum::<f64>() / rtts.len() as f64)
}

/// The `q`-quantile (0 ≤ q ≤ 1) of the connections' `r` values, linearly
/// interpolated between order statistics (Hyndman & Fan type 7, R's and
/// numpy's default); `None` when none has an `r` or `q` is outside [0, 1].
pub fn rtt_quantile_us(connections: &[Connection], q: f64) -> Option<f64> {
    quantile_sorted(&rtts_us(connections), q)
}

/// `count` RTTs at the midpoints of `count` equal-probability bins
/// (q = (i + ½) / count), as path RTTs for `rtt = paths(count)`.
pub fn rtt_path_quantiles_us(connections: &[Connection], count: u32) -> Vec<f64> {
    let rtts = rtts_us(connections);
    (0..count)
        .filter_map(|i| quantile_sorted(&rtts, (f64::from(i) + 0.5) / f64::from(count)))
        .collect()
}

/// The `q`-quantile of ascending `sorted` values (type 7, as above).
pub(crate) fn quantile_sorted(sorted: &[u64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let (low, high) = (sorted[below] as f64, sorted[above] as f64);
    Some(low + (high - low) * (position - below as f64))
}
