//! What every check of a plan before a run shares: the facts of the host a
//! kind's check may look at ([`Host`]), what a check finds ([`Finding`]),
//! how a number outside its bounds is said, and the probes of the file
//! system (`writable_dir`, `check_disk`). A leaf: it imports no module of
//! this crate, so the kinds' checks (`<kind>/check.rs`), the plan's limits
//! (`plan_limits.rs`) and the orchestrator (`preflight/`) all read it
//! without a loop.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use exp_diagnostics::limits::SHAPE_RANGE;
use exp_diagnostics::{Code, Diagnostic};
use exp_plan::DistValue;

/// What a workload kind's preflight may look at besides its workload.
pub(crate) struct Host<'a> {
    pub online_cpus: &'a BTreeSet<u32>,
    /// Directory that relative paths are resolved against.
    pub spec_dir: &'a Path,
    /// A variant as compiled (`true`), or a field's value set into a copy
    /// of one: what no field can change (a fleet's broker) was checked then.
    pub first_look: bool,
}

/// A problem a check found: a key naming it across variants (each is
/// reported once), and its diagnostic.
pub(crate) type Finding = (String, Diagnostic);

/// The help of a problem only a plan written or changed by hand has.
pub(crate) const COMPILED_ONLY: &str = "a compiled plan never has this: compile the spec again, or fix the plan";

/// Each number outside its inclusive bounds (NaN included), as `kind
/// `name`: `property` is …, outside … to …`.
pub(crate) fn out_of_bounds<'a>(
    code: Code,
    kind: &'a str,
    name: &'a str,
    numbers: impl IntoIterator<Item = (&'static str, f64, (f64, f64))> + 'a,
) -> impl Iterator<Item = Finding> + 'a {
    numbers
        .into_iter()
        .filter(|(_, value, (min, max))| !(*value >= *min && *value <= *max))
        .map(move |(property, value, (min, max))| {
            (
                format!("{property} {name}"),
                Diagnostic::error(
                    code,
                    format!("{kind} `{name}`: `{property}` is {value}, outside {min} to {max}"),
                )
                .help(COMPILED_ONLY),
            )
        })
}

/// A distribution's shape with the bounds the language gives every shape
/// (`SHAPE_RANGE`, beyond which draws underflow or overflow), for
/// [`out_of_bounds`]; `None` for a family without one.
pub(crate) fn shape(property: &'static str, dist: &DistValue) -> Option<(&'static str, f64, (f64, f64))> {
    dist.dist.shape().map(|shape| (property, shape, SHAPE_RANGE))
}

/// Whether `dir`'s file system has `need` bytes free.
pub(crate) fn check_disk(dir: &Path, need: u64, what: &str) -> Option<Finding> {
    let free = exp_host::disk_free_bytes(dir).ok()?;
    (need > free).then(|| {
        (
            format!("disk {what}"),
            Diagnostic::error(
                Code::E1002,
                format!(
                    "{what} needs {} on {} but {} is free",
                    bytes(need),
                    dir.display(),
                    bytes(free)
                ),
            )
            .help("free space, choose another directory, or lower `file_size`/`ntasks`"),
        )
    })
}

/// `path` relative to `base` unless absolute.
pub(crate) fn resolve(base: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// Why a directory cannot take files: what the checks' findings say after
/// the directory's name.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotWritable {
    #[error("{} is a file, not a directory", .0.display())]
    IsAFile(PathBuf),
    #[error("no such directory")]
    Missing,
    /// Creating the probe file failed (permissions, a read-only file system).
    #[error("{0}")]
    Probe(std::io::Error),
}

/// A directory we can create files in (probed by creating and removing one).
pub(crate) fn writable_dir(dir: &Path) -> Result<(), NotWritable> {
    if dir.exists() && !dir.is_dir() {
        return Err(NotWritable::IsAFile(dir.to_path_buf()));
    }
    if !dir.is_dir() {
        return Err(NotWritable::Missing);
    }
    let probe = dir.join(format!(".expc-preflight-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(NotWritable::Probe)?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// A size in binary units, for messages.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_well() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 * 1024 * 1024 * 1024 / 2), "1.5 GiB");
    }
}
