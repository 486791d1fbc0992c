//! One client connection: CONNECT, then one task that hands the packets it
//! reads to the router and writes what the router queued for the client.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use rumqttc::mqttbytes::v4::{ConnAck, Connect, ConnectReturnCode, Packet};
use rumqttc::mqttbytes::{self, Protocol};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::router::{Link, Message, Next, Refusal, Router};

/// The time a client has to send CONNECT after its TCP connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What every connection task shares.
#[derive(Debug)]
pub(super) struct Shared {
    pub router: Mutex<Router>,
    /// Largest remaining length of a packet a client may send.
    pub max_packet: usize,
}

impl Shared {
    fn router(&self) -> MutexGuard<'_, Router> {
        // A connection task that panicked under the lock poisoned it; the
        // other connections are still served rather than all failing with it.
        self.router.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the router, then wakes the connections it queued output
    /// for, except `own` (the caller, which takes its output next anyway).
    fn with_router<T>(&self, own: Option<u64>, f: impl FnOnce(&mut Router) -> T) -> T {
        let (result, wakes) = {
            let mut router = self.router();
            let result = f(&mut router);
            (result, router.take_wakes())
        };
        for link in wakes.iter().filter(|l| Some(l.id) != own) {
            link.wake.notify_one();
        }
        result
    }
}

/// Serves one accepted connection until it closes.
pub(super) async fn serve(mut stream: TcpStream, shared: Arc<Shared>, link_id: u64) {
    // Acks are small: without this they could wait for Nagle's algorithm.
    let _ = stream.set_nodelay(true);
    let mut buf = BytesMut::with_capacity(4096);
    let connect = match tokio::time::timeout(CONNECT_TIMEOUT, first_packet(&mut stream, &mut buf, &shared)).await {
        Ok(Ok(connect)) => connect,
        Ok(Err(Some(code))) => return refuse(&mut stream, code).await,
        Ok(Err(None)) | Err(_) => return,
    };
    let link = Link::new(link_id);
    let will = connect.last_will.map(|w| Message {
        topic: Arc::from(w.topic),
        payload: w.message,
        qos: w.qos as u8,
    });
    let keep_alive = connect.keep_alive;
    let attached = shared.with_router(None, |r| {
        r.attach(connect.client_id, connect.clean_session, will, &link)
    });
    let client_id = match attached {
        Ok(id) => id,
        Err(Refusal::IdentifierRejected) => return refuse(&mut stream, ConnectReturnCode::BadClientId).await,
        Err(Refusal::ServerUnavailable) => return refuse(&mut stream, ConnectReturnCode::ServiceUnavailable).await,
    };
    let mut detach = Detach {
        shared: &shared,
        client_id: &client_id,
        link: link.id,
        graceful: false,
    };
    let mut connection = Connection {
        stream,
        shared: &shared,
        client_id: &client_id,
        link: &link,
        input: buf,
        output: BytesMut::with_capacity(4096),
    };
    detach.graceful = connection.run(keep_alive).await;
}

/// Detaches a connection from its session however its task ends, a panic
/// included, so the session is not left held by a connection that is gone.
struct Detach<'a> {
    shared: &'a Shared,
    client_id: &'a str,
    link: u64,
    graceful: bool,
}

impl Drop for Detach<'_> {
    fn drop(&mut self) {
        let (client_id, link, graceful) = (self.client_id, self.link, self.graceful);
        self.shared.with_router(None, |r| r.detach(client_id, link, graceful));
    }
}

/// The CONNECT; `Err(Some(code))` for one to refuse with a CONNACK, `Err(None)` to just close.
async fn first_packet(
    stream: &mut TcpStream,
    buf: &mut BytesMut,
    shared: &Shared,
) -> Result<Connect, Option<ConnectReturnCode>> {
    loop {
        match Packet::read(buf, shared.max_packet) {
            Ok(Packet::Connect(c)) if c.protocol == Protocol::V4 => return Ok(c),
            Ok(Packet::Connect(_)) | Err(mqttbytes::Error::InvalidProtocolLevel(_)) => {
                return Err(Some(ConnectReturnCode::RefusedProtocolVersion))
            }
            Err(mqttbytes::Error::InsufficientBytes(_)) => {}
            Ok(_) | Err(_) => return Err(None),
        }
        match stream.read_buf(buf).await {
            Ok(0) | Err(_) => return Err(None),
            Ok(_) => {}
        }
    }
}

async fn refuse(stream: &mut TcpStream, code: ConnectReturnCode) {
    let mut frame = BytesMut::new();
    if ConnAck::new(code, false).write(&mut frame).is_ok() {
        let _ = stream.write_all(&frame).await;
    }
}

/// Output held before more is taken from the router: a client that stops
/// reading holds back its own messages (in the router's bounded queue).
const OUTPUT_HIGH_WATER: usize = 64 * 1024;

/// An attached connection. One task reads, handles and writes, without
/// blocking on either direction: what the socket does not take waits in
/// `output`, and reading goes on meanwhile, so a client slow to read never
/// stops the broker reading its acknowledgements.
struct Connection<'a> {
    stream: TcpStream,
    shared: &'a Shared,
    client_id: &'a str,
    link: &'a Link,
    input: BytesMut,
    output: BytesMut,
}

impl Connection<'_> {
    /// Serves until the connection ends; `true` if the client sent DISCONNECT.
    async fn run(&mut self, keep_alive_s: u16) -> bool {
        // 3.1.2.10: a client silent for one and a half keep-alive periods is gone.
        let silence = Duration::from_millis(u64::from(keep_alive_s) * 1500);
        let mut deadline = Instant::now() + silence;
        let mut packets = Vec::new();
        loop {
            if let Some(graceful) = self.handle(&mut packets) {
                // What the packets before the end queued (a CONNACK, acks) still goes out.
                self.flush();
                return graceful;
            }
            if !self.flush() {
                return false;
            }
            tokio::select! {
                ready = self.stream.readable() => {
                    if ready.is_err() {
                        return false;
                    }
                    match self.stream.try_read_buf(&mut self.input) {
                        Ok(0) => return false,
                        Ok(_) => deadline = Instant::now() + silence,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(_) => return false,
                    }
                }
                ready = self.stream.writable(), if !self.output.is_empty() => {
                    if ready.is_err() {
                        return false;
                    }
                }
                () = self.link.wake.notified() => {}
                () = self.link.close.notified() => return false,
                () = tokio::time::sleep_until(deadline), if keep_alive_s > 0 => return false,
            }
        }
    }

    /// Hands every whole packet read so far to the router; `Some` once the
    /// connection should end (malformed bytes end it after the packets before them).
    fn handle(&mut self, packets: &mut Vec<Packet>) -> Option<bool> {
        let malformed = loop {
            match Packet::read(&mut self.input, self.shared.max_packet) {
                Ok(packet) => packets.push(packet),
                Err(mqttbytes::Error::InsufficientBytes(_)) => break false,
                Err(_) => break true,
            }
        };
        if packets.is_empty() {
            return malformed.then_some(false);
        }
        let (client_id, link) = (self.client_id, self.link.id);
        let ended = self.shared.with_router(Some(link), |r| {
            for packet in packets.drain(..) {
                match r.incoming(client_id, link, packet) {
                    Ok(Next::Continue) => {}
                    Ok(other) => return Some(other == Next::Disconnect),
                    Err(_) => return Some(false),
                }
            }
            None
        });
        ended.or(malformed.then_some(false))
    }

    /// Takes what the router queued for the client and writes what the
    /// socket takes now; `false` once the link is detached or the socket failed.
    fn flush(&mut self) -> bool {
        if self.output.len() < OUTPUT_HIGH_WATER {
            let (client_id, link, output) = (self.client_id, self.link.id, &mut self.output);
            if !self
                .shared
                .with_router(Some(link), |r| r.take_output(client_id, link, output))
            {
                return false;
            }
        }
        while !self.output.is_empty() {
            match self.stream.try_write(&self.output) {
                Ok(n) => self.output.advance(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(_) => return false,
            }
        }
        true
    }
}
