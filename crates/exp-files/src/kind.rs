//! What a file is, in the words an error message uses.

use std::fs::FileType;
use std::os::unix::fs::FileTypeExt;

/// "a directory", "a FIFO", "a character device"…, for messages such as
/// "not a regular file but a FIFO".
pub fn describe(kind: &FileType) -> &'static str {
    if kind.is_file() {
        "a regular file"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// `12,345,678`: a byte count as the compiler's messages write it.
pub(crate) fn group(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `16 MiB`, `64 KiB`, `1 GiB`, else the bytes grouped: a cap as written
/// in the docs.
pub(crate) fn binary(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{} bytes", group(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_written_as_the_docs_write_them() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(17_825_792), "17,825,792");
        assert_eq!(binary(16 << 20), "16 MiB");
        assert_eq!(binary(4 << 10), "4 KiB");
        assert_eq!(binary(1 << 30), "1 GiB");
        assert_eq!(binary(1500), "1,500 bytes");
    }

    #[test]
    fn kinds_are_named() {
        let kind = |path: &str| describe(&std::fs::symlink_metadata(path).expect("exists").file_type());
        assert_eq!(kind("/dev/null"), "a character device");
        assert_eq!(kind("/"), "a directory");
    }
}
