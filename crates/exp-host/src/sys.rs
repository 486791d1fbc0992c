//! The few facts that need libc calls: page size, clock tick rate, free
//! disk space and an interface's offloads, and reserving disk space. This
//! is the crate's only unsafe code.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::HostError;

/// The kernel's page size in bytes (`/proc/<pid>/statm` counts pages).
/// Falls back to 4096, the page size of x86-64 and most arm64 kernels, only
/// if sysconf reports none.
pub fn page_size() -> u64 {
    // SAFETY: sysconf takes no pointers and has no preconditions; it returns
    // -1 for an unknown name, which is handled below.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

/// Clock ticks per second (`USER_HZ`), the unit of `utime`/`stime` in
/// `/proc/<pid>/stat` and of the jiffies in `/proc/stat`. Falls back to 100,
/// the value on every mainstream Linux architecture, if sysconf reports none.
pub fn clock_ticks_per_s() -> u64 {
    // SAFETY: as for `page_size`.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|&t| t > 0).unwrap_or(100)
}

/// CPU time of this process (every thread, ended ones included) in
/// nanoseconds, from `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`: exact to the
/// scheduler's accounting, where /proc/self/stat counts 10 ms ticks.
pub fn process_cputime_ns() -> Option<u64> {
    let mut ts = MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: `ts` is a valid, writable timespec for the call; the return
    // value says whether it was written.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, ts.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: clock_gettime returned 0, so it initialised `ts`.
    let ts = unsafe { ts.assume_init() };
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u64::try_from(ts.tv_nsec).ok()?;
    Some(secs.saturating_mul(1_000_000_000).saturating_add(nanos))
}

/// Makes `file` at least `len` bytes long with its blocks allocated (not a
/// hole), without writing them: disk space taken now so that a full disk
/// later cannot refuse it. `posix_fallocate`, which the C library emulates
/// by writing where the file system cannot allocate.
pub fn allocate(file: &std::fs::File, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(len).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: the descriptor is open for as long as `file` is borrowed;
    // posix_fallocate takes no pointers and returns an error number.
    match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) } {
        0 => Ok(()),
        errno => Err(std::io::Error::from_raw_os_error(errno)),
    }
}

/// Bytes free to an unprivileged user on the file system holding `path`
/// (`f_bavail × f_frsize`: the blocks reserved for root are not counted,
/// since the run does not write as root).
pub fn disk_free_bytes(path: &Path) -> Result<u64, HostError> {
    let error = |source| HostError::StatFs {
        path: path.display().to_string(),
        source,
    };
    let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        error(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the path contains a NUL byte",
        ))
    })?;
    let mut stats = MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the
    // call, and `stats` is writable memory of the size statvfs fills.
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), stats.as_mut_ptr()) };
    if rc != 0 {
        return Err(error(std::io::Error::last_os_error()));
    }
    // SAFETY: statvfs returned 0, so it initialised the whole struct.
    let stats = unsafe { stats.assume_init() };
    #[allow(clippy::useless_conversion)] // the field types are u32 on some 32-bit targets
    Ok(u64::from(stats.f_bavail).saturating_mul(u64::from(stats.f_frsize)))
}

/// A legacy ethtool query answered with one number (`ETHTOOL_G*` in
/// linux/ethtool.h); every driver answers these, where the feature-string
/// interface would need a netlink client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EthtoolGet {
    RxChecksum = 0x14,
    TxChecksum = 0x16,
    ScatterGather = 0x18,
    Tso = 0x1e,
    Gso = 0x23,
    Flags = 0x25,
    Gro = 0x2b,
}

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// The answer of `interface` to `get` (`SIOCETHTOOL` on a datagram
/// socket; reading needs no privilege), `None` if the driver does not say
/// or the name is not an interface's.
pub(crate) fn ethtool_value(interface: &str, get: EthtoolGet) -> Option<u32> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let name = interface.as_bytes();
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
        return None;
    }
    // SAFETY: socket takes no pointers; a negative result is an error.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` is a descriptor just opened and owned by nothing else.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut value = EthtoolValue {
        cmd: get as u32,
        data: 0,
    };
    // SAFETY: ifreq is plain data (a name and a union of integers and
    // pointers), for which all zeroes is a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, &byte) in request.ifr_name.iter_mut().zip(name) {
        *slot = byte as libc::c_char;
    }
    request.ifr_ifru.ifru_data = std::ptr::addr_of_mut!(value).cast::<libc::c_char>();
    // SAFETY: the request holds a NUL-terminated name and a pointer to
    // `value`, which lives across the call; SIOCETHTOOL writes only
    // `value.data` for these commands.
    let rc = unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCETHTOOL as _, &mut request) };
    (rc == 0).then_some(value.data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_plausible() {
        let page = page_size();
        assert!(page.is_power_of_two() && page >= 4096, "{page}");
        assert!((10..=10_000).contains(&clock_ticks_per_s()));
    }

    #[test]
    fn loopback_answers_ethtool_and_a_bad_name_does_not() {
        assert!(ethtool_value("lo", EthtoolGet::Tso).is_some());
        assert_eq!(ethtool_value("no-such-if0", EthtoolGet::Tso), None);
        assert_eq!(ethtool_value("a-name-far-too-long", EthtoolGet::Tso), None);
    }

    #[test]
    fn free_space_of_the_temp_dir() {
        assert!(disk_free_bytes(&std::env::temp_dir()).unwrap() > 0);
    }

    #[test]
    fn a_missing_path_is_an_error() {
        let err = disk_free_bytes(Path::new("/no/such/dir/expc")).unwrap_err();
        assert!(matches!(&err, HostError::StatFs { source, .. } if source.kind() == std::io::ErrorKind::NotFound));
        assert!(err.to_string().contains("/no/such/dir/expc"), "{err}");
    }
}
