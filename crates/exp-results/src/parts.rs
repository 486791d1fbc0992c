//! What the processes writing parts of one run agree on: shards (`--shard
//! K/N`) or split parts (`--split K/N`), how many, the plan, and the options
//! that change what a trial does. The first process to join a run records
//! them in `parts.json`; every later one (on any host) compares and is
//! refused on any difference, before it writes anything. Without this, a
//! part started with another N runs some devices twice and others never,
//! and shards run at different time scales merge as one `complete` run.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ResultsError;

/// The file in the run directory that records the agreement.
pub const PARTS_FILE: &str = "parts.json";

/// How a run is divided between processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartMode {
    /// Each process runs some trials (`--shard K/N`).
    Shards,
    /// Each process runs its share of every trial's workloads (`--split K/N`).
    Split,
}

impl PartMode {
    fn flag(self) -> &'static str {
        match self {
            PartMode::Shards => "--shard",
            PartMode::Split => "--split",
        }
    }
}

/// What every part of a run must share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartsAgreement {
    pub mode: PartMode,
    /// N of `K/N`.
    pub count: u32,
    pub plan_sha256: String,
    pub time_scale: f64,
    /// `--trials`, as written.
    pub trials_selected: Option<String>,
}

impl PartsAgreement {
    /// Records this agreement in `dir` if no part has yet, or checks it
    /// against the recorded one. The record is created whole or not at all
    /// (a complete temporary file hard-linked to its name, which fails if
    /// the name exists), so two parts starting at once cannot both win.
    pub fn join(&self, dir: &Path) -> Result<(), ResultsError> {
        let path = dir.join(PARTS_FILE);
        let mut bytes = serde_json::to_vec_pretty(self).map_err(|source| ResultsError::Serialize {
            what: "parts agreement",
            source,
        })?;
        bytes.push(b'\n');
        let tmp = dir.join(format!(".{PARTS_FILE}.{}.tmp", std::process::id()));
        let linked = fs::write(&tmp, &bytes)
            .and_then(|()| fs::File::open(&tmp)?.sync_all())
            .and_then(|()| fs::hard_link(&tmp, &path));
        let _ = fs::remove_file(&tmp);
        match linked {
            Ok(()) => crate::rundir::sync_dir(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => self.compare(&read(&path)?, path),
            Err(source) => Err(ResultsError::Io {
                action: "create",
                path,
                source,
            }),
        }
    }

    /// `--shard K/N` or `--split K/N` for part `index`.
    pub fn part_flag(&self, index: u32) -> String {
        format!("{} {index}/{}", self.mode.flag(), self.count)
    }

    fn compare(&self, recorded: &PartsAgreement, path: PathBuf) -> Result<(), ResultsError> {
        let differences = self.differences(recorded);
        if differences.is_empty() {
            Ok(())
        } else {
            Err(ResultsError::PartsDisagree { path, differences })
        }
    }

    /// Each difference as "this part …, the run's parts …".
    pub fn differences(&self, recorded: &PartsAgreement) -> Vec<String> {
        let mut found = Vec::new();
        if (self.mode, self.count) != (recorded.mode, recorded.count) {
            found.push(format!(
                "this part runs {} K/{} but the run's parts run {} K/{}",
                self.mode.flag(),
                self.count,
                recorded.mode.flag(),
                recorded.count
            ));
        }
        if self.plan_sha256 != recorded.plan_sha256 {
            found.push(format!(
                "this part's plan has SHA-256 {}, the run's {}",
                self.plan_sha256, recorded.plan_sha256
            ));
        }
        if self.time_scale.to_bits() != recorded.time_scale.to_bits() {
            found.push(format!(
                "this part runs at --time-scale {}, the run's parts at {}",
                self.time_scale, recorded.time_scale
            ));
        }
        if self.trials_selected != recorded.trials_selected {
            let shown = |t: &Option<String>| {
                t.as_deref()
                    .map_or("all trials".to_string(), |t| format!("--trials {t}"))
            };
            found.push(format!(
                "this part selects {}, the run's parts {}",
                shown(&self.trials_selected),
                shown(&recorded.trials_selected)
            ));
        }
        found
    }
}

/// The agreement recorded in the run directory `dir`, if any part has
/// recorded one (runs written before it existed have none).
pub fn recorded(dir: &Path) -> Result<Option<PartsAgreement>, ResultsError> {
    let path = dir.join(PARTS_FILE);
    if path.exists() {
        read(&path).map(Some)
    } else {
        Ok(None)
    }
}

fn read(path: &Path) -> Result<PartsAgreement, ResultsError> {
    let bytes = fs::read(path).map_err(ResultsError::io("read", path))?;
    serde_json::from_slice(&bytes).map_err(|source| ResultsError::Json {
        action: "read",
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agreement(count: u32, time_scale: f64) -> PartsAgreement {
        PartsAgreement {
            mode: PartMode::Split,
            count,
            plan_sha256: "ab".into(),
            time_scale,
            trials_selected: None,
        }
    }

    #[test]
    fn the_first_part_records_and_the_others_must_agree() {
        let dir = std::env::temp_dir().join(format!("expc-parts-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        agreement(2, 1.0).join(&dir).unwrap();
        agreement(2, 1.0).join(&dir).unwrap();
        let refused = agreement(3, 0.5).join(&dir).unwrap_err().to_string();
        assert!(
            refused.contains("--split K/3 but the run's parts run --split K/2"),
            "{refused}"
        );
        assert!(refused.contains("--time-scale 0.5, the run's parts at 1"), "{refused}");
        assert_eq!(recorded(&dir).unwrap(), Some(agreement(2, 1.0)));
        let left: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from(PARTS_FILE)],
            "no temporary file is left"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
