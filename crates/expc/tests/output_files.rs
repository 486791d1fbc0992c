//! Issue 39 §3: every command that writes a path the user names follows one
//! rule (`exp_files::write`, docs/running.md "Files expc reads and writes"):
//! a character device or FIFO is written through and stays what it is
//! (`--html /dev/null` is a dry try, `/dev/full` an error), a link is
//! followed and stays a link, a regular file is replaced whole, a directory
//! is refused. `report --html /dev/full` used to print "wrote" and replace
//! the device with a regular file. Asserted from outside: exit codes, and
//! what each path is afterwards.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::hostile_files::{
    assert_refused, devices, expc, expc_within, fifo, is_char_device, is_fifo, is_symlink, link, p, Scratch,
};

/// A one-second run, formatted as `expc fmt` writes it (`expc test` checks).
const TINY: &str = "experiment \"tiny\" {\n  duration = 1s\n  anomaly \"cpu\" {\n    kind        = cpuoccupy\n    utilization = 10%\n    cores       = [0]\n  }\n}\n";

const SYNTH: &str = "experiment \"s\" {\n  duration = 2s\n  traffic \"t\" {\n    vectors = synthetic(connections = 5, arrival = constant(10ms), request = 100B, response = 1KB)\n  }\n}\n";

/// Puts the writer `args(TARGET)` through every kind of target, in `scratch/targets`.
fn writes_by_the_rule(scratch: &Scratch, writer: &str, args: impl Fn(&Path) -> Vec<PathBuf>) {
    let dir = scratch.join("targets");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |target: &Path| {
        let args = args(target);
        let args: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
        expc(&args)
    };
    if let Some((null, _, full)) = devices(&dir) {
        let result = run(&null);
        assert_eq!(result.code, Some(0), "{writer} to a null device\n{}", result.stderr);
        assert!(is_char_device(&null), "{writer}: the null device is still a device");
        let result = run(&full);
        assert_refused(
            &result,
            "No space left on device",
            &format!("{writer} to a full device"),
        );
        assert!(is_char_device(&full), "{writer}: the full device is still a device");
        let to_null = link(&null, &dir.join("to-null"));
        let result = run(&to_null);
        assert_eq!(
            result.code,
            Some(0),
            "{writer} through a link to a null device\n{}",
            result.stderr
        );
        assert!(
            is_symlink(&to_null) && is_char_device(&null),
            "{writer}: link and device kept"
        );
    }
    // No reader: an error at once, never a blocking open.
    let pipe = fifo(&dir.join("fifo"));
    let result = expc_within(
        Duration::from_secs(30),
        &args(&pipe).iter().map(PathBuf::as_path).collect::<Vec<_>>(),
    );
    assert_refused(&result, "it is a FIFO with no reader", &format!("{writer} to a FIFO"));
    assert!(is_fifo(&pipe), "{writer}: the FIFO is still a FIFO");
    let real = dir.join("real");
    std::fs::write(&real, "old").unwrap();
    let to_real = link(p("real"), &dir.join("to-real"));
    let result = run(&to_real);
    assert_eq!(result.code, Some(0), "{writer} through a link\n{}", result.stderr);
    assert!(is_symlink(&to_real), "{writer}: the link is still a link");
    let written = std::fs::read(&real).unwrap();
    assert!(
        !written.is_empty() && written != b"old",
        "{writer}: the link's target was written"
    );
    let folder = dir.join("folder");
    std::fs::create_dir(&folder).unwrap();
    let result = run(&folder);
    assert_refused(&result, "it is a directory", &format!("{writer} to a directory"));
    assert_eq!(
        std::fs::read_dir(&folder).unwrap().count(),
        0,
        "{writer}: the directory is untouched"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{writer}: temporaries left: {leftovers:?}");
}

fn paths(items: &[&Path]) -> Vec<PathBuf> {
    items.iter().map(|i| i.to_path_buf()).collect()
}

#[test]
fn report_html_writes_through_devices_and_links() {
    let scratch = Scratch::new("out-report");
    let spec = scratch.file("tiny.exp", TINY);
    let runs = scratch.join("runs");
    let result = expc(&[p("run"), &spec, p("--out"), &runs]);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let experiment = std::fs::read_dir(runs.join("tiny"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    writes_by_the_rule(&scratch, "report --html", |t| {
        paths(&[p("report"), &experiment, p("--html"), t])
    });
    // Figures go into a directory: anything else in its place is refused.
    std::fs::create_dir_all(scratch.join("svg")).unwrap();
    if let Some((null, _, _)) = devices(&scratch.join("svg")) {
        let result = expc(&[p("report"), &experiment, p("--svg"), &null]);
        assert_refused(
            &result,
            "it is a character device, not a directory",
            "report --svg to a device",
        );
        assert!(is_char_device(&null));
    }
}

#[test]
fn plan_output_writes_through_devices_and_links() {
    let scratch = Scratch::new("out-plan");
    let spec = scratch.file("tiny.exp", TINY);
    writes_by_the_rule(&scratch, "plan -o", |t| paths(&[p("plan"), &spec, p("-o"), t]));
}

#[test]
fn test_junit_writes_through_devices_and_links() {
    let scratch = Scratch::new("out-junit");
    let library = scratch.join("library");
    std::fs::create_dir_all(&library).unwrap();
    std::fs::write(library.join("tiny.exp"), TINY).unwrap();
    let accepted = expc(&[p("test"), &library, p("--accept")]);
    assert_eq!(accepted.code, Some(0), "{}", accepted.stderr);
    writes_by_the_rule(&scratch, "test --junit", |t| {
        paths(&[p("test"), &library, p("--junit"), t])
    });
}

/// `run --junit` writes when the run ends, by the same rule (each target a
/// run of 0.2 s).
#[test]
fn run_junit_writes_through_devices_and_links() {
    let scratch = Scratch::new("out-run-junit");
    let spec = scratch.file("tiny.exp", TINY);
    let runs = scratch.join("runs");
    writes_by_the_rule(&scratch, "run --junit", |t| {
        paths(&[
            p("run"),
            &spec,
            p("--time-scale"),
            p("0.2"),
            p("--out"),
            &runs,
            p("--junit"),
            t,
        ])
    });
}

#[test]
fn traffic_synth_and_convert_write_through_devices_and_links() {
    let scratch = Scratch::new("out-traffic");
    let spec = scratch.file("synth.exp", SYNTH);
    writes_by_the_rule(&scratch, "traffic synth -o", |t| {
        paths(&[p("traffic"), p("synth"), &spec, p("-o"), t])
    });
    let vectors = scratch.join("vectors.cvec");
    let result = expc(&[p("traffic"), p("synth"), &spec, p("-o"), &vectors]);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let converted = Scratch::new("out-convert");
    writes_by_the_rule(&converted, "traffic convert", |t| {
        paths(&[p("traffic"), p("convert"), &vectors, t])
    });
}

#[test]
fn xml_reveal_writes_a_file_through_devices_and_links() {
    let scratch = Scratch::new("out-reveal");
    let corpus = scratch.file(
        "c.xml",
        "<station><sensor model=\"thermo\"><v>12</v></sensor></station>",
    );
    let (set, map, out) = (scratch.join("set"), scratch.join("private"), scratch.join("out"));
    let threads = [p("--threads"), p("1")];
    let result = expc(
        &[
            &[
                p("xml"),
                p("extract"),
                &corpus,
                p("-o"),
                &set,
                p("--obfuscate"),
                p("--map"),
                &map,
            ],
            &threads[..],
        ]
        .concat(),
    );
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let result = expc(
        &[
            &[p("xml"), p("generate"), &set, p("--documents"), p("1"), p("-o"), &out],
            &threads[..],
        ]
        .concat(),
    );
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    let document = out.join("doc-000000000.xml");
    writes_by_the_rule(&scratch, "xml reveal -o", |t| {
        paths(&[p("xml"), p("reveal"), &document, p("--map"), &map, p("-o"), t])
    });
    // Sets and generated corpora are directories: a device in the way is refused.
    std::fs::create_dir_all(scratch.join("set-targets")).unwrap();
    let Some((null, _, _)) = devices(&scratch.join("set-targets")) else {
        return;
    };
    let result = expc(&[&[p("xml"), p("extract"), &corpus, p("-o"), &null], &threads[..]].concat());
    assert_refused(
        &result,
        "it is a character device, not a directory",
        "xml extract -o a device",
    );
    let result = expc(
        &[
            &[p("xml"), p("generate"), &set, p("--documents"), p("1"), p("-o"), &null],
            &threads[..],
        ]
        .concat(),
    );
    assert_refused(
        &result,
        "it is a character device, not a directory",
        "xml generate -o a device",
    );
    assert!(is_char_device(&null));
}

#[test]
fn fmt_in_place_follows_a_link_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new("out-fmt");
    let real = scratch.file("real.exp", "let  a=1\n");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let to_real = link(p("real.exp"), &scratch.join("link.exp"));
    let result = expc(&[p("fmt"), &to_real]);
    assert_eq!(result.code, Some(0), "{}", result.stderr);
    assert!(is_symlink(&to_real));
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "let a = 1\n");
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
}
