//! Bounds the language and the runtime both hold plan values to, declared
//! once: exp-check's registry gives them to specs, and the runtime checks
//! plan files against them (a plan may be written by hand).
//! `crates/expc/tests/plan_bounds.rs` walks every registry bound and
//! expects a plan file just outside it to be refused.

/// The CPU numbers an anomaly's threads may be pinned to (Linux's
/// `CPU_SETSIZE`, 4096 CPUs).
pub const ANOMALY_CORES: (f64, f64) = (0.0, 4095.0);

/// cachecopy's array size relative to the cache.
pub const CACHECOPY_MULTIPLIER: (f64, f64) = (0.01, 64.0);

/// The least buffer, step or file an anomaly works with, in bytes.
pub const ANOMALY_MIN_BYTES: f64 = 4096.0;

/// memeater's shortest time between growth steps, in ns.
pub const MEMEATER_MIN_INTERVAL_NS: f64 = 1e6;

/// memleak's steps per second.
pub const MEMLEAK_RATE_PER_S: (f64, f64) = (0.001, 10_000.0);

/// The slowest iometadata rate, per second and worker.
pub const IOMETADATA_MIN_RATE_PER_S: f64 = 0.001;

/// Workers or sender/sink pairs of an I/O or network anomaly.
pub const ANOMALY_TASKS: (f64, f64) = (1.0, 1024.0);

/// A TCP port.
pub const PORT: (f64, f64) = (1.0, 65535.0);

/// The paths of `paths(count = …)`.
pub const PATHS: (f64, f64) = (1.0, 4_294_967_295.0);

/// The least receiver window a connection is given, in bytes.
pub const RECEIVER_WINDOW_MIN_BYTES: f64 = 256.0;
