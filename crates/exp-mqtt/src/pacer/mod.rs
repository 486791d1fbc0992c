//! A central high-resolution pacer: one OS thread fires every device's sends.
//!
//! Why not one sleeping task per device: tokio's timer wheel has 1 ms
//! resolution and every task wakes independently, which measured p99 lateness
//! of 9 ms (560 ms with a busy neighbour). Here one thread owns a min-heap of
//! (deadline, device), sleeps coarsely until `spin_margin_ns` before the next
//! deadline (the kernel's sleep overshoot stays inside that margin) and spins
//! for the final stretch, so the deadline is hit to within a microsecond or so
//! while the thread only burns CPU for the last `spin_margin_ns` of each wait.
//! At high fleet rates the deadlines are closer together than `spin_margin_ns`
//! and the thread would spin all the time, taking a core from the system under
//! test; spinning is therefore capped at `spin_share` of a core (a token
//! bucket, so it never spins for more than a millisecond at a time;
//! `pacer/budget.rs`), and beyond that the thread sleeps all the way. Its timer
//! slack is 1 ns, so the kernel wakes it at the deadline rather than up to
//! 50 µs after (`pacer/thread.rs`, with the other requests that get it run on
//! time). Everything due is fired in one pass: a `Fire` goes to the device's
//! handler over a channel and the device's next deadline is pushed from its
//! [`DeviceSchedule`]. Passes are capped at `max_passes_per_s` (each wakes this
//! thread and the runtime's worker, the bulk of a fleet's CPU at 20,000
//! messages/s), so dense deadlines go out in batches, at most
//! `1 / max_passes_per_s` late.
//!
//! Deadlines are offsets from the fleet's `start` instant (absolute, from the
//! schedule), so lateness never carries into the next send.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

mod budget;
mod thread;

use budget::{PassBudget, SpinBudget};

pub use thread::Scheduling;

use crate::schedule::DeviceSchedule;
use crate::MqttError;

/// One send, due at `deadline_ns` and released at `fired_ns` (both ns since
/// the fleet's start). The handler records `fired_ns − deadline_ns` per message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fire {
    pub device: u32,
    /// 0 for a device's first message.
    pub seq: u64,
    pub deadline_ns: u64,
    pub fired_ns: u64,
}

impl Fire {
    pub fn lateness_ns(&self) -> u64 {
        self.fired_ns.saturating_sub(self.deadline_ns)
    }
}

/// What happened to a fire handed to a [`FireSink`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOutcome {
    Sent,
    /// A bounded channel was full: the message is dropped and counted, the device keeps its schedule.
    Full,
    /// No room now (the device is behind): the pacer offers the same fire
    /// again after `RETRY_LATER`, keeping its deadline, so the wait shows as
    /// lateness and nothing is dropped or queued without bound.
    Later,
    /// The receiver is gone: the device is not scheduled again.
    Closed,
}

/// Where fires go. `slot` is the index of the device's schedule in the
/// vector handed to [`Pacer::start`]. Called on the pacer thread, so it must
/// not block.
pub trait FireSink: Send + 'static {
    fn send(&mut self, slot: usize, fire: Fire) -> SendOutcome;

    /// A fire answered [`SendOutcome::Later`] that the pacer gives up on:
    /// the end came first. Sinks that record every message record it here.
    fn abandon(&mut self, _slot: usize, _fire: Fire) {}
}

/// One unbounded channel per device (slot i → channel i).
impl FireSink for Vec<mpsc::UnboundedSender<Fire>> {
    fn send(&mut self, slot: usize, fire: Fire) -> SendOutcome {
        match self.get(slot).map(|tx| tx.send(fire)) {
            Some(Ok(())) => SendOutcome::Sent,
            _ => SendOutcome::Closed,
        }
    }
}

/// One bounded channel per device; never blocks the pacer (`try_send`).
impl FireSink for Vec<mpsc::Sender<Fire>> {
    fn send(&mut self, slot: usize, fire: Fire) -> SendOutcome {
        match self.get(slot).map(|tx| tx.try_send(fire)) {
            Some(Ok(())) => SendOutcome::Sent,
            Some(Err(mpsc::error::TrySendError::Full(_))) => SendOutcome::Full,
            _ => SendOutcome::Closed,
        }
    }
}

/// One channel for the whole fleet; the receiver dispatches on `Fire::device`.
impl FireSink for mpsc::UnboundedSender<Fire> {
    fn send(&mut self, _slot: usize, fire: Fire) -> SendOutcome {
        match mpsc::UnboundedSender::send(self, fire) {
            Ok(()) => SendOutcome::Sent,
            Err(_) => SendOutcome::Closed,
        }
    }
}

/// Any closure `FnMut(slot, Fire) -> SendOutcome` (a newtype because std's
/// `Vec` might one day implement `FnMut`, which would make a blanket impl overlap).
pub struct FnSink<F>(pub F);

impl<F: FnMut(usize, Fire) -> SendOutcome + Send + 'static> FireSink for FnSink<F> {
    fn send(&mut self, slot: usize, fire: Fire) -> SendOutcome {
        (self.0)(slot, fire)
    }
}

#[derive(Debug, Clone)]
pub struct PacerConfig {
    /// How long before a deadline the coarse sleep ends and spinning starts.
    /// 200 µs covers Linux's sleep overshoot with the default 50 µs timer
    /// slack under moderate load (see `PacerStats::max_oversleep_ns`); 0
    /// sleeps all the way (no spinning: less CPU, ~60–100 µs lateness).
    pub spin_margin_ns: u64,
    /// The most CPU spinning may take, as a share of one core, earned
    /// continuously; without budget the pacer sleeps all the way.
    pub spin_share: f64,
    /// Deadlines at or after this offset are not fired; the pacer then ends.
    pub end_ns: Option<u64>,
    /// Per-device message limit (`Fleet.messages`).
    pub messages: Option<u64>,
    /// Fires per pass before the stop flag is checked again, so a burst (or a
    /// zero gap) cannot hold the thread forever.
    pub max_batch: usize,
    /// The longest single sleep, which bounds how late a stop flag set without
    /// [`Pacer::stop`] (which also wakes the thread) is noticed.
    pub max_sleep_ns: u64,
    /// The nice value the pacer thread asks for (best effort, see
    /// `pacer/thread.rs`); 0 leaves its priority as it is.
    pub nice: i32,
    /// Hold a 0 µs CPU wake-latency request while running (best effort, see
    /// `pacer/thread.rs`).
    pub cpu_wake_latency_zero: bool,
    /// The most passes (wake-ups that fire) per second, on average: denser
    /// deadlines are fired in batches, at most `1 / max_passes_per_s` late;
    /// sparser ones on time. 0 fires every deadline on its own.
    pub max_passes_per_s: f64,
}

impl Default for PacerConfig {
    fn default() -> Self {
        PacerConfig {
            spin_margin_ns: 200_000,
            spin_share: 0.05,
            end_ns: None,
            messages: None,
            max_batch: 4096,
            max_sleep_ns: 10_000_000,
            nice: -10,
            cpu_wake_latency_zero: true,
            max_passes_per_s: 2000.0,
        }
    }
}

/// What the pacer thread did; returned by [`Pacer::join`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PacerStats {
    pub fires: u64,
    /// Fires a bounded channel had no room for.
    pub overflows: u64,
    /// Offers a sink answered with [`SendOutcome::Later`].
    pub postponed: u64,
    /// Postponed fires given up at the end (see [`FireSink::abandon`]).
    pub abandoned: u64,
    /// Devices dropped because their receiver was closed.
    pub closed: u64,
    pub max_lateness_ns: u64,
    /// Sum of all lateness (mean = total / fires), saturating.
    pub total_lateness_ns: u64,
    pub sleeps: u64,
    /// The most a coarse sleep overshot its planned wake-up: if it nears
    /// `spin_margin_ns`, the margin is too small for this machine.
    pub max_oversleep_ns: u64,
    /// Sleeps that woke after the deadline they slept for.
    pub late_wakes: u64,
    /// Time spent spinning.
    pub spun_ns: u64,
    /// CPU time of the pacer thread (Linux: /proc/thread-self/schedstat).
    pub thread_cpu_ns: Option<u64>,
    /// What the kernel granted the pacer thread (see [`Scheduling`]).
    pub scheduling: Scheduling,
}

/// The running pacer thread. Dropping it stops and joins the thread.
pub struct Pacer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<PacerStats>>,
}

impl Pacer {
    /// Starts the pacer thread. `schedules[i]` is slot `i` of `sink`; `start`
    /// is the fleet's time zero and may lie in the future.
    pub fn start<S: FireSink>(
        start: Instant,
        schedules: Vec<DeviceSchedule>,
        sink: S,
        config: PacerConfig,
    ) -> Result<Pacer, MqttError> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("exp-pacer".into())
            .spawn(move || run(start, schedules, sink, &config, &flag))
            .map_err(MqttError::PacerThread)?;
        Ok(Pacer {
            stop,
            thread: Some(thread),
        })
    }

    /// Asks the thread to stop after the current pass and wakes it from its sleep.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    /// The stop flag, for code that cannot hold the `Pacer` (noticed within `max_sleep_ns`).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// Whether the thread has ended (end time reached, limits met, or stopped).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits for the thread to end by itself (call [`Pacer::stop`] first to end it now).
    pub fn join(mut self) -> Result<PacerStats, MqttError> {
        match self.thread.take() {
            Some(t) => t.join().map_err(|_| MqttError::PacerPanicked),
            None => Ok(PacerStats::default()),
        }
    }
}

impl Drop for Pacer {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stop.store(true, Ordering::Release);
            t.thread().unpark();
            // A panic was already reported by the thread; nothing to add while dropping.
            let _ = t.join();
        }
    }
}

/// ns since `start`, 0 before it.
fn since(start: Instant, now: Instant) -> u64 {
    u64::try_from(now.saturating_duration_since(start).as_nanos()).unwrap_or(u64::MAX)
}

fn run<S: FireSink>(
    start: Instant,
    mut schedules: Vec<DeviceSchedule>,
    mut sink: S,
    config: &PacerConfig,
    stop: &AtomicBool,
) -> PacerStats {
    let mut stats = PacerStats::default();
    let limit = config.messages.unwrap_or(u64::MAX);
    let admissible = |deadline: u64, seq: u64| seq < limit && config.end_ns.is_none_or(|end| deadline < end);
    let mut slots = vec![Slot::default(); schedules.len()];
    let mut heap = BinaryHeap::with_capacity(schedules.len());
    for (slot, schedule) in schedules.iter_mut().enumerate() {
        if let Some(deadline) = schedule.next().filter(|&d| admissible(d, 0)) {
            heap.push(Reverse((deadline, slot)));
        }
    }
    // The wake-latency request is held until the pacer ends.
    let (scheduling, _wake_latency) = thread::ask_to_run_on_time(config.nice, config.cpu_wake_latency_zero);
    stats.scheduling = scheduling;
    let mut budget = SpinBudget::new(config.spin_share);
    let max_sleep = Duration::from_nanos(config.max_sleep_ns.max(1));
    let mut passes = PassBudget::new(config.max_passes_per_s);

    while !stop.load(Ordering::Acquire) {
        let Some(&Reverse((deadline, _))) = heap.peek() else {
            break;
        };
        let due = start + Duration::from_nanos(deadline);
        let now = Instant::now();
        let target = passes.earliest(now, due);
        let remaining = target.saturating_duration_since(now);
        // A pass held back to batch dense deadlines is late anyway: spinning
        // to hit it exactly would buy nothing.
        let spin = if target > due {
            Duration::ZERO
        } else {
            budget.allowed(now, Duration::from_nanos(config.spin_margin_ns))
        };
        if remaining > spin {
            // Coarse phase: park (not sleep) so `Pacer::stop` can wake us at once.
            let planned = (remaining - spin).min(max_sleep);
            std::thread::park_timeout(planned);
            let woke = Instant::now();
            let over = woke.saturating_duration_since(now + planned);
            stats.sleeps += 1;
            stats.max_oversleep_ns = stats
                .max_oversleep_ns
                .max(u64::try_from(over.as_nanos()).unwrap_or(u64::MAX));
            if woke > target {
                stats.late_wakes += 1;
            }
            continue;
        }
        if !remaining.is_zero() {
            while Instant::now() < target {
                std::hint::spin_loop();
            }
            let spun = now.elapsed();
            budget.spend(spun);
            stats.spun_ns += u64::try_from(spun.as_nanos()).unwrap_or(u64::MAX);
        }
        passes.spend(Instant::now());
        fire_due(
            start,
            &mut heap,
            &mut schedules,
            &mut slots,
            &mut sink,
            config.max_batch,
            &admissible,
            &mut stats,
        );
    }
    // Stopped with fires still waiting for room: they were never sent.
    let now_ns = since(start, Instant::now());
    for (slot, state) in slots.iter().enumerate() {
        if let (Some(deadline_ns), Some(schedule)) = (state.waiting_since, schedules.get(slot)) {
            stats.abandoned += 1;
            let fire = Fire {
                device: schedule.device(),
                seq: state.seq,
                deadline_ns,
                fired_ns: now_ns,
            };
            sink.abandon(slot, fire);
        }
    }
    stats.thread_cpu_ns = thread::cpu_ns();
    stats
}

/// How long a fire the sink could not take yet waits before it is offered again.
const RETRY_LATER: Duration = Duration::from_millis(1);

/// What the pacer keeps per device: the next message's number and, while
/// the sink holds it back, the deadline of the message waiting.
#[derive(Clone, Copy, Default)]
struct Slot {
    seq: u64,
    waiting_since: Option<u64>,
}

/// Fires everything due now (up to `max_batch`), rescheduling each device.
#[allow(clippy::too_many_arguments)] // one call site; a struct would only rename these
fn fire_due<S: FireSink>(
    start: Instant,
    heap: &mut BinaryHeap<Reverse<(u64, usize)>>,
    schedules: &mut [DeviceSchedule],
    slots: &mut [Slot],
    sink: &mut S,
    max_batch: usize,
    admissible: &impl Fn(u64, u64) -> bool,
    stats: &mut PacerStats,
) {
    for _ in 0..max_batch.max(1) {
        let Some(mut top) = heap.peek_mut() else { return };
        let Reverse((due, slot)) = *top;
        let fired_ns = since(start, Instant::now());
        if due > fired_ns {
            return;
        }
        let (Some(schedule), Some(state)) = (schedules.get_mut(slot), slots.get_mut(slot)) else {
            PeekMut::pop(top);
            continue;
        };
        let fire = Fire {
            device: schedule.device(),
            seq: state.seq,
            deadline_ns: state.waiting_since.unwrap_or(due),
            fired_ns,
        };
        let outcome = sink.send(slot, fire);
        if outcome == SendOutcome::Later {
            stats.postponed += 1;
            let retry = fired_ns.saturating_add(u64::try_from(RETRY_LATER.as_nanos()).unwrap_or(u64::MAX));
            if admissible(retry, state.seq) {
                state.waiting_since = Some(fire.deadline_ns);
                *top = Reverse((retry, slot));
            } else {
                // Past the end (or the limit) before it found room: given up, and said so.
                stats.abandoned += 1;
                state.waiting_since = None;
                sink.abandon(slot, fire);
                PeekMut::pop(top);
            }
            continue;
        }
        state.waiting_since = None;
        let lateness = fire.lateness_ns();
        stats.fires += 1;
        stats.max_lateness_ns = stats.max_lateness_ns.max(lateness);
        stats.total_lateness_ns = stats.total_lateness_ns.saturating_add(lateness);
        state.seq += 1;
        match outcome {
            SendOutcome::Sent | SendOutcome::Later => {}
            SendOutcome::Full => stats.overflows += 1,
            SendOutcome::Closed => {
                stats.closed += 1;
                PeekMut::pop(top);
                continue;
            }
        }
        match schedule.next().filter(|&d| admissible(d, state.seq)) {
            // Replacing the top sifts it down once: cheaper than pop + push.
            Some(next) => *top = Reverse((next, slot)),
            None => {
                PeekMut::pop(top);
            }
        }
    }
}
