//! One window's replay records as rows of the traffic tables (schemas in
//! `exp_results::schemas`, which the report reads by name).

use exp_results::schemas::{
    active_schema, connections_schema, epochs_schema, queue_schema, stage_schema, throughput_schema, STATUS_COMPLETE,
    STATUS_FAILED, STATUS_INTERRUPTED, STATUS_NOT_STARTED, STATUS_SHORT,
};
use exp_results::{Cell, Schema};
use exp_traffic::emulate::{BacklogSample, Capacity};
use exp_traffic::replay::{ConnectionRecord, ConnectionStatus, Interruption, ReplayResult};

use crate::executor::{ExecError, Tables};

/// The columns every traffic row starts with.
#[derive(Clone)]
pub struct RowKey {
    pub workload: String,
    pub structure: String,
    pub rtt_mode: String,
}

/// A row of a traffic table by column name: the key's columns, then `more`.
type Named = Vec<(&'static str, Cell)>;

impl RowKey {
    fn named(&self, window: Option<u64>, more: Named) -> Named {
        let mut cells: Named = vec![
            ("workload", self.workload.as_str().into()),
            ("structure", self.structure.as_str().into()),
            ("rtt_mode", self.rtt_mode.as_str().into()),
            ("window", window.into()),
        ];
        cells.extend(more);
        cells
    }
}

/// Writes a window's rows; `offset_ns` is the replay origin in trial time,
/// `paths` the path of each connection by id (`rtt = paths(...)` only).
pub fn write_window(
    tables: &Tables,
    key: &RowKey,
    window: u64,
    offset_ns: u64,
    result: &ReplayResult,
    paths: &[Option<u32>],
) -> Result<(), ExecError> {
    let at = |us: u64| offset_ns.saturating_add(us.saturating_mul(1000));
    let row = |more: Named| key.named(Some(window), more);
    let connections = result.connections.iter().map(|c| row(connection(c, at, paths)));
    write(tables, &connections_schema(), connections)?;
    let epochs = result.epochs.iter().map(|e| {
        row(vec![
            ("connection", e.connection_id.into()),
            ("epoch", u64::from(e.index).into()),
            ("start_ns", at(e.start_us).into()),
            ("end_ns", at(e.end_us).into()),
            ("response_time_ns", e.duration_us().saturating_mul(1000).into()),
            ("request_bytes", e.request_bytes.into()),
            ("response_bytes", e.response_bytes.into()),
            ("in_window", e.in_window.into()),
        ])
    });
    write(tables, &epochs_schema(), epochs)?;
    let active = result.active_connections.iter().map(|s| {
        row(vec![
            ("t_ns", at(s.start_us).into()),
            ("at_start", u64::from(s.at_start).into()),
            ("peak", u64::from(s.peak).into()),
            ("in_window", s.in_window.into()),
        ])
    });
    write(tables, &active_schema(), active)?;
    let throughput = result.throughput.iter().flat_map(|s| {
        let directions = [
            (
                "to_acceptor",
                s.initiator_to_acceptor_bytes,
                s.initiator_to_acceptor_bit_per_s(),
            ),
            (
                "to_initiator",
                s.acceptor_to_initiator_bytes,
                s.acceptor_to_initiator_bit_per_s(),
            ),
        ];
        directions.map(|(direction, bytes, rate)| {
            row(vec![
                ("t_ns", at(s.start_us).into()),
                ("duration_ns", s.duration_us.saturating_mul(1000).into()),
                ("direction", direction.into()),
                ("bytes", bytes.into()),
                ("bit_per_s", rate.into()),
                ("in_window", s.in_window.into()),
            ])
        })
    });
    write(tables, &throughput_schema(), throughput)
}

/// A connection's columns of `traffic_connections` after the key.
fn connection(c: &ConnectionRecord, at: impl Fn(u64) -> u64, paths: &[Option<u32>]) -> Named {
    let status = match (c.interrupted, c.status) {
        (Some(Interruption::Cut), _) => STATUS_INTERRUPTED,
        (Some(Interruption::NotStarted), _) => STATUS_NOT_STARTED,
        (None, ConnectionStatus::Complete) => STATUS_COMPLETE,
        (None, ConnectionStatus::Short) => STATUS_SHORT,
        (None, ConnectionStatus::Failed) => STATUS_FAILED,
    };
    let path = usize::try_from(c.id)
        .ok()
        .and_then(|id| paths.get(id).copied().flatten());
    vec![
        ("connection", c.id.into()),
        ("local", c.local.map(|a| a.to_string()).into()),
        ("planned_start_ns", at(c.planned_start_us).into()),
        ("actual_start_ns", at(c.actual_start_us).into()),
        ("first_byte_ns", c.first_byte_us.map(&at).into()),
        ("last_byte_ns", c.last_byte_us.map(&at).into()),
        ("end_ns", at(c.end_us).into()),
        ("duration_ns", c.duration_us.saturating_mul(1000).into()),
        ("sent_bytes", c.sent_bytes.into()),
        ("expected_sent_bytes", c.expected_sent_bytes.into()),
        ("received_bytes", c.received_bytes.into()),
        ("expected_received_bytes", c.expected_received_bytes.into()),
        ("epochs", u64::from(c.epochs).into()),
        ("path", path.map(u64::from).into()),
        (
            "assigned_rtt_ns",
            c.assigned_rtt_us.map(|r| r.saturating_mul(1000)).into(),
        ),
        ("status", status.into()),
        ("error", c.error.clone().into()),
        ("tcp_rtt_ns", c.tcp.map(|t| u64::from(t.rtt_us) * 1000).into()),
        ("tcp_rttvar_ns", c.tcp.map(|t| u64::from(t.rttvar_us) * 1000).into()),
        ("tcp_total_retrans", c.tcp.map(|t| u64::from(t.total_retrans)).into()),
        ("in_window", c.in_window.into()),
    ]
}

/// Writes the bottleneck's backlog samples of one direction; `offset_ns`
/// is when the testbed started, in trial time.
pub fn write_queue(
    tables: &Tables,
    key: &RowKey,
    direction: &str,
    offset_ns: u64,
    samples: &[BacklogSample],
) -> Result<(), ExecError> {
    let rows = samples.iter().map(|s| {
        let t_ns = offset_ns.saturating_add(u64::try_from(s.at.as_nanos()).unwrap_or(u64::MAX));
        key.named(
            None,
            vec![
                ("t_ns", t_ns.into()),
                ("direction", direction.into()),
                ("packets", (s.packets as u64).into()),
                ("bytes", (s.bytes as u64).into()),
            ],
        )
    });
    write(tables, &queue_schema(), rows)
}

/// Writes the delay stage's measured capacity next to the bottleneck's rate.
pub fn write_stage(tables: &Tables, workload: &str, bottleneck_bit_per_s: u64, c: &Capacity) -> Result<(), ExecError> {
    let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    let row = vec![
        ("workload", workload.into()),
        ("bottleneck_bit_per_s", bottleneck_bit_per_s.into()),
        ("stage_goodput_bit_per_s", (c.goodput_mbit_per_s * 1e6).into()),
        ("stage_forwarded_bit_per_s", (c.forwarded_mbit_per_s * 1e6).into()),
        ("stage_packets_per_s", c.packets_per_s.into()),
        ("stage_base_rtt_ns", ns(c.base_rtt).into()),
        ("measured_for_ns", ns(c.measured_for).into()),
    ];
    write(tables, &stage_schema(), [row])
}

/// Writes rows given by column name as one batch of `schema`'s table.
fn write(tables: &Tables, schema: &Schema, rows: impl IntoIterator<Item = Named>) -> Result<(), ExecError> {
    let mut batch = schema.batch();
    for row in rows {
        batch.push_row(schema.row(row)?)?;
    }
    if batch.is_empty() {
        return Ok(());
    }
    tables.sink(schema).write(batch)?;
    Ok(())
}
