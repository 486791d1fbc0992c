//! The private map file (`map.json`), kept outside the shared set directory.

use std::fs;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use super::ObfuscationMap;
use crate::XmlError;

/// File name of the map inside the private directory.
pub const MAP_FILE: &str = "map.json";

pub(crate) const MAP_VERSION: u32 = 1;

/// Writes `map` to `private_dir/map.json` (directory created if needed;
/// on Unix the file is readable by its owner only). Refuses, with
/// [`XmlError::MapInsideSet`], a `private_dir` equal to or inside `set_dir`
/// — symbolic links and `..` resolved. Returns the file's path.
pub fn write_map(map: &ObfuscationMap, private_dir: &Path, set_dir: &Path) -> Result<PathBuf, XmlError> {
    let io = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| XmlError::Io { action, path, source }
    };
    let (map_abs, set_abs) = (resolve(private_dir)?, resolve(set_dir)?);
    if map_abs.starts_with(&set_abs) {
        return Err(XmlError::MapInsideSet {
            map_dir: private_dir.to_path_buf(),
            set_dir: set_dir.to_path_buf(),
        });
    }
    fs::create_dir_all(private_dir).map_err(io("create directory", private_dir))?;
    let path = private_dir.join(MAP_FILE);
    let json = serde_json::to_vec_pretty(map).map_err(|source| XmlError::Json {
        action: "write",
        path: path.clone(),
        source,
    })?;
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path).map_err(io("create", &path))?;
    file.write_all(&json).map_err(io("write", &path))?;
    Ok(path)
}

/// Reads a map from a `map.json` file or a directory holding one.
pub fn read_map(path: &Path) -> Result<ObfuscationMap, XmlError> {
    let file = if path.is_dir() {
        path.join(MAP_FILE)
    } else {
        path.to_path_buf()
    };
    let text = exp_files::read_bytes(&file, crate::MAX_SET_FILE_BYTES).map_err(|e| XmlError::Io {
        action: "read",
        path: file.clone(),
        source: e.into(),
    })?;
    let map: ObfuscationMap = serde_json::from_slice(&text).map_err(|source| XmlError::Json {
        action: "parse",
        path: file.clone(),
        source,
    })?;
    if map.version > MAP_VERSION {
        return Err(XmlError::SetFormat {
            path: file,
            message: format!("map version {} is newer than this program's {MAP_VERSION}", map.version),
        });
    }
    Ok(map)
}

/// The absolute path, `.`/`..` applied lexically, with symbolic links
/// resolved in the part that exists (the rest may be created later).
fn resolve(path: &Path) -> Result<PathBuf, XmlError> {
    let cwd = std::env::current_dir().map_err(|source| XmlError::Io {
        action: "resolve",
        path: path.to_path_buf(),
        source,
    })?;
    let mut lexical = PathBuf::new();
    for component in cwd.join(path).components() {
        match component {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.as_path();
    let mut missing = Vec::new();
    let base = loop {
        if let Ok(canonical) = existing.canonicalize() {
            break canonical;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                existing = parent;
            }
            _ => break existing.to_path_buf(),
        }
    };
    Ok(missing.iter().rev().fold(base, |out, name| out.join(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_handles_missing_tails() {
        let tmp = std::env::temp_dir();
        let base = tmp.canonicalize().expect("tmp");
        let r = resolve(&tmp.join("no-such-dir-x1/a/../b")).expect("resolve");
        assert_eq!(r, base.join("no-such-dir-x1/b"));
    }
}
