//! The C kernels called directly, in this process: each runs briefly and must
//! stop at its deadline or stop flag, count what it did, and clean up its
//! files. (The child-process tests are in `crates/expc/tests/anomaly_kernels.rs`.)
//!
//! The machine may be loaded: paced kernels are checked never to run ahead
//! of their pace, not to keep it, and deadlines get generous slack.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::counters::{Counters, KernelCounters};
use crate::ffi::{self, Ctx};

const MIB: u64 = 1 << 20;

/// Runs `kernel` with a deadline `ms` from now; returns its result, counters and run time.
fn run(ms: u64, kernel: impl FnOnce(&Ctx<'_>) -> io::Result<()>) -> (io::Result<()>, Counters, Duration) {
    let stop = AtomicU32::new(0);
    let counters = KernelCounters::default();
    // The clock starts before the deadline is set: a kernel that stops right
    // at its deadline has then run at least `ms` by this clock too.
    let start = Instant::now();
    let ctx = Ctx {
        stop: &stop,
        deadline_ns: ffi::monotonic_ns() + ms * 1_000_000,
        counters: &counters,
        seed: 42,
    };
    let result = kernel(&ctx);
    (result, counters.snapshot(), start.elapsed())
}

fn ends_near(elapsed: Duration, ms: u64) {
    assert!(elapsed >= Duration::from_millis(ms), "{elapsed:?}");
    // One poll interval (50 ms) plus a stall of a loaded machine.
    assert!(elapsed < Duration::from_millis(ms + 2000), "{elapsed:?}");
}

/// Steps of a pace of `per_s` due within `elapsed`, the first at once.
fn due(per_s: f64, elapsed: Duration) -> u64 {
    (per_s * elapsed.as_secs_f64()).floor() as u64 + 1
}

fn temp_dir(name: &str) -> (PathBuf, CString) {
    let dir = std::env::temp_dir().join(format!("exp-anomaly-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let c = CString::new(dir.as_os_str().as_bytes()).unwrap();
    (dir, c)
}

#[test]
fn cpuoccupy_idles_works_and_spins_until_the_deadline() {
    for (utilization, busy) in [(0.0, false), (0.3, true), (1.0, true)] {
        let (result, counters, elapsed) = run(200, |ctx| ffi::cpuoccupy(ctx, utilization, 10_000_000));
        result.unwrap();
        ends_near(elapsed, 200);
        assert_eq!(counters.iterations > 0, busy, "{utilization}: {counters:?}");
    }
    let (result, _, _) = run(10, |ctx| ffi::cpuoccupy(ctx, 0.5, 0));
    assert_eq!(result.unwrap_err().raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn stop_flag_ends_a_kernel_without_deadline() {
    let stop = AtomicU32::new(0);
    let counters = KernelCounters::default();
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(100));
            stop.store(1, Ordering::Relaxed);
        });
        let ctx = Ctx {
            stop: &stop,
            deadline_ns: 0,
            counters: &counters,
            seed: 1,
        };
        // One step now, the next in 1,000 s: only the flag can end it sooner.
        ffi::memleak(&ctx, 4096, 0.001, MIB).unwrap();
    });
    assert!(start.elapsed() < Duration::from_secs(100), "{:?}", start.elapsed());
    assert_eq!(counters.snapshot().iterations, 1, "the first step is due at once");
}

#[test]
fn cachecopy_copies_whole_arrays() {
    let array = 32 * 1024;
    let (result, counters, elapsed) = run(200, |ctx| ffi::cachecopy(ctx, array, 0.5, 10_000_000));
    result.unwrap();
    ends_near(elapsed, 200);
    assert!(counters.iterations > 10, "{counters:?}");
    assert!(counters.bytes >= counters.iterations * array, "{counters:?}");
}

#[test]
fn cachecopy_fill_ends_with_its_window_and_counts_as_written() {
    // Two 512 MiB arrays cannot be filled in 10 ms: the window ends inside
    // the fill, which stops there and reports what it wrote (not 0, V0301).
    let array = 512 * MIB;
    let (result, counters, _) = run(10, |ctx| ffi::cachecopy(ctx, array, 1.0, 10_000_000));
    result.unwrap();
    assert_eq!(counters.iterations, 0, "{counters:?}");
    assert!(counters.bytes > 0, "{counters:?}");
    assert!(counters.bytes < 2 * array, "stopped inside the fill: {counters:?}");
}

#[test]
fn membw_transposes_with_streaming_stores() {
    let (result, counters, elapsed) = run(300, |ctx| ffi::membw(ctx, 4 * MIB, 1.0, 10_000_000));
    result.unwrap();
    ends_near(elapsed, 300);
    // 2 MiB per matrix: 362 × 362 cells of 16 bytes; a row is 5792 bytes.
    assert!(counters.iterations >= 1, "{counters:?}");
    assert_eq!(counters.bytes % (362 * 16), 0, "{counters:?}");
    let (result, _, _) = run(10, |ctx| ffi::membw(ctx, 16, 1.0, 10_000_000));
    assert_eq!(result.unwrap_err().raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn memeater_grows_to_its_limit_and_holds() {
    // 1 MiB now, then +1 MiB every 50 ms, cut at 3.5 MiB: four steps by
    // 150 ms, then it holds until the deadline.
    let limit = 7 * MIB / 2;
    let (result, counters, elapsed) = run(1000, |ctx| ffi::memeater(ctx, MIB, 50_000_000, limit));
    result.unwrap();
    ends_near(elapsed, 1000);
    assert_eq!(
        counters,
        Counters {
            iterations: 4,
            bytes: limit,
            files: 0
        }
    );
}

#[test]
fn memleak_leaks_at_its_rate_up_to_its_limit() {
    // 16 steps of 64 KiB reach the limit by 150 ms; it holds until the deadline.
    let (result, counters, elapsed) = run(1000, |ctx| ffi::memleak(ctx, 64 * 1024, 100.0, MIB));
    result.unwrap();
    ends_near(elapsed, 1000);
    assert_eq!(
        counters,
        Counters {
            iterations: 16,
            bytes: MIB,
            files: 0
        }
    );

    // At 20 steps/s for 0.5 s, steps are due at 0, 50, …, 450 ms: ten of
    // them, fewer if the machine starves the thread, never more.
    let (result, counters, _) = run(500, |ctx| ffi::memleak(ctx, 4096, 20.0, 1 << 30));
    result.unwrap();
    assert!((1..=10).contains(&counters.iterations), "{counters:?}");
}

#[test]
fn iometadata_creates_and_deletes_files() {
    let (dir, c_dir) = temp_dir("iometadata");
    let (result, counters, elapsed) = run(200, |ctx| ffi::iometadata(ctx, &c_dir, 3, 0.0));
    result.unwrap();
    ends_near(elapsed, 200);
    assert!(counters.files > 10, "{counters:?}");
    assert_eq!(counters.bytes, counters.files);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "a clean stop deletes every file"
    );

    // Paced: 50 files per second for 0.3 s, never ahead of the pace.
    let (result, counters, elapsed) = run(300, |ctx| ffi::iometadata(ctx, &c_dir, 0, 50.0));
    result.unwrap();
    assert!(
        (1..=due(50.0, elapsed)).contains(&counters.files),
        "{counters:?} in {elapsed:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();

    let missing = CString::new("/nonexistent/exp-anomaly").unwrap();
    let (result, _, _) = run(100, |ctx| ffi::iometadata(ctx, &missing, 0, 0.0));
    assert_eq!(result.unwrap_err().raw_os_error(), Some(libc::ENOENT));
}

#[test]
fn iobandwidth_writes_and_copies_at_its_pace() {
    let (dir, c_dir) = temp_dir("iobandwidth");
    // 256 KiB files at 16 Mbit/s (2 MB/s): a first file, then copies of it,
    // about 1 MB in 0.5 s on a quiet disk and never more than the pace
    // allows (plus the chunk in flight); a busy disk may allow only the
    // first file.
    let (result, counters, elapsed) = run(500, |ctx| ffi::iobandwidth(ctx, &c_dir, 1, 256 * 1024, 16_000_000));
    result.unwrap();
    ends_near(elapsed, 500);
    let most = (2e6 * elapsed.as_secs_f64()) as u64 + 256 * 1024;
    assert!(
        (256 * 1024..=most).contains(&counters.bytes),
        "{counters:?} in {elapsed:?}"
    );
    assert!(counters.iterations >= 1, "{counters:?}");
    assert_eq!(counters.files, 2, "{counters:?}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "a clean stop deletes both files"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
