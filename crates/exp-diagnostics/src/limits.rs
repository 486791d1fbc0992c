//! Every limit the compiler enforces on what a user writes, in one place: its
//! value, the diagnostic code that reports it and why it is what it is.
//!
//! The limits keep `expc check`, `plan` and `fmt` bounded in time, memory and
//! stack whatever the input, and keep plans within what the runtime can
//! honour. `docs/running.md` ("Limits") embeds [`markdown_table`]; a test
//! fails when the two drift apart, and another checks that each code's
//! `expc explain` text states the value.

use crate::Code;

/// Most trials one plan may hold (sweep points × repetitions). Checked from
/// the product of the parameters' value counts before any point is expanded.
pub const MAX_TRIALS: u64 = 1_000_000;

/// Most combinations of sweep values one block varies in (the plan holds
/// the block lowered at each). Fleet properties stored as fields do not
/// count. At about 2 KB and 25 µs per variant this keeps a plan within
/// 20 MB and its lowering well under a second.
pub const MAX_VARIANTS: u64 = 10_000;

/// Deepest nesting of `[`, `(` and `{` (blocks, lists, records, calls).
/// Deep enough for any real spec (they nest 4–6 levels); it bounds the stack
/// every recursive pass (parse, check, format) uses, and keeps plans within
/// the 128 levels JSON readers such as serde_json accept.
pub const MAX_NESTING: usize = 32;

/// Most diagnostics shown for one command; the rest are counted. The parser
/// also stops after this many syntax errors in one file.
pub const MAX_DIAGNOSTICS: usize = 100;

/// Largest file the compiler reads: a spec, an import, an `empirical` values
/// file. Only regular files are read (never a FIFO, device or directory).
pub const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// Largest magnitude of a duration (ns), size (bytes) or bandwidth (bit/s):
/// 2^53 − 1, the largest integer every JSON reader holds exactly (as the
/// seed's limit). About 104 days, 8 PiB, 9 Pbit/s.
pub const MAX_PLAN_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Range of a distribution's shape parameter (Pareto α, Weibull k, gamma k,
/// lognormal σ). Outside it the distribution underflows or overflows `f64`
/// (`pareto(shape = 1e-300, median = 1ms)` has a scale of 0).
pub const SHAPE_RANGE: (f64, f64) = (0.01, 100.0);

/// Smallest mean gap between one MQTT device's messages (1 ms: 1,000
/// messages/s per device). Below it the pacer's wake-up lateness (p99
/// 0.1–0.4 ms on a 2-core VM) is a large part of every gap, and a gap of 0
/// sends as fast as the CPU allows.
pub const MIN_MEAN_GAP_NS: u64 = 1_000_000;

/// Shortest `active` part and shortest pause (`every − active`) of a
/// periodic window: each interval starts a fleet, an anomaly's child process
/// or a replay, which takes milliseconds.
pub const MIN_PERIOD_PART_NS: u64 = 10_000_000;

/// Most active intervals of one periodic workload in one trial (the runtime
/// holds them in memory before the trial starts).
pub const MAX_INTERVALS: u64 = 100_000;

/// Most connections `synthetic(...)` makes for one traffic workload. The
/// replay holds every connection's vector (about 150 B) before the trial
/// starts: 10^7 is 1.5 GB; 10^12 was a 152 TB allocation that aborted.
pub const MAX_SYNTHETIC_CONNECTIONS: u64 = 10_000_000;

/// One limit, for the docs table and `expc explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// What is limited.
    pub name: &'static str,
    /// The value as the docs and explanations print it.
    pub value: String,
    /// The diagnostic that reports it.
    pub code: Code,
}

/// Every limit, in the order the docs list them.
pub fn all() -> Vec<Limit> {
    let limit = |name, value: String, code| Limit { name, value, code };
    vec![
        limit("trials per plan", group(MAX_TRIALS), Code::E0704),
        limit(
            "combinations of sweep values one block varies in",
            group(MAX_VARIANTS),
            Code::E0705,
        ),
        limit("nesting depth of `[`, `(`, `{`", MAX_NESTING.to_string(), Code::E0106),
        limit(
            "diagnostics shown; syntax errors before the parser stops",
            MAX_DIAGNOSTICS.to_string(),
            Code::E0107,
        ),
        limit(
            "size of a spec, import or `empirical` file",
            "16 MiB".into(),
            Code::E0204,
        ),
        limit(
            "magnitude of a duration, size or bandwidth",
            "2^53 − 1 ns, B or bit/s".into(),
            Code::E0506,
        ),
        limit(
            "shape of `pareto`, `weibull`, `gamma`, `lognormal`",
            format!("{} to {}", SHAPE_RANGE.0, SHAPE_RANGE.1),
            Code::E0501,
        ),
        limit("mean gap of one MQTT device", "1 ms".into(), Code::E0606),
        limit(
            "`active` and `every − active` of a periodic window",
            "10 ms".into(),
            Code::E0606,
        ),
        limit(
            "active intervals of one periodic workload per trial",
            group(MAX_INTERVALS),
            Code::E0606,
        ),
        limit(
            "connections of `synthetic(...)`",
            group(MAX_SYNTHETIC_CONNECTIONS),
            Code::E0501,
        ),
    ]
}

/// The limits as a Markdown table (the generated part of docs/running.md).
pub fn markdown_table() -> String {
    let mut out = String::from("| limit | value | code |\n|---|---|---|\n");
    for limit in all() {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            limit.name,
            limit.value,
            limit.code.as_str()
        ));
    }
    out
}

/// `1000000` → `1,000,000`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1_000_000), "1,000,000");
    }

    /// `expc explain CODE` states the value of every limit it reports.
    #[test]
    fn every_limit_is_stated_in_its_explanation() {
        for limit in all() {
            assert!(
                limit.code.explanation().contains(&limit.value),
                "`expc explain {}` does not mention the limit {} ({})",
                limit.code.as_str(),
                limit.value,
                limit.name
            );
        }
    }

    #[test]
    fn the_plan_integer_limit_is_exact_in_f64() {
        assert_eq!(MAX_PLAN_INTEGER, ((1u64 << 53) - 1) as f64);
    }
}
