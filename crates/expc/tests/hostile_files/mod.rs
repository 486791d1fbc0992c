//! Hostile paths for the tests of files users name (`output_files.rs`,
//! `input_files.rs`): device nodes, FIFOs, links, huge sparse files, and a
//! bounded run of `expc` that fails the test instead of hanging it.
//!
//! Device nodes are made in the scratch directory with `mknod` (as root),
//! with the numbers of `/dev/null` (1:3), `/dev/zero` (1:5) and `/dev/full`
//! (1:7): they behave as those do, and a regression that replaces one
//! replaces the test's node, never the machine's `/dev/null`.

#![allow(dead_code, clippy::unwrap_used)] // each test file uses some of these

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one bounded run of `expc` left.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `expc ARGS`, killing it (and failing the test) after `limit`.
pub fn expc_within(limit: Duration, args: &[&Path]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_expc"))
        .args(args)
        .env_remove("EXPC_SERVE_SECRET")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("expc {args:?} still running after {limit:?} (blocked?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// `expc ARGS` within 60 s: every case here ends in well under a second
/// when nothing blocks.
pub fn expc(args: &[&Path]) -> Run {
    expc_within(Duration::from_secs(60), args)
}

/// `p("…")`: a path argument from text.
pub fn p(text: &str) -> &Path {
    Path::new(text)
}

/// A scratch directory of one test, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The character devices `null`, `zero`, `full` made in `dir`, or `None`
/// (said on stderr: the test then checks what it can without them) when
/// this user may not make device nodes.
pub fn devices(dir: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let mut made = Vec::new();
    for (name, minor) in [("null", 3), ("zero", 5), ("full", 7)] {
        let path = dir.join(name);
        let status = Command::new("mknod")
            .arg(&path)
            .args(["c", "1", &minor.to_string()])
            .status()
            .unwrap();
        if !status.success() {
            eprintln!("SKIPPED device cases: mknod needs root");
            return None;
        }
        made.push(path);
    }
    let mut made = made.into_iter();
    Some((made.next()?, made.next()?, made.next()?))
}

/// A FIFO at `path` (no reader, no writer).
pub fn fifo(path: &Path) -> PathBuf {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
    path.to_path_buf()
}

/// A sparse regular file of `bytes` bytes at `path`, mode 600.
pub fn sparse(path: &Path, bytes: u64) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::File::create(path).unwrap().set_len(bytes).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.to_path_buf()
}

/// A symbolic link at `link` to `target`.
pub fn link(target: &Path, link: &Path) -> PathBuf {
    std::os::unix::fs::symlink(target, link).unwrap();
    link.to_path_buf()
}

pub fn is_char_device(path: &Path) -> bool {
    std::fs::symlink_metadata(path).unwrap().file_type().is_char_device()
}

pub fn is_fifo(path: &Path) -> bool {
    std::fs::symlink_metadata(path).unwrap().file_type().is_fifo()
}

pub fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).unwrap().file_type().is_symlink()
}

/// Exit 1 with `message` in stderr.
pub fn assert_refused(run: &Run, message: &str, what: &str) {
    assert_eq!(run.code, Some(1), "{what}: exit code\n{}", run.stderr);
    assert!(
        run.stderr.contains(message),
        "{what}: expected `{message}` in\n{}",
        run.stderr
    );
}
