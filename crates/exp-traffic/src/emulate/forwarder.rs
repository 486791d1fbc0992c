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
/// How long before a release the thread stops sleeping and spins; about
/// the timer wake-up latency measured here (50–100 µs on a loaded VM).
const SPIN_MARGIN: Duration = Duration::from_micros(60);
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
            if !left.is_zero() && left <= SPIN_MARGIN {
                spin_until(release);
                continue;
            }
        }
        let wake = [
            next_release.map(|r| r.checked_sub(SPIN_MARGIN).unwrap_or(r)),
            next_sample,
        ]
        .into_iter()
        .flatten()
        .fold(now + IDLE_WAIT, Instant::min);
        let timeout = wake.saturating_duration_since(Instant::now());
        if timeout.is_zero() || sys::wait_readable(&ends.input, timeout)? {
            read_burst(&mut pipeline, &mut ends.input, &mut buffer)?;
        }
    }
    Ok(())
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
