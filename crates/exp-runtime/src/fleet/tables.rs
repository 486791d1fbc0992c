//! The fleet's tables and the thread that writes them: `TableSink::write`
//! blocks while the store's queue is full, which must never stall the async
//! tasks that publish and record messages.

use std::sync::mpsc;
use std::thread::JoinHandle;

pub use exp_results::schemas::{devices_schema, messages_schema};
use exp_results::{Batch, Cell, Schema, TableSink};

use super::rows::MessageRow;
use crate::executor::ExecError;

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

    pub fn send_messages(&self, fleet: &str, rows: Vec<MessageRow>) {
        self.send(rows.into_iter().map(|r| r.cells(fleet)).collect());
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

fn write_rows(sink: &TableSink, schema: &Schema, rows: Vec<Vec<Cell>>) -> Result<(), ExecError> {
    let mut batch: Batch = schema.batch();
    for row in rows {
        batch.push_row(row)?;
    }
    sink.write(batch)?;
    Ok(())
}
