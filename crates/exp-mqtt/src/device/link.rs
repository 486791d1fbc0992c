//! A device's connection to the broker: TCP (with TCP_NODELAY, since latency
//! is what we measure) or TLS over it, the CONNECT/CONNACK exchange, and
//! whole MQTT packets in and frames out.
//!
//! Plain TCP is kept as an `Arc<TcpStream>` so that [`Wire`](super::wire::Wire)
//! can write to it from whichever thread publishes, while the device task
//! reads from it; a TLS stream has one owner, the task, which does both.
//!
//! Buffers start empty and grow to what the traffic needs (a device reads
//! 4-byte acknowledgements), which is most of why a device costs a few KB
//! instead of rumqttc's 8 KiB read and 8 KiB write buffer per client.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use rumqttc::mqttbytes::{self, v4::Packet};
use rumqttc::{ConnectReturnCode, Login};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::client::DeviceOptions;
use crate::url::Endpoint;

trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// Why a connection attempt or an open connection failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum LinkError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("no CONNACK within {0:?}")]
    Timeout(Duration),
    /// CONNACK with a non-zero return code.
    #[error("connection refused: {0:?}")]
    Refused(ConnectReturnCode),
    #[error("the broker closed the connection")]
    Closed,
    #[error("protocol error: {0}")]
    Protocol(String),
}

pub(super) struct Link {
    transport: Transport,
    read: BytesMut,
    max_incoming: usize,
}

enum Transport {
    Tcp(Arc<TcpStream>),
    Tls(Box<dyn Stream>),
}

impl Link {
    /// Connects, says CONNECT and waits for CONNACK; returns the link and
    /// whether the broker resumed a session. The whole exchange is bounded by `timeout`.
    pub(super) async fn open(
        endpoint: &Endpoint,
        options: &DeviceOptions,
        timeout: Duration,
    ) -> Result<(Link, bool), LinkError> {
        tokio::time::timeout(timeout, Link::handshake(endpoint, options))
            .await
            .map_err(|_| LinkError::Timeout(timeout))?
    }

    async fn handshake(endpoint: &Endpoint, options: &DeviceOptions) -> Result<(Link, bool), LinkError> {
        let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port)).await?;
        tcp.set_nodelay(true)?;
        let transport = match &endpoint.tls {
            None => Transport::Tcp(Arc::new(tcp)),
            Some(tls) => {
                let name = ServerName::try_from(endpoint.host.clone())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                let connector = rumqttc::tokio_rustls::TlsConnector::from(tls.config());
                Transport::Tls(Box::new(connector.connect(name, tcp).await?))
            }
        };
        let mut link = Link {
            transport,
            read: BytesMut::new(),
            // Acknowledgements are tiny; this bounds what a misbehaving broker can make us buffer.
            max_incoming: options.max_packet_bytes.saturating_add(1024),
        };
        link.write(&connect_frame(options)?).await?;
        match link.read_packet().await? {
            Packet::ConnAck(ack) if ack.code == ConnectReturnCode::Success => Ok((link, ack.session_present)),
            Packet::ConnAck(ack) => Err(LinkError::Refused(ack.code)),
            other => Err(LinkError::Protocol(format!("expected CONNACK, got {other:?}"))),
        }
    }

    /// The next whole packet. Cancel-safe: bytes read stay buffered until a
    /// packet is complete, so it can sit in a `select!`.
    pub(super) async fn read_packet(&mut self) -> Result<Packet, LinkError> {
        loop {
            if !self.read.is_empty() {
                match Packet::read(&mut self.read, self.max_incoming) {
                    Ok(packet) => return Ok(packet),
                    Err(mqttbytes::Error::InsufficientBytes(_)) => {}
                    Err(e) => return Err(LinkError::Protocol(e.to_string())),
                }
            }
            let read = match &mut self.transport {
                Transport::Tls(stream) => stream.read_buf(&mut self.read).await?,
                Transport::Tcp(stream) => {
                    stream.readable().await?;
                    match stream.try_read_buf(&mut self.read) {
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                        read => read?,
                    }
                }
            };
            if read == 0 {
                return Err(LinkError::Closed);
            }
        }
    }

    /// The plain TCP stream, which a [`Wire`](super::wire::Wire) may write to
    /// from any thread; `None` over TLS.
    pub(super) fn tcp(&self) -> Option<&Arc<TcpStream>> {
        match &self.transport {
            Transport::Tcp(stream) => Some(stream),
            Transport::Tls(_) => None,
        }
    }

    pub(super) async fn write(&mut self, frame: &[u8]) -> Result<(), LinkError> {
        match &mut self.transport {
            Transport::Tls(stream) => stream.write_all(frame).await?,
            Transport::Tcp(stream) => write_all(stream, frame).await?,
        }
        Ok(())
    }

    /// Several frames in one write (one system call, one TCP segment when they fit).
    pub(super) async fn write_frames(&mut self, frames: &[Bytes]) -> Result<(), LinkError> {
        match frames {
            [] => Ok(()),
            [one] => self.write(one).await,
            many => {
                let mut joined = BytesMut::with_capacity(many.iter().map(Bytes::len).sum());
                for f in many {
                    joined.extend_from_slice(f);
                }
                self.write(&joined).await
            }
        }
    }

    /// DISCONNECT, then close our side; errors do not matter any more.
    pub(super) async fn disconnect(mut self) {
        let _ = self.write(&[0xE0, 0]).await;
        // Plain TCP closes when its last holder lets go: the task, once it
        // has taken the wire back from `publish`.
        if let Transport::Tls(stream) = &mut self.transport {
            let _ = stream.shutdown().await;
        }
    }
}

/// Writes all of `bytes` to a stream others may also hold (only ever under
/// the device's lock or before anyone else can write, so frames never interleave).
pub(super) async fn write_all(stream: &TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        stream.writable().await?;
        match stream.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn connect_frame(o: &DeviceOptions) -> Result<BytesMut, LinkError> {
    let mut connect = rumqttc::Connect::new(o.client_id.clone());
    connect.keep_alive = u16::try_from(o.keep_alive.as_secs()).unwrap_or(u16::MAX);
    connect.clean_session = o.clean_session;
    connect.login = o
        .credentials
        .as_ref()
        .map(|(user, pass)| Login::new(user.clone(), pass.clone()));
    let mut frame = BytesMut::new();
    connect
        .write(&mut frame)
        .map_err(|e| LinkError::Protocol(format!("cannot encode CONNECT: {e}")))?;
    Ok(frame)
}

pub(super) const PINGREQ: [u8; 2] = [0xC0, 0];
