//! The fleet's tables and the thread that writes them: `TableSink::write`
//! blocks while the store's queue is full, which must never stall the async
//! tasks that publish and record messages.

use std::sync::mpsc;
use std::thread::JoinHandle;

pub use exp_results::mqtt_report::{devices_schema, messages_schema};
use exp_results::{Batch, Cell, Schema, TableSink};

use super::collector::Totals;
use super::devices::Connection;
use crate::executor::ExecError;

/// What became of a message, in the four words the report groups by; the
/// `reason` column says why for everything but `ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Announced to the collector, outcome not known yet (never written).
    Pending,
    /// Acknowledged (QoS 1/2) or written to the socket (QoS 0).
    Ok,
    /// No acknowledgement within `ack_timeout` (late acks keep their times).
    Timeout,
    /// Sent, but the broker lost it (a session that did not survive a reconnect).
    Error,
    /// Never sent: the device was not connected, or its client refused the message.
    Dropped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Ok => "ok",
            Status::Timeout => "timeout",
            Status::Error => "error",
            Status::Dropped => "dropped",
        }
    }
}

/// One message, ready for the `mqtt_messages` table. Times are on the trial clock.
#[derive(Debug, Clone)]
pub struct MessageRow {
    pub device: u32,
    pub seq: u64,
    pub scheduled_ns: u64,
    pub sent_ns: Option<u64>,
    pub lateness_ns: u64,
    pub ack_latency_ns: Option<u64>,
    pub delivery_latency_ns: Option<u64>,
    pub bytes: u64,
    pub status: Status,
    pub reason: Option<&'static str>,
    pub warmup: bool,
}

impl MessageRow {
    fn cells(self, fleet: &str, first_device: u32) -> Vec<Cell> {
        let after_send = |latency: Option<u64>| self.sent_ns.zip(latency).map(|(s, l)| s.saturating_add(l));
        vec![
            fleet.into(),
            u64::from(first_device + self.device).into(),
            self.seq.into(),
            self.scheduled_ns.into(),
            self.sent_ns.into(),
            after_send(self.ack_latency_ns).into(),
            after_send(self.delivery_latency_ns).into(),
            self.lateness_ns.into(),
            self.ack_latency_ns.into(),
            self.delivery_latency_ns.into(),
            self.bytes.into(),
            self.status.as_str().into(),
            self.reason.into(),
            self.warmup.into(),
        ]
    }
}

/// Where rows go: the channel to a [`Writer`]'s thread. Message rows number
/// devices from `first_device` (a split run's part runs a block of them).
#[derive(Clone)]
pub struct Rows(Option<mpsc::Sender<Vec<Vec<Cell>>>>, u32);

impl Rows {
    pub fn with_first_device(self, first_device: u32) -> Rows {
        Rows(self.0, first_device)
    }

    pub fn send(&self, rows: Vec<Vec<Cell>>) {
        if let (Some(tx), false) = (&self.0, rows.is_empty()) {
            // A closed channel means the thread ended; `Writer::finish` reports why.
            let _ = tx.send(rows);
        }
    }

    pub fn send_messages(&self, fleet: &str, rows: Vec<MessageRow>) {
        self.send(rows.into_iter().map(|r| r.cells(fleet, self.1)).collect());
    }
}

/// The `mqtt_devices` row of one device in one interval.
pub fn device_row(fleet: &str, first_device: u32, c: Connection, totals: &Totals) -> Vec<exp_results::Cell> {
    let counts = totals.devices.get(&c.device).copied().unwrap_or_default();
    vec![
        fleet.into(),
        u64::from(first_device + c.device).into(),
        c.client_id.into(),
        c.connect_start_ns.into(),
        c.connected_ns.into(),
        c.connected_ns.map(|end| end.saturating_sub(c.connect_start_ns)).into(),
        counts.disconnects.into(),
        counts.reconnects.into(),
        counts.errors.into(),
        c.status.into(),
    ]
}

/// A writer thread for one table: rows go in over a channel in batches.
pub struct Writer {
    tx: Option<mpsc::Sender<Vec<Vec<Cell>>>>,
    thread: Option<JoinHandle<Result<(), ExecError>>>,
}

impl Writer {
    pub fn start(sink: TableSink, schema: Schema) -> Result<Writer, ExecError> {
        let (tx, rx) = mpsc::channel::<Vec<Vec<Cell>>>();
        let thread = std::thread::Builder::new()
            .name(format!("expc-{}", schema.name))
            .spawn(move || {
                // Keep draining after an error so senders never block; report the first one.
                let mut first_error = None;
                for rows in rx {
                    if first_error.is_some() {
                        continue;
                    }
                    if let Err(e) = write_rows(&sink, &schema, rows) {
                        first_error = Some(e);
                    }
                }
                first_error.map_or(Ok(()), Err)
            })
            .map_err(|e| ExecError::lost("table writer thread", format!("it could not start: {e}")))?;
        Ok(Writer {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// A handle for tasks that produce rows; the thread ends when every handle and the writer are gone.
    pub fn rows(&self) -> Rows {
        Rows(self.tx.clone(), 0)
    }

    /// Closes the channel and waits for the thread (call from a blocking context).
    pub fn finish(mut self) -> Result<(), ExecError> {
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(ExecError::lost("table writer thread", "it panicked")),
            None => Ok(()),
        }
    }
}

fn write_rows(sink: &TableSink, schema: &Schema, rows: Vec<Vec<Cell>>) -> Result<(), ExecError> {
    let mut batch: Batch = schema.batch();
    for row in rows {
        batch.push_row(row)?;
    }
    sink.write(batch)?;
    Ok(())
}
