//! /proc/diskstats: I/O counters per block device.

use std::path::Path;

use crate::{parse_error, parse_u64, read, HostError};

const PATH: &str = "/proc/diskstats";

/// /proc/diskstats counts sectors of 512 bytes whatever the device's real
/// sector size (Documentation/admin-guide/iostats.rst).
const SECTOR_BYTES: u64 = 512;

/// The counters of one block device, cumulative since boot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    /// Reads completed.
    pub reads: u64,
    pub sectors_read: u64,
    /// Writes completed.
    pub writes: u64,
    pub sectors_written: u64,
    /// Milliseconds the device had I/O in flight (`io_ticks`, field 10).
    pub io_ms: u64,
}

impl DiskStat {
    pub fn read_bytes(&self) -> u64 {
        self.sectors_read.saturating_mul(SECTOR_BYTES)
    }

    pub fn written_bytes(&self) -> u64 {
        self.sectors_written.saturating_mul(SECTOR_BYTES)
    }

    /// Every device line. Kernels print 14, 18 or 20 fields; the ones read
    /// here are in all of them.
    pub fn parse_all(text: &str) -> Result<Vec<Self>, HostError> {
        let mut disks = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let w: Vec<&str> = line.split_whitespace().collect();
            if w.len() < 14 {
                return Err(parse_error(
                    PATH,
                    format!("line `{line}` has {} fields, expected at least 14", w.len()),
                ));
            }
            let name = w[2];
            let field = |i: usize, what: &str| parse_u64(PATH, &format!("{name} {what}"), Some(w[i]));
            disks.push(DiskStat {
                major: u32::try_from(field(0, "major")?).map_err(|_| parse_error(PATH, format!("line `{line}`")))?,
                minor: u32::try_from(field(1, "minor")?).map_err(|_| parse_error(PATH, format!("line `{line}`")))?,
                name: name.to_string(),
                reads: field(3, "reads")?,
                sectors_read: field(5, "sectors read")?,
                writes: field(7, "writes")?,
                sectors_written: field(9, "sectors written")?,
                io_ms: field(12, "io_ticks")?,
            });
        }
        Ok(disks)
    }
}

pub fn diskstats() -> Result<Vec<DiskStat>, HostError> {
    DiskStat::parse_all(&read(PATH)?)
}

/// Whether the system sampler counts device `name` in its disk totals: a
/// whole disk that is not virtual. Partitions are left out because their
/// I/O is already in their disk's line, and virtual devices (loop, ram,
/// zram, device-mapper, md RAID) because their I/O is either not disk I/O
/// at all or reaches a real disk that is counted already. Whole disks are
/// the entries of /sys/block; virtual ones link under /sys/devices/virtual.
/// Without sysfs, a name rule excludes the virtual kinds but cannot tell a
/// partition from a disk, so partitions are then counted twice.
pub fn is_counted_disk(name: &str) -> bool {
    let sys_block = Path::new("/sys/block");
    if !sys_block.is_dir() {
        return !is_virtual_name(name);
    }
    // Names with `/` (cciss!c0d0 shows as `cciss/c0d0`) appear in sysfs with `!`.
    match std::fs::canonicalize(sys_block.join(name.replace('/', "!"))) {
        Ok(target) => !target.starts_with("/sys/devices/virtual"),
        Err(_) => false,
    }
}

fn is_virtual_name(name: &str) -> bool {
    ["loop", "ram", "zram", "dm-", "md", "nbd"]
        .iter()
        .any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From a VM on a 6.18 kernel (20 fields).
    const FIXTURE: &str = "\
   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 131807 8187 8082538 249085 19694 58113 14429352 71109 0 20960 323544 17175 41 6709712 3306 412 42
 254       1 vda1 1200 3 40000 100 30 2 900 20 0 110 130 0 0 0 0 0 0
 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
";

    #[test]
    fn parses_the_fixture() {
        let disks = DiskStat::parse_all(FIXTURE).unwrap();
        assert_eq!(disks.len(), 4);
        let vda = &disks[1];
        assert_eq!((vda.major, vda.minor, vda.name.as_str()), (254, 0, "vda"));
        assert_eq!((vda.reads, vda.writes, vda.io_ms), (131807, 19694, 20960));
        assert_eq!(vda.read_bytes(), 8082538 * 512);
        assert_eq!(vda.written_bytes(), 14429352 * 512);
    }

    #[test]
    fn fourteen_field_lines_from_old_kernels() {
        let disks = DiskStat::parse_all("   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n").unwrap();
        assert_eq!((disks[0].reads, disks[0].sectors_written, disks[0].io_ms), (1, 7, 10));
    }

    #[test]
    fn damage_is_an_error() {
        assert!(DiskStat::parse_all("8 0 sda 1 2 3\n").is_err());
        assert!(DiskStat::parse_all("8 0 sda 1 2 3 4 5 6 x 8 9 10 11\n").is_err());
    }

    #[test]
    fn virtual_names() {
        assert!(is_virtual_name("loop3") && is_virtual_name("dm-0") && is_virtual_name("zram0"));
        assert!(!is_virtual_name("sda") && !is_virtual_name("nvme0n1") && !is_virtual_name("vda"));
    }

    #[test]
    fn this_machine_counts_no_loop_device() {
        for disk in diskstats().unwrap() {
            if disk.name.starts_with("loop") {
                assert!(!is_counted_disk(&disk.name), "{}", disk.name);
            }
        }
    }
}
