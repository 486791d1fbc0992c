//! Closed-loop MQTT throughput: every device keeps `window` unacknowledged
//! messages in flight (the next is published as soon as one is acked) for a
//! fixed time after all devices are connected. Devices are the crate's real
//! `Device`s on one shared event channel, as the fleet executor uses them.
//!
//! ```text
//! cargo run --release -p exp-mqtt --example throughput -- --devices 100 --seconds 10 \
//!     --payload 100 --qos 1 [--window 20] [--workers 1] [--raw] \
//!     [--broker mqtt://127.0.0.1:PORT [--mosquitto-pid PID] | --embedded | --mosquitto]
//! ```
//!
//! `--mosquitto-pid` says the `--broker` is a running Mosquitto (with
//! `sys_interval 1`) and which process it is: its CPU is measured and its
//! `$SYS` count cross-checked as for one started here, from the count when
//! the run began (`bench/mqtt-vs-go.sh` shares one broker between runs).
//!
//! Prints one `key=value` line. Latencies are the API's `acked_at − written_at`;
//! CPU is per acked message, runner (this process, minus an embedded broker's
//! threads) and broker. With `--mosquitto`, `$SYS/broker/publish/messages/received`
//! is compared with the number of messages this run published.
//! `bench/mqtt-throughput.sh` runs the 10 / 100 / 1,000-device table,
//! `bench/mqtt-vs-go.sh` the same sizes against the Go peer.

// A crate root looks for modules next to itself; these belong to this example only.
#[path = "throughput/brokers.rs"]
mod brokers;
#[path = "throughput/host.rs"]
mod host;
#[path = "throughput/raw.rs"]
mod raw;

use std::time::{Duration, Instant};

use brokers::{Broker, Mosquitto, SysCounter};
use bytes::Bytes;
use exp_mqtt::{Device, DeviceEvent, DeviceEventKind, DeviceOptions, Endpoint};
use host::BrokerCpu;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::task::JoinSet;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone)]
enum Target {
    Url(String),
    Embedded,
    Mosquitto,
}

#[derive(Clone)]
struct Args {
    devices: u32,
    seconds: f64,
    payload: usize,
    qos: u8,
    window: u16,
    /// Tokio worker threads; 0 runs everything on the main thread (current_thread runtime).
    /// One is the default, measured on 2 cores with the broker beside it: at 1,000
    /// devices a second worker doubled the runner's CPU per message (7 → 14–16 µs:
    /// wakes across threads, workers parking and unparking) and halved throughput;
    /// current_thread cost ~25% more per message than one worker.
    workers: usize,
    target: Target,
    /// The process of the Mosquitto at `--broker`, whose CPU and `$SYS` count are read.
    mosquitto_pid: Option<u32>,
    /// Bare rumqttc clients instead of `Device`s (see `raw.rs`).
    raw: bool,
}

fn parse_args() -> Result<Args, BoxError> {
    let mut args = Args {
        devices: 100,
        seconds: 10.0,
        payload: 100,
        qos: 1,
        // Measured at 1,000 devices: windows of 5 / 10 / 20 gave 93k / 113k / 138k msg/s
        // (more acks per read); at 10 devices, 10 to 100 all gave 143k–182k, only
        // latency grew with the window.
        window: 20,
        workers: 1,
        target: Target::Mosquitto,
        mosquitto_pid: None,
        raw: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--devices" => args.devices = value()?.parse()?,
            "--seconds" => args.seconds = value()?.parse()?,
            "--payload" => args.payload = value()?.parse()?,
            "--qos" => args.qos = value()?.parse()?,
            "--window" => args.window = value()?.parse()?,
            "--workers" => args.workers = value()?.parse()?,
            "--broker" => args.target = Target::Url(value()?),
            "--embedded" => args.target = Target::Embedded,
            "--mosquitto" => args.target = Target::Mosquitto,
            "--mosquitto-pid" => args.mosquitto_pid = Some(value()?.parse()?),
            "--raw" => args.raw = true,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    if args.devices == 0 || args.window == 0 || !args.seconds.is_finite() || args.seconds <= 0.0 {
        return Err("--devices, --window and --seconds must be positive".into());
    }
    if args.mosquitto_pid.is_some() && !matches!(args.target, Target::Url(_)) {
        return Err("--mosquitto-pid goes with --broker".into());
    }
    if args.raw && args.qos != 1 {
        return Err("--raw supports --qos 1 only".into());
    }
    Ok(args)
}

fn main() -> std::process::ExitCode {
    match bench() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("throughput: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn bench() -> Result<(), BoxError> {
    let args = parse_args()?;
    let nofile = host::raise_nofile_limit()?;
    let needed = u64::from(args.devices) * 2 + 64;
    if nofile < needed {
        eprintln!("warning: open-file limit {nofile} < {needed}; raise the hard limit (ulimit -Hn)");
    }
    // Started here, on the main thread, so that PR_SET_PDEATHSIG ties it to the process.
    let broker = match &args.target {
        Target::Url(url) => Broker::External(Endpoint::parse(url)?),
        Target::Embedded => Broker::embedded(args.devices, args.window, args.payload)?,
        Target::Mosquitto => Broker::Mosquitto(Mosquitto::start()?),
    };
    let cpu = match &broker {
        Broker::External(_) => args.mosquitto_pid.map_or(BrokerCpu::Unknown, BrokerCpu::Process),
        Broker::Embedded(_) => BrokerCpu::InProcess,
        Broker::Mosquitto(m) => BrokerCpu::Process(m.pid()),
    };
    let mut builder = if args.workers == 0 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(args.workers);
        b
    };
    let runtime = builder.enable_all().thread_name(host::RUNNER_THREAD).build()?;
    // Spawned, not run by `block_on` on this thread: the closed loop wakes device tasks
    // on every publish, and wakes from outside the worker threads go through
    // tokio's global queue and a futex.
    let mosquitto = matches!(broker, Broker::Mosquitto(_)) || args.mosquitto_pid.is_some();
    let sys = mosquitto && args.qos < 2;
    let (run_args, endpoint) = (args.clone(), broker.endpoint());
    let report = runtime.block_on(async move { tokio::spawn(run(run_args, endpoint, sys, cpu)).await? })?;
    drop(runtime);
    let name = if mosquitto { "mosquitto" } else { broker.name() };
    println!("{}", report.line(&args, name));
    Ok(())
}

/// Everything one run measured.
#[derive(Default)]
struct Report {
    elapsed: Duration,
    /// Acked (QoS 1/2) or written (QoS 0) within the measured window.
    done_in_window: u64,
    latencies_us: Vec<u32>,
    published: u64,
    lost: u64,
    disconnects: u64,
    /// Used during the measured window.
    cpu: host::Cpu,
    /// Mosquitto's `$SYS` count of PUBLISH packets received, if read.
    broker_received: Option<u64>,
}

impl Report {
    fn line(&self, args: &Args, broker: &str) -> String {
        let secs = self.elapsed.as_secs_f64();
        let n = self.done_in_window.max(1) as f64;
        let mut lat = self.latencies_us.clone();
        lat.sort_unstable();
        let q = |p: f64| {
            lat.get(((lat.len() as f64 - 1.0) * p).round() as usize)
                .copied()
                .unwrap_or(0)
        };
        let cpu = |ns: u64| format!("{:.2}", ns as f64 / 1e3 / n);
        let pct = |ns: u64| format!("{:.0}", ns as f64 / 1e9 / secs * 100.0);
        let check = match self.broker_received {
            Some(r) if r == self.published => format!("broker_received={r} check=ok"),
            Some(r) => format!("broker_received={r} check=MISMATCH"),
            None => "broker_received=- check=-".to_string(),
        };
        format!(
            "broker={broker} api={} devices={} window={} qos={} payload={}B workers={} seconds={secs:.2} \
             acked={} msg_per_s={:.0} ack_p50_us={} ack_p99_us={} ack_max_us={} lost={} disconnects={} \
             runner_cpu_us_per_msg={} broker_cpu_us_per_msg={} runner_cpu_pct={} broker_cpu_pct={} \
             other_cpu_pct={} ctx_switches_per_msg={:.2} published={} {check}",
            if args.raw { "raw" } else { "device" },
            args.devices,
            args.window,
            args.qos,
            args.payload,
            args.workers,
            self.done_in_window,
            self.done_in_window as f64 / secs,
            q(0.5),
            q(0.99),
            q(1.0),
            self.lost,
            self.disconnects,
            cpu(self.cpu.runner_ns),
            self.cpu.broker_ns.map_or("-".into(), cpu),
            pct(self.cpu.runner_ns),
            self.cpu.broker_ns.map_or("-".into(), pct),
            pct(self.cpu.other_ns()),
            self.cpu.host_ctxt as f64 / n,
            self.published,
        )
    }
}

/// One run; `sys`: read Mosquitto's `$SYS` counter to cross-check what was published.
async fn run(args: Args, endpoint: Endpoint, sys: bool, cpu: BrokerCpu) -> Result<Report, BoxError> {
    let mut sys = match sys {
        true => Some(SysCounter::connect(&endpoint).await?),
        false => None,
    };
    // A broker started for this run has counted nothing yet; a shared one counted earlier runs.
    let baseline = match (&mut sys, args.mosquitto_pid) {
        (Some(sys), Some(_)) => sys.baseline(&endpoint).await?,
        _ => 0,
    };
    let mut report = if args.raw {
        raw::run(&args, &endpoint, cpu).await?
    } else {
        run_devices(&args, &endpoint, cpu).await?
    };
    if let Some(mut sys) = sys {
        report.broker_received = sys
            .wait_for(baseline + report.published, Duration::from_secs(3))
            .await
            .map(|r| r.saturating_sub(baseline));
        sys.close().await;
    }
    Ok(report)
}

async fn run_devices(args: &Args, endpoint: &Endpoint, cpu: BrokerCpu) -> Result<Report, BoxError> {
    let (tx, mut rx) = unbounded_channel();
    let devices = connect_all(args, endpoint, tx).await?;
    let topics: Vec<String> = (0..args.devices).map(|d| format!("bench/{d}")).collect();
    let payload = Bytes::from(vec![b'x'; args.payload]);
    let mut fleet = Fleet {
        devices,
        topics,
        payload,
        qos: args.qos,
        outstanding: 0,
        end: Instant::now(),
        report: Report::default(),
    };

    let cpu0 = host::sample(cpu)?;
    let start = Instant::now();
    fleet.end = start + Duration::from_secs_f64(args.seconds);
    for d in 0..fleet.devices.len() {
        for _ in 0..args.window {
            fleet.publish(d)?;
        }
    }
    let stop = tokio::time::sleep_until(fleet.end.into());
    tokio::pin!(stop);
    let mut batch = Vec::with_capacity(4096);
    loop {
        tokio::select! {
            biased;
            _ = &mut stop => break,
            n = rx.recv_many(&mut batch, 4096) => {
                if n == 0 {
                    return Err("every device's event channel closed".into());
                }
                for event in batch.drain(..) {
                    if let Some(d) = fleet.record(event) {
                        fleet.publish(d)?;
                    }
                }
            }
        }
    }
    let cpu1 = host::sample(cpu)?;
    fleet.report.elapsed = start.elapsed();
    fleet.report.cpu = cpu1.since(&cpu0);

    // No new publishes from here: wait for the outcome of everything in flight, then close.
    let drain_until = tokio::time::Instant::now() + Duration::from_secs(10);
    while fleet.outstanding > 0 {
        match tokio::time::timeout_at(drain_until, rx.recv_many(&mut batch, 4096)).await {
            Ok(n) if n > 0 => {
                for event in batch.drain(..) {
                    fleet.record(event);
                }
            }
            _ => break,
        }
    }
    let mut closing = JoinSet::new();
    for device in std::mem::take(&mut fleet.devices) {
        closing.spawn(device.close(Duration::from_secs(1)));
    }
    closing.join_all().await;
    // Every device (and so every sender) is gone: this ends with their last `Lost` events.
    while let Some(event) = rx.recv().await {
        fleet.record(event);
    }
    Ok(fleet.report)
}

/// The closed loop's state.
struct Fleet {
    devices: Vec<Device>,
    topics: Vec<String>,
    payload: Bytes,
    qos: u8,
    outstanding: u64,
    end: Instant,
    report: Report,
}

impl Fleet {
    fn publish(&mut self, d: usize) -> Result<(), BoxError> {
        self.devices[d].publish(&self.topics[d], self.qos, &self.payload)?;
        self.outstanding += 1;
        self.report.published += 1;
        Ok(())
    }

    /// Books one event; returns the device whose window has room again.
    fn record(&mut self, event: DeviceEvent) -> Option<usize> {
        let d = event.device as usize;
        let at = match event.kind {
            DeviceEventKind::Acked {
                written_at, acked_at, ..
            } => {
                if acked_at <= self.end {
                    let us = acked_at.duration_since(written_at).as_micros();
                    self.report.latencies_us.push(u32::try_from(us).unwrap_or(u32::MAX));
                }
                acked_at
            }
            DeviceEventKind::Written { at, .. } => at,
            // Not replaced: a device that cannot queue would otherwise spin on
            // publish → Lost → publish; its window shrinks instead (and `lost` shows it).
            DeviceEventKind::Lost { .. } => {
                self.report.lost += 1;
                self.outstanding -= 1;
                return None;
            }
            DeviceEventKind::Disconnected { .. } => {
                self.report.disconnects += 1;
                return None;
            }
            DeviceEventKind::Connected { .. } => return None,
        };
        if at <= self.end {
            self.report.done_in_window += 1;
        }
        self.outstanding -= 1;
        Some(d)
    }
}

/// Connects every device, at most `BATCH` at a time (brokers drop
/// connections that arrive in one burst larger than their listen backlog).
async fn connect_all(
    args: &Args,
    endpoint: &Endpoint,
    events: UnboundedSender<DeviceEvent>,
) -> Result<Vec<Device>, BoxError> {
    const BATCH: u32 = 50;
    let mut devices = Vec::with_capacity(args.devices as usize);
    for first in (0..args.devices).step_by(BATCH as usize) {
        let mut batch = JoinSet::new();
        for d in first..(first + BATCH).min(args.devices) {
            let options = DeviceOptions {
                client_id: format!("throughput-{d}"),
                keep_alive: Duration::from_secs(30),
                clean_session: true,
                credentials: None,
                max_inflight: args.window,
                max_packet_bytes: args.payload + 64,
            };
            let (endpoint, events) = (endpoint.clone(), events.clone());
            batch.spawn(async move { Device::connect(d, &endpoint, options, events, Duration::from_secs(10)).await });
        }
        let mut connected = batch.join_all().await.into_iter().collect::<Result<Vec<_>, _>>()?;
        connected.sort_by_key(Device::index);
        devices.extend(connected);
    }
    Ok(devices)
}
