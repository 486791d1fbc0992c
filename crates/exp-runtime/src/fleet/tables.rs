//! The fleet's tables and the thread that writes them: `TableSink::write`
//! blocks while the store's queue is full, which must never stall the async
//! tasks that publish and record messages.

use std::sync::mpsc;
use std::thread::JoinHandle;

use exp_results::{Batch, Cell, DType, Schema, TableSink};

use crate::executor::ExecError;

pub fn messages_schema() -> Schema {
    Schema::new("messages")
        .column("t_ns", DType::U64)
        .column("device", DType::U64)
        .column("seq", DType::U64)
        .column("lateness_ns", DType::U64)
        .column("sent_ns", DType::U64)
        .column("ack_latency_ns", DType::U64)
        .column("delivery_latency_ns", DType::U64)
        .column("bytes", DType::U64)
        .column("status", DType::Str)
        .column("warmup", DType::Bool)
}

pub fn connections_schema() -> Schema {
    Schema::new("fleet_connections")
        .column("device", DType::U64)
        .column("client_id", DType::Str)
        .column("connected_ns", DType::U64)
        .column("connect_ms", DType::F64)
        .column("reconnects", DType::U64)
        .column("status", DType::Str)
}

/// One finished message, ready for the `messages` table.
#[derive(Debug, Clone)]
pub struct MessageRow {
    pub t_ns: u64,
    pub device: u32,
    pub seq: u64,
    pub lateness_ns: u64,
    pub sent_ns: Option<u64>,
    pub ack_latency_ns: Option<u64>,
    pub delivery_latency_ns: Option<u64>,
    pub bytes: u64,
    pub status: String,
    pub warmup: bool,
}

impl MessageRow {
    fn cells(self) -> Vec<Cell> {
        vec![
            self.t_ns.into(),
            u64::from(self.device).into(),
            self.seq.into(),
            self.lateness_ns.into(),
            self.sent_ns.into(),
            self.ack_latency_ns.into(),
            self.delivery_latency_ns.into(),
            self.bytes.into(),
            self.status.into(),
            self.warmup.into(),
        ]
    }
}

/// Where rows go: the channel to a [`Writer`]'s thread.
#[derive(Clone)]
pub struct Rows(Option<mpsc::Sender<Vec<Vec<Cell>>>>);

impl Rows {
    pub fn send(&self, rows: Vec<Vec<Cell>>) {
        if let (Some(tx), false) = (&self.0, rows.is_empty()) {
            // A closed channel means the thread ended; `Writer::finish` reports why.
            let _ = tx.send(rows);
        }
    }

    pub fn send_messages(&self, rows: Vec<MessageRow>) {
        self.send(rows.into_iter().map(MessageRow::cells).collect());
    }
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
            .map_err(|e| ExecError::Failed(format!("cannot start a table writer thread: {e}")))?;
        Ok(Writer {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// A handle for tasks that produce rows; the thread ends when every handle and the writer are gone.
    pub fn rows(&self) -> Rows {
        Rows(self.tx.clone())
    }

    /// Closes the channel and waits for the thread (call from a blocking context).
    pub fn finish(mut self) -> Result<(), ExecError> {
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(ExecError::Failed("a table writer thread panicked".into())),
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
