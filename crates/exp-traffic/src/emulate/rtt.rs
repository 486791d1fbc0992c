//! The language's RTT modes, turned into the RTT the stage emulates for each
//! connection of a trace (whose own measured RTT is `r`).

use std::time::Duration;

use super::EmulateError;

/// How connection RTTs are emulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttMode {
    /// No added delay.
    None,
    /// The same RTT for every connection.
    Constant(Duration),
    /// Every connection gets the mean of all connections' `r`.
    Mean,
    /// `n` paths: connections sorted by `r` are split into `n` groups of
    /// (nearly) equal size, each emulated with its group's mean `r`.
    Paths(usize),
    /// Each connection its own `r`, exactly.
    PerConnection,
}

impl RttMode {
    /// The emulated RTT of each connection, in the order of `measured`
    /// (each connection's `r`).
    pub fn assign(&self, measured: &[Duration]) -> Result<Vec<Duration>, EmulateError> {
        Ok(match *self {
            RttMode::None => vec![Duration::ZERO; measured.len()],
            RttMode::Constant(rtt) => vec![rtt; measured.len()],
            RttMode::Mean => vec![mean(measured); measured.len()],
            RttMode::PerConnection => measured.to_vec(),
            RttMode::Paths(0) => {
                return Err(EmulateError::InvalidConfig("paths(n) needs n ≥ 1".into()));
            }
            RttMode::Paths(paths) => {
                let mut order: Vec<usize> = (0..measured.len()).collect();
                // Ties broken by index so the grouping is deterministic.
                order.sort_by_key(|&i| (measured[i], i));
                let mut assigned = vec![Duration::ZERO; measured.len()];
                for group in split_evenly(&order, paths) {
                    let rtts: Vec<Duration> = group.iter().map(|&i| measured[i]).collect();
                    let rtt = mean(&rtts);
                    for &i in group {
                        assigned[i] = rtt;
                    }
                }
                assigned
            }
        })
    }
}

fn mean(values: &[Duration]) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    let total: u128 = values.iter().map(Duration::as_nanos).sum();
    Duration::from_nanos(u64::try_from(total / values.len() as u128).unwrap_or(u64::MAX))
}

/// `items` cut into `parts` consecutive groups whose sizes differ by at most
/// one (fewer groups when there are fewer items).
fn split_evenly<T>(items: &[T], parts: usize) -> Vec<&[T]> {
    let parts = parts.min(items.len()).max(1);
    let (base, extra) = (items.len() / parts, items.len() % parts);
    let mut groups = Vec::with_capacity(parts);
    let mut start = 0;
    for part in 0..parts {
        let len = base + usize::from(part < extra);
        groups.push(&items[start..start + len]);
        start += len;
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(values: &[u64]) -> Vec<Duration> {
        values.iter().copied().map(Duration::from_millis).collect()
    }

    #[test]
    fn simple_modes() {
        let r = ms(&[10, 20, 60]);
        assert_eq!(RttMode::None.assign(&r).expect("ok"), ms(&[0, 0, 0]));
        let c = RttMode::Constant(Duration::from_millis(7));
        assert_eq!(c.assign(&r).expect("ok"), ms(&[7, 7, 7]));
        assert_eq!(RttMode::Mean.assign(&r).expect("ok"), ms(&[30, 30, 30]));
        assert_eq!(RttMode::PerConnection.assign(&r).expect("ok"), r);
        assert!(RttMode::Mean.assign(&[]).expect("ok").is_empty());
    }

    #[test]
    fn paths_group_connections_by_rtt() {
        let r = ms(&[80, 5, 20, 90, 10, 30]);
        // Sorted: 5 10 | 20 30 | 80 90 → means 7.5, 25, 85.
        let got = RttMode::Paths(3).assign(&r).expect("ok");
        let want = [85_000, 7_500, 25_000, 85_000, 7_500, 25_000].map(Duration::from_micros);
        assert_eq!(got, want);
        assert_eq!(RttMode::Paths(1).assign(&r).expect("ok"), vec![mean(&r); 6]);
        assert_eq!(
            RttMode::Paths(10).assign(&r).expect("ok"),
            r,
            "more paths than connections"
        );
        assert!(RttMode::Paths(0).assign(&r).is_err());
    }

    #[test]
    fn even_split_sizes() {
        let sizes: Vec<usize> = split_evenly(&[0; 7], 3).iter().map(|g| g.len()).collect();
        assert_eq!(sizes, vec![3, 2, 2]);
    }
}
