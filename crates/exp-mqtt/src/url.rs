//! Broker URLs: `mqtt://host[:port]` and `mqtts://host[:port]`.
//!
//! Parsed by hand: the grammar is tiny and pulling in the `url` crate for it
//! would cost more build time than the parser. Paths, queries and user info
//! are rejected rather than ignored, because credentials in a URL would end
//! up in the plan and the manifest; they come from environment variables.

use std::fmt;

use crate::tls::{is_verifiable_server_name, Tls};
use crate::MqttError;

/// Plain TCP or TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Mqtt,
    Mqtts,
}

impl Scheme {
    /// The IANA port of the scheme.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Mqtt => 1883,
            Scheme::Mqtts => 8883,
        }
    }
}

/// Where a broker listens, and for `mqtts://` how to talk TLS to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub scheme: Scheme,
    /// Host name or IP address, without brackets for IPv6; also the name the
    /// broker's certificate is verified against.
    pub host: String,
    pub port: u16,
    /// Set by [`Endpoint::with_tls`]; an `mqtts://` endpoint cannot connect without it.
    /// Carried here, not per device, so a fleet's devices share one configuration.
    pub tls: Option<Tls>,
}

impl Endpoint {
    /// A plain `mqtt://` endpoint, e.g. the embedded broker's.
    pub fn tcp(host: impl Into<String>, port: u16) -> Self {
        Endpoint {
            scheme: Scheme::Mqtt,
            host: host.into(),
            port,
            tls: None,
        }
    }

    /// Attaches the TLS configuration of an `mqtts://` endpoint.
    pub fn with_tls(self, tls: Tls) -> Result<Self, MqttError> {
        let bad = |reason| MqttError::InvalidUrl {
            url: self.to_string(),
            reason,
        };
        if self.scheme != Scheme::Mqtts {
            return Err(bad("TLS settings need an mqtts:// URL"));
        }
        if !is_verifiable_server_name(&self.host) {
            return Err(bad(
                "the host is neither a valid DNS name nor an IP address, so TLS cannot verify it",
            ));
        }
        Ok(Endpoint { tls: Some(tls), ..self })
    }

    /// Parses `mqtt://host[:port]` or `mqtts://host[:port]` (IPv6 as `[::1]`).
    pub fn parse(url: &str) -> Result<Self, MqttError> {
        let bad = |reason| MqttError::InvalidUrl {
            url: url.to_string(),
            reason,
        };
        let (scheme, rest) = if let Some(rest) = url.strip_prefix("mqtt://") {
            (Scheme::Mqtt, rest)
        } else if let Some(rest) = url.strip_prefix("mqtts://") {
            (Scheme::Mqtts, rest)
        } else {
            return Err(bad("the scheme must be mqtt:// or mqtts://"));
        };
        // A single trailing slash is harmless (`mqtt://host:1883/`); anything else is a path.
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('@') {
            return Err(bad(
                "credentials in the URL are not allowed; name environment variables instead",
            ));
        }
        if rest.contains(['/', '?', '#']) {
            return Err(bad("a broker URL has no path, query or fragment"));
        }
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (host, after) = v6.split_once(']').ok_or_else(|| bad("unclosed `[` in IPv6 host"))?;
            match after {
                "" => (host, None),
                p => (
                    host,
                    Some(p.strip_prefix(':').ok_or_else(|| bad("expected `:port` after `]`"))?),
                ),
            }
        } else {
            match rest.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (rest, None),
            }
        };
        if host.is_empty() {
            return Err(bad("the host is empty"));
        }
        if host.contains(char::is_whitespace) {
            return Err(bad("the host contains whitespace"));
        }
        let port = match port {
            None => scheme.default_port(),
            Some(p) => match p.parse::<u16>() {
                Ok(0) => return Err(bad("port 0 is not a broker port")),
                Ok(p) => p,
                Err(_) => return Err(bad("the port must be a number from 1 to 65535")),
            },
        };
        Ok(Endpoint {
            scheme,
            host: host.to_string(),
            port,
            tls: None,
        })
    }

    /// `host:port` as rumqttc and the socket layer want it.
    pub fn host_port(&self) -> (String, u16) {
        (self.host.clone(), self.port)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.scheme {
            Scheme::Mqtt => "mqtt",
            Scheme::Mqtts => "mqtts",
        };
        if self.host.contains(':') {
            write!(f, "{scheme}://[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}://{}:{}", self.host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_schemes_and_default_ports() {
        assert_eq!(Endpoint::parse("mqtt://broker").unwrap(), Endpoint::tcp("broker", 1883));
        let e = Endpoint::parse("mqtts://broker.example.com").unwrap();
        assert_eq!((e.scheme, e.port), (Scheme::Mqtts, 8883));
        assert_eq!(
            Endpoint::parse("mqtt://10.0.0.1:1884/").unwrap(),
            Endpoint::tcp("10.0.0.1", 1884)
        );
        assert_eq!(
            Endpoint::parse("mqtt://[::1]:1885").unwrap(),
            Endpoint::tcp("::1", 1885)
        );
        assert_eq!(Endpoint::parse("mqtt://[::1]").unwrap().port, 1883);
        assert_eq!(
            Endpoint::parse("mqtt://[::1]:1885").unwrap().to_string(),
            "mqtt://[::1]:1885"
        );
    }

    #[test]
    fn rejects_malformed_urls() {
        for url in [
            "tcp://broker",
            "mqtt://",
            "mqtt://:1883",
            "mqtt://broker:0",
            "mqtt://broker:70000",
            "mqtt://broker:x",
            "mqtt://user:pw@broker",
            "mqtt://broker/topic",
            "mqtt://[::1",
            "mqtt://[::1]x",
        ] {
            assert!(
                matches!(Endpoint::parse(url), Err(MqttError::InvalidUrl { .. })),
                "{url}"
            );
        }
    }
}
