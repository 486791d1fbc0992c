//! /proc/net/dev: traffic counters per network interface.

use crate::{parse_error, parse_u64, read, HostError};

const PATH: &str = "/proc/net/dev";

/// The counters of one interface, cumulative since it came up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetDev {
    pub name: String,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub rx_errs: u64,
    pub rx_drop: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errs: u64,
    pub tx_drop: u64,
}

impl NetDev {
    /// Every interface line; the two header lines have no `:` and are skipped.
    pub fn parse_all(text: &str) -> Result<Vec<Self>, HostError> {
        let mut devices = Vec::new();
        for line in text.lines() {
            // Large counters can run into the name (`eth0:1234`), so split at the colon.
            let Some((name, rest)) = line.split_once(':') else {
                continue;
            };
            let name = name.trim();
            let w: Vec<&str> = rest.split_whitespace().collect();
            if w.len() < 16 {
                return Err(parse_error(
                    PATH,
                    format!("`{name}` has {} values, expected 16", w.len()),
                ));
            }
            let field = |i: usize| parse_u64(PATH, name, Some(w[i]));
            devices.push(NetDev {
                name: name.to_string(),
                rx_bytes: field(0)?,
                rx_packets: field(1)?,
                rx_errs: field(2)?,
                rx_drop: field(3)?,
                tx_bytes: field(8)?,
                tx_packets: field(9)?,
                tx_errs: field(10)?,
                tx_drop: field(11)?,
            });
        }
        Ok(devices)
    }
}

/// The interfaces of this process's network namespace.
pub fn net_dev() -> Result<Vec<NetDev>, HostError> {
    NetDev::parse_all(&read(PATH)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    6386      58    0    0    0     0          0         0     6386      58    0    0    0     0       0          0
  eth0: 171292357    9527    1    2    0     0          0         0   607220    5806    3    4    0     0       0          0
eth1:4294967296 7 0 0 0 0 0 0 9 8 0 0 0 0 0 0
";

    #[test]
    fn parses_the_fixture() {
        let devices = NetDev::parse_all(FIXTURE).unwrap();
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["lo", "eth0", "eth1"]);
        let eth0 = &devices[1];
        assert_eq!(
            (eth0.rx_bytes, eth0.rx_packets, eth0.rx_errs, eth0.rx_drop),
            (171292357, 9527, 1, 2)
        );
        assert_eq!(
            (eth0.tx_bytes, eth0.tx_packets, eth0.tx_errs, eth0.tx_drop),
            (607220, 5806, 3, 4)
        );
        assert_eq!((devices[2].rx_bytes, devices[2].tx_bytes), (4294967296, 9));
    }

    #[test]
    fn damage_is_an_error() {
        assert!(NetDev::parse_all("lo: 1 2 3\n").is_err());
    }

    #[test]
    fn reads_this_machine() {
        assert!(net_dev().unwrap().iter().any(|d| d.name == "lo"));
    }
}
