//! Units of quantity literals. The syntax keeps a unit as text; this table says
//! what each means, for the checker and for syntax hints.

/// The dimension a unit measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimension {
    Duration,
    Bytes,
    Bandwidth,
    Rate,
    Percent,
}

impl Dimension {
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Duration => "duration",
            Dimension::Bytes => "size",
            Dimension::Bandwidth => "bandwidth",
            Dimension::Rate => "rate",
            Dimension::Percent => "percentage",
        }
    }

    /// The base unit values are converted to in the plan.
    pub fn base_unit(self) -> &'static str {
        match self {
            Dimension::Duration => "ns",
            Dimension::Bytes => "B",
            Dimension::Bandwidth => "bit/s",
            Dimension::Rate => "/s",
            Dimension::Percent => "ratio",
        }
    }

    /// A unit to suggest when a bare number is given.
    pub fn example_unit(self) -> &'static str {
        match self {
            Dimension::Duration => "s",
            Dimension::Bytes => "B",
            Dimension::Bandwidth => "Mbit/s",
            Dimension::Rate => "/s",
            Dimension::Percent => "%",
        }
    }
}

/// Every unit: text, dimension, factor to the base unit.
pub const UNITS: &[(&str, Dimension, f64)] = &[
    ("ns", Dimension::Duration, 1.0),
    ("us", Dimension::Duration, 1e3),
    ("µs", Dimension::Duration, 1e3),
    ("ms", Dimension::Duration, 1e6),
    ("s", Dimension::Duration, 1e9),
    ("min", Dimension::Duration, 60e9),
    ("h", Dimension::Duration, 3600e9),
    ("B", Dimension::Bytes, 1.0),
    ("KB", Dimension::Bytes, 1e3),
    ("MB", Dimension::Bytes, 1e6),
    ("GB", Dimension::Bytes, 1e9),
    ("TB", Dimension::Bytes, 1e12),
    ("KiB", Dimension::Bytes, 1024.0),
    ("MiB", Dimension::Bytes, 1_048_576.0),
    ("GiB", Dimension::Bytes, 1_073_741_824.0),
    ("TiB", Dimension::Bytes, 1_099_511_627_776.0),
    ("bit/s", Dimension::Bandwidth, 1.0),
    ("Kbit/s", Dimension::Bandwidth, 1e3),
    ("Mbit/s", Dimension::Bandwidth, 1e6),
    ("Gbit/s", Dimension::Bandwidth, 1e9),
    ("bps", Dimension::Bandwidth, 1.0),
    ("Kbps", Dimension::Bandwidth, 1e3),
    ("Mbps", Dimension::Bandwidth, 1e6),
    ("Gbps", Dimension::Bandwidth, 1e9),
    ("B/s", Dimension::Bandwidth, 8.0),
    ("KB/s", Dimension::Bandwidth, 8e3),
    ("MB/s", Dimension::Bandwidth, 8e6),
    ("GB/s", Dimension::Bandwidth, 8e9),
    ("KiB/s", Dimension::Bandwidth, 8.0 * 1024.0),
    ("MiB/s", Dimension::Bandwidth, 8.0 * 1_048_576.0),
    ("GiB/s", Dimension::Bandwidth, 8.0 * 1_073_741_824.0),
    ("/s", Dimension::Rate, 1.0),
    ("/min", Dimension::Rate, 1.0 / 60.0),
    ("/h", Dimension::Rate, 1.0 / 3600.0),
    ("%", Dimension::Percent, 0.01),
];

/// Dimension and factor to the base unit.
pub fn lookup(unit: &str) -> Option<(Dimension, f64)> {
    UNITS
        .iter()
        .find(|(text, _, _)| *text == unit)
        .map(|(_, dimension, factor)| (*dimension, *factor))
}

pub fn is_unit(text: &str) -> bool {
    lookup(text).is_some()
}

/// Spellings people write for a unit, with the unit they mean.
const ALIASES: &[(&str, &str)] = &[
    ("nsec", "ns"),
    ("nsecs", "ns"),
    ("nanos", "ns"),
    ("nanosecond", "ns"),
    ("nanoseconds", "ns"),
    ("usec", "us"),
    ("usecs", "us"),
    ("micros", "us"),
    ("microsecond", "us"),
    ("microseconds", "us"),
    ("msec", "ms"),
    ("msecs", "ms"),
    ("millis", "ms"),
    ("millisecond", "ms"),
    ("milliseconds", "ms"),
    ("sec", "s"),
    ("secs", "s"),
    ("second", "s"),
    ("seconds", "s"),
    ("mins", "min"),
    ("minute", "min"),
    ("minutes", "min"),
    ("hr", "h"),
    ("hrs", "h"),
    ("hour", "h"),
    ("hours", "h"),
    ("byte", "B"),
    ("bytes", "B"),
    ("percent", "%"),
    ("pct", "%"),
];

/// A multiplier prefix written without its unit (`64k`, `10Mi`): the units
/// it may have meant, as written after `number` (`64KB`, `64KiB`,
/// `64Kbit/s`). A lone `m` is left to [`suggest`] (minutes or millis).
pub fn bare_prefix(unit: &str) -> Option<Vec<String>> {
    let prefix = ["K", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"]
        .into_iter()
        .find(|p| p.eq_ignore_ascii_case(unit) && unit != "m")?;
    let meant: Vec<String> = [format!("{prefix}B"), format!("{prefix}iB"), format!("{prefix}bit/s")]
        .into_iter()
        .filter(|u| is_unit(u))
        .collect();
    Some(meant)
}

/// Did-you-mean for an unknown unit: a common spelling of a unit (`msec` →
/// `ms`), the unit in another case (`kib` → `KiB`), or the closest unit.
pub fn suggest(unit: &str) -> Option<&'static str> {
    let lower = unit.to_lowercase();
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == lower)
        .map(|(_, u)| *u)
        .or_else(|| {
            let mut same_case = UNITS.iter().filter(|(u, _, _)| u.to_lowercase() == lower);
            match (same_case.next(), same_case.next()) {
                (Some((u, _, _)), None) => Some(*u),
                _ => None,
            }
        })
        .or_else(|| exp_diagnostics::closest(unit, UNITS.iter().map(|(u, _, _)| *u)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_prefix_means_a_size_or_a_bandwidth() {
        assert_eq!(bare_prefix("k").unwrap(), ["KB", "KiB", "Kbit/s"]);
        assert_eq!(bare_prefix("Gi").unwrap(), ["GiB"]);
        assert_eq!(bare_prefix("m"), None);
        assert_eq!(bare_prefix("ms"), None);
    }

    #[test]
    fn suggests_units_for_common_misspellings() {
        assert_eq!(suggest("msec"), Some("ms"));
        assert_eq!(suggest("mss"), Some("ms"));
        assert_eq!(suggest("Seconds"), Some("s"));
        assert_eq!(suggest("kib"), Some("KiB"));
        assert_eq!(suggest("mbit/s"), Some("Mbit/s"));
        assert_eq!(suggest("furlongs"), None);
        for (alias, unit) in ALIASES {
            assert!(is_unit(unit), "alias `{alias}` names no unit `{unit}`");
            assert!(!is_unit(alias), "alias `{alias}` is a unit itself");
        }
    }
}
