//! Every `unsafe` of the crate: calls into the C kernels of `runtime-c/`, and
//! the few libc calls std does not wrap (prctl, sigaction, sched_setaffinity,
//! kill, wait4, sysconf, clock_gettime). Each function here is safe to call;
//! the rest of the crate never sees a raw pointer.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, CStr};
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::counters::KernelCounters;

/// What a kernel call needs besides its knobs: the C side's `struct expk_ctx`,
/// with borrows instead of pointers so the borrow checker keeps the flag and
/// counters alive for the whole call.
pub(crate) struct Ctx<'a> {
    pub stop: &'a AtomicU32,
    /// CLOCK_MONOTONIC nanoseconds ([`monotonic_ns`]); 0: no deadline.
    pub deadline_ns: u64,
    pub counters: &'a KernelCounters,
    pub seed: u64,
}

impl Ctx<'_> {
    /// Stop flag set or deadline passed: the Rust kernels' version of `expk_stopped`.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0 || (self.deadline_ns != 0 && monotonic_ns() >= self.deadline_ns)
    }
}

#[repr(C)]
struct RawCtx {
    stop: *const AtomicU32,
    deadline_ns: u64,
    counters: *const KernelCounters,
    seed: u64,
}

impl Ctx<'_> {
    fn raw(&self) -> RawCtx {
        RawCtx {
            stop: self.stop,
            deadline_ns: self.deadline_ns,
            counters: self.counters,
            seed: self.seed,
        }
    }
}

/// The C side's `struct expk_stream_result`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct StreamResult {
    pub bytes: u64,
    pub wall_ns: u64,
    pub cpu_ns: u64,
    pub passes: u64,
}

extern "C" {
    fn expk_cpuoccupy(ctx: *const RawCtx, utilization: f64, period_ns: u64) -> c_int;
    fn expk_cachecopy(ctx: *const RawCtx, array_bytes: u64, rate: f64, period_ns: u64) -> c_int;
    fn expk_membw(ctx: *const RawCtx, buffer_bytes: u64, rate: f64, period_ns: u64) -> c_int;
    fn expk_memeater(ctx: *const RawCtx, step_bytes: u64, interval_ns: u64, limit_bytes: u64) -> c_int;
    fn expk_memleak(ctx: *const RawCtx, size_bytes: u64, rate_per_s: f64, limit_bytes: u64) -> c_int;
    fn expk_iometadata(ctx: *const RawCtx, dir: *const c_char, worker: u32, rate_per_s: f64) -> c_int;
    fn expk_iobandwidth(
        ctx: *const RawCtx,
        dir: *const c_char,
        worker: u32,
        file_bytes: u64,
        bandwidth_bit_per_s: u64,
    ) -> c_int;
    fn expk_stream_copy(ctx: *const RawCtx, array_bytes: u64, run_ns: u64, out: *mut StreamResult) -> c_int;
}

/// Kernels return 0 or a positive errno value.
fn check(code: c_int) -> io::Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(code))
    }
}

// The kernel calls below share one argument: `raw` holds pointers to the
// stop flag and counters that `ctx` borrows for the whole synchronous call;
// the kernel only loads the flag and updates the counters with atomic
// operations (so Rust may read them concurrently), and keeps no pointer
// after it returns. Each block states what else it relies on.

pub(crate) fn cpuoccupy(ctx: &Ctx<'_>, utilization: f64, period_ns: u64) -> io::Result<()> {
    let raw = ctx.raw();
    // SAFETY: `raw` borrows live atomics (note above); the other arguments are plain values.
    check(unsafe { expk_cpuoccupy(&raw, utilization, period_ns) })
}

pub(crate) fn cachecopy(ctx: &Ctx<'_>, array_bytes: u64, rate: f64, period_ns: u64) -> io::Result<()> {
    let raw = ctx.raw();
    // SAFETY: `raw` borrows live atomics (note above); sizes are checked in C before any allocation.
    check(unsafe { expk_cachecopy(&raw, array_bytes, rate, period_ns) })
}

pub(crate) fn membw(ctx: &Ctx<'_>, buffer_bytes: u64, rate: f64, period_ns: u64) -> io::Result<()> {
    let raw = ctx.raw();
    // SAFETY: `raw` borrows live atomics (note above); sizes are checked in C before any allocation.
    check(unsafe { expk_membw(&raw, buffer_bytes, rate, period_ns) })
}

pub(crate) fn memeater(ctx: &Ctx<'_>, step_bytes: u64, interval_ns: u64, limit_bytes: u64) -> io::Result<()> {
    let raw = ctx.raw();
    // SAFETY: `raw` borrows live atomics (note above); sizes are checked in C before any allocation.
    check(unsafe { expk_memeater(&raw, step_bytes, interval_ns, limit_bytes) })
}

pub(crate) fn memleak(ctx: &Ctx<'_>, size_bytes: u64, rate_per_s: f64, limit_bytes: u64) -> io::Result<()> {
    let raw = ctx.raw();
    // SAFETY: `raw` borrows live atomics (note above); sizes are checked in C before any allocation.
    check(unsafe { expk_memleak(&raw, size_bytes, rate_per_s, limit_bytes) })
}

pub(crate) fn iometadata(ctx: &Ctx<'_>, dir: &CStr, worker: u32, rate_per_s: f64) -> io::Result<()> {
    let raw = ctx.raw();
    // SAFETY: `raw` borrows live atomics (note above); `dir` is a `&CStr`, NUL-terminated and
    // alive for the call, and the kernel only reads it.
    check(unsafe { expk_iometadata(&raw, dir.as_ptr(), worker, rate_per_s) })
}

pub(crate) fn iobandwidth(ctx: &Ctx<'_>, dir: &CStr, worker: u32, file_bytes: u64, bandwidth: u64) -> io::Result<()> {
    let raw = ctx.raw();
    // SAFETY: `raw` borrows live atomics (note above); `dir` is a `&CStr`, NUL-terminated and
    // alive for the call, and the kernel only reads it.
    check(unsafe { expk_iobandwidth(&raw, dir.as_ptr(), worker, file_bytes, bandwidth) })
}

pub(crate) fn stream_copy(ctx: &Ctx<'_>, array_bytes: u64, run_ns: u64) -> io::Result<StreamResult> {
    let raw = ctx.raw();
    let mut out = StreamResult::default();
    // SAFETY: `raw` borrows live atomics (note above); `out` is a live, exclusive
    // `#[repr(C)]` struct matching `struct expk_stream_result`, which the kernel fills.
    check(unsafe { expk_stream_copy(&raw, array_bytes, run_ns, &mut out) })?;
    Ok(out)
}

// ---- process and thread control ---------------------------------------------

/// Set by SIGTERM and SIGINT in the child; every kernel polls it.
static STOP: AtomicU32 = AtomicU32::new(0);

pub(crate) fn stop_flag() -> &'static AtomicU32 {
    &STOP
}

extern "C" fn on_stop_signal(_signal: c_int) {
    // An atomic store is async-signal-safe; nothing else happens here.
    STOP.store(1, Ordering::Relaxed);
}

/// SIGTERM and SIGINT set [`stop_flag`] instead of ending the process, so the
/// kernels can stop cleanly and the last counters get reported.
pub(crate) fn install_stop_handlers() -> io::Result<()> {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value;
        // sigemptyset initialises the mask it is given; the handler is an
        // `extern "C" fn(c_int)` that only stores to an atomic, which is
        // async-signal-safe; SA_RESTART keeps blocking reads from failing.
        let result = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_stop_signal as extern "C" fn(c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if result != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The calling process gets SIGKILL when the thread that forked it exits.
pub(crate) fn set_parent_death_signal() -> io::Result<()> {
    let signal = libc::c_ulong::try_from(libc::SIGKILL).unwrap_or(9);
    // SAFETY: PR_SET_PDEATHSIG takes one integer argument; no pointers involved.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Restricts the calling thread to `cpus`.
pub(crate) fn pin_current_thread(cpus: &[u32]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data for which all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &cpu in cpus {
        let index = usize::try_from(cpu).unwrap_or(usize::MAX);
        if index >= capacity {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `index` is below the set's capacity, checked above.
        unsafe { libc::CPU_SET(index, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the size passed.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    Term,
    Kill,
}

fn to_pid(pid: u32) -> io::Result<libc::pid_t> {
    // Never 0 or negative: those would signal process groups.
    match libc::pid_t::try_from(pid) {
        Ok(pid) if pid > 0 => Ok(pid),
        _ => Err(io::Error::from_raw_os_error(libc::EINVAL)),
    }
}

pub(crate) fn send_signal(pid: u32, signal: Signal) -> io::Result<()> {
    let pid = to_pid(pid)?;
    let number = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill takes plain integers; `pid` is positive, so exactly one process.
    if unsafe { libc::kill(pid, number) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitStatus {
    Exited(i32),
    Signaled(i32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reaped {
    pub status: WaitStatus,
    /// User + system CPU time of the whole child, all its threads, from rusage.
    pub cpu_time_ns: u64,
}

/// Reaps `pid` if it has ended (or, with `block`, once it has). `None`: still running.
pub(crate) fn wait(pid: u32, block: bool) -> io::Result<Option<Reaped>> {
    let pid = to_pid(pid)?;
    let options = if block { 0 } else { libc::WNOHANG };
    loop {
        let mut status: c_int = 0;
        let mut usage = MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `status` and `usage` are valid, writable and live for the call.
        let result = unsafe { libc::wait4(pid, &mut status, options, usage.as_mut_ptr()) };
        if result < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        if result == 0 {
            return Ok(None);
        }
        // SAFETY: wait4 filled `usage` (it was zeroed before, so fully initialised either way).
        let usage = unsafe { usage.assume_init() };
        let status = if libc::WIFSIGNALED(status) {
            WaitStatus::Signaled(libc::WTERMSIG(status))
        } else {
            WaitStatus::Exited(libc::WEXITSTATUS(status))
        };
        let cpu_time_ns = timeval_ns(usage.ru_utime).saturating_add(timeval_ns(usage.ru_stime));
        return Ok(Some(Reaped { status, cpu_time_ns }));
    }
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u64::try_from(tv.tv_usec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(micros * 1000)
}

/// CLOCK_MONOTONIC in nanoseconds: the clock of the kernels' deadlines.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } != 0 {
        return 0;
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}
