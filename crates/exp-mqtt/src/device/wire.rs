//! The write side of a plain-TCP connection, used under the device's lock
//! by whoever has something to send: `publish` (on the pacer thread, or the
//! closed loop's task) and the device task.
//!
//! Why: handing every message to the device task cost a task wake-up per
//! message (a futex or eventfd write from the publishing thread, then a
//! poll on a runtime worker) on top of the write itself. A PUBLISH nearly
//! always fits the socket's send buffer, so `publish` writes it at once,
//! without blocking; only what the socket does not take now is kept here,
//! and the task writes it out when the socket is writable again. Every
//! write happens under the device's lock and the unwritten bytes go first,
//! so frames never interleave and leave in the order they were taken.

use std::io;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use tokio::net::TcpStream;

pub(super) struct Wire {
    stream: Arc<TcpStream>,
    /// Bytes taken for the wire that the socket has not accepted yet.
    unwritten: BytesMut,
    /// The first write error: the connection is broken, and the task ends it.
    failed: Option<String>,
    /// When bytes last went out: the keep-alive pings only after a quiet spell.
    pub(super) last_write: Instant,
}

impl Wire {
    pub(super) fn new(stream: Arc<TcpStream>) -> Wire {
        Wire {
            stream,
            unwritten: BytesMut::new(),
            failed: None,
            last_write: Instant::now(),
        }
    }

    /// Writes `frames` after anything still unwritten, as far as the socket
    /// takes them now; the rest waits for [`Wire::flush`].
    pub(super) fn push(&mut self, frames: &[Bytes], now: Instant) {
        match frames {
            [] => return,
            [one] if self.unwritten.is_empty() => {
                let written = self.write_now(one);
                self.unwritten.extend_from_slice(&one[written..]);
            }
            many => {
                for frame in many {
                    self.unwritten.extend_from_slice(frame);
                }
                self.flush();
            }
        }
        self.last_write = now;
    }

    /// Writes what the socket takes now of the unwritten bytes.
    pub(super) fn flush(&mut self) {
        let pending = std::mem::take(&mut self.unwritten);
        let written = self.write_now(&pending);
        self.unwritten = pending;
        self.unwritten.advance(written);
    }

    /// Whether every byte taken has been handed to the socket.
    pub(super) fn is_clear(&self) -> bool {
        self.unwritten.is_empty() && self.failed.is_none()
    }

    pub(super) fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Writes without blocking; returns how many bytes the socket took.
    fn write_now(&mut self, bytes: &[u8]) -> usize {
        let mut written = 0;
        while written < bytes.len() && self.failed.is_none() {
            match self.stream.try_write(&bytes[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => self.failed = Some(e.to_string()),
            }
        }
        written
    }
}
