//! Why the initiator could not open one connection. It is not a
//! [`ReplayError`](super::ReplayError): the replay goes on, and the message
//! becomes that connection's `error` in its record.

use std::net::{IpAddr, SocketAddr};

/// One step of opening a connection (socket, bind, connect, preamble) failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OpenError {
    #[error("creating socket: {0}")]
    Socket(std::io::Error),
    #[error("setting socket buffers: {0}")]
    Buffers(std::io::Error),
    #[error("setting SO_REUSEADDR: {0}")]
    ReuseAddr(std::io::Error),
    #[error("binding to {ip}: {source}")]
    Bind { ip: IpAddr, source: std::io::Error },
    #[error("reading the local address: {0}")]
    LocalAddr(std::io::Error),
    #[error("connecting to {target}: {source}")]
    Connect { target: SocketAddr, source: std::io::Error },
    #[error("connecting to {target}: timed out")]
    ConnectTimeout { target: SocketAddr },
    #[error("setting TCP_NODELAY: {0}")]
    NoDelay(std::io::Error),
    #[error("sending the preamble: {0}")]
    Preamble(std::io::Error),
}
