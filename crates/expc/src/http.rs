//! A small HTTP/1.1 responder for `expc run --metrics` and `expc watch`:
//! one thread, one request per connection (`Connection: close`), `GET`
//! and `HEAD` only, bounded in what it reads and how long it waits, so a
//! slow or hostile client costs a thread's few seconds, never the runner.
//! No dependency: what it answers is a page, a JSON document and the
//! Prometheus text format.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// Longest request head read (request line and headers).
const MAX_HEAD_BYTES: usize = 8 << 10;
/// How long a client may take to send its request, and to take the answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

/// What a client asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub path: String,
    /// The query's parameters, percent-decoded.
    pub query: BTreeMap<String, String>,
}

/// What is sent back.
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// Headers besides those every response has.
    pub headers: Vec<(&'static str, &'static str)>,
}

impl Response {
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type,
            body: body.into(),
            headers: Vec::new(),
        }
    }

    pub fn text(status: u16, body: impl Into<String>) -> Response {
        Response::new(status, "text/plain; charset=utf-8", body.into())
    }
}

/// Binds `address`: a loopback address unless `beyond_loopback` (the
/// explicit `--listen-beyond-loopback`) allows another.
pub fn bind(address: SocketAddr, beyond_loopback: bool, flag: &str) -> Result<TcpListener, String> {
    if !address.ip().is_loopback() && !beyond_loopback {
        return Err(format!(
            "{flag} {address}: not a loopback address; anyone who can reach it would see the run \
             (add --listen-beyond-loopback to mean it)"
        ));
    }
    TcpListener::bind(address).map_err(|e| format!("{flag}: cannot listen on {address}: {e}"))
}

/// `9184` is `127.0.0.1:9184`; an address with a port is itself.
pub fn parse_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| format!("`{text}` is not a port or an address with a port (`127.0.0.1:9184`)"))
}

/// Answers every connection to `listener` with `handle`, one after the
/// other, on a thread of its own that lives as long as the process.
pub fn serve<H>(listener: TcpListener, name: &str, handle: H) -> Result<std::thread::JoinHandle<()>, String>
where
    H: Fn(&Request) -> Response + Send + 'static,
{
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            for stream in listener.incoming() {
                match stream {
                    // A client that misbehaves loses its own connection, nothing else.
                    Ok(stream) => drop(answer(stream, &handle)),
                    // Out of descriptors, say: never a loop that spins on it.
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
                }
            }
        })
        .map_err(|e| format!("cannot start the {name} thread: {e}"))
}

fn answer(mut stream: TcpStream, handle: &dyn Fn(&Request) -> Response) -> std::io::Result<()> {
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let head = read_head(&mut stream)?;
    let (response, head_only) = match parse(&head) {
        Ok((method, request)) => match method.as_str() {
            "GET" => (handle(&request), false),
            "HEAD" => (handle(&request), true),
            _ => (Response::text(405, "only GET and HEAD\n"), false),
        },
        Err(status) => (Response::text(status, "bad request\n"), false),
    };
    let reason = match response.status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    let mut header = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nConnection: close\r\n",
        response.status,
        response.content_type,
        response.body.len()
    );
    for (name, value) in &response.headers {
        header.push_str(&format!("{name}: {value}\r\n"));
    }
    header.push_str("\r\n");
    stream.write_all(header.as_bytes())?;
    if !head_only {
        stream.write_all(&response.body)?;
    }
    stream.flush()
}

/// The request head, up to its blank line, at most [`MAX_HEAD_BYTES`].
fn read_head(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(1024);
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() <= MAX_HEAD_BYTES {
        let n = stream.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..n]);
    }
    Ok(head)
}

/// The method and request of a request head, or the status that refuses it.
fn parse(head: &[u8]) -> Result<(String, Request), u16> {
    if head.len() > MAX_HEAD_BYTES {
        return Err(431);
    }
    let text = std::str::from_utf8(head).map_err(|_| 400u16)?;
    let line = text.lines().next().ok_or(400u16)?;
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version)) = (words.next(), words.next(), words.next()) else {
        return Err(400);
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(400);
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect();
    Ok((
        method.to_string(),
        Request {
            path: decode(path),
            query,
        },
    ))
}

/// Percent-decoding (and `+` as a space), invalid escapes kept as written.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether two secrets are equal, in time that does not depend on where
/// they first differ.
pub fn same_secret(given: &str, expected: &str) -> bool {
    let (given, expected) = (given.as_bytes(), expected.as_bytes());
    given.len() == expected.len() && given.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_line_gives_its_path_and_query() {
        let (method, request) = parse(b"GET /state?token=ab%2Fc&x HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert_eq!(method, "GET");
        assert_eq!(request.path, "/state");
        assert_eq!(request.query.get("token").map(String::as_str), Some("ab/c"));
        assert_eq!(request.query.get("x").map(String::as_str), Some(""));
        assert_eq!(parse(b"GET state HTTP/1.1\r\n\r\n").unwrap_err(), 400);
        assert_eq!(parse(b"\xff\r\n\r\n").unwrap_err(), 400);
        assert_eq!(parse(&[b'a'; MAX_HEAD_BYTES + 1]).unwrap_err(), 431);
        assert_eq!(decode("%zz%4"), "%zz%4");
    }

    #[test]
    fn only_loopback_without_the_flag() {
        let public = parse_address("0.0.0.0:0").unwrap();
        assert!(bind(public, false, "--metrics")
            .unwrap_err()
            .contains("--listen-beyond-loopback"));
        assert_eq!(parse_address("9184").unwrap(), SocketAddr::from(([127, 0, 0, 1], 9184)));
        assert!(parse_address("localhost").is_err());
        assert!(same_secret("abc", "abc") && !same_secret("abc", "abd") && !same_secret("ab", "abc"));
    }
}
