//! The tables the executors write, by name and columns: the contract
//! between the writers (exp-runtime's executors) and the readers (the
//! reports of exp-report), which find columns by these names. A table's
//! schema lives here when a report reads it; tables only the runtime reads
//! back keep theirs beside their writer.
//!
//! Times are nanoseconds from the trial's start (like every `_ns` column of
//! a run). In the traffic tables, `window` is the index of the workload's
//! active window the row belongs to (each window replays the connections
//! again) and `in_window` is false for rows outside the `measure` window,
//! which statistics leave out.

use crate::{DType, Schema};

/// The runtime's table of trials.
pub const TRIALS_TABLE: &str = "trials";
/// The anomaly executor's table of activations (`exp-runtime/src/anomaly/`).
pub const TIMELINE_TABLE: &str = "anomaly_timeline";
/// The monitor's table of system samples (its columns depend on the
/// machine: one set per CPU, see exp-host's `SystemSampler`).
pub const MONITOR_TABLE: &str = "system_metrics";

/// The columns of [`TIMELINE_TABLE`], one row per anomaly activation.
pub fn timeline_schema() -> Schema {
    Schema::new(TIMELINE_TABLE)
        .column("instance", DType::Str)
        .column("activation", DType::U64)
        .column("kind", DType::Str)
        .column("parameters", DType::Str)
        .column("cores", DType::Str)
        .column("target_utilization_pct", DType::F64)
        .column("planned_start_ns", DType::Ns)
        .column("planned_end_ns", DType::Ns)
        .column("actual_start_ns", DType::Ns)
        .column("actual_end_ns", DType::Ns)
        .column("status", DType::Str)
        .column("error", DType::Str)
        .column("pid", DType::U64)
        .column("cpu_time_ns", DType::Ns)
        .column("achieved_utilization_pct", DType::F64)
        .column("peak_rss_bytes", DType::U64)
        .column("iterations", DType::U64)
        .column("bytes", DType::U64)
        .column("files", DType::U64)
        // False for an activation that did no work (V0301): its window is
        // not ground truth.
        .column("ground_truth", DType::Bool)
}

/// The table of audit findings: one row per finding that is not `valid`
/// (`exp_results::validity`), written with the trial's row of `trials`.
pub const VALIDITY_TABLE: &str = "trial_validity";

/// The columns of [`VALIDITY_TABLE`]; `workload` is null for the trial as
/// a whole (host, monitor), `measured` and `bound` in the check's base unit.
pub fn validity_schema() -> Schema {
    Schema::new(VALIDITY_TABLE)
        .column("code", DType::Str)
        .column("workload", DType::Str)
        .column("verdict", DType::Str)
        .column("message", DType::Str)
        .column("measured", DType::F64)
        .column("bound", DType::F64)
}

/// The fleet executor's table of messages, one row per fired message.
pub const MESSAGES_TABLE: &str = "mqtt_messages";
/// The `status` of a message that reached its end: acknowledged (QoS 1/2)
/// or written to the socket (QoS 0). Reports and claims count these.
pub const MESSAGE_OK: &str = "ok";
/// The fleet executor's table of device connections.
pub const DEVICES_TABLE: &str = "mqtt_devices";

/// The columns of [`MESSAGES_TABLE`], written by the fleet executor
/// (`exp-runtime/src/fleet/tables.rs`) and read by the MQTT report.
pub fn messages_schema() -> Schema {
    Schema::new(MESSAGES_TABLE)
        .column("fleet", DType::Str)
        .column("device", DType::U64)
        .column("seq", DType::U64)
        .column("scheduled_ns", DType::Ns)
        .column("sent_ns", DType::Ns)
        .column("acked_ns", DType::Ns)
        .column("delivered_ns", DType::Ns)
        .column("lateness_ns", DType::Ns)
        .column("ack_latency_ns", DType::Ns)
        .column("delivery_latency_ns", DType::Ns)
        .column("bytes", DType::U64)
        .column("status", DType::Str)
        .column("reason", DType::Str)
        .column("warmup", DType::Bool)
}

/// The columns of [`DEVICES_TABLE`], as for [`messages_schema`].
pub fn devices_schema() -> Schema {
    Schema::new(DEVICES_TABLE)
        .column("fleet", DType::Str)
        .column("device", DType::U64)
        .column("client_id", DType::Str)
        .column("connect_start_ns", DType::Ns)
        .column("connected_ns", DType::Ns)
        .column("connect_latency_ns", DType::Ns)
        .column("disconnects", DType::U64)
        .column("reconnects", DType::U64)
        .column("errors", DType::U64)
        .column("status", DType::Str)
}

// The traffic executor's tables (`exp-runtime/src/traffic/tables.rs`).

/// One row per replayed connection.
pub const CONNECTIONS_TABLE: &str = "traffic_connections";
/// One row per request/response exchange.
pub const EPOCHS_TABLE: &str = "traffic_epochs";
/// Open connections per interval.
pub const ACTIVE_TABLE: &str = "traffic_active_connections";
/// Bytes per interval and direction.
pub const THROUGHPUT_TABLE: &str = "traffic_throughput";
/// Bottleneck queue backlog samples (only with a bottleneck).
pub const QUEUE_TABLE: &str = "traffic_queue";
/// The delay stage's own forwarding capacity, measured before a bottleneck
/// run, so its limit is never mistaken for the emulated link's.
pub const STAGE_TABLE: &str = "traffic_stage";

/// Columns every traffic table starts with: which workload, structure and
/// RTT mode the row belongs to, and which active window.
fn base(name: &str) -> Schema {
    Schema::new(name)
        .column("workload", DType::Str)
        .column("structure", DType::Str)
        .column("rtt_mode", DType::Str)
        .column("window", DType::U64)
}

/// The columns of [`CONNECTIONS_TABLE`].
pub fn connections_schema() -> Schema {
    base(CONNECTIONS_TABLE)
        .column("connection", DType::U64)
        .column("local", DType::Str)
        .column("planned_start_ns", DType::Ns)
        .column("actual_start_ns", DType::Ns)
        .column("first_byte_ns", DType::Ns)
        .column("last_byte_ns", DType::Ns)
        .column("end_ns", DType::Ns)
        .column("duration_ns", DType::Ns)
        .column("sent_bytes", DType::U64)
        .column("expected_sent_bytes", DType::U64)
        .column("received_bytes", DType::U64)
        .column("expected_received_bytes", DType::U64)
        .column("epochs", DType::U64)
        .column("path", DType::U64)
        .column("assigned_rtt_ns", DType::Ns)
        .column("status", DType::Str)
        .column("error", DType::Str)
        .column("tcp_rtt_ns", DType::Ns)
        .column("tcp_rttvar_ns", DType::Ns)
        .column("tcp_total_retrans", DType::U64)
        .column("in_window", DType::Bool)
}

/// The columns of [`EPOCHS_TABLE`]: request first byte sent → response
/// last byte received, at the initiator.
pub fn epochs_schema() -> Schema {
    base(EPOCHS_TABLE)
        .column("connection", DType::U64)
        .column("epoch", DType::U64)
        .column("start_ns", DType::Ns)
        .column("end_ns", DType::Ns)
        .column("response_time_ns", DType::Ns)
        .column("request_bytes", DType::U64)
        .column("response_bytes", DType::U64)
        .column("in_window", DType::Bool)
}

/// The columns of [`ACTIVE_TABLE`].
pub fn active_schema() -> Schema {
    base(ACTIVE_TABLE)
        .column("t_ns", DType::Ns)
        .column("at_start", DType::U64)
        .column("peak", DType::U64)
        .column("in_window", DType::Bool)
}

/// The columns of [`THROUGHPUT_TABLE`]: one row per interval and direction
/// (`to_acceptor`, `to_initiator`), counted at the initiator.
pub fn throughput_schema() -> Schema {
    base(THROUGHPUT_TABLE)
        .column("t_ns", DType::Ns)
        .column("duration_ns", DType::Ns)
        .column("direction", DType::Str)
        .column("bytes", DType::U64)
        .column("bit_per_s", DType::F64)
        .column("in_window", DType::Bool)
}

/// The columns of [`QUEUE_TABLE`].
pub fn queue_schema() -> Schema {
    base(QUEUE_TABLE)
        .column("t_ns", DType::Ns)
        .column("direction", DType::Str)
        .column("packets", DType::U64)
        .column("bytes", DType::U64)
}

/// The columns of [`STAGE_TABLE`] (one row per workload and trial).
pub fn stage_schema() -> Schema {
    Schema::new(STAGE_TABLE)
        .column("workload", DType::Str)
        .column("bottleneck_bit_per_s", DType::U64)
        .column("stage_goodput_bit_per_s", DType::F64)
        .column("stage_forwarded_bit_per_s", DType::F64)
        .column("stage_packets_per_s", DType::F64)
        .column("stage_base_rtt_ns", DType::Ns)
        .column("measured_for_ns", DType::Ns)
}

/// Connection status values written to `status`.
pub const STATUS_COMPLETE: &str = "complete";
pub const STATUS_SHORT: &str = "short";
pub const STATUS_FAILED: &str = "failed";
/// Running when the replay was stopped (Ctrl-C, the window's end): cut,
/// with the bytes and epochs measured until then.
pub const STATUS_INTERRUPTED: &str = "interrupted";
/// Scheduled, but the replay was stopped before its start time.
pub const STATUS_NOT_STARTED: &str = "not_started";

/// One row per trial of an `xml` workload: what was generated and how close
/// it came to the corpus.
pub const GENERATION_TABLE: &str = "xml_generation";
/// One row per path both the corpus and the generated documents have.
pub const PATHS_TABLE: &str = "xml_paths";
/// Both sides' values of each compared path, a few rows per path.
pub const PATH_VALUES_TABLE: &str = "xml_path_values";
/// Both sides' depth, fan-out and document-size histograms, a row per bin.
pub const STRUCTURE_TABLE: &str = "xml_structure";

pub fn generation_schema() -> Schema {
    Schema::new(GENERATION_TABLE)
        .column("workload", DType::Str)
        .column("documents", DType::U64)
        .column("bytes", DType::U64)
        .column("bytes_written", DType::U64)
        .column("files", DType::U64)
        .column("extract_s", DType::F64)
        .column("generate_s", DType::F64)
        .column("throughput_mb_per_s", DType::F64)
        .column("skeleton_jsd", DType::F64)
        .column("path_jsd", DType::F64)
        .column("tag_jsd", DType::F64)
        .column("attribute_jsd", DType::F64)
        .column("max_total_variation", DType::F64)
        .column("max_ks", DType::F64)
        .column("duplicate_rate", DType::F64)
        .column("generator_version", DType::U64)
}

pub fn paths_schema() -> Schema {
    Schema::new(PATHS_TABLE)
        .column("workload", DType::Str)
        .column("path", DType::Str)
        .column("kind", DType::Str)
        .column("original_occurrences", DType::U64)
        .column("synthetic_occurrences", DType::U64)
        .column("metric", DType::Str)
        .column("value", DType::F64)
}

/// `side` is `original` or `synthetic`. A numeric path has a row per side
/// and quantile: `value` at `fraction` (0, 0.05, …, 1; `rank` its index). A
/// categorical path has a row per side and each of its most frequent
/// original values: `label`, and the share of the path's occurrences it has
/// on that side as `fraction` (`rank` 0 the most frequent).
pub fn path_values_schema() -> Schema {
    Schema::new(PATH_VALUES_TABLE)
        .column("workload", DType::Str)
        .column("path", DType::Str)
        .column("side", DType::Str)
        .column("rank", DType::U64)
        .column("value", DType::F64)
        .column("label", DType::Str)
        .column("fraction", DType::F64)
}

/// `measure` is `depth` (of each element, the document root 1), `fan_out`
/// (child elements of each element) or `document_size` (bytes of each
/// document's canonical form); a row per bin (`bin` its index, `label` its
/// range, e.g. `11–15`, `64+`) with the corpus's count (`original`) and the
/// generated documents' (`synthetic`).
pub fn structure_schema() -> Schema {
    Schema::new(STRUCTURE_TABLE)
        .column("workload", DType::Str)
        .column("measure", DType::Str)
        .column("bin", DType::U64)
        .column("label", DType::Str)
        .column("original", DType::U64)
        .column("synthetic", DType::U64)
}
