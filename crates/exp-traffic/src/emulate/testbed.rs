//! The testbed: two network namespaces (initiator and acceptor), each with a
//! TUN device, joined by the delay stage's two forwarder threads. Dropping it
//! stops the forwarders and removes both namespaces with their devices, on
//! early returns and panics too.

use std::io;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;

use super::flow::{Direction, FlowParams, FlowTable};
use super::forwarder::{self, Ends, Sampling};
use super::link::{BacklogSample, Bottleneck, Link};
use super::netns::Namespace;
use super::pipeline::{Counters, DirectionStats, Pipeline};
use super::{preflight, sys, EmulateError};

/// Name of the TUN device inside each namespace.
const TUN_NAME: &str = "expc0";
const INITIATOR_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
const ACCEPTOR_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);
const PREFIX_LEN: &str = "24";

/// Tells testbeds of one process apart.
static NEXT_TESTBED: AtomicU64 = AtomicU64::new(0);

/// One end of the emulated path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Initiator,
    Acceptor,
}

/// How the delay stage treats packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageConfig {
    /// Parameters of packets whose flow is not registered (and of non-TCP/UDP
    /// packets such as ICMP).
    pub default: FlowParams,
    /// A rate-limited link with a queue, in each direction.
    pub bottleneck: Option<Bottleneck>,
    /// Seed of the loss decisions.
    pub seed: u64,
}

impl Default for StageConfig {
    fn default() -> Self {
        StageConfig {
            default: FlowParams::with_rtt(std::time::Duration::ZERO),
            bottleneck: None,
            seed: 0,
        }
    }
}

/// Counters of both directions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageStats {
    pub to_acceptor: DirectionStats,
    pub to_initiator: DirectionStats,
}

/// Per-direction state the testbed keeps to report on its forwarders.
struct DirectionState {
    counters: Arc<Counters>,
    samples: Arc<Mutex<Vec<BacklogSample>>>,
}

pub struct Testbed {
    flows: Arc<FlowTable>,
    stop: Arc<AtomicBool>,
    forwarders: Vec<JoinHandle<io::Result<()>>>,
    to_acceptor: DirectionState,
    to_initiator: DirectionState,
    // Declared last: removed after the forwarders have stopped.
    initiator: Namespace,
    acceptor: Namespace,
}

impl Testbed {
    /// Creates the namespaces `PREFIX-PID-N-i` and `PREFIX-PID-N-a`, their
    /// TUN devices (initiator 10.77.0.1/24, acceptor 10.77.0.2/24) and the
    /// forwarders. Needs root.
    pub fn create(name_prefix: &str, config: StageConfig) -> Result<Testbed, EmulateError> {
        preflight()?;
        config.default.validate()?;
        if let Some(bottleneck) = &config.bottleneck {
            bottleneck.validate()?;
        }
        let base = format!(
            "{name_prefix}-{}-{}",
            std::process::id(),
            NEXT_TESTBED.fetch_add(1, Ordering::Relaxed)
        );
        let initiator = Namespace::create(&format!("{base}-i"))?;
        let acceptor = Namespace::create(&format!("{base}-a"))?;
        let initiator_tun = attach_tun(&initiator, INITIATOR_ADDR)?;
        let acceptor_tun = attach_tun(&acceptor, ACCEPTOR_ADDR)?;
        let clone = |tun: &std::fs::File| tun.try_clone().map_err(|e| EmulateError::io("duplicating a TUN fd", e));
        let mut testbed = Testbed {
            flows: Arc::new(FlowTable::new()),
            stop: Arc::new(AtomicBool::new(false)),
            forwarders: Vec::new(),
            to_acceptor: DirectionState::new(),
            to_initiator: DirectionState::new(),
            initiator,
            acceptor,
        };
        let epoch = Instant::now();
        let to_acceptor_ends = Ends {
            output: clone(&acceptor_tun)?,
            input: initiator_tun,
        };
        let to_initiator_ends = Ends {
            output: clone(&to_acceptor_ends.input)?,
            input: acceptor_tun,
        };
        for (direction, ends) in [
            (Direction::ToAcceptor, to_acceptor_ends),
            (Direction::ToInitiator, to_initiator_ends),
        ] {
            let state = testbed.direction(direction);
            let pipeline = Pipeline::new(
                direction,
                testbed.flows.clone(),
                config.default,
                config.bottleneck.map(Link::new),
                direction_seed(config.seed, direction),
                state.counters.clone(),
            );
            let sampling = config.bottleneck.map(|_| Sampling {
                epoch,
                samples: state.samples.clone(),
            });
            let name = format!("expc-fwd-{direction:?}");
            let handle = forwarder::spawn(name, ends, pipeline, sampling, testbed.stop.clone())
                .map_err(|e| EmulateError::io("spawning a forwarder thread", e))?;
            testbed.forwarders.push(handle);
        }
        Ok(testbed)
    }

    /// The registry the initiator fills before connecting.
    pub fn flows(&self) -> &Arc<FlowTable> {
        &self.flows
    }

    /// The address of `side`'s TUN device inside its namespace.
    pub fn address(&self, side: Side) -> Ipv4Addr {
        match side {
            Side::Initiator => INITIATOR_ADDR,
            Side::Acceptor => ACCEPTOR_ADDR,
        }
    }

    /// The name of `side`'s namespace (for `ip netns exec`).
    pub fn namespace_name(&self, side: Side) -> &str {
        self.namespace(side).name()
    }

    /// Runs `f` on a new thread inside `side`'s namespace. Sockets it opens
    /// live there, and so do threads it spawns (a tokio runtime built in `f`
    /// included), because threads inherit the namespace they are cloned in.
    pub fn spawn_in<T, F>(&self, side: Side, f: F) -> Result<JoinHandle<Result<T, EmulateError>>, EmulateError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.namespace(side).spawn(f)
    }

    /// Like [`Testbed::spawn_in`], waiting for the result.
    pub fn run_in<T, F>(&self, side: Side, f: F) -> Result<T, EmulateError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_in(side, f)?
            .join()
            .map_err(|_| EmulateError::ThreadPanicked {
                namespace: self.namespace_name(side).to_string(),
            })?
    }

    /// Counters of both directions so far.
    pub fn stats(&self) -> StageStats {
        StageStats {
            to_acceptor: self.to_acceptor.counters.snapshot(),
            to_initiator: self.to_initiator.counters.snapshot(),
        }
    }

    /// The bottleneck backlog samples of `direction` so far, taken every
    /// 10 ms (empty without a bottleneck).
    pub fn backlog_samples(&self, direction: Direction) -> Vec<BacklogSample> {
        self.direction(direction)
            .samples
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stops the forwarders and removes the namespaces, reporting a
    /// forwarder that failed on the way (dropping does the same silently).
    pub fn shutdown(mut self) -> Result<(), EmulateError> {
        self.stop_forwarders()
    }

    fn stop_forwarders(&mut self) -> Result<(), EmulateError> {
        self.stop.store(true, Ordering::Relaxed);
        let mut result = Ok(());
        for handle in self.forwarders.drain(..) {
            let outcome = match handle.join() {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(EmulateError::io("forwarder", e)),
                Err(_) => Err(EmulateError::ThreadPanicked {
                    namespace: "(forwarder)".into(),
                }),
            };
            result = result.and(outcome);
        }
        result
    }

    fn namespace(&self, side: Side) -> &Namespace {
        match side {
            Side::Initiator => &self.initiator,
            Side::Acceptor => &self.acceptor,
        }
    }

    fn direction(&self, direction: Direction) -> &DirectionState {
        match direction {
            Direction::ToAcceptor => &self.to_acceptor,
            Direction::ToInitiator => &self.to_initiator,
        }
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        let _ = self.stop_forwarders();
    }
}

impl DirectionState {
    fn new() -> DirectionState {
        DirectionState {
            counters: Arc::default(),
            samples: Arc::default(),
        }
    }
}

/// Distinct, seed-determined loss sequences for the two directions.
fn direction_seed(seed: u64, direction: Direction) -> u64 {
    match direction {
        Direction::ToAcceptor => seed,
        Direction::ToInitiator => seed ^ 0x5851_f42d_4c95_7f2d,
    }
}

/// Creates the TUN device inside `namespace` (from a thread that joined it)
/// and gives it `address`, with loopback up.
fn attach_tun(namespace: &Namespace, address: Ipv4Addr) -> Result<std::fs::File, EmulateError> {
    let tun = namespace
        .spawn(|| sys::open_tun(TUN_NAME))?
        .join()
        .map_err(|_| EmulateError::ThreadPanicked {
            namespace: namespace.name().to_string(),
        })??
        .map_err(|e| EmulateError::io(format!("creating TUN device {TUN_NAME} in {}", namespace.name()), e))?;
    namespace.ip(&["link", "set", "lo", "up"])?;
    namespace.ip(&["addr", "add", &format!("{address}/{PREFIX_LEN}"), "dev", TUN_NAME])?;
    namespace.ip(&["link", "set", TUN_NAME, "up"])?;
    Ok(tun)
}
