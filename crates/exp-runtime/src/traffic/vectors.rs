//! The connections a traffic workload replays: read from a trace or
//! synthesized from the seed, shaped by the structure model, cut to what
//! fits in an active window, with the RTT each connection is emulated at.

use std::path::Path;
use std::time::Duration;

use exp_plan::{Rtt, Traffic, Vectors};
use exp_stats::{Rng, Sampler};
use exp_traffic::cvec::{self, Connection, Format, Structure};
use exp_traffic::emulate::{Assigned, Assignment, PathRtts, Paths, RttMode};

/// The workload's connections, ready to replay.
pub struct Prepared {
    /// In start order, structure applied; `min_rtt_us` holds the RTT the
    /// stage emulates for the connection (the measured one when there is
    /// no emulation), which is what the flow hook registers.
    pub connections: Vec<Connection>,
    /// The path each connection takes, by position (`None` outside the
    /// paths mode).
    pub paths: Vec<Option<u32>>,
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
        let paths = assign_rtts(&mut connections, &traffic.rtt, seed)?;
        Ok(Prepared {
            connections,
            paths,
            skipped,
        })
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
        Rtt::Paths { count, assign, .. } if assign == "round_robin" => format!("paths({count})"),
        Rtt::Paths { count, assign, .. } => format!("paths({count}, {assign})"),
        Rtt::Dist(_) => "dist".into(),
    }
}

/// Writes the emulated RTT of every connection into its `min_rtt_us` and
/// returns the path each took (all `None` outside the paths mode).
fn assign_rtts(connections: &mut [Connection], rtt: &Rtt, seed: u64) -> Result<Vec<Option<u32>>, VectorsError> {
    let measured: Vec<Option<Duration>> = connections
        .iter()
        .map(|c| c.min_rtt_us.map(Duration::from_micros))
        .collect();
    let rng = Rng::new(seed);
    let assigned: Vec<Assigned> = match rtt {
        Rtt::None => return Ok(vec![None; connections.len()]),
        Rtt::Mean => mode(&RttMode::Mean, &measured)?,
        Rtt::PerConnection => mode(&RttMode::PerConnection, &measured)?,
        Rtt::Paths {
            count,
            rtts_ns,
            distribution,
            assign,
        } => {
            let count = usize::try_from(*count).unwrap_or(usize::MAX);
            let rtts = match distribution {
                Some(dist) => PathRtts::Given(draw(dist, count, &mut rng.fork("path_rtts"))?),
                None if rtts_ns.is_empty() => PathRtts::Quantiles,
                None => PathRtts::Given(rtts_ns.iter().copied().map(Duration::from_nanos).collect()),
            };
            let assign = match assign.as_str() {
                "round_robin" => Assignment::RoundRobin,
                "random" => Assignment::Random {
                    seed: rng.fork("path_assignment").next_u64(),
                },
                "by_rtt" => Assignment::ByRtt,
                other => return Err(VectorsError::Rtt(format!("unknown path assignment `{other}`"))),
            };
            mode(&RttMode::Paths(Paths { count, rtts, assign }), &measured)?
        }
        Rtt::Dist(dist) => draw(dist, connections.len(), &mut rng.fork("rtt"))?
            .into_iter()
            .map(|rtt| Assigned { rtt, path: None })
            .collect(),
    };
    let mut paths = Vec::with_capacity(connections.len());
    for (connection, assigned) in connections.iter_mut().zip(assigned) {
        connection.min_rtt_us = Some(u64::try_from(assigned.rtt.as_micros()).unwrap_or(u64::MAX));
        paths.push(assigned.path);
    }
    Ok(paths)
}

/// `n` RTTs drawn from `dist`.
fn draw(dist: &exp_plan::DistValue, n: usize, rng: &mut Rng) -> Result<Vec<Duration>, VectorsError> {
    let sampler = Sampler::new(dist).map_err(|e| VectorsError::Rtt(e.to_string()))?;
    Ok((0..n).map(|_| Duration::from_nanos(sampler.sample_u64(rng))).collect())
}

fn mode(mode: &RttMode, measured: &[Option<Duration>]) -> Result<Vec<Assigned>, VectorsError> {
    mode.assign(measured).map_err(|e| VectorsError::Rtt(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use exp_traffic::cvec::Mode;

    fn with_rtts(rtts_ms: &[u64]) -> Vec<Connection> {
        rtts_ms
            .iter()
            .enumerate()
            .map(|(i, &ms)| {
                let mut c = Connection::new(i as u64 * 1000, Mode::Concurrent, Vec::new());
                c.min_rtt_us = Some(ms * 1000);
                c
            })
            .collect()
    }

    fn paths_rtt(count: u32, rtts_ms: &[u64], assign: &str) -> Rtt {
        Rtt::Paths {
            count,
            rtts_ns: rtts_ms.iter().map(|ms| ms * 1_000_000).collect(),
            distribution: None,
            assign: assign.into(),
        }
    }

    fn emulated_ms(connections: &[Connection]) -> Vec<u64> {
        connections.iter().map(|c| c.min_rtt_us.unwrap_or(0) / 1000).collect()
    }

    #[test]
    fn given_paths_round_robin_in_start_order() {
        let mut connections = with_rtts(&[40, 10, 30, 20]);
        let paths = assign_rtts(&mut connections, &paths_rtt(2, &[5, 50], "round_robin"), 1).expect("ok");
        assert_eq!(paths, [Some(0), Some(1), Some(0), Some(1)]);
        assert_eq!(emulated_ms(&connections), [5, 50, 5, 50]);
    }

    #[test]
    fn given_paths_by_rtt_put_the_fastest_connections_on_the_first_path() {
        let mut connections = with_rtts(&[40, 10, 30, 20]);
        let paths = assign_rtts(&mut connections, &paths_rtt(2, &[5, 50], "by_rtt"), 1).expect("ok");
        assert_eq!(paths, [Some(1), Some(0), Some(1), Some(0)]);
        assert_eq!(emulated_ms(&connections), [50, 5, 50, 5]);
    }

    #[test]
    fn drawn_paths_and_random_assignment_follow_the_seed() {
        let distribution = exp_plan::DistValue {
            unit: exp_plan::Unit::Ns,
            dist: exp_plan::Dist::Uniform { min: 1e6, max: 500e6 },
        };
        let rtt = Rtt::Paths {
            count: 10,
            rtts_ns: Vec::new(),
            distribution: Some(distribution),
            assign: "random".into(),
        };
        let run = |seed| {
            let mut connections = with_rtts(&[20; 200]);
            let paths = assign_rtts(&mut connections, &rtt, seed).expect("ok");
            (paths, emulated_ms(&connections))
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
        let (paths, rtts) = run(3);
        assert!(paths.iter().all(|p| p.is_some_and(|p| p < 10)));
        let mut distinct = rtts.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() > 1 && distinct.len() <= 10, "{distinct:?}");
    }

    #[test]
    fn labels_name_the_assignment_unless_it_is_the_default() {
        assert_eq!(rtt_label(&paths_rtt(10, &[], "round_robin")), "paths(10)");
        assert_eq!(rtt_label(&paths_rtt(10, &[], "by_rtt")), "paths(10, by_rtt)");
    }
}
