//! Connection vectors synthesized from distributions (Harpoon/Swing style):
//! `traffic { vectors = synthetic(...) }`.
//!
//! Connection `i` (0-based) starts at the sum of `i + 1` draws from
//! `arrival` (a renewal process started at 0, so the first connection
//! starts one gap in). It is sequential, with `1 + round(epochs)` epochs
//! (the registry's "exchanges, plus one", so the default geometric, which
//! can be 0, still gives one), capped at [`MAX_EPOCHS`]. Epoch `k` is:
//!
//! * a request of `max(1, round(request))` bytes from the initiator; for
//!   `k > 0` after `think_time` (its `recv_wait`), for `k = 0` at once;
//! * a response of `max(1, round(response))` bytes from the acceptor after
//!   `server_time` (its `recv_wait`).
//!
//! then the acceptor closes 1 µs after its last response (a FIN with
//! `send_wait` 1, the original format's `t 0`), so replay does not wait for
//! Tmix's default FIN time. `r` is `max(1, round(rtt))` µs (a 0 would read
//! as "no RTT"), `w` is `window_bytes` on both sides; there are no `m` or
//! `l` lines. Times are drawn in ns and rounded to the nearest µs, where 0
//! means "no wait". Ids are `i i`.
//!
//! Determinism: arrivals come from the seed's `arrival` fork; everything
//! else of connection `i` from stream `i` of its `connection` fork, so a
//! connection does not change when the connection count does.

use exp_plan::{SyntheticVectors, Unit};
use exp_stats::{Rng, SampleError, Sampler};

use crate::cvec::{Adu, Connection, Mode, PerSide, Side};

/// Epochs per connection are capped here so a heavy-tailed `epochs`
/// distribution cannot exhaust memory with one connection.
pub const MAX_EPOCHS: u64 = 100_000;

/// Why a synthetic-vectors description cannot be sampled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SynthError {
    #[error("synthetic `{name}`: {source}")]
    Distribution {
        name: &'static str,
        #[source]
        source: SampleError,
    },
    #[error("synthetic `{name}`: expected a distribution of {expected:?}, got {found:?}")]
    Unit {
        name: &'static str,
        expected: Unit,
        found: Unit,
    },
    #[error("synthetic `window`: {0} bytes does not fit a `w` line (at most 4294967295)")]
    Window(u64),
}

/// Validated samplers for one synthetic description.
#[derive(Debug, Clone)]
pub struct Synthesizer {
    connections: u64,
    window: Option<PerSide<u32>>,
    arrival: Sampler,
    epochs: Sampler,
    request: Sampler,
    response: Sampler,
    server_time: Sampler,
    think_time: Sampler,
    rtt: Sampler,
    root: Rng,
}

fn sampler(name: &'static str, value: &exp_plan::DistValue, unit: Option<Unit>) -> Result<Sampler, SynthError> {
    if let Some(expected) = unit {
        if value.unit != expected {
            return Err(SynthError::Unit {
                name,
                expected,
                found: value.unit,
            });
        }
    }
    Sampler::new(value).map_err(|source| SynthError::Distribution { name, source })
}

/// A draw in ns, as whole µs (nearest; negative draws are 0).
fn micros(sampler: &Sampler, rng: &mut Rng) -> u64 {
    // `as` saturates: negative → 0, beyond u64 → u64::MAX.
    (sampler.sample(rng) / 1000.0).round() as u64
}

impl Synthesizer {
    pub fn new(spec: &SyntheticVectors, seed: u64) -> Result<Self, SynthError> {
        let window = match spec.window_bytes {
            0 => None,
            bytes => {
                let w = u32::try_from(bytes).map_err(|_| SynthError::Window(bytes))?;
                Some(PerSide {
                    initiator: w,
                    acceptor: w,
                })
            }
        };
        Ok(Synthesizer {
            connections: spec.connections,
            window,
            arrival: sampler("arrival", &spec.arrival, Some(Unit::Ns))?,
            epochs: sampler("epochs", &spec.epochs, None)?,
            request: sampler("request", &spec.request, Some(Unit::Bytes))?,
            response: sampler("response", &spec.response, Some(Unit::Bytes))?,
            server_time: sampler("server_time", &spec.server_time, Some(Unit::Ns))?,
            think_time: sampler("think_time", &spec.think_time, Some(Unit::Ns))?,
            rtt: sampler("rtt", &spec.rtt, Some(Unit::Ns))?,
            root: Rng::new(seed),
        })
    }

    /// All connections, in start order, generated lazily.
    pub fn connections(&self) -> impl Iterator<Item = Connection> + '_ {
        let mut arrivals = self.root.fork("arrival");
        let streams = self.root.fork("connection");
        let mut start_us: u64 = 0;
        (0..self.connections).map(move |index| {
            start_us = start_us.saturating_add(micros(&self.arrival, &mut arrivals));
            self.connection(index, start_us, &mut streams.stream(index))
        })
    }

    fn connection(&self, index: u64, start_us: u64, rng: &mut Rng) -> Connection {
        let epochs = 1 + self.epochs.sample_u64(rng).min(MAX_EPOCHS - 1);
        let mut adus = Vec::with_capacity(2 * epochs as usize + 1);
        for epoch in 0..epochs {
            let think = if epoch == 0 { 0 } else { micros(&self.think_time, rng) };
            adus.push(Adu {
                side: Side::Initiator,
                send_wait_us: 0,
                recv_wait_us: think,
                bytes: self.request.sample_u64(rng).max(1),
            });
            let server = micros(&self.server_time, rng);
            adus.push(Adu {
                side: Side::Acceptor,
                send_wait_us: 0,
                recv_wait_us: server,
                bytes: self.response.sample_u64(rng).max(1),
            });
        }
        adus.push(Adu {
            side: Side::Acceptor,
            send_wait_us: 1,
            recv_wait_us: 0,
            bytes: 0,
        });
        Connection {
            mode: Mode::Sequential,
            start_us,
            mss: None,
            window: self.window,
            min_rtt_us: Some(micros(&self.rtt, rng).max(1)),
            loss: None,
            ids: (index.to_string(), index.to_string()),
            adus,
        }
    }
}

/// Every connection of `spec` for `seed` (see [`Synthesizer`]).
pub fn synthesize(spec: &SyntheticVectors, seed: u64) -> Result<Vec<Connection>, SynthError> {
    Ok(Synthesizer::new(spec, seed)?.connections().collect())
}
