//! The connections a traffic workload replays: read from a trace or
//! synthesized from the seed, shaped by the structure model, cut to what
//! fits in an active window, with the RTT each connection is emulated at.

use std::path::Path;
use std::time::Duration;

use exp_plan::{Rtt, Traffic, Vectors};
use exp_stats::{Rng, Sampler};
use exp_traffic::cvec::{self, Connection, Format, Structure};
use exp_traffic::emulate::RttMode;

/// The workload's connections, ready to replay.
pub struct Prepared {
    /// In start order, structure applied; `min_rtt_us` holds the RTT the
    /// stage emulates for the connection (the measured one when there is
    /// no emulation), which is what the flow hook registers.
    pub connections: Vec<Connection>,
    /// Malformed connections of a lenient trace that were skipped.
    pub skipped: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum VectorsError {
    #[error("unknown connection-vector format `{0}`")]
    Format(String),
    #[error("{0}")]
    Trace(#[from] cvec::CvecError),
    #[error("{0}")]
    Synthetic(#[from] exp_traffic::synth::SynthError),
    #[error("{0}")]
    Structure(#[from] cvec::UnknownStructure),
    #[error("rtt: {0}")]
    Rtt(String),
}

impl Prepared {
    pub fn load(traffic: &Traffic, seed: u64) -> Result<Prepared, VectorsError> {
        let (mut connections, skipped) = match &traffic.vectors {
            Vectors::Trace { file, format } => {
                let format = Format::from_name(format).ok_or_else(|| VectorsError::Format(format.clone()))?;
                let parsed = cvec::read_file(Path::new(file), format, traffic.lenient)?;
                (parsed.connections, parsed.skipped.len())
            }
            Vectors::Synthetic(spec) => (exp_traffic::synth::synthesize(spec, seed)?, 0),
        };
        let structure: Structure = traffic.structure.parse()?;
        connections = connections.iter().map(|c| structure.apply(c)).collect();
        connections.sort_by_key(|c| c.start_us);
        assign_rtts(&mut connections, &traffic.rtt, seed)?;
        Ok(Prepared { connections, skipped })
    }

    /// The connections that start within the first `length` of a window
    /// (all of them without a length): a time-scaled run replays the
    /// connections of its shortened window at their planned rate instead of
    /// compressing the whole schedule into it.
    pub fn within(&self, length: Option<Duration>) -> Vec<Connection> {
        let limit = length.map_or(u64::MAX, |l| u64::try_from(l.as_micros()).unwrap_or(u64::MAX));
        self.connections
            .iter()
            .take_while(|c| c.start_us < limit)
            .cloned()
            .collect()
    }
}

/// Whether the RTT setting needs the delay stage.
pub fn emulates_rtt(rtt: &Rtt) -> bool {
    !matches!(rtt, Rtt::None)
}

/// The label of an RTT mode in the tables and the report.
pub fn rtt_label(rtt: &Rtt) -> String {
    match rtt {
        Rtt::None => "none".into(),
        Rtt::Mean => "mean".into(),
        Rtt::PerConnection => "per_connection".into(),
        Rtt::Paths { count, .. } => format!("paths({count})"),
        Rtt::Dist(_) => "dist".into(),
    }
}

/// Writes the emulated RTT of every connection into its `min_rtt_us`.
fn assign_rtts(connections: &mut [Connection], rtt: &Rtt, seed: u64) -> Result<(), VectorsError> {
    let measured: Vec<Duration> = connections
        .iter()
        .map(|c| Duration::from_micros(c.min_rtt_us.unwrap_or(0)))
        .collect();
    let assigned: Vec<Duration> = match rtt {
        Rtt::None => return Ok(()),
        Rtt::Mean => mode(RttMode::Mean, &measured)?,
        Rtt::PerConnection => mode(RttMode::PerConnection, &measured)?,
        Rtt::Paths { count, rtts_ns } if rtts_ns.is_empty() => {
            mode(RttMode::Paths(usize::try_from(*count).unwrap_or(1)), &measured)?
        }
        Rtt::Paths { rtts_ns, .. } => given_paths(&measured, rtts_ns),
        Rtt::Dist(dist) => {
            let sampler = Sampler::new(dist).map_err(|e| VectorsError::Rtt(e.to_string()))?;
            let mut rng = Rng::new(seed).fork("rtt");
            measured
                .iter()
                .map(|_| Duration::from_nanos(sampler.sample_u64(&mut rng)))
                .collect()
        }
    };
    for (connection, rtt) in connections.iter_mut().zip(assigned) {
        connection.min_rtt_us = Some(u64::try_from(rtt.as_micros()).unwrap_or(u64::MAX));
    }
    Ok(())
}

fn mode(mode: RttMode, measured: &[Duration]) -> Result<Vec<Duration>, VectorsError> {
    mode.assign(measured).map_err(|e| VectorsError::Rtt(e.to_string()))
}

/// Given path RTTs: connections sorted by measured RTT are split into as
/// many groups of (nearly) equal size, the fastest group on the first path.
fn given_paths(measured: &[Duration], rtts_ns: &[u64]) -> Vec<Duration> {
    let mut order: Vec<usize> = (0..measured.len()).collect();
    order.sort_by_key(|&i| (measured[i], i));
    let mut assigned = vec![Duration::ZERO; measured.len()];
    let n = measured.len().max(1);
    for (rank, &i) in order.iter().enumerate() {
        let path = rank * rtts_ns.len() / n;
        assigned[i] = Duration::from_nanos(rtts_ns.get(path).copied().unwrap_or(0));
    }
    assigned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_paths_put_the_fastest_connections_on_the_first_path() {
        let ms = Duration::from_millis;
        let measured = [ms(40), ms(10), ms(30), ms(20)];
        let got = given_paths(&measured, &[5_000_000, 50_000_000]);
        assert_eq!(got, [ms(50), ms(5), ms(50), ms(5)]);
    }
}
