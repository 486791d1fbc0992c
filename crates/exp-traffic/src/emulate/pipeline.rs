//! What happens to a packet in one direction, without any I/O: look up its
//! flow, drop it with the flow's loss rate, pass it through the bottleneck if
//! there is one, and hold it until its release time (departure from the
//! bottleneck, or arrival, plus the flow's one-way delay). The forwarder
//! thread feeds packets in and writes out whatever is due.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::flow::{Direction, FlowKey, FlowParams, FlowTable};
use super::link::Link;
use super::packet;

/// The seeded generator behind loss decisions (splitmix64): same seed and
/// same packet sequence give the same drops.
#[derive(Clone, Debug)]
pub struct LossRng {
    state: u64,
}

impl LossRng {
    pub fn new(seed: u64) -> LossRng {
        LossRng { state: seed }
    }

    /// Uniform in [0, 1).
    pub fn next_unit(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Whether a packet subject to loss rate `loss` is dropped. Rates of 0
    /// and 1 draw nothing, so they are exact and leave the sequence alone.
    pub fn drops(&mut self, loss: f64) -> bool {
        if loss <= 0.0 {
            false
        } else if loss >= 1.0 {
            true
        } else {
            self.next_unit() < loss
        }
    }
}

/// Counters of one direction, shared between the forwarder and readers.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    received: AtomicU64,
    forwarded: AtomicU64,
    forwarded_bytes: AtomicU64,
    lost: AtomicU64,
    queue_drops: AtomicU64,
    write_errors: AtomicU64,
    lateness_sum_ns: AtomicU64,
    lateness_max_ns: AtomicU64,
}

impl Counters {
    pub(crate) fn snapshot(&self) -> DirectionStats {
        let load = |c: &AtomicU64| c.load(AtomicOrdering::Relaxed);
        DirectionStats {
            received: load(&self.received),
            forwarded: load(&self.forwarded),
            forwarded_bytes: load(&self.forwarded_bytes),
            lost: load(&self.lost),
            queue_drops: load(&self.queue_drops),
            write_errors: load(&self.write_errors),
            lateness_sum: Duration::from_nanos(load(&self.lateness_sum_ns)),
            lateness_max: Duration::from_nanos(load(&self.lateness_max_ns)),
        }
    }

    pub(crate) fn record_forwarded(&self, bytes: usize, lateness: Duration) {
        let nanos = u64::try_from(lateness.as_nanos()).unwrap_or(u64::MAX);
        self.forwarded.fetch_add(1, AtomicOrdering::Relaxed);
        self.forwarded_bytes.fetch_add(bytes as u64, AtomicOrdering::Relaxed);
        self.lateness_sum_ns.fetch_add(nanos, AtomicOrdering::Relaxed);
        self.lateness_max_ns.fetch_max(nanos, AtomicOrdering::Relaxed);
    }

    pub(crate) fn record_write_error(&self) {
        self.write_errors.fetch_add(1, AtomicOrdering::Relaxed);
    }
}

/// What one direction of the stage has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectionStats {
    /// Packets read from the sending side's TUN.
    pub received: u64,
    /// Packets written to the receiving side's TUN, and their IP bytes.
    pub forwarded: u64,
    pub forwarded_bytes: u64,
    /// Packets dropped by the loss rate.
    pub lost: u64,
    /// Packets dropped at the tail of a full bottleneck queue.
    pub queue_drops: u64,
    /// Packets the receiving TUN refused.
    pub write_errors: u64,
    /// Total and worst time packets left later than their release time: the
    /// error the stage adds to the emulated delay.
    pub lateness_sum: Duration,
    pub lateness_max: Duration,
}

impl DirectionStats {
    /// Mean time a forwarded packet left after its release time.
    pub fn mean_lateness(&self) -> Duration {
        match u32::try_from(self.forwarded) {
            Ok(0) => Duration::ZERO,
            Ok(n) => self.lateness_sum / n,
            Err(_) => Duration::from_nanos((self.lateness_sum.as_nanos() / u128::from(self.forwarded)) as u64),
        }
    }
}

/// A packet waiting for its release time. Ties break by arrival order, so
/// packets of a flow (constant delay, FIFO bottleneck) never overtake each
/// other.
#[derive(Debug)]
struct Pending {
    release: Instant,
    arrival_order: u64,
    packet: Vec<u8>,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.release, self.arrival_order).cmp(&(other.release, other.arrival_order))
    }
}

/// One direction of the delay stage.
#[derive(Debug)]
pub(crate) struct Pipeline {
    direction: Direction,
    flows: Arc<FlowTable>,
    default: FlowParams,
    link: Option<Link>,
    rng: LossRng,
    pending: BinaryHeap<Reverse<Pending>>,
    arrivals: u64,
    counters: Arc<Counters>,
}

impl Pipeline {
    pub(crate) fn new(
        direction: Direction,
        flows: Arc<FlowTable>,
        default: FlowParams,
        link: Option<Link>,
        seed: u64,
        counters: Arc<Counters>,
    ) -> Pipeline {
        Pipeline {
            direction,
            flows,
            default,
            link,
            rng: LossRng::new(seed),
            pending: BinaryHeap::new(),
            arrivals: 0,
            counters,
        }
    }

    /// Takes a packet read at `now`: drops it or schedules its release.
    pub(crate) fn admit(&mut self, packet: Vec<u8>, now: Instant) {
        self.counters.received.fetch_add(1, AtomicOrdering::Relaxed);
        let params = packet::endpoints(&packet)
            .and_then(|endpoints| self.flows.get(&FlowKey::of_packet(self.direction, &endpoints)))
            .unwrap_or(self.default);
        if self.rng.drops(params.loss(self.direction)) {
            self.counters.lost.fetch_add(1, AtomicOrdering::Relaxed);
            return;
        }
        let leaves_link = match &mut self.link {
            None => now,
            Some(link) => match link.enqueue(packet.len(), now) {
                Some(departure) => departure,
                None => {
                    self.counters.queue_drops.fetch_add(1, AtomicOrdering::Relaxed);
                    return;
                }
            },
        };
        self.arrivals += 1;
        self.pending.push(Reverse(Pending {
            release: leaves_link + params.one_way_delay(self.direction),
            arrival_order: self.arrivals,
            packet,
        }));
    }

    /// When the next held packet is due, if any is held.
    pub(crate) fn next_release(&self) -> Option<Instant> {
        self.pending.peek().map(|Reverse(p)| p.release)
    }

    /// The next packet due by `now`, with its release time.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<(Instant, Vec<u8>)> {
        if self.next_release()? > now {
            return None;
        }
        self.pending.pop().map(|Reverse(p)| (p.release, p.packet))
    }

    /// The bottleneck's backlog at `now` (packets, bytes), if there is one.
    pub(crate) fn backlog(&mut self, now: Instant) -> Option<(usize, usize)> {
        self.link.as_mut().map(|link| link.backlog(now))
    }

    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulate::link::Bottleneck;
    use crate::emulate::packet::tests::ipv4;
    use crate::emulate::packet::Protocol;

    fn pipeline(default: FlowParams, link: Option<Link>) -> (Pipeline, Arc<FlowTable>) {
        let flows = Arc::new(FlowTable::new());
        let p = Pipeline::new(Direction::ToAcceptor, flows.clone(), default, link, 7, Arc::default());
        (p, flows)
    }

    fn tcp(sport: u16) -> Vec<u8> {
        ipv4(6, [10, 77, 0, 1], sport, [10, 77, 0, 2], 80)
    }

    #[test]
    fn holds_each_flow_for_its_own_one_way_delay() {
        let (mut p, flows) = pipeline(FlowParams::with_rtt(Duration::from_millis(100)), None);
        let key = |port: u16| FlowKey {
            protocol: Protocol::Tcp,
            initiator: format!("10.77.0.1:{port}").parse().expect("addr"),
            acceptor: "10.77.0.2:80".parse().expect("addr"),
        };
        flows
            .register(key(1), FlowParams::with_rtt(Duration::from_millis(80)))
            .expect("ok");
        flows
            .register(key(2), FlowParams::with_rtt(Duration::from_millis(10)))
            .expect("ok");
        let t0 = Instant::now();
        p.admit(tcp(1), t0);
        p.admit(tcp(2), t0);
        p.admit(tcp(3), t0); // unregistered: default 100 ms RTT
        assert_eq!(p.next_release(), Some(t0 + Duration::from_millis(5)));
        assert!(p.pop_due(t0 + Duration::from_millis(4)).is_none());
        let order: Vec<u16> = std::iter::from_fn(|| p.pop_due(t0 + Duration::from_secs(1)))
            .map(|(_, packet)| u16::from_be_bytes([packet[20], packet[21]]))
            .collect();
        assert_eq!(order, vec![2, 1, 3]);
    }

    #[test]
    fn keeps_arrival_order_within_a_flow() {
        let (mut p, _) = pipeline(FlowParams::with_rtt(Duration::from_millis(10)), None);
        let t0 = Instant::now();
        for i in 0..50u8 {
            let mut packet = tcp(1);
            packet[39] = i;
            p.admit(packet, t0);
        }
        let seen: Vec<u8> = std::iter::from_fn(|| p.pop_due(t0 + Duration::from_secs(1)))
            .map(|(_, packet)| packet[39])
            .collect();
        assert_eq!(seen, (0..50).collect::<Vec<u8>>());
    }

    #[test]
    fn applies_loss_and_tail_drop_and_counts_them() {
        let lossy = FlowParams {
            loss_to_acceptor: 1.0,
            ..FlowParams::with_rtt(Duration::ZERO)
        };
        let (mut p, _) = pipeline(lossy, None);
        p.admit(tcp(1), Instant::now());
        assert!(p.next_release().is_none());
        assert_eq!(p.counters().snapshot().lost, 1);

        let link = Link::new(Bottleneck {
            rate_bits_per_s: 8_000_000,
            queue_bytes: 80,
        });
        let (mut p, _) = pipeline(FlowParams::with_rtt(Duration::from_millis(2)), Some(link));
        let t0 = Instant::now();
        p.admit(tcp(1), t0);
        p.admit(tcp(1), t0);
        p.admit(tcp(1), t0); // 120 bytes > 80: dropped
        assert_eq!(p.counters().snapshot().queue_drops, 1);
        assert_eq!(p.backlog(t0), Some((2, 80)));
        // 40 bytes at 8 Mbit/s take 40 µs; then the 1 ms one-way delay.
        assert_eq!(p.next_release(), Some(t0 + Duration::from_micros(1040)));
    }

    #[test]
    fn loss_rng_is_deterministic_and_hits_its_rate() {
        let draws = |seed| {
            let mut rng = LossRng::new(seed);
            (0..100_000).filter(|_| rng.drops(0.3)).count()
        };
        assert_eq!(draws(42), draws(42));
        assert_ne!(draws(42), draws(43));
        let rate = draws(42) as f64 / 100_000.0;
        assert!((rate - 0.3).abs() < 0.01, "{rate}");
    }
}
