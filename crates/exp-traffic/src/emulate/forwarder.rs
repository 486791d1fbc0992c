//! The forwarder thread of one direction: reads packets from the sending
//! side's TUN, runs them through the [`Pipeline`] and writes them to the
//! receiving side's TUN when due. One thread does both so no packet waits
//! for a lock; it sleeps in ppoll until input arrives, the next packet is
//! due or the next backlog sample is, with a 1 ns timer slack.

use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::link::BacklogSample;
use super::pipeline::Pipeline;
use super::sys;

/// How often the bottleneck backlog is sampled.
pub(crate) const SAMPLE_INTERVAL: Duration = Duration::from_millis(10);
/// Longest sleep without looking at the stop flag.
const IDLE_WAIT: Duration = Duration::from_millis(20);
/// Packets read in a row before due packets are released again, so a burst
/// of input cannot delay releases by more than a few reads.
const READ_BURST: usize = 32;
/// How long before a release the thread stops sleeping and spins, at
/// least: about the timer wake-up latency of a busy VM (50–100 µs).
const SPIN_MARGIN: Duration = Duration::from_micros(60);
/// The most the margin grows to. An idle VM wakes its vCPU slowly (timed
/// wake-ups measured 0.7 ms late on average, 15 ms at worst), which turned a
/// 5 ms RTT into 5.7 ms; the margin follows the wake-ups' lateness.
const MAX_SPIN_MARGIN: Duration = Duration::from_millis(2);
/// Larger than any IP packet, so a read never truncates.
const BUFFER_BYTES: usize = 65_536;

/// The two ends a direction moves packets between.
pub(crate) struct Ends {
    pub input: File,
    pub output: File,
}

/// Where the forwarder reports backlog samples (only with a bottleneck).
pub(crate) struct Sampling {
    pub epoch: Instant,
    pub samples: Arc<Mutex<Vec<BacklogSample>>>,
}

pub(crate) fn spawn(
    name: String,
    ends: Ends,
    pipeline: Pipeline,
    sampling: Option<Sampling>,
    stop: Arc<AtomicBool>,
) -> io::Result<JoinHandle<io::Result<()>>> {
    std::thread::Builder::new()
        .name(name)
        .spawn(move || run(ends, pipeline, sampling, &stop))
}

fn run(mut ends: Ends, mut pipeline: Pipeline, sampling: Option<Sampling>, stop: &AtomicBool) -> io::Result<()> {
    sys::tighten_timer_slack();
    sys::raise_thread_priority();
    let mut buffer = vec![0u8; BUFFER_BYTES];
    let mut next_sample = sampling.as_ref().map(|_| Instant::now() + SAMPLE_INTERVAL);
    let mut margin = SPIN_MARGIN;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        release_due(&mut pipeline, &mut ends.output, now);
        if let (Some(due), Some(sampling)) = (next_sample.as_mut(), sampling.as_ref()) {
            if now >= *due {
                take_sample(&mut pipeline, sampling, now);
                while *due <= now {
                    *due += SAMPLE_INTERVAL;
                }
            }
        }
        // Sleep until shortly before the next release, then spin the rest:
        // a timed wake-up alone comes tens of µs late, more under load.
        let next_release = pipeline.next_release();
        if let Some(release) = next_release {
            let left = release.saturating_duration_since(Instant::now());
            if !left.is_zero() && left <= margin {
                spin_until(release);
                continue;
            }
        }
        let wake = [next_release.map(|r| r.checked_sub(margin).unwrap_or(r)), next_sample]
            .into_iter()
            .flatten()
            .fold(now + IDLE_WAIT, Instant::min);
        let timeout = wake.saturating_duration_since(Instant::now());
        if timeout.is_zero() || sys::wait_readable(&ends.input, timeout)? {
            read_burst(&mut pipeline, &mut ends.input, &mut buffer)?;
        } else {
            margin = adapt_margin(margin, Instant::now().saturating_duration_since(wake));
        }
    }
    Ok(())
}

/// The next spin margin after a timed wake-up that came `late`: it grows at
/// once to twice a lateness that ate most of it, and shrinks by 1/64 per
/// wake-up otherwise, so a busy spell's margin does not spin forever.
fn adapt_margin(margin: Duration, late: Duration) -> Duration {
    let next = if late * 4 > margin * 3 {
        late * 2
    } else {
        margin - margin / 64
    };
    next.clamp(SPIN_MARGIN, MAX_SPIN_MARGIN)
}

fn spin_until(deadline: Instant) {
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

fn release_due(pipeline: &mut Pipeline, output: &mut File, now: Instant) {
    while let Some((release, packet)) = pipeline.pop_due(now) {
        match output.write(&packet) {
            // A TUN write takes the whole packet or nothing.
            Ok(n) if n == packet.len() => pipeline
                .counters()
                .record_forwarded(packet.len(), now.saturating_duration_since(release)),
            // A full or downed receiving device loses the packet, like a wire.
            Ok(_) | Err(_) => pipeline.counters().record_write_error(),
        }
    }
}

fn read_burst(pipeline: &mut Pipeline, input: &mut File, buffer: &mut [u8]) -> io::Result<()> {
    for _ in 0..READ_BURST {
        match input.read(buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => pipeline.admit(buffer[..n].to_vec(), Instant::now()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn take_sample(pipeline: &mut Pipeline, sampling: &Sampling, now: Instant) {
    if let Some((packets, bytes)) = pipeline.backlog(now) {
        sampling
            .samples
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(BacklogSample {
                at: now.saturating_duration_since(sampling.epoch),
                packets,
                bytes,
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spin_margin_follows_late_wake_ups_within_bounds() {
        let us = Duration::from_micros;
        // An on-time wake-up keeps the floor.
        assert_eq!(adapt_margin(SPIN_MARGIN, us(5)), SPIN_MARGIN);
        // A wake-up 700 µs late doubles into the margin at once.
        assert_eq!(adapt_margin(SPIN_MARGIN, us(700)), us(1_400));
        // Never beyond the cap, however late.
        assert_eq!(adapt_margin(us(1_400), Duration::from_millis(15)), MAX_SPIN_MARGIN);
        // Then it decays by 1/64 per punctual wake-up, back to the floor.
        let mut margin = MAX_SPIN_MARGIN;
        let mut steps = 0;
        while margin > SPIN_MARGIN {
            margin = adapt_margin(margin, us(10));
            steps += 1;
        }
        assert!((200..400).contains(&steps), "{steps} wake-ups to decay");
    }
}
