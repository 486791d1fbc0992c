//! The data files a spec reads (a trace, an empirical distribution's
//! values, a corpus or synthesis set, TLS files) pinned in its snapshot by
//! content, so a changed trace shows as a changed plan input: the
//! snapshot's `data_files` maps each path, as the plan names it (relative
//! to the spec's folder), to the SHA-256 of its bytes. A directory (a
//! corpus, a set) hashes the sorted list of its regular files' relative
//! paths and hashes; a glob is not expanded here (`glob, not hashed`); a
//! path that is not there is `missing` (a trace not shipped with the spec).
//! Specs that read no file have no `data_files`, so their snapshots are
//! the plan's alone.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

/// The plan keys whose string values are files or directories the run reads.
const PATH_KEYS: [&str; 6] = ["file", "corpus", "set", "ca_file", "client_cert", "client_key"];

/// Most files a directory's hash covers; a larger one is said, not hashed.
const MAX_DIRECTORY_FILES: usize = 10_000;

/// The snapshot text of `plan` with its data files' hashes, paths resolved
/// against `dir` (the folder the plan's relative paths start from).
pub fn snapshot_text(plan: &exp_plan::Plan, dir: &Path) -> String {
    let mut snapshot = exp_plan::snapshot::to_snapshot(plan);
    let mut paths = Vec::new();
    collect(&snapshot, &mut paths);
    let hashes: BTreeMap<String, Json> = paths
        .into_iter()
        .map(|path| {
            let hash = hash_path(&dir.join(&path));
            (path, Json::String(hash))
        })
        .collect();
    if let (Json::Object(map), false) = (&mut snapshot, hashes.is_empty()) {
        map.insert(
            exp_plan::snapshot::DATA_FILES.into(),
            Json::Object(hashes.into_iter().collect()),
        );
    }
    serde_json::to_string_pretty(&snapshot).unwrap_or_default() + "\n"
}

fn collect(value: &Json, out: &mut Vec<String>) {
    match value {
        Json::Object(map) => {
            for (key, child) in map {
                match child {
                    Json::String(path) if PATH_KEYS.contains(&key.as_str()) && !path.is_empty() => {
                        out.push(path.clone());
                    }
                    _ => collect(child, out),
                }
            }
        }
        Json::Array(items) => items.iter().for_each(|item| collect(item, out)),
        _ => {}
    }
}

fn hash_path(path: &Path) -> String {
    if path.to_string_lossy().contains(['*', '?', '[']) {
        return "glob, not hashed".into();
    }
    match std::fs::metadata(path) {
        Err(_) => "missing".into(),
        Ok(m) if m.is_dir() => hash_directory(path),
        Ok(_) => hash_file(path).unwrap_or_else(|e| format!("unreadable: {e}")),
    }
}

/// SHA-256 of a regular file's bytes, read in blocks (a corpus file may be
/// larger than memory should hold).
fn hash_file(path: &Path) -> Result<String, String> {
    let mut file = exp_files::open_regular(path).map_err(|e| e.to_string())?.file;
    let mut hasher = Sha256::new();
    let mut block = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut block).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        hasher.update(&block[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

fn hash_directory(dir: &Path) -> String {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            return format!("unreadable directory {}", next.display());
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => pending.push(path),
                Ok(t) if t.is_file() => files.push(path),
                _ => {}
            }
            if files.len() > MAX_DIRECTORY_FILES {
                return format!("more than {MAX_DIRECTORY_FILES} files, not hashed");
            }
        }
    }
    let mut listing: Vec<String> = files
        .iter()
        .map(|file| {
            let name = file.strip_prefix(dir).unwrap_or(file).to_string_lossy().into_owned();
            let hash = hash_file(file).unwrap_or_else(|e| format!("unreadable: {e}"));
            format!("{name} {hash}\n")
        })
        .collect();
    listing.sort();
    format!("directory {:x}", Sha256::digest(listing.concat().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_path_a_plan_reads() {
        let plan = serde_json::json!({
            "workloads": [{"variants": [{"config": {"traffic": {"vectors": {"trace": {"file": "a.cvec", "format": "auto"}}}}},
                {"config": {"xml": {"corpus": "corpus/", "set": null}}}]}],
            "broker": {"ca_file": "ca.pem", "client_cert": null}, "file_count": 3
        });
        let mut paths = Vec::new();
        collect(&plan, &mut paths);
        assert_eq!(paths, ["a.cvec", "corpus/", "ca.pem"]);
    }

    #[test]
    fn hashes_files_and_directories_by_content() {
        let dir = std::env::temp_dir().join(format!("expc-data-files-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("corpus/sub")).unwrap();
        std::fs::write(dir.join("a.cvec"), "abc").unwrap();
        std::fs::write(dir.join("corpus/sub/x.xml"), "<x/>").unwrap();
        assert_eq!(
            hash_path(&dir.join("a.cvec")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let before = hash_path(&dir.join("corpus"));
        assert!(before.starts_with("directory "), "{before}");
        std::fs::write(dir.join("corpus/sub/x.xml"), "<y/>").unwrap();
        assert_ne!(hash_path(&dir.join("corpus")), before);
        assert_eq!(hash_path(&dir.join("nothing.cvec")), "missing");
        assert_eq!(hash_path(&dir.join("corpus/*.xml")), "glob, not hashed");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
