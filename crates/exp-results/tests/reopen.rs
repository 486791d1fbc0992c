//! Taking a run directory over again: by any path that names it, never
//! re-creating it once it moved, never mixing or overwriting attempts.
// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use exp_results::*;

/// A crashed run (`.r.partial`, lock free) under `root`; returns its path.
fn crashed_run(root: &Path) -> PathBuf {
    let run = RunDir::create(root, "e", "r").unwrap();
    run.write_manifest(&mut common::manifest("e", "r")).unwrap();
    let dir = run.path().to_path_buf();
    drop(run);
    dir
}

/// Runs `body` with the working directory at `dir`: the path forms a user
/// types are relative to it. Tests in this file that change it run one at a
/// time (the lock), and it is put back.
fn in_dir<T>(dir: &Path, body: impl FnOnce() -> T) -> T {
    static CWD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = CWD.lock().unwrap_or_else(|p| p.into_inner());
    let before = std::env::current_dir().unwrap();
    std::env::set_current_dir(dir).unwrap();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    std::env::set_current_dir(before).unwrap();
    result.unwrap()
}

#[test]
fn a_run_is_reopened_by_any_path_that_names_it() {
    let root = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(root.path()).unwrap();
    let partial = crashed_run(&root);
    let experiment = root.join("e");
    let finished = experiment.join("r");
    fs::create_dir(root.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(&partial, root.join("latest")).unwrap();
    // (working directory, path given)
    let forms: [(&Path, &str); 7] = [
        (&experiment, ".r.partial"),
        (&experiment, "./.r.partial/"),
        (&partial, "."),
        (&root.join("elsewhere"), "../e/.r.partial"),
        (&root, "latest"),
        // Its final name while it is `.partial`, and back: it was renamed
        // since the user looked.
        (&experiment, "r"),
        (&experiment, "r/"),
    ];
    for (cwd, given) in forms {
        let run = in_dir(cwd, || RunDir::reopen(Path::new(given))).unwrap();
        assert_eq!(run.path(), partial, "{given} from {}", cwd.display());
        assert_eq!(run.final_path(), finished);
        run.finish().unwrap();
        assert!(finished.is_dir() && !partial.exists());
        // Back to `.partial` for the next form, by its final (bare) name.
        let run = in_dir(&experiment, || RunDir::reopen(Path::new("r"))).unwrap();
        assert_eq!(run.path(), partial);
        drop(run);
    }
    assert!(
        fs::symlink_metadata(root.join("latest")).unwrap().is_symlink(),
        "the symlink itself never moves"
    );
    assert_eq!(locate_run(&root.join("latest")).unwrap(), partial);
    assert!(has_partial_name(&partial) && !has_partial_name(&finished));
    let missing = locate_run(&experiment.join("nothing")).unwrap_err();
    assert!(missing.to_string().contains("nothing"), "{missing}");
}

#[test]
fn a_moved_run_directory_is_noticed_and_not_made_again() {
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "e", "r").unwrap();
    let mut manifest = common::manifest("e", "r");
    run.write_manifest(&mut manifest).unwrap();
    let store = Store::open(run.tables_dir(), StoreOptions::default()).unwrap();
    let schema = common::schema("events");
    store.sink(&schema, 0, 0).write(common::rows(&schema, 0, 10)).unwrap();
    let old = run.path().to_path_buf();
    let moved = root.path().join("moved");
    fs::rename(&old, &moved).unwrap();

    for refused in [
        run.record_trial(&manifest.trials[0]),
        run.write_manifest(&mut manifest),
        run.scratch_dir("x").map(|_| ()),
        run.set_attempt_aside(0, 1, &["xml"]).map(|_| ()),
    ] {
        assert!(matches!(refused, Err(ResultsError::RunDirMoved { .. })), "{refused:?}");
    }
    // The store's last rows cannot be written where the run was.
    assert!(store.finish_trial(0).is_err());
    drop(store);
    assert!(!old.exists(), "nothing made at the old path");
    assert!(matches!(run.finish(), Err(ResultsError::RunDirMoved { .. })));
    assert!(!old.exists());
    // Another directory made at the old name is not the run either.
    let run = RunDir::reopen(&moved).unwrap();
    fs::rename(run.path(), root.path().join("again")).unwrap();
    fs::create_dir(run.path()).unwrap();
    assert!(matches!(run.check_in_place(), Err(ResultsError::RunDirMoved { .. })));
}

#[test]
fn directories_are_made_below_their_root_only() {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().join("run");
    fs::create_dir(&base).unwrap();
    create_dir_below(&base, &base.join("a/b/c")).unwrap();
    assert!(base.join("a/b/c").is_dir());
    create_dir_below(&base, &base.join("a/b/c")).unwrap();
    fs::remove_dir_all(&base).unwrap();
    assert!(create_dir_below(&base, &base.join("a/b")).is_err());
    assert!(!base.exists(), "the root is never made");
    assert!(create_dir_below(&base, &root.path().join("outside")).is_err());
}

#[test]
fn an_attempt_directory_already_used_is_never_reused() {
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "e", "r").unwrap();
    let partial = run.tables_dir().join(".partial/events/trial=0");
    let place = |name: &str| {
        fs::create_dir_all(&partial).unwrap();
        fs::write(partial.join(name), name).unwrap();
    };
    // attempt-1 holds an earlier attempt's file (a resume that stopped
    // before its manifest recorded it), attempt-2 only another part's.
    let earlier = run.path().join("attempts/trial=0/attempt-1/tables/events");
    fs::create_dir_all(&earlier).unwrap();
    fs::write(earlier.join("part-0.parquet"), "earlier").unwrap();
    let other_part = run.path().join("attempts/trial=0/attempt-2/partial/events");
    fs::create_dir_all(&other_part).unwrap();
    fs::write(other_part.join("part-1.open.parquet"), "part 1").unwrap();

    place("part-0.open.parquet");
    place("part-1.000000.parquet"); // another part's: not this writer's to move
    let moved = run.set_attempt_aside(0, 1, &["xml"]).unwrap().unwrap();
    assert_eq!(moved.dir, "attempts/trial=0/attempt-2");
    let attempt = |k: u32, file: &str| {
        fs::read_to_string(run.path().join(format!("attempts/trial=0/attempt-{k}/{file}"))).unwrap()
    };
    assert_eq!(attempt(1, "tables/events/part-0.parquet"), "earlier");
    assert_eq!(attempt(2, "partial/events/part-0.open.parquet"), "part-0.open.parquet");
    assert_eq!(attempt(2, "partial/events/part-1.open.parquet"), "part 1");
    assert!(
        partial.join("part-1.000000.parquet").is_file(),
        "part 1's segment stays"
    );

    // A second attempt of the same trial goes to the next directory.
    place("part-0.open.parquet");
    assert_eq!(
        run.set_attempt_aside(0, 2, &["xml"]).unwrap().unwrap().dir,
        "attempts/trial=0/attempt-3"
    );
}

#[test]
fn table_files_that_cannot_be_read_are_counted_and_named() {
    let root = tempfile::tempdir().unwrap();
    let run = RunDir::create(root.path(), "e", "r").unwrap();
    let store = Store::open(run.tables_dir(), StoreOptions::default()).unwrap();
    let schema = common::schema("events");
    store.sink(&schema, 0, 0).write(common::rows(&schema, 0, 4)).unwrap();
    drop(store);
    let bad = run.tables_dir().join("events/trial=1");
    fs::create_dir_all(&bad).unwrap();
    fs::write(bad.join("part-0.parquet"), "not parquet").unwrap();
    let (tables, unreadable) = run.count_tables();
    assert_eq!(tables["events"], TableRecord { rows: 4, files: 2 });
    assert_eq!(unreadable.len(), 1);
    assert!(unreadable[0].contains("trial=1/part-0.parquet"), "{unreadable:?}");
    // Set aside, it is moved like any other: never read, never lost.
    let moved = run.set_attempt_aside(1, 1, &["xml"]).unwrap().unwrap();
    assert_eq!(moved.moved, 1);
    assert!(run
        .path()
        .join("attempts/trial=1/attempt-1/tables/events/part-0.parquet")
        .is_file());
}
