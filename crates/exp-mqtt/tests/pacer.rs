//! Pacer timing accuracy, Pareto gaps, stopping and message limits.
//! Run with `--nocapture` to see the measured gap statistics.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use exp_mqtt::{Fire, FleetSchedule, Pacer, PacerConfig, SendOutcome};
use exp_plan::{Dist, DistValue, FirstSend, Unit};
use exp_stats::{ks_one_sample, percentile, Sampler};
use tokio::sync::mpsc;

fn ns(dist: Dist) -> DistValue {
    DistValue { unit: Unit::Ns, dist }
}

/// Runs `devices` devices with `gap` until `end_ns` and returns every fire.
fn run(devices: u32, gap: &DistValue, end_ns: u64, seed: u64) -> (Vec<Fire>, exp_mqtt::PacerStats) {
    let fleet = FleetSchedule::new(gap, &FirstSend::Uniform, seed).unwrap();
    let schedules = (0..devices).map(|d| fleet.device(d)).collect();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = PacerConfig {
        end_ns: Some(end_ns),
        ..PacerConfig::default()
    };
    let pacer = Pacer::start(Instant::now() + Duration::from_millis(10), schedules, tx, config).unwrap();
    let mut fires = Vec::new();
    // The pacer drops the sender when it ends, which ends this loop.
    while let Some(f) = rx.blocking_recv() {
        fires.push(f);
    }
    (fires, pacer.join().unwrap())
}

/// Gaps between consecutive fires of each device, in ns.
fn achieved_gaps(fires: &[Fire]) -> Vec<f64> {
    gaps_of(fires, |f| f.fired_ns)
}

/// Gaps between each device's deadlines: what the pacer was asked to keep.
fn deadline_gaps(fires: &[Fire]) -> Vec<f64> {
    gaps_of(fires, |f| f.deadline_ns)
}

fn gaps_of(fires: &[Fire], at: impl Fn(&Fire) -> u64) -> Vec<f64> {
    let mut last: HashMap<u32, u64> = HashMap::new();
    let mut gaps = Vec::new();
    for f in fires {
        if let Some(prev) = last.insert(f.device, at(f)) {
            gaps.push(at(f) as f64 - prev as f64);
        }
    }
    gaps
}

fn median_sd(xs: &[f64]) -> (f64, f64) {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt();
    (percentile(&sorted, 0.5).unwrap(), sd)
}

#[test]
fn constant_gaps_are_accurate() {
    let (fires, stats) = run(100, &ns(Dist::Constant { value: 100e6 }), 2_000_000_000, 1);
    // 100 devices × 20 sends in 2 s (first sends uniform in the first 100 ms).
    assert_eq!(fires.len(), 2000, "{stats:?}");
    let gaps = achieved_gaps(&fires);
    let (median, sd) = median_sd(&gaps);
    let mut lateness: Vec<f64> = fires.iter().map(|f| f.lateness_ns() as f64).collect();
    lateness.sort_by(f64::total_cmp);
    println!(
        "constant 100 ms × 100 devices: {} gaps, median {:.3} µs, sd {:.3} µs; lateness p50 {:.1} µs p99 {:.1} µs max {:.1} µs; {stats:?}",
        gaps.len(),
        median / 1e3,
        sd / 1e3,
        percentile(&lateness, 0.5).unwrap() / 1e3,
        percentile(&lateness, 0.99).unwrap() / 1e3,
        stats.max_lateness_ns as f64 / 1e3,
    );
    assert!((median - 100e6).abs() < 0.5e6, "median {median}");
}

#[test]
fn pareto_gaps_pass_ks() {
    let gap = ns(Dist::Pareto {
        shape: 3.0,
        scale: 100e6 / 2f64.powf(1.0 / 3.0),
    });
    let (fires, stats) = run(100, &gap, 3_000_000_000, 7);
    let sampler = Sampler::new(&gap).unwrap();
    // Asserted: the deadlines the pacer fired follow the distribution (and
    // every due send was fired). Reported only: the achieved gaps, which also
    // carry how the machine scheduled the thread (a loaded CI machine can
    // hold it back for 100 ms; fleet_timing.rs checks achieved gaps end to end).
    let deadlines = deadline_gaps(&fires);
    let ks = ks_one_sample(&deadlines, &sampler).unwrap();
    let gaps = achieved_gaps(&fires);
    let achieved = ks_one_sample(&gaps, &sampler).unwrap();
    let (median, _) = median_sd(&gaps);
    println!(
        "pareto(3, median 100 ms): {} gaps, achieved median {:.3} ms, deadlines {ks:?}, achieved {achieved:?}; {stats:?}",
        gaps.len(),
        median / 1e6
    );
    assert!(deadlines.len() > 1500, "{}", deadlines.len());
    assert!(!ks.rejects(0.01), "{ks:?}");
}

/// Stopping does not wait for the next deadline. The first sends are 60 s
/// away, so a pacer that ended only at its next deadline would keep the test
/// for a minute; no bound tighter than that is asserted, because a loaded
/// machine may take a while to run the thread at all.
#[test]
fn stop_ends_a_long_sleep() {
    let fleet = FleetSchedule::new(&ns(Dist::Constant { value: 1e9 }), &FirstSend::Lockstep, 1).unwrap();
    let far = Duration::from_secs(60);
    let (tx, _rx) = mpsc::unbounded_channel();
    let schedules = (0..10).map(|d| fleet.device(d)).collect();
    let t = Instant::now();
    let pacer = Pacer::start(Instant::now() + far, schedules, tx, PacerConfig::default()).unwrap();
    pacer.stop();
    let stats = pacer.join().unwrap();
    assert!(t.elapsed() < far / 2, "{:?}", t.elapsed());
    assert_eq!(stats.fires, 0);

    // The flag alone (no unpark) is noticed within one `max_sleep_ns`.
    let (tx, _rx) = mpsc::unbounded_channel();
    let schedules = (0..10).map(|d| fleet.device(d)).collect();
    let t = Instant::now();
    let pacer = Pacer::start(Instant::now() + far, schedules, tx, PacerConfig::default()).unwrap();
    pacer.stop_flag().store(true, std::sync::atomic::Ordering::Release);
    while !pacer.is_finished() {
        assert!(t.elapsed() < far / 2, "the pacer did not notice its stop flag");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(pacer.join().unwrap().fires, 0);
}

#[test]
fn message_limit_and_closed_receivers() {
    let fleet = FleetSchedule::new(&ns(Dist::Constant { value: 5e6 }), &FirstSend::Uniform, 3).unwrap();
    let mut senders = Vec::new();
    let mut receivers = Vec::new();
    for _ in 0..20 {
        let (tx, rx) = mpsc::unbounded_channel::<Fire>();
        senders.push(tx);
        receivers.push(rx);
    }
    // Device 19's handler is gone: it gets one attempt, then is dropped.
    drop(receivers.pop());
    let schedules = (0..20).map(|d| fleet.device(d)).collect();
    let config = PacerConfig {
        messages: Some(3),
        ..PacerConfig::default()
    };
    let pacer = Pacer::start(Instant::now(), schedules, senders, config).unwrap();
    // No end time: the pacer ends by itself once every device has sent its 3 messages.
    let stats = pacer.join().unwrap();
    assert_eq!((stats.fires, stats.closed), (19 * 3 + 1, 1), "{stats:?}");
    for (device, mut rx) in receivers.into_iter().enumerate() {
        let seqs: Vec<u64> = std::iter::from_fn(|| rx.try_recv().ok())
            .inspect(|f| assert_eq!(f.device, device as u32))
            .map(|f| f.seq)
            .collect();
        assert_eq!(seqs, [0, 1, 2]);
    }
}

#[test]
fn bounded_channels_count_overflows() {
    let fleet = FleetSchedule::new(&ns(Dist::Constant { value: 1e6 }), &FirstSend::Lockstep, 3).unwrap();
    let (tx, _rx) = mpsc::channel::<Fire>(2);
    let config = PacerConfig {
        messages: Some(5),
        ..PacerConfig::default()
    };
    let stats = Pacer::start(Instant::now(), vec![fleet.device(0)], vec![tx], config)
        .unwrap()
        .join()
        .unwrap();
    assert_eq!((stats.fires, stats.overflows), (5, 3), "{stats:?}");
    let sink = exp_mqtt::FnSink(|_slot, _fire| SendOutcome::Sent);
    let config = PacerConfig {
        messages: Some(4),
        ..PacerConfig::default()
    };
    let stats = Pacer::start(Instant::now(), vec![fleet.device(1)], sink, config)
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(stats.fires, 4);
}

/// A sink with no room yet gets the same fire again, deadline kept, until
/// it takes it; one that never has room gets it abandoned at the end.
#[test]
fn fires_a_sink_has_no_room_for_wait_and_keep_their_deadline() {
    type Fires = std::sync::Arc<std::sync::Mutex<Vec<(u64, u64, u64)>>>;
    /// Says `Later` `refusals` times, then takes everything; records (seq, deadline, lateness).
    struct Busy {
        refusals: u32,
        sent: Fires,
        abandoned: Fires,
    }
    impl exp_mqtt::FireSink for Busy {
        fn send(&mut self, _slot: usize, f: Fire) -> SendOutcome {
            if self.refusals > 0 {
                self.refusals -= 1;
                return SendOutcome::Later;
            }
            self.sent.lock().unwrap().push((f.seq, f.deadline_ns, f.lateness_ns()));
            SendOutcome::Sent
        }
        fn abandon(&mut self, _slot: usize, f: Fire) {
            self.abandoned
                .lock()
                .unwrap()
                .push((f.seq, f.deadline_ns, f.lateness_ns()));
        }
    }
    let run = |refusals: u32, config: PacerConfig| {
        let (sent, abandoned) = (Fires::default(), Fires::default());
        let fleet = FleetSchedule::new(&ns(Dist::Constant { value: 50e6 }), &FirstSend::Lockstep, 3).unwrap();
        let sink = Busy {
            refusals,
            sent: sent.clone(),
            abandoned: abandoned.clone(),
        };
        let stats = Pacer::start(Instant::now(), vec![fleet.device(0)], sink, config)
            .unwrap()
            .join()
            .unwrap();
        let take = |f: Fires| std::mem::take(&mut *f.lock().unwrap());
        (stats, take(sent), take(abandoned))
    };
    // Three refusals, then room: both messages go out, the first ≥ 3 ms late.
    let (stats, sent, abandoned) = run(
        3,
        PacerConfig {
            messages: Some(2),
            ..PacerConfig::default()
        },
    );
    assert_eq!((stats.fires, stats.postponed, stats.abandoned), (2, 3, 0), "{stats:?}");
    assert_eq!(
        sent.iter().map(|&(seq, at, _)| (seq, at)).collect::<Vec<_>>(),
        [(0, 0), (1, 50_000_000)]
    );
    assert!(sent[0].2 >= 3_000_000, "{sent:?}");
    assert!(abandoned.is_empty());
    // Never any room: the fire waits until the end, then is abandoned, not lost silently.
    let (stats, sent, abandoned) = run(
        u32::MAX,
        PacerConfig {
            end_ns: Some(20_000_000),
            ..PacerConfig::default()
        },
    );
    assert_eq!((stats.fires, stats.abandoned), (0, 1), "{stats:?}");
    assert!(sent.is_empty());
    assert_eq!(
        abandoned.iter().map(|&(seq, at, _)| (seq, at)).collect::<Vec<_>>(),
        [(0, 0)]
    );
}
