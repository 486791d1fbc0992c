//! `file:` URIs and paths. The compiler names files by path; the protocol by
//! URI. Only `file:` URIs name files the compiler can read.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;

/// The path a `file:` URI names (`file:///a/b%20c.exp` → `/a/b c.exp`).
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // An authority other than the local host names another machine.
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(at) if rest[..at].eq_ignore_ascii_case("localhost") => &rest[at..],
        _ => return None,
    };
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = percent_decode(path)?;
    let text = String::from_utf8(bytes).ok()?;
    Some(PathBuf::from(text))
}

/// The `file:` URI of an absolute path.
pub fn from_path(path: &Path) -> Option<Uri> {
    let text = path.to_str()?;
    if !text.starts_with('/') {
        return None;
    }
    let mut uri = String::from("file://");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    Uri::from_str(&uri).ok()
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        let path = Path::new("/tmp/my specs/µ-gap #1.exp");
        let uri = from_path(path).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/my%20specs/%C2%B5-gap%20%231.exp");
        assert_eq!(to_path(&uri).unwrap(), path);
    }

    #[test]
    fn only_local_file_uris_name_paths() {
        let uri = |s: &str| Uri::from_str(s).unwrap();
        assert_eq!(to_path(&uri("file://localhost/a.exp")).unwrap(), Path::new("/a.exp"));
        assert_eq!(to_path(&uri("file://server/a.exp")), None);
        assert_eq!(to_path(&uri("untitled:Untitled-1")), None);
        assert_eq!(from_path(Path::new("relative.exp")), None);
    }
}
