//! The few socket and process calls tokio does not expose: TCP_INFO,
//! SO_RCVBUF/SO_SNDBUF on an accepted stream, and the open-files limit.
//!
//! Buffer sizes: Linux doubles the value given to `setsockopt(SO_RCVBUF)`
//! (and `SO_SNDBUF`) to leave room for its bookkeeping, and reports the
//! doubled value back from `getsockopt`; of a receive buffer, roughly half
//! (`tcp_adv_win_scale`, or the measured `scaling_ratio` on kernels ≥ 6.7)
//! is advertised as window. Setting `w` therefore yields an advertised
//! window of about `w`, which is what a trace's `w` line records. Setting
//! either option also turns off the kernel's buffer autotuning for that
//! socket, so the window stays fixed for the connection's life.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::RawFd;

/// The kernel's view of a connection when it closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcpInfo {
    /// Smoothed RTT, microseconds.
    pub rtt_us: u32,
    /// RTT variance, microseconds.
    pub rttvar_us: u32,
    /// Retransmitted segments over the connection's life.
    pub total_retrans: u32,
}

/// `getsockopt(TCP_INFO)`.
pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    // SAFETY: tcp_info is a plain C struct of integers, valid when zeroed.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` is a live, writable buffer of `len` bytes; the kernel
    // writes at most `len` bytes and updates `len`. `fd` is borrowed from a
    // socket the caller keeps open for the duration of the call.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpInfo {
        rtt_us: info.tcpi_rtt,
        rttvar_us: info.tcpi_rttvar,
        total_retrans: info.tcpi_total_retrans,
    })
}

fn set_int_option(fd: RawFd, name: libc::c_int, value: u32) -> io::Result<()> {
    let value = libc::c_int::try_from(value).unwrap_or(libc::c_int::MAX);
    // SAFETY: passes a pointer to a live c_int and its exact size; `fd` is a
    // socket the caller keeps open for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `setsockopt(SO_RCVBUF, bytes)`; the kernel doubles it (module docs).
pub fn set_recv_buffer(fd: RawFd, bytes: u32) -> io::Result<()> {
    set_int_option(fd, libc::SO_RCVBUF, bytes)
}

/// `setsockopt(SO_SNDBUF, bytes)`; the kernel doubles it (module docs).
pub fn set_send_buffer(fd: RawFd, bytes: u32) -> io::Result<()> {
    set_int_option(fd, libc::SO_SNDBUF, bytes)
}

fn get_nofile() -> io::Result<libc::rlimit> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a live, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(limit)
}

fn set_nofile(soft: u64, hard: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: soft as libc::rlim_t,
        rlim_max: hard as libc::rlim_t,
    };
    // SAFETY: passes a pointer to a live rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Raises the soft open-files limit to the hard limit, and when `wanted`
/// exceeds the hard limit tries to raise that too (possible with
/// CAP_SYS_RESOURCE, up to `fs.nr_open`; without it the hard limit stays).
/// Returns the soft limit now in force.
pub fn raise_nofile(wanted: u64) -> io::Result<u64> {
    let current = get_nofile()?;
    let hard = current.rlim_max as u64;
    if wanted > hard {
        let ceiling = exp_host::nr_open().unwrap_or(hard);
        let target = wanted.min(ceiling);
        if target > hard && set_nofile(target, target).is_ok() {
            return Ok(target);
        }
    }
    if (current.rlim_cur as u64) < hard {
        set_nofile(hard, hard)?;
    }
    Ok(get_nofile()?.rlim_cur as u64)
}
