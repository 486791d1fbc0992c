//! The few Linux system calls the delay stage needs that std does not wrap:
//! joining a network namespace, attaching a TUN device, waiting for a fd with
//! nanosecond timeouts and tightening the timer slack. Every `unsafe` block of
//! the emulation lives here.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

/// Moves the calling thread into the network namespace behind `ns`
/// (an open `/run/netns/NAME` or `/proc/PID/ns/net`). Only this thread
/// changes namespace; threads it spawns afterwards inherit it.
pub(crate) fn enter_net_namespace(ns: &File) -> io::Result<()> {
    // SAFETY: setns only reads the fd, which `ns` keeps open for the call.
    let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Creates (or attaches to) the TUN device `name` in the calling thread's
/// network namespace, in IP mode without the packet-information prefix, and
/// returns its non-blocking fd. The device lives as long as the fd.
pub(crate) fn open_tun(name: &str) -> io::Result<File> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {name:?}"),
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")?;
    // SAFETY: ifreq is plain old data (arrays, integers, a union of them);
    // all-zero is a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(bytes) {
        *slot = *byte as libc::c_char;
    }
    // IFF_TUN | IFF_NO_PI = 0x1001 fits a c_short.
    request.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads and writes one `struct ifreq`, which `request`
    // is, and it outlives the call; the fd is open.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, &mut request) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

/// Waits until `fd` is readable or `timeout` has passed; `Ok(true)` when
/// readable. Uses ppoll so the timeout keeps nanosecond resolution (poll's
/// milliseconds would quantise the emulated delays).
pub(crate) fn wait_readable(fd: &File, timeout: Duration) -> io::Result<bool> {
    let mut pollfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let spec = libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd and a valid timespec, both outliving the call;
    // a null sigmask leaves the signal mask unchanged.
    let rc = unsafe { libc::ppoll(&mut pollfd, 1, &spec, std::ptr::null()) };
    match rc {
        n if n > 0 => Ok(pollfd.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0),
        0 => Ok(false),
        _ => {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(err)
            }
        }
    }
}

/// Sets the calling thread's timer slack to 1 ns, so its timed waits end when
/// asked rather than up to the default 50 µs later.
pub(crate) fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches no
    // memory of ours. Failure only costs precision, so the result is ignored.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Raises the calling thread's scheduling priority (nice −10) so packets are
/// released on time while the endpoints and other processes keep the CPU
/// busy. Needs root, which the stage has; failure only costs precision.
pub(crate) fn raise_thread_priority() {
    // SAFETY: gettid has no arguments and cannot fail.
    let tid = unsafe { libc::gettid() };
    // SAFETY: setpriority takes plain integers; on Linux a tid selects one thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, -10);
    }
}
