//! Measures the pacer: N devices at R messages/s each for S seconds, every
//! fire delivered over its device's channel to a no-op tokio task.
//!
//! ```text
//! cargo run --release -p exp-mqtt --example pacer -- --devices 4000 --rate 5 --seconds 10 [--spin-us 200] [--gap constant|exponential|pareto]
//!     [--nice -10] [--wake-latency-zero true|false]
//! ```
//!
//! Prints pacer lateness (fired − deadline), handler lateness (when the
//! device task received the fire − deadline) and the pacer thread's CPU time.

use std::error::Error;
use std::time::{Duration, Instant};

use exp_mqtt::{Fire, FleetSchedule, Pacer, PacerConfig};
use exp_plan::{Dist, DistValue, FirstSend, Unit};
use exp_stats::percentile;
use tokio::sync::mpsc;

struct Args {
    devices: u32,
    rate: f64,
    seconds: f64,
    spin_us: u64,
    gap: String,
    nice: i32,
    wake_latency_zero: bool,
}

fn parse_args() -> Result<Args, Box<dyn Error>> {
    let mut args = Args {
        devices: 100,
        rate: 10.0,
        seconds: 10.0,
        spin_us: 200,
        gap: "constant".into(),
        nice: PacerConfig::default().nice,
        wake_latency_zero: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--devices" => args.devices = value.parse()?,
            "--rate" => args.rate = value.parse()?,
            "--seconds" => args.seconds = value.parse()?,
            "--spin-us" => args.spin_us = value.parse()?,
            "--gap" => args.gap = value,
            "--nice" => args.nice = value.parse()?,
            "--wake-latency-zero" => args.wake_latency_zero = value.parse()?,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    Ok(args)
}

fn summary(name: &str, mut xs: Vec<f64>) {
    xs.sort_by(f64::total_cmp);
    let q = |p| percentile(&xs, p).unwrap_or(f64::NAN) / 1e3;
    println!(
        "{name:<26} p50 {:>8.1} µs   p99 {:>8.1} µs   p999 {:>8.1} µs   max {:>9.1} µs   (n = {})",
        q(0.5),
        q(0.99),
        q(0.999),
        q(1.0),
        xs.len()
    );
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = parse_args()?;
    let mean_gap = 1e9 / args.rate;
    let dist = match args.gap.as_str() {
        "constant" => Dist::Constant { value: mean_gap },
        "exponential" => Dist::Exponential { mean: mean_gap },
        // Shape 3 with this mean: mean = 3 · scale / 2.
        "pareto" => Dist::Pareto {
            shape: 3.0,
            scale: mean_gap * 2.0 / 3.0,
        },
        other => return Err(format!("unknown gap {other}").into()),
    };
    let fleet = FleetSchedule::new(&DistValue { unit: Unit::Ns, dist }, &FirstSend::Uniform, 1)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let start = Instant::now() + Duration::from_millis(200);
    let end_ns = (args.seconds * 1e9) as u64;

    let mut senders = Vec::with_capacity(args.devices as usize);
    let mut tasks = Vec::with_capacity(args.devices as usize);
    for _ in 0..args.devices {
        let (tx, mut rx) = mpsc::unbounded_channel::<Fire>();
        senders.push(tx);
        tasks.push(runtime.spawn(async move {
            let mut seen = Vec::new();
            while let Some(fire) = rx.recv().await {
                let received_ns = start.elapsed().as_nanos() as u64;
                seen.push((fire.lateness_ns(), received_ns.saturating_sub(fire.deadline_ns)));
            }
            seen
        }));
    }
    let schedules = (0..args.devices).map(|d| fleet.device(d)).collect();
    let config = PacerConfig {
        spin_margin_ns: args.spin_us * 1000,
        end_ns: Some(end_ns),
        nice: args.nice,
        cpu_wake_latency_zero: args.wake_latency_zero,
        ..PacerConfig::default()
    };
    let pacer = Pacer::start(start, schedules, senders, config)?;
    let stats = pacer.join()?;
    let (mut fired, mut received) = (Vec::new(), Vec::new());
    for task in tasks {
        for (f, r) in runtime.block_on(task)? {
            fired.push(f as f64);
            received.push(r as f64);
        }
    }

    println!(
        "{} devices × {} msg/s ({} gaps), {} s, spin {} µs: {} fires ({:.0}/s)",
        args.devices,
        args.rate,
        args.gap,
        args.seconds,
        args.spin_us,
        stats.fires,
        stats.fires as f64 / args.seconds
    );
    summary("pacer lateness", fired);
    summary("handler lateness", received);
    let cpu = stats.thread_cpu_ns.map_or("n/a".into(), |ns| {
        format!(
            "{:.3} s = {:.1} % of one core",
            ns as f64 / 1e9,
            ns as f64 / 1e9 / args.seconds * 100.0
        )
    });
    println!(
        "pacer thread CPU {cpu} (short slice {}, nice {}, CPU wake latency 0: {}); spinning {:.3} s; {} sleeps, max oversleep {:.1} µs, {} late wakes; overflows {}",
        stats.scheduling.short_slice,
        stats.scheduling.nice,
        stats.scheduling.cpu_wake_latency_zero,
        stats.spun_ns as f64 / 1e9,
        stats.sleeps,
        stats.max_oversleep_ns as f64 / 1e3,
        stats.late_wakes,
        stats.overflows
    );
    Ok(())
}
