//! Workload plan nodes. Choices between alternatives (enum members,
//! constructors, distributions) are externally tagged: `"uniform"`,
//! `{"json": {...}}`, `{"dist": {...}}`.
//!
//! Workload plan nodes. Field names and meanings mirror the schema registry in
//! exp-check (one struct per block kind); a test there lowers every kind with
//! its defaults and deserializes it here, so the two cannot drift apart.

use serde::{Deserialize, Serialize};

use crate::{DistValue, Origin};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// The block's label, unique in the experiment.
    pub name: String,
    pub origin: Origin,
    pub window: Window,
    pub shard: Shard,
    pub config: WorkloadConfig,
}

/// When a workload runs, relative to the trial's start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub start_ns: u64,
    /// `None`: until the trial ends or the workload finishes by itself.
    pub end_ns: Option<u64>,
    /// Active `active_ns` at the start of every `every_ns` within the window.
    pub period: Option<Period>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Period {
    pub every_ns: u64,
    pub active_ns: u64,
}

/// The unit `--shard i/N` splits a workload by, and how many there are
/// (`None` when only known at run time, e.g. the connections of a trace).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub unit: String,
    pub count: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadConfig {
    Fleet(Box<Fleet>),
    Anomaly(Box<Anomaly>),
    Traffic(Box<Traffic>),
    Xml(Box<Xml>),
    // kind-list: workload configs
}

impl WorkloadConfig {
    /// The block kind the spec writes (`fleet`, `anomaly`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadConfig::Fleet(_) => "fleet",
            WorkloadConfig::Anomaly(_) => "anomaly",
            WorkloadConfig::Traffic(_) => "traffic",
            WorkloadConfig::Xml(_) => "xml",
            // kind-list: kind names
        }
    }

    /// A few words for a schedule: `fleet of 100`, `cpuoccupy on 0,1`.
    pub fn describe(&self) -> String {
        match self {
            WorkloadConfig::Anomaly(a) => {
                let cores: Vec<String> = a.cores.iter().map(u32::to_string).collect();
                format!("{} on {}", a.params.kind(), cores.join(","))
            }
            WorkloadConfig::Fleet(f) => format!("fleet of {}", f.devices),
            _ => self.kind().to_string(),
        }
    }
}

// ---- MQTT fleet ------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fleet {
    pub devices: u32,
    pub client_id: String,
    pub topic: String,
    pub qos: u8,
    pub keep_alive_ns: u64,
    pub clean_session: bool,
    pub gap: DistValue,
    pub first_send: FirstSend,
    pub payload: Payload,
    pub messages: Option<u64>,
    pub connect_rate_per_s: f64,
    pub warmup: Warmup,
    pub subscribe: bool,
    pub ack_timeout_ns: u64,
    /// `None`: a tenth of the gap's median, at least 1 ms (the runtime decides).
    pub lateness_bound_ns: Option<u64>,
    pub broker: Broker,
}

/// Which of a fleet's messages are warm-up: kept in the table, marked, and
/// left out of its statistics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    /// A share of the messages each device is expected to send in an interval.
    Ratio(f64),
    /// Every message scheduled in the first nanoseconds of each interval.
    Ns(u64),
}

/// When each device sends its first message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstSend {
    /// Uniform over one mean gap, so the fleet does not fire in lockstep.
    Uniform,
    /// All devices at once.
    Lockstep,
    /// Offsets drawn from a distribution.
    Dist(DistValue),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Payload {
    /// A JSON sensor record padded to exactly `size_bytes`.
    Json { size_bytes: u64, fields: Vec<String> },
    /// Random bytes with sizes drawn from `size`.
    Raw { size: DistValue },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Broker {
    /// `None`: the embedded broker on 127.0.0.1.
    pub url: Option<String>,
    /// Port of the embedded broker; `None` picks a free port at run time.
    pub port: Option<u16>,
    pub ca_file: Option<String>,
    pub client_cert: Option<String>,
    pub client_key: Option<String>,
    /// Names of environment variables holding credentials (never the values).
    pub username_env: Option<String>,
    pub password_env: Option<String>,
    pub max_inflight: u16,
    pub max_packet_bytes: u64,
}

// ---- anomalies -------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anomaly {
    /// CPUs the kernel's threads are pinned to.
    pub cores: Vec<u32>,
    pub params: AnomalyParams,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum AnomalyParams {
    Cpuoccupy {
        utilization_ratio: f64,
    },
    Cachecopy {
        cache: String,
        multiplier: f64,
        rate_ratio: f64,
    },
    Membw {
        buffer_bytes: u64,
        rate_ratio: f64,
    },
    Memeater {
        buffer_bytes: u64,
        interval_ns: u64,
        limit_bytes: u64,
    },
    Memleak {
        size_bytes: u64,
        rate_per_s: f64,
        limit_bytes: u64,
    },
    Netoccupy {
        ntasks: u32,
        message_bytes: u64,
        bandwidth_bit_per_s: Option<u64>,
        peer: Option<String>,
    },
    Iometadata {
        ntasks: u32,
        rate_per_s: Option<f64>,
        dir: Option<String>,
    },
    Iobandwidth {
        ntasks: u32,
        file_size_bytes: u64,
        bandwidth_bit_per_s: Option<u64>,
        dir: Option<String>,
    },
}

impl AnomalyParams {
    /// The anomaly's `kind` as the spec writes it: `cpuoccupy`, `memleak`, …
    pub fn kind(&self) -> &'static str {
        match self {
            AnomalyParams::Cpuoccupy { .. } => "cpuoccupy",
            AnomalyParams::Cachecopy { .. } => "cachecopy",
            AnomalyParams::Membw { .. } => "membw",
            AnomalyParams::Memeater { .. } => "memeater",
            AnomalyParams::Memleak { .. } => "memleak",
            AnomalyParams::Netoccupy { .. } => "netoccupy",
            AnomalyParams::Iometadata { .. } => "iometadata",
            AnomalyParams::Iobandwidth { .. } => "iobandwidth",
        }
    }
}

// ---- connection-structure traffic ------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    pub vectors: Vectors,
    pub structure: String,
    pub rtt: Rtt,
    pub window_bytes: Option<u64>,
    pub network: String,
    pub bottleneck_bit_per_s: Option<u64>,
    pub queue_bytes: u64,
    pub apply_loss: bool,
    pub measure: Option<MeasureWindow>,
    pub interval_ns: u64,
    pub source_addresses: u32,
    pub lenient: bool,
    pub server: Option<String>,
    /// Environment variable holding the secret `server` shares (the name
    /// only: the value is never in a plan).
    pub secret_env: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Vectors {
    /// A Tmix connection-vector file.
    Trace { file: String, format: String },
    /// Connections synthesized from distributions (Harpoon/Swing style).
    Synthetic(Box<SyntheticVectors>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticVectors {
    pub connections: u64,
    pub arrival: DistValue,
    pub epochs: DistValue,
    pub request: DistValue,
    pub response: DistValue,
    pub server_time: DistValue,
    pub think_time: DistValue,
    pub rtt: DistValue,
    pub window_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rtt {
    None,
    /// The trace's mean RTT for every connection.
    Mean,
    /// Each connection's own `r` line.
    PerConnection,
    /// `count` paths of fixed RTTs (given, drawn from `distribution`, or
    /// the trace's RTT quantiles when both are absent), connections put on
    /// them by `assign`: `round_robin` (in start order), `random` (from the
    /// trial's seed), or `by_rtt` (grouped by their own RTT).
    Paths {
        count: u32,
        rtts_ns: Vec<u64>,
        distribution: Option<DistValue>,
        assign: String,
    },
    /// RTTs drawn from a distribution (`constant(20ms)` gives one RTT for all).
    Dist(DistValue),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureWindow {
    pub start_ns: u64,
    pub end_ns: u64,
}

// ---- XML synthesis ---------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Xml {
    /// Corpus to extract a synthesis set from (file, directory or glob).
    pub corpus: Option<String>,
    /// An existing synthesis set directory.
    pub set: Option<String>,
    pub documents: Option<u64>,
    pub size_bytes: Option<u64>,
    pub split_at: Option<String>,
    pub attributes: String,
    pub max_distinct: u32,
    pub categorical_threshold: u32,
    pub obfuscate: bool,
    pub per_file: u32,
    pub gzip: bool,
    pub compare: bool,
    pub threads: u32,
}

// ---- system monitor --------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Monitor {
    pub interval_ns: u64,
    pub per_cpu: bool,
    pub processes: bool,
}
