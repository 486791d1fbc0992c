//! Issue 14: what a user writes or points expc at never crashes it, hangs it
//! or floods the terminal. Each test reproduces a reported case through the
//! binary and asserts from outside: exit code (1, never 101 or 134), the
//! diagnostic code, the size of what was printed. Every run is bounded.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one bounded run of `expc` left.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `expc ARGS`, killing it (and failing) after `limit`.
fn expc_within(limit: Duration, args: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_expc"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("expc starts");
    // Drained on threads, so a large output cannot block the child.
    let mut out_pipe = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = out_pipe.read_to_end(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = err_pipe.read_to_end(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("expc {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    Run {
        code: status.code(),
        stdout: text(out.join().expect("stdout reader")),
        stderr: text(err.join().expect("stderr reader")),
    }
}

fn expc(args: &[&str]) -> Run {
    expc_within(Duration::from_secs(120), args)
}

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-hostile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("scratch file");
        path.to_string_lossy().into_owned()
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Exit 1 (a reported error), with `code` among the diagnostics.
fn assert_refused(run: &Run, code: &str, what: &str) {
    assert_eq!(
        run.code,
        Some(1),
        "{what}: expected exit 1\n--- stderr (first 2000 bytes)\n{}",
        run.stderr.chars().take(2000).collect::<String>()
    );
    assert!(
        run.stderr.contains(&format!("[{code}]")),
        "{what}: expected {code}\n--- stderr (first 2000 bytes)\n{}",
        run.stderr.chars().take(2000).collect::<String>()
    );
}

#[test]
fn a_sweep_of_10_to_the_12_trials_is_refused_without_expanding_it() {
    let dir = Scratch::new("sweep");
    let spec = dir.file(
        "sweep.exp",
        "experiment \"s\" {\n  duration = 1s\n  sweep { a = 1..1000000 step 1  b = 1..1000000 step 1 }\n  \
         anomaly \"h\" { kind = cpuoccupy  cores = [a, b] }\n}\n",
    );
    for command in ["check", "plan"] {
        let run = expc(&[command, &spec]);
        assert_refused(&run, "E0704", command);
        assert!(run.stderr.contains("1,000,000,000,000 trials"), "{}", run.stderr);
    }
    let four = dir.file(
        "four.exp",
        "experiment \"s\" {\n  sweep { a = 1..65536 step 1  b = 1..65536 step 1  c = 1..65536 step 1  d = 1..65536 step 1 }\n}\n",
    );
    assert_refused(&expc(&["check", &four]), "E0704", "four ranges of 65,536");
}

#[test]
fn deep_nesting_is_an_error_in_check_plan_and_fmt() {
    let dir = Scratch::new("deep");
    for depth in [4_000, 10_000] {
        let shapes = [
            ("lists", format!("let x = {}{}\n", "[".repeat(depth), "]".repeat(depth))),
            (
                "records",
                format!("let x = {}1{}\n", "{a = ".repeat(depth), "}".repeat(depth)),
            ),
            (
                "calls",
                format!("let x = {}1ms{}\n", "constant(".repeat(depth), ")".repeat(depth)),
            ),
        ];
        for (shape, text) in shapes {
            let spec = dir.file(&format!("{shape}-{depth}.exp"), &text);
            for command in [&["check"][..], &["plan"], &["fmt", "--check"], &["fmt"]] {
                let mut args = command.to_vec();
                args.push(&spec);
                let run = expc(&args);
                assert_refused(&run, "E0106", &format!("{command:?} on {shape} {depth} deep"));
                assert!(run.stderr.len() < 10_000, "{} bytes of stderr", run.stderr.len());
            }
            assert_eq!(
                std::fs::read_to_string(&spec).expect("spec"),
                text,
                "fmt left the file alone"
            );
        }
    }
}

#[test]
fn a_long_unterminated_string_is_shown_cut() {
    let dir = Scratch::new("string");
    let spec = dir.file("long.exp", &format!("let x = \"{}\n", "a".repeat(10_000_000)));
    let run = expc(&["check", &spec]);
    assert_refused(&run, "E0102", "10 MB unterminated string");
    assert!(run.stderr.len() < 4_000, "{} bytes of stderr", run.stderr.len());
    assert!(
        run.stderr.contains("is 10,000,009 bytes long; 160 of them are shown"),
        "{}",
        run.stderr
    );
}

#[test]
fn random_text_gives_a_bounded_list_of_errors() {
    let dir = Scratch::new("random");
    // A fixed pseudo-random sequence of printable ASCII and line breaks.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let text: String = (0..2_000_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if state.is_multiple_of(50) {
                '\n'
            } else {
                char::from(b' ' + (state % 95) as u8)
            }
        })
        .collect();
    let spec = dir.file("random.exp", &text);
    let run = expc(&["check", &spec]);
    assert_refused(&run, "E0107", "2 MB of random text");
    assert!(run.stderr.matches("error[").count() <= 101, "{}", run.stderr.len());
    assert!(run.stderr.len() < 200_000, "{} bytes of stderr", run.stderr.len());
}

#[test]
fn too_many_diagnostics_are_counted_not_shown() {
    let dir = Scratch::new("many");
    let text: String = (0..500).map(|i| format!("let a{i} = undefined{i}\n")).collect();
    let spec = dir.file("many.exp", &text);
    let run = expc(&["check", &spec]);
    assert_refused(&run, "E0201", "500 undefined names");
    assert_eq!(run.stderr.matches("error[E0201]").count(), 100);
    assert!(
        run.stderr
            .contains("… 400 more diagnostics not shown (400 errors, 0 warnings)"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.ends_with("500 errors, 0 warnings\n"), "{}", run.stderr);
}

/// 100,000 `let`s were quadratic (> 20 s in release, minutes in debug); the
/// bound is generous for a debug build on a loaded 2-core machine.
#[test]
fn a_hundred_thousand_lets_check_in_linear_time() {
    let dir = Scratch::new("lets");
    let text: String = (0..100_000).map(|i| format!("let a{i} = {i}\n")).collect();
    let spec = dir.file("lets.exp", &text);
    let run = expc_within(Duration::from_secs(60), &["check", &spec]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn devices_fifos_directories_and_huge_files_are_refused() {
    let dir = Scratch::new("files");
    let fifo = dir.path("fifo.exp");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let huge = dir.path("huge.exp");
    let file = std::fs::File::create(&huge).expect("huge file");
    file.set_len(17 * 1024 * 1024).expect("sparse file");
    let cases = [
        ("/dev/zero", "not a regular file but a character device"),
        (fifo.as_str(), "not a regular file but a FIFO"),
        (dir.0.to_str().expect("UTF-8"), "not a regular file but a directory"),
        (huge.as_str(), "17,825,792 bytes, more than the 16 MiB a file may have"),
    ];
    for (path, reason) in cases {
        // A FIFO that was opened would block forever: the bound catches it.
        let run = expc_within(Duration::from_secs(30), &["check", path]);
        assert_refused(&run, "E0204", path);
        assert!(run.stderr.contains(reason), "{path}: {}", run.stderr);
        let run = expc_within(Duration::from_secs(30), &["fmt", "--check", path]);
        assert_eq!(run.code, Some(1), "fmt {path}: {}", run.stderr);
        assert!(run.stderr.contains(reason), "fmt {path}: {}", run.stderr);
    }
    // An import and an empirical file go through the same reader.
    let spec = dir.file(
        "imports.exp",
        &format!(
            "import \"./fifo.exp\" as f\nlet g = empirical(\"{}\")\nexperiment \"x\" {{ duration = 1s }}\n",
            Path::new(&huge).file_name().and_then(|n| n.to_str()).expect("name")
        ),
    );
    let run = expc_within(Duration::from_secs(30), &["check", &spec]);
    assert_refused(&run, "E0204", "import of a FIFO");
    assert_refused(&run, "E0505", "empirical values in a 17 MiB file");
}

#[test]
fn out_of_range_quantities_and_dense_schedules_are_coded_errors() {
    let dir = Scratch::new("ranges");
    let cases = [
        ("experiment \"x\" { duration = 1e308s }", "E0506"),
        ("experiment \"x\" { duration = 1s\n sweep { x = 1..2 step 1e-300 } }", "E0704"),
        ("let g = pareto(shape = 1e-300, median = 1ms)", "E0501"),
        ("let g = uniform(0s, 1e308s)", "E0506"),
        (
            "experiment \"x\" { duration = 1h\n anomaly \"a\" { kind = cpuoccupy  every = 2ns  active = 1ns } }",
            "E0606",
        ),
        ("experiment \"x\" { duration = 2s\n fleet \"f\" { devices = 1  gap = 0s } }", "E0606"),
        (
            "experiment \"x\" { duration = 2s\n fleet \"f\" { devices = 1  gap = gamma(shape = 1e-320, scale = 1ms) } }",
            "E0501",
        ),
        // Was a 152 TB allocation that aborted the run.
        (
            "let v = synthetic(connections = 1000000000000, arrival = constant(1s), request = 1KB, response = 1KB)",
            "E0501",
        ),
    ];
    for (index, (text, code)) in cases.iter().enumerate() {
        let spec = dir.file(&format!("case{index}.exp"), text);
        for command in ["check", "plan"] {
            let run = expc(&[command, &spec]);
            assert_refused(&run, code, &format!("{command} {text}"));
            assert!(run.stdout.is_empty(), "no plan printed");
        }
    }
}

#[test]
fn traffic_convert_refuses_devices_and_overflowing_sizes() {
    let dir = Scratch::new("traffic");
    let out = dir.path("out.cvec");
    let run = expc_within(Duration::from_secs(30), &["traffic", "convert", "/dev/zero", &out]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("/dev/zero: not a regular file"), "{}", run.stderr);
    let sum = dir.file("sum.cvec", &format!("S 0 1 a b\nI 0 0 {m}\nI 0 0 {m}\n", m = u64::MAX));
    let run = expc(&["traffic", "convert", "--structure", "ab", &sum, &out]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("sum.cvec:1:"), "{}", run.stderr);
    assert!(run.stderr.contains("the sizes overflow"), "{}", run.stderr);
    assert!(!Path::new(&out).exists(), "nothing written");
}

#[test]
fn xml_extract_names_the_file_and_the_reason() {
    let dir = Scratch::new("xml-extract");
    let cases = [
        ("empty.xml", String::new(), "empty.xml: no document"),
        (
            "garbage.xml",
            "\u{1}\u{2}<<<&&& not xml >".to_string(),
            "garbage.xml at byte",
        ),
        (
            "truncated.xml",
            "<a><b>1</b>".to_string(),
            "truncated.xml at byte 11: input ended inside the document",
        ),
    ];
    for (name, text, expected) in cases {
        let input = dir.file(name, &text);
        let run = expc(&["xml", "extract", &input, "-o", &dir.path(&format!("set-{name}"))]);
        assert_eq!(run.code, Some(1), "{name}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{name}: {}", run.stderr);
        assert!(
            !Path::new(&dir.path(&format!("set-{name}"))).exists(),
            "{name}: no set written"
        );
    }
    // A tiny corpus extracts in no measurable CPU time: no NaN printed.
    let input = dir.file("ok.xml", "<a><b>1</b></a>");
    let run = expc(&["xml", "extract", &input, "-o", &dir.path("set"), "--threads", "1"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        !run.stdout.contains("NaN") && !run.stderr.contains("NaN"),
        "{}",
        run.stdout
    );
    let run = expc(&[
        "xml",
        "generate",
        &dir.path("set"),
        "--documents",
        "1",
        "-o",
        &dir.path("out"),
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        !run.stdout.contains("NaN") && !run.stderr.contains("NaN"),
        "{}",
        run.stderr
    );
}

#[test]
fn xml_reveal_never_writes_over_its_input() {
    let dir = Scratch::new("xml-reveal");
    let corpus = dir.file(
        "c.xml",
        "<station><sensor model=\"thermo\"><v>12</v></sensor></station>",
    );
    let set = dir.path("set");
    let map = dir.path("private");
    let run = expc(&[
        "xml",
        "extract",
        &corpus,
        "-o",
        &set,
        "--obfuscate",
        "--map",
        &map,
        "--threads",
        "1",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = dir.path("out");
    let run = expc(&[
        "xml",
        "generate",
        &set,
        "--documents",
        "3",
        "-o",
        &out,
        "--threads",
        "1",
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let doc = PathBuf::from(&out).join("doc-000000000.xml");
    let before = std::fs::read(&doc).expect("generated document");
    let doc = doc.to_string_lossy().into_owned();
    let run = expc(&["xml", "reveal", &doc, "--map", &map, "-o", &doc]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("is (or holds, or lies inside) the input"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&doc).expect("kept"), before, "the input is untouched");
    let run = expc(&["xml", "reveal", &out, "--map", &map, "-o", &out]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(std::fs::read(&doc).expect("kept"), before, "the directory is untouched");
    let revealed = dir.path("revealed");
    let run = expc(&["xml", "reveal", &out, "--map", &map, "-o", &revealed]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let text = std::fs::read_to_string(PathBuf::from(&revealed).join("doc-000000000.xml")).expect("revealed");
    assert!(text.contains("<station>"), "{text}");
}

#[test]
fn a_million_bidirectional_controls_are_counted_not_listed() {
    let dir = Scratch::new("bidi");
    let spec = dir.file(
        "bidi.exp",
        &format!(
            "// {}\nexperiment \"b\" {{\n  duration = 1s\n  anomaly \"h\" {{ kind = cpuoccupy  for = 1s }}\n}}\n",
            "\u{202E}".repeat(1_000_000)
        ),
    );
    // Each was a diagnostic of its own: 800 MB and 47 s.
    let run = expc_within(Duration::from_secs(60), &["check", &spec]);
    assert_refused(&run, "E0108", "a million U+202E in a comment");
    assert!(
        run.stderr.contains("and 999,900 more in this file, not shown"),
        "{}",
        &run.stderr[..2000]
    );
    assert!(!run.stderr.contains('\u{202E}'), "printed raw");
    assert!(run.stderr.len() < 200_000, "{} bytes", run.stderr.len());
}

#[test]
fn many_record_fields_and_sweep_parameters_are_checked_in_linear_time() {
    let dir = Scratch::new("many-names");
    // Duplicate fields, and names used by workloads, were found by a scan per
    // field or per parameter: 50,000 fields took 107 s, 20,000 parameters
    // 52 s (debug build). Both are bounded here by a minute.
    let fields: Vec<String> = (0..50_000).map(|i| format!("f{i} = {i}")).collect();
    let record = dir.file(
        "record.exp",
        &format!(
            "let r = {{{}}}\nexperiment \"r\" {{\n  duration = 1s\n  anomaly \"h\" {{ kind = cpuoccupy  cores = [r.f0]  for = 1s }}\n}}\n",
            fields.join(", ")
        ),
    );
    let run = expc_within(Duration::from_secs(60), &["check", &record]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let names: Vec<String> = (0..20_000).map(|i| format!("p{i}")).collect();
    let params: Vec<String> = names.iter().map(|n| format!("    {n} = [1]\n")).collect();
    let sweep = dir.file(
        "sweep.exp",
        &format!(
            "experiment \"s\" {{\n  duration = 1s\n  sweep {{\n{}  }}\n  anomaly \"h\" {{ kind = cpuoccupy  utilization = 1%  for = 1s  cores = [{}] }}\n}}\n",
            params.concat(),
            names.join(", ")
        ),
    );
    // Core 1 listed 20,000 times: one thread each, 20,000 % of the core.
    let run = expc_within(Duration::from_secs(60), &["check", &sweep]);
    assert_refused(&run, "E0602", "20,000 threads on core 1");
    assert!(
        run.stderr
            .contains("at the sweep point p0 = 1, p1 = 1, p2 = 1, p3 = 1, p4 = 1, p5 = 1 and 19,994 more"),
        "{}",
        &run.stderr[..run.stderr.len().min(2000)]
    );
}
