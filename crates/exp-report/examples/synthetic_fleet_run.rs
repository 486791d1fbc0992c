//! A complete run directory of a large MQTT fleet run, written without a
//! fleet or a broker, to benchmark `expc report` at scale
//! (`bench/report-scale.sh`):
//!
//! ```text
//! expc plan bench/report-scale.exp --format json -o plan.json
//! cargo run --release -p exp-report --example synthetic_fleet_run -- OUT [ROWS] --plan plan.json
//! ```
//!
//! writes `OUT/<experiment>/synthetic-<ROWS>` (its path is the last line on
//! standard output; progress goes to standard error) through the runtime's
//! own writers: `RunDir`, the table store and the tables' real schemas.
//! The plan (trial 0) gives the shape: the fleet's devices, gap, first-send
//! offsets, payload size, connect rate, warm-up and `subscribe`; the
//! anomaly's name, kind, cores and window; the monitor's interval; the
//! trial's duration. ROWS (default 27,000,000: 5,000 devices × 1 msg/s × 90
//! min) are shared out over the devices, each sending on its own schedule of
//! gaps drawn from the plan's gap distribution, in send order (ROWS, not
//! the fleet's `messages`, decides how many each device sends).
//!
//! Measured values are drawn (seeded, so the same arguments write the same
//! rows): send lateness log-normal around 35 µs, ack latency log-normal
//! around 300 µs with a Pareto tail in 0.2 % of messages, delivery a little
//! later than the ack, 0.01 % of messages timed out; while the anomaly is
//! active everything is slower and timeouts ten times as frequent. The
//! monitor's tables have the columns the monitor writes on this host
//! (`exp_host`'s samplers), with plausible values; the manifest is
//! complete, with the fleet's and the anomaly's trial metrics.
//!
//! 27 M rows take about 30 s and 580 MB of disk; the process peaked at
//! ~1.3 GB resident on a loaded 2-CPU machine, levelling off after ~10 s
//! of writing.

use std::collections::{BTreeMap, BinaryHeap};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use exp_host::{Column, ColumnType, ProcessSampler, SamplerOptions, SystemSampler};
use exp_plan::{Anomaly, FirstSend, Fleet, Monitor, Payload, Plan, Warmup, WorkloadConfig};
use exp_results::schemas::{devices_schema, messages_schema, timeline_schema, MONITOR_TABLE, TRIALS_TABLE};
use exp_results::{
    Batch, Cell, ColumnData, DType, Manifest, PointRecord, RunDir, RunStatus, Schema, Store, StoreOptions, TrialStatus,
};
use exp_stats::{Rng, Sampler};

type Result<T, E = Box<dyn Error>> = std::result::Result<T, E>;

const DEFAULT_ROWS: u64 = 27_000_000;
/// Rows per `write`: the store queues at most 64 batches
/// (`CHANNEL_BATCHES`) before `write` blocks, and cuts row groups of 64 Ki
/// rows from them whatever their size.
const BATCH_ROWS: usize = 16_384;
const SEED: u64 = 20_261_121;
const S: u64 = 1_000_000_000;
const US: f64 = 1e3;
/// Messages not acknowledged by the plan's `ack_timeout`: their latencies
/// are drawn below it.
const LATENCY_CAP_NS: f64 = 9.5e9;

fn main() -> Result<()> {
    let args = Args::parse()?;
    let plan = Plan::from_json(&std::fs::read(&args.plan).map_err(|e| format!("{}: {e}", args.plan.display()))?)
        .map_err(|e| format!("{}: {e}", args.plan.display()))?;
    let dir = write_run(&args.out, args.rows, &plan)?;
    println!("{}", dir.display());
    Ok(())
}

/// Writes the run of `rows` messages under `out`; returns its directory.
fn write_run(out: &Path, rows: u64, plan: &Plan) -> Result<PathBuf> {
    let clock = Instant::now();
    let shape = Shape::of(plan)?;
    let run_id = format!("synthetic-{rows}");
    let run = RunDir::create(out, &plan.experiment.name, &run_id)?;
    let plan_sha256 = run.write_plan(plan)?;
    let started = SystemTime::now();
    let mut manifest = Manifest::new(plan, [0], &run_id, &plan_sha256, started, exp_host::facts());
    manifest.trials[0].status = TrialStatus::Running;
    run.write_manifest(&mut manifest)?;

    let store = Store::open(run.tables_dir(), StoreOptions::default())?;
    let mut rng = Rng::new(SEED);
    let connected = connect(&shape, &mut rng);
    let totals = write_messages(&store, &shape, rows, &connected.connected_ns, &mut rng)?;
    eprintln!("mqtt_messages: {} rows in {:.1} s", rows, clock.elapsed().as_secs_f64());
    write_devices(&store, &shape, &connected, &totals)?;
    if let Some(anomaly) = &shape.anomaly {
        write_timeline(&store, anomaly, &mut rng)?;
    }
    if let Some(monitor) = &shape.monitor {
        write_monitor(&store, &shape, monitor, &mut rng)?;
    }
    let trial_start = manifest.started_unix_ns + 400_000_000;
    let trial_end = trial_start + shape.duration_ns;
    write_trials(&store, manifest.trials[0].seed, trial_start, trial_end)?;
    let summary = store.close()?;

    let trial = &mut manifest.trials[0];
    trial.status = TrialStatus::Complete;
    (trial.started_at_unix_ns, trial.ended_at_unix_ns) = (Some(trial_start), Some(trial_end));
    trial.metrics = metrics(&shape, &totals);
    manifest.points = vec![PointRecord {
        point: 0,
        repetitions_run: 1,
        stop_reason: None,
    }];
    manifest.record_tables(&summary);
    manifest.status = RunStatus::Complete;
    manifest.finish(started + Duration::from_nanos(shape.duration_ns + S));
    run.write_manifest(&mut manifest)?;
    let dir = run.finish()?;
    for (table, record) in &summary.tables {
        eprintln!("  {table}: {} rows, {} files", record.rows, record.files);
    }
    eprintln!("wrote the run in {:.1} s", clock.elapsed().as_secs_f64());
    Ok(dir)
}

struct Args {
    out: PathBuf,
    rows: u64,
    plan: PathBuf,
}

impl Args {
    fn parse() -> Result<Args> {
        const USAGE: &str = "usage: synthetic_fleet_run OUT [ROWS] --plan PLAN.json \
                             (PLAN.json from `expc plan bench/report-scale.exp --format json -o PLAN.json`)";
        let mut positional = Vec::new();
        let mut plan = None;
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--plan" => plan = args.next().map(PathBuf::from),
                "-h" | "--help" => return Err(USAGE.into()),
                _ => positional.push(arg),
            }
        }
        let (out, rows) = match positional.as_slice() {
            [out] => (out, DEFAULT_ROWS),
            [out, rows] => (
                out,
                rows.replace('_', "").parse().map_err(|e| format!("ROWS {rows}: {e}"))?,
            ),
            _ => return Err(USAGE.into()),
        };
        Ok(Args {
            out: PathBuf::from(out),
            rows,
            plan: plan.ok_or(USAGE)?,
        })
    }
}

/// What the plan says the run looks like.
struct Shape {
    fleet: String,
    devices: u64,
    gap: Sampler,
    /// Span the first sends are spread over (uniform), or their distribution.
    first_send: FirstSendOffsets,
    payload: Payload,
    connect_rate_per_s: f64,
    warmup: Warmup,
    subscribe: bool,
    anomaly: Option<AnomalyShape>,
    monitor: Option<Monitor>,
    duration_ns: u64,
}

enum FirstSendOffsets {
    Uniform(f64),
    Lockstep,
    Drawn(Sampler),
}

struct AnomalyShape {
    name: String,
    config: Anomaly,
    planned_start_ns: u64,
    planned_end_ns: u64,
    /// When the anomaly's process started and was stopped: a little late.
    start_ns: u64,
    end_ns: u64,
}

impl Shape {
    fn of(plan: &Plan) -> Result<Shape> {
        let workloads = plan.workloads_at(0).ok_or("the plan has no trial 0")?;
        let mut fleet: Option<(String, Fleet)> = None;
        let mut anomaly = None;
        for w in &workloads {
            match &w.config {
                WorkloadConfig::Fleet(f) if fleet.is_none() => fleet = Some((w.name.clone(), (**f).clone())),
                WorkloadConfig::Anomaly(a) if anomaly.is_none() && w.window.period.is_none() => {
                    let end = w.window.end_ns.ok_or("the anomaly needs an end (`until` or `for`)")?;
                    anomaly = Some(AnomalyShape {
                        name: w.name.clone(),
                        config: (**a).clone(),
                        planned_start_ns: w.window.start_ns,
                        planned_end_ns: end,
                        start_ns: w.window.start_ns + 1_300_000,
                        end_ns: end + 4_100_000,
                    });
                }
                _ => {}
            }
        }
        let (name, f) = fleet.ok_or("the plan has no fleet")?;
        let gap = Sampler::new(&f.gap)?;
        let first_send = match &f.first_send {
            FirstSend::Uniform => FirstSendOffsets::Uniform(gap.mean().ok_or("the gap has no mean")?),
            FirstSend::Lockstep => FirstSendOffsets::Lockstep,
            FirstSend::Dist(d) => FirstSendOffsets::Drawn(Sampler::new(d)?),
        };
        Ok(Shape {
            fleet: name,
            devices: u64::from(f.devices.max(1)),
            gap,
            first_send,
            payload: f.payload.clone(),
            connect_rate_per_s: f.connect_rate_per_s,
            warmup: f.warmup,
            subscribe: f.subscribe,
            anomaly,
            monitor: plan.monitor_at(0).map(std::borrow::Cow::into_owned),
            duration_ns: plan.trial_duration_ns(0).ok_or("the trial has no planned duration")?,
        })
    }

    /// Whether the anomaly is active at `t_ns` (from its actual start to its actual end).
    fn hog(&self, t_ns: u64) -> bool {
        self.anomaly
            .as_ref()
            .is_some_and(|a| t_ns >= a.start_ns && t_ns < a.end_ns)
    }
}

/// A standard normal (Box–Muller).
fn normal(rng: &mut Rng) -> f64 {
    (-2.0 * rng.open01().ln()).sqrt() * (std::f64::consts::TAU * rng.next_f64()).cos()
}

fn log_normal(rng: &mut Rng, median: f64, sigma: f64) -> f64 {
    median * (sigma * normal(rng)).exp()
}

/// A Pareto factor ≥ 1 of shape `alpha`: the heavy tail.
fn pareto(rng: &mut Rng, alpha: f64) -> f64 {
    rng.open01().powf(-1.0 / alpha)
}

/// Each device's connection: connect start along the ramp, connected after a
/// log-normal handshake of a few ms.
struct Connected {
    start_ns: Vec<u64>,
    connected_ns: Vec<u64>,
}

fn connect(shape: &Shape, rng: &mut Rng) -> Connected {
    let start_ns: Vec<u64> = (0..shape.devices)
        .map(|d| (d as f64 * 1e9 / shape.connect_rate_per_s) as u64)
        .collect();
    let connected_ns = start_ns.iter().map(|s| s + log_normal(rng, 3e6, 0.4) as u64).collect();
    Connected { start_ns, connected_ns }
}

/// What the messages add up to, for `mqtt_devices` and the trial metrics.
#[derive(Default)]
struct Totals {
    sent: u64,
    completed: u64,
    lost: u64,
    ack_sum_ns: f64,
    delivery_sum_ns: f64,
    delivery_count: u64,
    lateness_sum_ns: f64,
    /// Send lateness per µs, for its 99th percentile.
    lateness_us: Vec<u64>,
    span_ns: Option<(u64, u64)>,
    errors_per_device: Vec<u64>,
}

/// One message's measured values.
struct Drawn {
    lateness_ns: u64,
    ack_ns: Option<u64>,
    delivery_ns: Option<u64>,
}

fn draw(rng: &mut Rng, hog: bool, subscribe: bool) -> Drawn {
    let (late_median, late_sigma, ack_median, ack_sigma, timeout) = if hog {
        (120.0 * US, 0.8, 900.0 * US, 0.6, 1e-3)
    } else {
        (35.0 * US, 0.5, 300.0 * US, 0.35, 1e-4)
    };
    let mut lateness = log_normal(rng, late_median, late_sigma);
    if rng.next_f64() < 1e-4 {
        lateness = (lateness * pareto(rng, 1.5)).min(50e6);
    }
    let timed_out = rng.next_f64() < timeout;
    let mut ack = log_normal(rng, ack_median, ack_sigma);
    if rng.next_f64() < 2e-3 {
        ack = (ack * pareto(rng, 1.3)).min(LATENCY_CAP_NS);
    }
    let delivery = ack + log_normal(rng, if hog { 150.0 * US } else { 60.0 * US }, 0.4);
    Drawn {
        lateness_ns: lateness as u64,
        ack_ns: (!timed_out).then_some(ack as u64),
        delivery_ns: (!timed_out && subscribe).then_some(delivery.min(LATENCY_CAP_NS) as u64),
    }
}

/// `mqtt_messages`, by column name of the schema, filled a batch at a time.
#[derive(Default)]
struct MessageColumns {
    device: Vec<Option<u64>>,
    seq: Vec<Option<u64>>,
    scheduled: Vec<Option<u64>>,
    sent: Vec<Option<u64>>,
    acked: Vec<Option<u64>>,
    delivered: Vec<Option<u64>>,
    lateness: Vec<Option<u64>>,
    ack: Vec<Option<u64>>,
    delivery: Vec<Option<u64>>,
    bytes: Vec<Option<u64>>,
    status: Vec<Option<String>>,
    reason: Vec<Option<String>>,
    warmup: Vec<Option<bool>>,
}

impl MessageColumns {
    fn push(&mut self, device: u64, seq: u64, scheduled: u64, bytes: u64, m: &Drawn, warmup: bool) {
        let sent = scheduled + m.lateness_ns;
        self.device.push(Some(device));
        self.seq.push(Some(seq));
        self.scheduled.push(Some(scheduled));
        self.sent.push(Some(sent));
        self.acked.push(m.ack_ns.map(|a| sent + a));
        self.delivered.push(m.delivery_ns.map(|d| sent + d));
        self.lateness.push(Some(m.lateness_ns));
        self.ack.push(m.ack_ns);
        self.delivery.push(m.delivery_ns);
        self.bytes.push(Some(bytes));
        let ok = m.ack_ns.is_some();
        self.status.push(Some(if ok { "ok" } else { "timeout" }.to_string()));
        self.reason.push((!ok).then(|| "unacked".to_string()));
        self.warmup.push(Some(warmup));
    }

    fn len(&self) -> usize {
        self.device.len()
    }

    /// The batch in `schema`'s column order, found by name.
    fn take(&mut self, schema: &Schema, fleet: &str) -> Result<Batch> {
        let rows = self.len();
        let mut taken = std::mem::take(self);
        let columns = schema
            .columns
            .iter()
            .map(|c| {
                let u64s = |v: &mut Vec<Option<u64>>| Ok(ColumnData::U64(std::mem::take(v)));
                match c.name.as_str() {
                    "fleet" => Ok(ColumnData::Str(vec![Some(fleet.to_string()); rows])),
                    "device" => u64s(&mut taken.device),
                    "seq" => u64s(&mut taken.seq),
                    "scheduled_ns" => u64s(&mut taken.scheduled),
                    "sent_ns" => u64s(&mut taken.sent),
                    "acked_ns" => u64s(&mut taken.acked),
                    "delivered_ns" => u64s(&mut taken.delivered),
                    "lateness_ns" => u64s(&mut taken.lateness),
                    "ack_latency_ns" => u64s(&mut taken.ack),
                    "delivery_latency_ns" => u64s(&mut taken.delivery),
                    "bytes" => u64s(&mut taken.bytes),
                    "status" => Ok(ColumnData::Str(std::mem::take(&mut taken.status))),
                    "reason" => Ok(ColumnData::Str(std::mem::take(&mut taken.reason))),
                    "warmup" => Ok(ColumnData::Bool(std::mem::take(&mut taken.warmup))),
                    other => Err(format!(
                        "mqtt_messages has a column this example does not fill: {other}"
                    )),
                }
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Batch { columns })
    }
}

/// The next message of each device, earliest first.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Next {
    at: std::cmp::Reverse<(u64, u64)>,
    seq: u64,
}

/// `rows` messages shared out over the devices, in send order: each device
/// starts once every device has connected, at its first-send offset, and
/// goes on at gaps drawn from the plan's gap.
fn write_messages(store: &Store, shape: &Shape, rows: u64, connected_ns: &[u64], rng: &mut Rng) -> Result<Totals> {
    let schema = messages_schema();
    let sink = store.sink(&schema, 0, 0);
    let per_device = |d: u64| rows / shape.devices + u64::from(d < rows % shape.devices);
    let warmup_messages = |d: u64| match shape.warmup {
        Warmup::Ratio(r) => (r * per_device(d) as f64).ceil() as u64,
        Warmup::Ns(_) => 0,
    };
    let send_start = connected_ns.iter().copied().max().unwrap_or(0) + 2_000_000;
    let mut queue = BinaryHeap::new();
    for d in 0..shape.devices {
        let offset = match &shape.first_send {
            FirstSendOffsets::Uniform(span) => (rng.next_f64() * span) as u64,
            FirstSendOffsets::Lockstep => 0,
            FirstSendOffsets::Drawn(dist) => dist.sample_u64(rng),
        };
        if per_device(d) > 0 {
            queue.push(Next {
                at: std::cmp::Reverse((send_start + offset, d)),
                seq: 0,
            });
        }
    }
    let (json_bytes, raw_bytes) = match &shape.payload {
        Payload::Json { size_bytes, .. } => (*size_bytes, None),
        Payload::Raw { size } => (0, Some(Sampler::new(size)?)),
    };
    let mut totals = Totals {
        lateness_us: vec![0; 1_000_001],
        errors_per_device: vec![0; shape.devices as usize],
        ..Totals::default()
    };
    let mut columns = MessageColumns::default();
    while let Some(Next {
        at: std::cmp::Reverse((scheduled, device)),
        seq,
    }) = queue.pop()
    {
        let m = draw(rng, shape.hog(scheduled), shape.subscribe);
        let warmup = match shape.warmup {
            Warmup::Ratio(_) => seq < warmup_messages(device),
            // Scheduled in the first `ns` of the fleet's window (from the trial's start).
            Warmup::Ns(ns) => scheduled < ns,
        };
        let bytes = raw_bytes.as_ref().map_or(json_bytes, |dist| dist.sample_u64(rng));
        columns.push(device, seq, scheduled, bytes, &m, warmup);
        totals.add(device, scheduled, &m, warmup);
        if seq + 1 < per_device(device) {
            queue.push(Next {
                at: std::cmp::Reverse((scheduled + shape.gap.sample_u64(rng), device)),
                seq: seq + 1,
            });
        }
        if columns.len() == BATCH_ROWS || queue.is_empty() {
            sink.write(columns.take(&schema, &shape.fleet)?)?;
        }
    }
    Ok(totals)
}

impl Totals {
    fn add(&mut self, device: u64, scheduled: u64, m: &Drawn, warmup: bool) {
        if m.ack_ns.is_none() {
            self.errors_per_device[device as usize] += 1;
        }
        if warmup {
            return;
        }
        let sent = scheduled + m.lateness_ns;
        self.sent += 1;
        self.lateness_sum_ns += m.lateness_ns as f64;
        self.lateness_us[((m.lateness_ns / 1_000) as usize).min(1_000_000)] += 1;
        match m.ack_ns {
            Some(ack) => {
                self.completed += 1;
                self.ack_sum_ns += ack as f64;
                self.span_ns = Some(self.span_ns.map_or((sent, sent), |(a, b)| (a.min(sent), b.max(sent))));
            }
            None => self.lost += 1,
        }
        if let Some(d) = m.delivery_ns {
            self.delivery_sum_ns += d as f64;
            self.delivery_count += 1;
        }
    }

    /// The nearest-rank 99th percentile of the send lateness, to the µs.
    fn lateness_p99_ns(&self) -> Option<f64> {
        let rank = (self.sent * 99).div_ceil(100).max(1);
        let mut seen = 0;
        let bucket = self.lateness_us.iter().position(|&n| {
            seen += n;
            seen >= rank
        })?;
        Some(bucket as f64 * 1e3)
    }
}

/// `mqtt_devices`: one row per device, all connected for the whole trial.
fn write_devices(store: &Store, shape: &Shape, connected: &Connected, totals: &Totals) -> Result<()> {
    let schema = devices_schema();
    let mut batch = schema.batch();
    for d in 0..shape.devices {
        let i = d as usize;
        let (start, end) = (connected.start_ns[i], connected.connected_ns[i]);
        batch.push_row(schema.row([
            ("fleet", shape.fleet.as_str().into()),
            ("device", d.into()),
            ("client_id", format!("{}-{d}", shape.fleet).into()),
            ("connect_start_ns", start.into()),
            ("connected_ns", end.into()),
            ("connect_latency_ns", (end - start).into()),
            ("disconnects", 0u64.into()),
            ("reconnects", 0u64.into()),
            ("errors", totals.errors_per_device[i].into()),
            ("status", "connected".into()),
        ])?)?;
    }
    store.sink(&schema, 0, 0).write(batch)?;
    Ok(())
}

/// The anomaly executor's `anomaly_timeline`: one activation, started and
/// stopped a few ms after its planned window.
fn write_timeline(store: &Store, a: &AnomalyShape, rng: &mut Rng) -> Result<()> {
    let schema = timeline_schema();
    let (start, end) = (a.start_ns, a.end_ns);
    let target = match a.config.params {
        exp_plan::AnomalyParams::Cpuoccupy { utilization_ratio } => Cell::F64(utilization_ratio * 100.0),
        _ => Cell::Null,
    };
    let cores = a.config.cores.len().max(1) as f64;
    let achieved = 88.5 + rng.next_f64();
    let cores_list: Vec<String> = a.config.cores.iter().map(u32::to_string).collect();
    let row = schema.row([
        ("instance", a.name.as_str().into()),
        ("activation", 0u64.into()),
        ("kind", a.config.params.kind().into()),
        ("parameters", serde_json::to_string(&a.config.params)?.into()),
        ("cores", cores_list.join(",").into()),
        ("target_utilization_pct", target),
        ("planned_start_ns", a.planned_start_ns.into()),
        ("planned_end_ns", a.planned_end_ns.into()),
        ("actual_start_ns", start.into()),
        ("actual_end_ns", end.into()),
        ("status", "stopped".into()),
        ("error", Cell::Null),
        ("pid", 41_234u64.into()),
        (
            "cpu_time_ns",
            (((end - start) as f64 * cores * achieved / 100.0) as u64).into(),
        ),
        ("achieved_utilization_pct", achieved.into()),
        ("peak_rss_bytes", 3_211_264u64.into()),
        ("iterations", 0u64.into()),
        ("bytes", 0u64.into()),
        ("files", 0u64.into()),
        ("ground_truth", true.into()),
    ]);
    let mut batch = schema.batch();
    batch.push_row(row.map_err(|e| format!("anomaly_timeline: {e}"))?)?;
    store.sink(&schema, 0, 0).write(batch)?;
    Ok(())
}

/// A table of the monitor's columns, typed as the monitor types them
/// (`exp-runtime/src/monitor.rs`).
fn monitor_schema(name: &str, columns: &[Column]) -> Schema {
    columns.iter().fold(Schema::new(name), |schema, c| {
        let dtype = match c.ty {
            ColumnType::U64 if c.name.ends_with("_ns") => DType::Ns,
            ColumnType::U64 => DType::U64,
            ColumnType::F64 => DType::F64,
            ColumnType::Str => DType::Str,
        };
        schema.column(c.name.clone(), dtype)
    })
}

/// `system_metrics` and (with `processes`) `process_metrics`, a row per
/// interval from the first interval to the trial's end.
fn write_monitor(store: &Store, shape: &Shape, monitor: &Monitor, rng: &mut Rng) -> Result<()> {
    let system = SystemSampler::new(SamplerOptions {
        per_cpu: monitor.per_cpu,
    })?;
    let system_columns = system.columns();
    let system_schema = monitor_schema(MONITOR_TABLE, &system_columns).column("active_workloads", DType::Str);
    let process_columns = ProcessSampler::new().columns();
    let process_schema = monitor_schema("process_metrics", &process_columns);
    let host = Host {
        cpus: system.cpus().to_vec(),
        hog_cores: shape
            .anomaly
            .as_ref()
            .map(|a| a.config.cores.clone())
            .unwrap_or_default(),
        memory_bytes: exp_host::facts().memory_total_bytes as f64,
    };
    let interval = monitor.interval_ns.max(1_000_000);
    let (mut system_batch, mut process_batch) = (system_schema.batch(), process_schema.batch());
    let mut t = interval;
    while t <= shape.duration_ns {
        let hog = shape.hog(t);
        let sample = Sample {
            t_ns: t,
            interval_ns: interval,
            hog,
        };
        let mut row: Vec<Cell> = system_columns
            .iter()
            .map(|c| host.system_cell(c, &sample, rng))
            .collect();
        row.push(Cell::Str(
            if hog {
                shape.anomaly.as_ref().map_or("", |a| a.name.as_str())
            } else {
                ""
            }
            .into(),
        ));
        system_batch.push_row(row)?;
        if monitor.processes {
            let mut workloads = vec![exp_host::RUNNER_WORKLOAD];
            workloads.extend(shape.anomaly.as_ref().filter(|_| hog).map(|a| a.name.as_str()));
            for workload in workloads {
                let row = process_columns
                    .iter()
                    .map(|c| process_cell(c, workload, &sample, rng))
                    .collect();
                process_batch.push_row(row)?;
            }
        }
        t += interval;
    }
    store.sink(&system_schema, 0, 0).write(system_batch)?;
    if monitor.processes {
        store.sink(&process_schema, 0, 0).write(process_batch)?;
    }
    Ok(())
}

struct Sample {
    t_ns: u64,
    interval_ns: u64,
    hog: bool,
}

struct Host {
    cpus: Vec<u32>,
    hog_cores: Vec<u32>,
    memory_bytes: f64,
}

/// `/proc/stat`'s states, in `exp_host`'s order.
const CPU_STATES: [&str; 8] = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"];

impl Host {
    /// Shares of one CPU's time, %, in [`CPU_STATES`] order: the runner
    /// and the broker keep every core a third busy; the anomaly's cores are
    /// ~90 % busy while it is active.
    fn cpu_shares(&self, cpu: u32, s: &Sample, rng: &mut Rng) -> [f64; 8] {
        let hogged = s.hog && self.hog_cores.contains(&cpu);
        let user = if hogged { 90.0 } else { 22.0 } + 3.0 * normal(rng);
        let system = 8.0 + normal(rng).abs();
        let (iowait, softirq) = (0.4 * rng.next_f64(), 1.5 + 0.5 * rng.next_f64());
        let idle = (100.0 - user - system - iowait - softirq).max(0.0);
        [user, 0.0, system, idle, iowait, 0.0, softirq, 0.0]
    }

    /// A CPU state's share: of all CPUs (their mean), or of one.
    fn cpu_pct(&self, all: Option<usize>, core: Option<(u32, usize)>, s: &Sample, rng: &mut Rng) -> f64 {
        match (all, core) {
            (Some(i), _) => {
                let shares: Vec<[f64; 8]> = self.cpus.iter().map(|&n| self.cpu_shares(n, s, rng)).collect();
                shares.iter().map(|sh| sh[i]).sum::<f64>() / shares.len().max(1) as f64
            }
            (None, Some((n, i))) => self.cpu_shares(n, s, rng)[i],
            (None, None) => 0.0,
        }
    }

    fn system_cell(&self, c: &Column, s: &Sample, rng: &mut Rng) -> Cell {
        let name = c.name.as_str();
        let jitter = |rng: &mut Rng, v: f64| v * (1.0 + 0.05 * normal(rng));
        let state_of = |rest: &str| CPU_STATES.iter().position(|st| rest == format!("{st}_pct"));
        // `cpu_user_pct` (all CPUs) and `cpu3_idle_pct` (one).
        let all_state = name.strip_prefix("cpu_").and_then(state_of);
        let core_state = name
            .strip_prefix("cpu")
            .and_then(|rest| rest.split_once('_'))
            .and_then(|(n, rest)| Some((n.parse::<u32>().ok()?, state_of(rest)?)));
        let f = match name {
            _ if all_state.is_some() || core_state.is_some() => self.cpu_pct(all_state, core_state, s, rng),
            "t_ns" => return Cell::U64(s.t_ns + rng.below(300_000)),
            "interval_ns" => return Cell::U64(s.interval_ns - 150_000 + rng.below(300_000)),
            "mem_total_bytes" => self.memory_bytes,
            // The runner's memory grows by ~20 kB/s (its RSS in `process_metrics`).
            "mem_available_bytes" => self.memory_bytes * 0.8 - s.t_ns as f64 / 1e9 * 20_000.0,
            "mem_free_bytes" => self.memory_bytes * 0.3 - s.t_ns as f64 / 1e9 * 20_000.0,
            "mem_cached_bytes" => self.memory_bytes * 0.45,
            "mem_anon_bytes" => self.memory_bytes * 0.08 + s.t_ns as f64 / 1e9 * 20_000.0,
            "mem_dirty_bytes" => jitter(rng, 5e6),
            "pgfault_per_s" => jitter(rng, 2_000.0),
            "pgpgout_per_s" => jitter(rng, 2_500.0),
            "procs_running" => 2.0 + rng.below(3) as f64 + f64::from(u8::from(s.hog)),
            "ctxt_per_s" => jitter(rng, 28_000.0),
            "disk_write_bytes_per_s" => jitter(rng, 2.5e6),
            "disk_writes_per_s" => jitter(rng, 40.0),
            "net_rx_bytes_per_s" | "net_tx_bytes_per_s" => jitter(rng, 1.7e6),
            "net_rx_packets_per_s" | "net_tx_packets_per_s" => jitter(rng, 20_000.0),
            "disk_busy_pct" => jitter(rng, 3.0),
            _ if name.starts_with("mem_") => self.memory_bytes * 0.01,
            _ => 0.0,
        };
        match c.ty {
            ColumnType::U64 => Cell::U64(f.max(0.0) as u64),
            ColumnType::F64 => Cell::F64(f.max(0.0)),
            ColumnType::Str => Cell::Null,
        }
    }
}

/// A `process_metrics` cell: the runner (a core's worth at 5,000 msg/s,
/// its memory growing slowly) or the anomaly's process.
fn process_cell(c: &Column, workload: &str, s: &Sample, rng: &mut Rng) -> Cell {
    let runner = workload == exp_host::RUNNER_WORKLOAD;
    let secs = s.t_ns as f64 / 1e9;
    let f = match c.name.as_str() {
        "t_ns" => return Cell::U64(s.t_ns + rng.below(300_000)),
        "workload" => return Cell::Str(workload.to_string()),
        "pid" => return Cell::U64(if runner { 40_001 } else { 41_234 }),
        "cpu_pct" if runner => 45.0 + 5.0 * normal(rng),
        "cpu_pct" => 89.0 + normal(rng),
        "cpu_time_ns" => secs * if runner { 0.45e9 } else { 0.89e9 },
        "rss_bytes" if runner => 80e6 + secs * 10_000.0,
        "rss_bytes" => 3.2e6,
        "threads" => {
            if runner {
                6.0
            } else {
                1.0
            }
        }
        "write_bytes_per_s" | "wchar_per_s" if runner => 2.5e6 * (1.0 + 0.05 * normal(rng)),
        _ => 0.0,
    };
    match c.ty {
        ColumnType::U64 => Cell::U64(f.max(0.0) as u64),
        ColumnType::F64 => Cell::F64(f.max(0.0)),
        ColumnType::Str => Cell::Null,
    }
}

/// The runtime's `trials` table (`exp-runtime/src/trials.rs`) of a plan
/// without sweep parameters.
fn write_trials(store: &Store, seed: u64, start: u64, end: u64) -> Result<()> {
    let schema = Schema::new(TRIALS_TABLE)
        .column("point", DType::U64)
        .column("repetition", DType::U64)
        .column("seed", DType::U64)
        .column("start_unix_ns", DType::Ns)
        .column("end_unix_ns", DType::Ns)
        .column("duration_ns", DType::Ns)
        .column("status", DType::Str)
        .column("contended", DType::Bool)
        .column("error", DType::Str);
    let mut batch = schema.batch();
    batch.push_row(vec![
        0u64.into(),
        0u64.into(),
        seed.into(),
        start.into(),
        end.into(),
        (end - start).into(),
        "complete".into(),
        false.into(),
        Cell::Null,
    ])?;
    store.sink(&schema, 0, 0).write(batch)?;
    Ok(())
}

/// The trial's metrics as the runtime merges them (`exp-runtime/src/repeat.rs`):
/// `workload.metric`, and the bare name for the mean over workloads.
fn metrics(shape: &Shape, t: &Totals) -> BTreeMap<String, f64> {
    let mut fleet = BTreeMap::new();
    if t.completed > 0 {
        fleet.insert("ack_latency", t.ack_sum_ns / t.completed as f64);
    }
    if t.delivery_count > 0 {
        fleet.insert("delivery_latency", t.delivery_sum_ns / t.delivery_count as f64);
    }
    if t.sent > 0 {
        fleet.insert("send_lateness", t.lateness_sum_ns / t.sent as f64);
        fleet.insert(
            "runner_cpu_per_message",
            0.45 * shape.duration_ns as f64 / t.sent as f64,
        );
    }
    if let Some((first, last)) = t.span_ns.filter(|(a, b)| b > a) {
        fleet.insert(
            "throughput",
            t.completed.saturating_sub(1) as f64 / ((last - first) as f64 / 1e9),
        );
    }
    fleet.insert("messages_lost", t.lost as f64);
    fleet.insert("disconnects", 0.0);
    fleet.insert("outage", 0.0);
    fleet.insert("runner_cpu_ratio", 0.45);
    fleet.insert("others_cpu_ratio", 0.21);
    fleet.insert("steal_cpu_ratio", 0.0);
    fleet.insert("runner_rss_per_device", 27_000.0);
    if let Some(p99) = t.lateness_p99_ns() {
        let bound = shape.gap.median().map_or(1e6, |m| (m / 10.0).max(1e6));
        fleet.insert("send_lateness_p99", p99);
        fleet.insert("contended", if p99 > bound { 1.0 } else { 0.0 });
    }
    let mut workloads = vec![(shape.fleet.as_str(), fleet)];
    if let Some(a) = &shape.anomaly {
        let anomaly = BTreeMap::from([
            ("achieved_utilization", 0.89),
            ("bytes_touched", 0.0),
            ("operations", 0.0),
        ]);
        workloads.push((a.name.as_str(), anomaly));
    }
    let mut merged = BTreeMap::new();
    let mut sums: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for (workload, values) in &workloads {
        for (&name, &value) in values {
            merged.insert(format!("{workload}.{name}"), value);
            let sum = sums.entry(name).or_default();
            *sum = (sum.0 + value, sum.1 + 1.0);
        }
    }
    merged.extend(sums.into_iter().map(|(k, (sum, n))| (k.to_string(), sum / n)));
    merged
}

/// The example is a bench tool that nothing else runs, so it is tested
/// here (`test = true` in Cargo.toml): a small run of the bench's own spec
/// must be written whole and read back by the report.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn bench_plan() -> Plan {
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
        let spec = Path::new(&manifest_dir).join("../../bench/report-scale.exp");
        let spec = spec.to_str().expect("a UTF-8 path");
        let options = exp_check::Options {
            seed: None,
            require_experiment: true,
        };
        let compiled = exp_check::compile(spec, &exp_check::FsLoader, &options);
        let messages: Vec<_> = compiled.diagnostics.iter().map(|d| &d.message).collect();
        compiled
            .plan
            .unwrap_or_else(|| panic!("{spec} does not plan: {messages:?}"))
    }

    #[test]
    fn a_small_run_of_the_bench_spec_is_written_whole_and_reported() {
        let out = tempfile::tempdir().unwrap();
        let dir = write_run(out.path(), 20_000, &bench_plan()).unwrap();
        let report = exp_report::run_report(&exp_results::open_run(&dir).unwrap());
        assert!(report.summary.warnings.is_empty(), "{:?}", report.summary.warnings);
        let mqtt = report.mqtt.expect("the run has a fleet");
        let fleets: Vec<_> = mqtt.trials.iter().flat_map(|t| &t.fleets).collect();
        assert_eq!(fleets.len(), 1);
        let fleet = fleets[0];
        // Every row is counted once: measured or warm-up.
        assert_eq!(fleet.counts.scheduled + fleet.warmup.scheduled, 20_000);
        assert!(fleet.counts.acknowledged > 0 && fleet.warmup.scheduled > 0);
        assert!(fleet.ack_latency_ns.is_some());
    }
}
