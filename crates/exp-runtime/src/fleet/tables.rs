//! The fleet's tables and the thread that writes them: `TableSink::write`
//! blocks while the store's queue is full, which must never stall the async
//! tasks that publish and record messages.

use std::sync::mpsc;
use std::thread::JoinHandle;

pub use exp_results::schemas::{devices_schema, messages_schema};
use exp_results::{Batch, Cell, Schema, TableSink};

use super::rows::MessageRow;
use crate::executor::ExecError;

/// What a writer's thread is sent: rows of cells, or a fleet's messages,
/// which the thread lays into the columns itself (the hot path: no cell or
/// `String` per value on the way).
pub enum Chunk {
    Cells(Vec<Vec<Cell>>),
    Messages { fleet: String, rows: Vec<MessageRow> },
}

/// Where rows go: the channel to a [`Writer`]'s thread.
#[derive(Clone)]
pub struct Rows(Option<mpsc::Sender<Chunk>>);

impl Rows {
    pub fn send(&self, rows: Vec<Vec<Cell>>) {
        if !rows.is_empty() {
            self.send_chunk(Chunk::Cells(rows));
        }
    }

    pub fn send_messages(&self, fleet: &str, rows: Vec<MessageRow>) {
        if !rows.is_empty() {
            let fleet = fleet.to_string();
            self.send_chunk(Chunk::Messages { fleet, rows });
        }
    }

    fn send_chunk(&self, chunk: Chunk) {
        if let Some(tx) = &self.0 {
            // A closed channel means the thread ended; `Writer::finish` reports why.
            let _ = tx.send(chunk);
        }
    }
}

/// A writer thread for one table: rows go in over a channel in batches.
pub struct Writer {
    tx: Option<mpsc::Sender<Chunk>>,
    thread: Option<JoinHandle<Result<(), ExecError>>>,
}

impl Writer {
    pub fn start(sink: TableSink, schema: Schema) -> Result<Writer, ExecError> {
        let (tx, rx) = mpsc::channel::<Chunk>();
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
        Rows(self.tx.clone())
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

fn write_rows(sink: &TableSink, schema: &Schema, chunk: Chunk) -> Result<(), ExecError> {
    let mut batch: Batch = schema.batch();
    match chunk {
        Chunk::Cells(rows) => {
            for row in rows {
                batch.push_row(row)?;
            }
        }
        Chunk::Messages { fleet, rows } => {
            for row in &rows {
                row.push_to(&mut batch, &fleet)?;
            }
        }
    }
    sink.write(batch)?;
    Ok(())
}
