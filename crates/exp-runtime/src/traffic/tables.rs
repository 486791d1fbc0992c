//! One window's replay records as rows of the traffic tables (schemas in
//! `exp_results::traffic_report`, which the report reads by name).

use exp_results::traffic_report::{
    active_schema, connections_schema, epochs_schema, queue_schema, stage_schema, throughput_schema, STATUS_COMPLETE,
    STATUS_FAILED, STATUS_INTERRUPTED, STATUS_NOT_STARTED, STATUS_SHORT,
};
use exp_results::{Cell, Schema};
use exp_traffic::emulate::{BacklogSample, Capacity};
use exp_traffic::replay::{ConnectionStatus, Interruption, ReplayResult};

use crate::executor::{ExecError, Tables};

/// The columns every traffic row starts with.
#[derive(Clone)]
pub struct RowKey {
    pub workload: String,
    pub structure: String,
    pub rtt_mode: String,
}

impl RowKey {
    fn cells(&self, window: Option<u64>) -> Vec<Cell> {
        vec![
            self.workload.as_str().into(),
            self.structure.as_str().into(),
            self.rtt_mode.as_str().into(),
            window.into(),
        ]
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
    let row = |more: Vec<Cell>| {
        let mut cells = key.cells(Some(window));
        cells.extend(more);
        cells
    };

    let schema = connections_schema();
    let mut batch = schema.batch();
    for c in &result.connections {
        let status = match (c.interrupted, c.status) {
            (Some(Interruption::Cut), _) => STATUS_INTERRUPTED,
            (Some(Interruption::NotStarted), _) => STATUS_NOT_STARTED,
            (None, ConnectionStatus::Complete) => STATUS_COMPLETE,
            (None, ConnectionStatus::Short) => STATUS_SHORT,
            (None, ConnectionStatus::Failed) => STATUS_FAILED,
        };
        batch.push_row(row(vec![
            c.id.into(),
            c.local.map(|a| a.to_string()).into(),
            at(c.planned_start_us).into(),
            at(c.actual_start_us).into(),
            c.first_byte_us.map(at).into(),
            c.last_byte_us.map(at).into(),
            at(c.end_us).into(),
            c.duration_us.saturating_mul(1000).into(),
            c.sent_bytes.into(),
            c.expected_sent_bytes.into(),
            c.received_bytes.into(),
            c.expected_received_bytes.into(),
            u64::from(c.epochs).into(),
            usize::try_from(c.id)
                .ok()
                .and_then(|id| paths.get(id).copied().flatten())
                .map(u64::from)
                .into(),
            c.assigned_rtt_us.map(|r| r.saturating_mul(1000)).into(),
            status.into(),
            c.error.clone().into(),
            c.tcp.map(|t| u64::from(t.rtt_us) * 1000).into(),
            c.tcp.map(|t| u64::from(t.rttvar_us) * 1000).into(),
            c.tcp.map(|t| u64::from(t.total_retrans)).into(),
            c.in_window.into(),
        ]))?;
    }
    write(tables, &schema, batch)?;

    let schema = epochs_schema();
    let mut batch = schema.batch();
    for e in &result.epochs {
        batch.push_row(row(vec![
            e.connection_id.into(),
            u64::from(e.index).into(),
            at(e.start_us).into(),
            at(e.end_us).into(),
            e.duration_us().saturating_mul(1000).into(),
            e.request_bytes.into(),
            e.response_bytes.into(),
            e.in_window.into(),
        ]))?;
    }
    write(tables, &schema, batch)?;

    let schema = active_schema();
    let mut batch = schema.batch();
    for s in &result.active_connections {
        batch.push_row(row(vec![
            at(s.start_us).into(),
            u64::from(s.at_start).into(),
            u64::from(s.peak).into(),
            s.in_window.into(),
        ]))?;
    }
    write(tables, &schema, batch)?;

    let schema = throughput_schema();
    let mut batch = schema.batch();
    for s in &result.throughput {
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
        for (direction, bytes, rate) in directions {
            batch.push_row(row(vec![
                at(s.start_us).into(),
                s.duration_us.saturating_mul(1000).into(),
                direction.into(),
                bytes.into(),
                rate.into(),
                s.in_window.into(),
            ]))?;
        }
    }
    write(tables, &schema, batch)
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
    let schema = queue_schema();
    let mut batch = schema.batch();
    for s in samples {
        let mut cells = key.cells(None);
        cells.extend([
            offset_ns
                .saturating_add(u64::try_from(s.at.as_nanos()).unwrap_or(u64::MAX))
                .into(),
            direction.into(),
            (s.packets as u64).into(),
            (s.bytes as u64).into(),
        ]);
        batch.push_row(cells)?;
    }
    write(tables, &schema, batch)
}

/// Writes the delay stage's measured capacity next to the bottleneck's rate.
pub fn write_stage(tables: &Tables, workload: &str, bottleneck_bit_per_s: u64, c: &Capacity) -> Result<(), ExecError> {
    let schema = stage_schema();
    let mut batch = schema.batch();
    let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    batch.push_row(vec![
        workload.into(),
        bottleneck_bit_per_s.into(),
        (c.goodput_mbit_per_s * 1e6).into(),
        (c.forwarded_mbit_per_s * 1e6).into(),
        c.packets_per_s.into(),
        ns(c.base_rtt).into(),
        ns(c.measured_for).into(),
    ])?;
    write(tables, &schema, batch)
}

fn write(tables: &Tables, schema: &Schema, batch: exp_results::Batch) -> Result<(), ExecError> {
    if batch.is_empty() {
        return Ok(());
    }
    tables.sink(schema).write(batch)?;
    Ok(())
}
