//! Where `expc serve` finds its secret: a file (created with a new random
//! secret when missing) or an environment variable. Never the command
//! line, where `ps` shows it; never printed, only where it came from.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use exp_traffic::replay::Secret;

/// A secret and where it came from (`file PATH` or `$NAME`).
pub struct Found {
    pub secret: Secret,
    pub source: String,
}

/// The secret from `file` if given, else from the environment variable
/// `env` if set, else none.
pub fn resolve(file: Option<&Path>, env: &str) -> Result<Option<Found>, String> {
    if let Some(path) = file {
        return from_file(path).map(Some);
    }
    match std::env::var(env) {
        Ok(text) => {
            let secret = Secret::from_text(&text).map_err(|e| format!("${env}: {e}"))?;
            Ok(Some(Found {
                secret,
                source: format!("${env}"),
            }))
        }
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("${env} is not valid UTF-8")),
    }
}

/// Largest secret file read: a secret is 64 hex digits and a line break.
const SECRET_CAP: exp_files::Cap = exp_files::Cap::new(4 << 10, "a secret file");

/// Through the bounded reader: a FIFO or device is refused before its mode
/// is looked at (and a FIFO never blocks the open), a large file is not
/// taken as a secret.
fn from_file(path: &Path) -> Result<Found, String> {
    let shown = path.display();
    let text = match exp_files::open_regular(path) {
        Ok(regular) => {
            let mode = regular.metadata.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(format!(
                    "{shown} can be read by others (mode {mode:o}): `chmod 600 {shown}`, since it holds the secret"
                ));
            }
            regular
                .read_text(SECRET_CAP)
                .map_err(|e| format!("reading {shown}: {e}"))?
        }
        Err(e) if e.is_not_found() => create(path)?,
        Err(e) => return Err(format!("reading {shown}: {e}")),
    };
    let secret = Secret::from_text(&text).map_err(|e| format!("{shown}: {e}"))?;
    Ok(Found {
        secret,
        source: format!("file {shown}"),
    })
}

/// Writes a new random secret to `path`, readable by its owner only.
fn create(path: &Path) -> Result<String, String> {
    let shown = path.display();
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(format!(
            "{shown} is a symbolic link to nothing: give the file itself (a new secret is never written through a link)"
        ));
    }
    let text = Secret::generate().map_err(|e| format!("making a secret: {e}"))?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("creating {shown}: {e}"))?;
    file.write_all(format!("{text}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("writing {shown}: {e}"))?;
    errln!(
        "expc serve: wrote a new secret to {shown} (mode 600); the initiator's spec reads it from the \
         environment variable its `secret_env` names"
    );
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_gets_a_private_secret_and_an_open_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("expc-serve-secret-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("secret");
        let first = resolve(Some(&path), "EXPC_UNIT_TEST_UNSET")
            .expect("created")
            .expect("a secret");
        assert_eq!(first.source, format!("file {}", path.display()));
        let mode = std::fs::metadata(&path).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let text = std::fs::read_to_string(&path).expect("readable");
        assert_eq!(text.trim().len(), 64, "32 random bytes in hex");
        // Read back: the same secret (a second run uses it, not a new one).
        resolve(Some(&path), "EXPC_UNIT_TEST_UNSET").expect("read back");
        assert_eq!(std::fs::read_to_string(&path).expect("readable"), text);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let error = resolve(Some(&path), "EXPC_UNIT_TEST_UNSET").err().expect("refused");
        assert!(error.contains("chmod 600"), "{error}");
        assert!(!error.contains(text.trim()), "the error never shows the secret");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(resolve(None, "EXPC_UNIT_TEST_UNSET").expect("no secret").is_none());
    }
}
