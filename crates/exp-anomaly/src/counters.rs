//! Counters: the kernels' atomic ones, the totals the child reports, and the
//! line format of those reports.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// What an anomaly instance did so far, summed over its kernel threads. The
/// meaning of `iterations` depends on the kernel (see `runtime-c/*.c`);
/// `bytes` are bytes touched or written, `files` files created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub iterations: u64,
    pub bytes: u64,
    pub files: u64,
}

/// One kernel thread's counters: the C side's `struct expk_counters`. The C
/// kernel adds to them while the reporter thread reads them. Aligned to a
/// cache line so threads updating their own counters do not share one.
#[repr(C, align(64))]
#[derive(Debug, Default)]
pub(crate) struct KernelCounters {
    pub iterations: AtomicU64,
    pub bytes: AtomicU64,
    pub files: AtomicU64,
}

// The C struct is three uint64_t at offsets 0, 8, 16; the alignment only pads the end.
const _: () = assert!(std::mem::offset_of!(KernelCounters, bytes) == 8);
const _: () = assert!(std::mem::offset_of!(KernelCounters, files) == 16);

impl KernelCounters {
    pub fn snapshot(&self) -> Counters {
        Counters {
            iterations: self.iterations.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            files: self.files.load(Ordering::Relaxed),
        }
    }

    pub fn add_bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }

    pub fn add_iterations(&self, n: u64) {
        self.iterations.fetch_add(n, Ordering::Relaxed);
    }
}

impl Counters {
    pub(crate) fn sum<'a>(all: impl IntoIterator<Item = &'a KernelCounters>) -> Counters {
        all.into_iter()
            .map(KernelCounters::snapshot)
            .fold(Counters::default(), |a, b| Counters {
                iterations: a.iterations.saturating_add(b.iterations),
                bytes: a.bytes.saturating_add(b.bytes),
                files: a.files.saturating_add(b.files),
            })
    }
}

/// Why the child stopped, told in its final report line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EndReason {
    /// `run_for` elapsed.
    Deadline,
    /// SIGTERM or SIGINT.
    Signal,
    /// A kernel failed; the error is on stderr.
    Failed,
}

/// One line the child writes to stdout: the totals so far, and on the last
/// line why it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Report {
    pub iterations: u64,
    pub bytes: u64,
    pub files: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<EndReason>,
}

impl Report {
    pub fn new(counters: Counters, end: Option<EndReason>) -> Report {
        Report {
            iterations: counters.iterations,
            bytes: counters.bytes,
            files: counters.files,
            end,
        }
    }

    pub fn counters(&self) -> Counters {
        Counters {
            iterations: self.iterations,
            bytes: self.bytes,
            files: self.files,
        }
    }

    /// Parses one stdout line; anything else on stdout is not a report.
    pub fn parse(line: &str) -> Option<Report> {
        serde_json::from_str(line.trim()).ok()
    }

    pub fn to_line(self) -> String {
        // Serialising four plain fields cannot fail; fall back to an empty object all the same.
        serde_json::to_string(&self).unwrap_or_else(|_| "{}".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_thread_counters() {
        let a = KernelCounters::default();
        let b = KernelCounters::default();
        a.add_bytes(10);
        a.add_iterations(1);
        b.add_bytes(5);
        b.files.fetch_add(2, Ordering::Relaxed);
        assert_eq!(
            Counters::sum([&a, &b]),
            Counters {
                iterations: 1,
                bytes: 15,
                files: 2
            }
        );
    }

    #[test]
    fn counters_match_the_c_layout() {
        assert_eq!(std::mem::align_of::<KernelCounters>(), 64);
        assert_eq!(std::mem::size_of::<AtomicU64>(), 8);
    }

    #[test]
    fn report_lines_round_trip() {
        let counters = Counters {
            iterations: 3,
            bytes: 4096,
            files: 1,
        };
        let line = Report::new(counters, None).to_line();
        assert_eq!(line, r#"{"iterations":3,"bytes":4096,"files":1}"#);
        assert_eq!(Report::parse(&line).map(|r| r.counters()), Some(counters));

        let last = Report::new(counters, Some(EndReason::Deadline)).to_line();
        assert!(last.ends_with(r#""end":"deadline"}"#), "{last}");
        assert_eq!(Report::parse(&last).and_then(|r| r.end), Some(EndReason::Deadline));
    }

    #[test]
    fn other_output_is_not_a_report() {
        assert_eq!(Report::parse("hello"), None);
        assert_eq!(Report::parse(r#"{"iterations":1}"#), None);
    }
}
