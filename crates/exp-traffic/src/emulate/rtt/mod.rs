//! The language's RTT modes, turned into the RTT the stage emulates for each
//! connection of a trace (whose own measured RTT is `r`).
//!
//! The three models of the connection-structure study:
//! - one RTT for every connection ([`RttMode::Mean`], [`RttMode::Constant`]);
//! - `n` paths ([`RttMode::Paths`]): as in a testbed, where a path is a pair
//!   of hosts behind a delay node and a connection takes the path of the
//!   generator pair that replays it, whatever RTT it had in the trace;
//! - each connection its own `r` ([`RttMode::PerConnection`]).
//!
//! Which connection goes down which path is the whole difference between
//! `paths` and `per_connection`: in a trace where short connections also
//! have short RTTs (nearby servers), per-connection RTTs keep them short,
//! while paths hand them the path mix.

use std::time::Duration;

use exp_stats::Rng;

use super::EmulateError;
use crate::cvec::quantile_sorted;

/// How connection RTTs are emulated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RttMode {
    /// No added delay.
    None,
    /// The same RTT for every connection.
    Constant(Duration),
    /// Every connection gets the mean of all connections' `r`.
    Mean,
    /// Connections spread over `n` paths of fixed RTTs.
    Paths(Paths),
    /// Each connection its own `r`, exactly.
    PerConnection,
}

/// The path model: the paths' RTTs and how connections are put on them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// Number of paths (at least 1).
    pub count: usize,
    pub rtts: PathRtts,
    pub assign: Assignment,
}

/// Where the paths' RTTs come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathRtts {
    /// From the trace: path `k` at the quantile (k + ½) / count of the
    /// connections' `r` values (the midpoints of `count` equal-probability
    /// bins, as [`rtt_path_quantiles_us`](crate::cvec::rtt_path_quantiles_us);
    /// connections without `r` are left out).
    Quantiles,
    /// Given, one per path (given or drawn from a distribution by the
    /// caller), in path order.
    Given(Vec<Duration>),
}

/// How connections are assigned to paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Assignment {
    /// The `k`-th connection in start order takes path `k mod count`, as in
    /// a testbed whose generator pairs each replay every `count`-th
    /// connection: every path carries the same share at every moment.
    RoundRobin,
    /// Each connection takes a path drawn uniformly, from this seed.
    Random { seed: u64 },
    /// Connections sorted by their own `r` are cut into `count` groups of
    /// (nearly) equal size, the fastest group on path 0: a quantised
    /// per-connection mode, not a testbed.
    ByRtt,
}

/// The RTT one connection is emulated at, and the path it took (paths
/// modes only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assigned {
    pub rtt: Duration,
    pub path: Option<u32>,
}

impl RttMode {
    /// What each connection is emulated at, in the order of `measured`
    /// (each connection's `r`, `None` where the trace has none, counted as
    /// 0 by the modes that use it); for round-robin assignment that order
    /// must be start order.
    pub fn assign(&self, measured: &[Option<Duration>]) -> Result<Vec<Assigned>, EmulateError> {
        let own = || measured.iter().map(|r| r.unwrap_or_default());
        let plain = |rtts: Vec<Duration>| rtts.into_iter().map(|rtt| Assigned { rtt, path: None }).collect();
        Ok(match self {
            RttMode::None => plain(vec![Duration::ZERO; measured.len()]),
            RttMode::Constant(rtt) => plain(vec![*rtt; measured.len()]),
            RttMode::Mean => plain(vec![mean(&own().collect::<Vec<_>>()); measured.len()]),
            RttMode::PerConnection => plain(own().collect()),
            RttMode::Paths(paths) => paths.assign(measured)?,
        })
    }

    /// The path RTTs this mode uses for `measured`, in path order (empty
    /// for the modes without paths).
    pub fn path_rtts(&self, measured: &[Option<Duration>]) -> Result<Vec<Duration>, EmulateError> {
        match self {
            RttMode::Paths(paths) => paths.rtts(measured),
            _ => Ok(Vec::new()),
        }
    }
}

impl Paths {
    /// The RTT of each path, in path order.
    pub fn rtts(&self, measured: &[Option<Duration>]) -> Result<Vec<Duration>, EmulateError> {
        if self.count == 0 {
            return Err(EmulateError::InvalidConfig("paths(n) needs n ≥ 1".into()));
        }
        match &self.rtts {
            PathRtts::Given(rtts) if rtts.len() != self.count => Err(EmulateError::InvalidConfig(format!(
                "{} paths but {} path RTTs",
                self.count,
                rtts.len()
            ))),
            PathRtts::Given(rtts) => Ok(rtts.clone()),
            PathRtts::Quantiles => {
                let mut known: Vec<u64> = measured
                    .iter()
                    .flatten()
                    .map(|r| u64::try_from(r.as_micros()).unwrap_or(u64::MAX))
                    .collect();
                known.sort_unstable();
                let at = |k: usize| {
                    let q = (k as f64 + 0.5) / self.count as f64;
                    let us = quantile_sorted(&known, q).unwrap_or(0.0);
                    Duration::from_nanos((us * 1000.0).round() as u64)
                };
                Ok((0..self.count).map(at).collect())
            }
        }
    }

    fn assign(&self, measured: &[Option<Duration>]) -> Result<Vec<Assigned>, EmulateError> {
        let rtts = self.rtts(measured)?;
        let on = |path: usize| Assigned {
            rtt: rtts[path],
            path: Some(u32::try_from(path).unwrap_or(u32::MAX)),
        };
        Ok(match self.assign {
            Assignment::RoundRobin => (0..measured.len()).map(|k| on(k % self.count)).collect(),
            Assignment::Random { seed } => {
                let mut rng = Rng::new(seed).fork("paths");
                let count = self.count as u64;
                (0..measured.len())
                    .map(|_| on(usize::try_from(rng.below(count)).unwrap_or(0)))
                    .collect()
            }
            Assignment::ByRtt => {
                let mut order: Vec<usize> = (0..measured.len()).collect();
                // Ties broken by position so the grouping is deterministic.
                order.sort_by_key(|&i| (measured[i].unwrap_or_default(), i));
                let mut assigned = vec![on(0); measured.len()];
                for (path, group) in split_evenly(&order, self.count).into_iter().enumerate() {
                    for &i in group {
                        assigned[i] = on(path);
                    }
                }
                assigned
            }
        })
    }
}

fn mean(values: &[Duration]) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    let total: u128 = values.iter().map(Duration::as_nanos).sum();
    Duration::from_nanos(u64::try_from(total / values.len() as u128).unwrap_or(u64::MAX))
}

/// `items` cut into `parts` consecutive groups whose sizes differ by at most
/// one (fewer groups when there are fewer items).
fn split_evenly<T>(items: &[T], parts: usize) -> Vec<&[T]> {
    let parts = parts.min(items.len()).max(1);
    let (base, extra) = (items.len() / parts, items.len() % parts);
    let mut groups = Vec::with_capacity(parts);
    let mut start = 0;
    for part in 0..parts {
        let len = base + usize::from(part < extra);
        groups.push(&items[start..start + len]);
        start += len;
    }
    groups
}

#[cfg(test)]
mod tests;
