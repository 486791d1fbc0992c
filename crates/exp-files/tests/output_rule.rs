//! The output rule on every kind of target: regular, missing, linked,
//! device, FIFO, directory. Device nodes are made in a temporary directory
//! (`mknod`, as root), never the machine's own `/dev/null`: a regression
//! here must not replace a device the system needs.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use exp_files::{create, create_dir, write_file, WriteError};

/// A character device `major:minor` at `path`, or `None` (said on stderr)
/// when this user may not make one.
fn device(path: &Path, major: u32, minor: u32) -> Option<()> {
    let made = Command::new("mknod")
        .arg(path)
        .arg("c")
        .arg(major.to_string())
        .arg(minor.to_string())
        .status()
        .ok()?;
    if !made.success() {
        eprintln!("SKIPPED: mknod {} needs root", path.display());
        return None;
    }
    Some(())
}

fn is_char_device(path: &Path) -> bool {
    fs::symlink_metadata(path).unwrap().file_type().is_char_device()
}

#[test]
fn a_regular_file_is_replaced_whole_and_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("page.html");
    fs::write(&path, "old").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    write_file(&path, b"new").unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
    // Missing parents are made; no temporary is left behind.
    let deep = dir.path().join("a/b/c.json");
    write_file(&deep, b"{}").unwrap();
    assert_eq!(fs::read_to_string(&deep).unwrap(), "{}");
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn an_output_dropped_before_its_commit_leaves_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.cvec");
    fs::write(&path, "old").unwrap();
    let mut output = create(&path).unwrap();
    output.write_all(b"half of it").unwrap();
    drop(output);
    assert_eq!(fs::read_to_string(&path).unwrap(), "old");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary left");
}

#[test]
fn a_link_is_followed_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("real")).unwrap();
    fs::write(dir.path().join("real/target"), "old").unwrap();
    let link = dir.path().join("link");
    symlink("real/target", &link).unwrap();
    let chain = dir.path().join("chain");
    symlink("link", &chain).unwrap();
    write_file(&chain, b"new").unwrap();
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(fs::symlink_metadata(&chain).unwrap().file_type().is_symlink());
    assert_eq!(fs::read_to_string(dir.path().join("real/target")).unwrap(), "new");
    // A dangling link: its target is created.
    let dangling = dir.path().join("dangling");
    symlink("made-now", &dangling).unwrap();
    write_file(&dangling, b"x").unwrap();
    assert_eq!(fs::read_to_string(dir.path().join("made-now")).unwrap(), "x");
    // A loop is an error, not a hang.
    symlink("loop-b", dir.path().join("loop-a")).unwrap();
    symlink("loop-a", dir.path().join("loop-b")).unwrap();
    let error = write_file(&dir.path().join("loop-a"), b"x").unwrap_err();
    assert!(error.to_string().contains("symbolic links"), "{error}");
}

#[test]
fn devices_are_written_through_and_stay_devices() {
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let full = dir.path().join("full");
    if device(&null, 1, 3).is_none() || device(&full, 1, 7).is_none() {
        return;
    }
    write_file(&null, &vec![b'x'; 1 << 20]).unwrap();
    assert!(is_char_device(&null));
    let error = write_file(&full, b"anything").unwrap_err();
    assert!(error.to_string().contains("No space left on device"), "{error}");
    assert!(is_char_device(&full));
    let link = dir.path().join("to-null");
    symlink("null", &link).unwrap();
    write_file(&link, b"x").unwrap();
    assert!(is_char_device(&null));
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        3,
        "no temporary beside a device"
    );
}

#[test]
fn a_fifo_is_written_to_its_reader_and_refused_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let started = Instant::now();
    let error = write_file(&fifo, b"nobody listens").unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "no blocking open");
    assert!(matches!(error, WriteError::NoReader { .. }), "{error}");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            fs::File::open(fifo).unwrap().read_to_string(&mut text).unwrap();
            text
        })
    };
    // The reader opens in its own time; until then there is none.
    let payload = vec![b'y'; 200_000];
    loop {
        match write_file(&fifo, &payload) {
            Ok(()) => break,
            Err(WriteError::NoReader { .. }) if started.elapsed() < Duration::from_secs(30) => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(
        reader.join().unwrap().len(),
        payload.len(),
        "more than a pipe holds, all of it"
    );
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn directories_are_refused_as_files_and_devices_as_directories() {
    let dir = tempfile::tempdir().unwrap();
    let error = write_file(dir.path(), b"x").unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("it is a directory; an output is a regular file, a character device or a FIFO"),
        "{error}"
    );
    create_dir(&dir.path().join("svg/deeper")).unwrap();
    create_dir(&dir.path().join("svg")).unwrap();
    let file = dir.path().join("file");
    fs::write(&file, "x").unwrap();
    let error = create_dir(&file).unwrap_err();
    assert!(
        error.to_string().ends_with("it is a regular file, not a directory"),
        "{error}"
    );
    let dangling = dir.path().join("dangling");
    symlink("nowhere", &dangling).unwrap();
    assert!(matches!(create_dir(&dangling), Err(WriteError::NotADirectory { .. })));
    let error = create_dir(Path::new("/dev/null")).unwrap_err();
    assert!(
        error.to_string().ends_with("it is a character device, not a directory"),
        "{error}"
    );
}
