//! Column kinds: what a table column holds, read from its name (`*_ns`, `*_bytes`,
//! `*_pct`, the identifiers): how the text formats it, and which of its
//! statistics mean something.

/// Columns that name things (a device, a trial's seed): no statistics.
const IDENTIFIERS: &[&str] = &[
    "device",
    "seq",
    "seed",
    "point",
    "repetition",
    "connection",
    "window",
    "path",
    "epoch",
    "pid",
    "activation",
    "core",
    "cpu",
];

/// What a table column holds, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnKind {
    Identifier,
    /// A date (`*_unix_ns`).
    UnixTime,
    /// A moment on the trial's clock (ns since its start): only its span means something.
    TrialTime,
    Duration,
    Bytes,
    Percent,
    /// Per second (`*_per_s`).
    Rate,
    Plain,
}

pub(crate) fn column_kind(name: &str) -> ColumnKind {
    const MOMENTS: &[&str] = &[
        "t_ns",
        "scheduled_ns",
        "sent_ns",
        "acked_ns",
        "delivered_ns",
        "connected_ns",
    ];
    if IDENTIFIERS.contains(&name) {
        ColumnKind::Identifier
    } else if name.ends_with("_unix_ns") {
        ColumnKind::UnixTime
    } else if MOMENTS.contains(&name) || ["start_ns", "end_ns", "_byte_ns"].iter().any(|s| name.ends_with(s)) {
        ColumnKind::TrialTime
    } else if name.ends_with("_ns") {
        ColumnKind::Duration
    } else if name == "bytes" || name.ends_with("_bytes") {
        ColumnKind::Bytes
    } else if name.ends_with("_pct") {
        ColumnKind::Percent
    } else if name.ends_with("_per_s") {
        ColumnKind::Rate
    } else {
        ColumnKind::Plain
    }
}

/// Whether only a column's extent (count, min, max) means something: not
/// for identifiers, nor for points in time.
pub(crate) fn extent_only(name: &str) -> bool {
    matches!(
        column_kind(name),
        ColumnKind::Identifier | ColumnKind::UnixTime | ColumnKind::TrialTime
    )
}
