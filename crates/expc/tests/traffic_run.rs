//! `expc run` with traffic workloads on loopback (no root needed): the
//! in-process acceptor, an `expc serve` acceptor in another process, the
//! measurement window, the report, and preflight on an unusable trace.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-traffic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// 20 connections 50 ms apart, two exchanges each; `extra` goes into the block.
fn spec(extra: &str) -> String {
    format!(
        r#"experiment "traffic-test" {{
  seed     = 11
  duration = 3s

  traffic "web" {{
    vectors = synthetic(
      connections = 20,
      arrival = constant(50ms),
      epochs = 1,
      request = 300B,
      response = 20KB,
      server_time = constant(1ms),
      think_time = constant(5ms),
    )
    interval = 200ms
    {extra}
  }}
}}
"#
    )
}

fn expc(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_expc"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Runs `spec.exp` in `dir` and returns the run directory.
fn run(dir: &Path) -> PathBuf {
    let output = expc(&["run", "spec.exp", "--out", "runs"], dir);
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let experiment = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    std::fs::read_dir(experiment).unwrap().flatten().next().unwrap().path()
}

fn report_json(run_dir: &Path) -> serde_json::Value {
    let output = expc(&["report", run_dir.to_str().unwrap(), "--json"], Path::new("."));
    assert!(output.status.success());
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn loopback_replay_writes_tables_and_reports_them() {
    let scratch = Scratch::new("loopback");
    std::fs::write(
        scratch.0.join("spec.exp"),
        spec("structure = atbt\n    measure = 200ms..700ms"),
    )
    .unwrap();
    let dir = run(&scratch.0);
    let report = report_json(&dir);
    let trials = report["traffic"]["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 1);
    let g = &trials[0];
    assert_eq!(
        (g["workload"].as_str(), g["structure"].as_str()),
        (Some("web"), Some("atbt"))
    );
    assert_eq!(g["rtt_mode"], "none");
    // Connections start at 50, 100, …, 1000 ms: 200..700 ms holds 10 of them
    // (by start), and the other 10 rows are written but left out.
    let inside = g["connections"].as_u64().unwrap();
    assert_eq!(inside + g["outside_window"].as_u64().unwrap(), 20);
    assert!((9..=11).contains(&inside), "{inside} connections in the window");
    assert_eq!(g["failed"].as_u64(), Some(0));
    assert_eq!(g["complete"].as_u64(), Some(inside));
    // Two exchanges per connection, 20 KB answers each.
    assert_eq!(g["response_time_ns"]["n"].as_u64(), Some(2 * inside));
    assert_eq!(g["received_bytes"].as_u64(), Some(inside * 2 * 20_000));
    assert!(g["peak_active"].as_u64().unwrap() >= 1);
    // The trial's metrics carry the registry's names.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let metrics = &manifest["trials"][0]["metrics"];
    for name in ["duration", "response_time", "active_connections", "throughput"] {
        assert!(metrics[name].as_f64().is_some(), "metric {name} missing: {metrics}");
    }
    let text = expc(&["report", dir.to_str().unwrap()], Path::new("."));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("== Traffic") && text.contains("atbt"), "{text}");
}

#[test]
fn replays_against_expc_serve() {
    let scratch = Scratch::new("serve");
    let mut server = Command::new(env!("CARGO_BIN_EXE_expc"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--max-connections",
            "20",
            "--for",
            "60s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line.trim().to_string();
    assert!(address.starts_with("127.0.0.1:"), "{address}");
    std::fs::write(scratch.0.join("spec.exp"), spec(&format!("server = \"{address}\""))).unwrap();
    let dir = run(&scratch.0);
    let served = server.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&served.stderr);
    assert!(served.status.success(), "{log}");
    assert!(
        log.contains("reached --max-connections; 20 connections (20 complete"),
        "{log}"
    );
    let report = report_json(&dir);
    let g = &report["traffic"]["trials"][0];
    assert_eq!((g["connections"].as_u64(), g["failed"].as_u64()), (Some(20), Some(0)));
}

#[test]
fn a_missing_trace_is_a_preflight_diagnostic() {
    let scratch = Scratch::new("trace");
    let spec = r#"experiment "trace-missing" {
  duration = 1s
  traffic "t" {
    vectors = trace("missing.cvec")
  }
}
"#;
    std::fs::write(scratch.0.join("spec.exp"), spec).unwrap();
    let output = expc(&["run", "spec.exp", "--out", "runs"], &scratch.0);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("E1004") && stderr.contains("missing.cvec"), "{stderr}");
    assert!(!scratch.0.join("runs").exists(), "preflight writes nothing");
}

/// A Tmix trace next to the spec, run from another directory: 6 sequential
/// connections of two exchanges, replayed under the `ab` model.
#[test]
fn replays_a_trace_beside_the_spec() {
    let scratch = Scratch::new("trace-run");
    let sub = scratch.0.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let mut trace = String::new();
    for i in 0..6 {
        trace.push_str(&format!(
            "SEQ {} 2 c{i} c{i}\nr 10000\n> 300\n< 5000\nt 2000\n> 200\n< 8000\n",
            i * 100_000
        ));
    }
    std::fs::write(sub.join("link.cvec"), trace).unwrap();
    let spec = "experiment \"trace-run\" {\n  duration = 2s\n  traffic \"t\" {\n    vectors = trace(\"link.cvec\")\n    structure = ab\n  }\n}\n";
    std::fs::write(sub.join("spec.exp"), spec).unwrap();
    let output = expc(&["run", "sub/spec.exp", "--out", "runs"], &scratch.0);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let experiment = std::fs::read_dir(scratch.0.join("runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let dir = std::fs::read_dir(experiment).unwrap().flatten().next().unwrap().path();
    let g = &report_json(&dir)["traffic"]["trials"][0];
    assert_eq!((g["connections"].as_u64(), g["complete"].as_u64()), (Some(6), Some(6)));
    assert_eq!(g["sent_bytes"].as_u64(), Some(6 * 500));
    assert_eq!(g["received_bytes"].as_u64(), Some(6 * 13_000));
    assert_eq!(g["response_time_ns"]["n"].as_u64(), Some(12));
    assert_eq!(g["structure"], "ab");
}

/// Ctrl-C in the middle of a window: the replay stops (connections cut,
/// the rest not started), and the window's rows are written, one per
/// connection, with a manifest saying the run was interrupted.
#[test]
fn ctrl_c_keeps_the_interrupted_windows_rows() {
    let scratch = Scratch::new("sigint");
    // 20 connections 300 ms apart; each answers once, then thinks for 30 s.
    let spec = r#"experiment "traffic-sigint" {
  seed     = 5
  duration = 60s
  traffic "web" {
    vectors = synthetic(
      connections = 20,
      arrival = constant(300ms),
      epochs = 2,
      request = 300B,
      response = 20KB,
      server_time = constant(1ms),
      think_time = constant(30s),
    )
    interval = 200ms
  }
}
"#;
    std::fs::write(scratch.0.join("spec.exp"), spec).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_expc"))
        .current_dir(&scratch.0)
        .args(["run", "spec.exp", "--out", "runs"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once the first connection is open (both of its ends are
    // sockets of the runner), long before the 20th starts 5.7 s later.
    let started = std::time::Instant::now();
    while established_sockets_of(child.id()) < 2 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "no connection opened"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");

    let experiment = std::fs::read_dir(scratch.0.join("runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let dir = std::fs::read_dir(experiment).unwrap().flatten().next().unwrap().path();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "interrupted", "{manifest}");
    let summary = exp_report::summarize(&exp_results::open_run(&dir).unwrap());
    let rows: u64 = summary
        .tables
        .iter()
        .filter(|t| t.table == "traffic_connections")
        .flat_map(|t| &t.trials)
        .map(|t| t.rows)
        .sum();
    assert_eq!(rows, 20, "one row per connection of the interrupted window ({stderr})");
    // The started connections were cut while thinking: counted, none
    // complete, and their first answers measured.
    let g = &report_json(&dir)["traffic"]["trials"][0];
    let started = g["connections"].as_u64().unwrap();
    assert!((1..20).contains(&started), "{g}");
    assert_eq!(g["complete"].as_u64(), Some(0), "{g}");
    assert_eq!(g["failed"].as_u64(), Some(0), "{g}");
    assert_eq!(g["received_bytes"].as_u64(), Some(started * 20_000), "{g}");
}

/// A 10 Mbit/s bottleneck between the namespaces: the queue is sampled and
/// the stage's own capacity is measured and written beside it, far above the
/// link's rate. Needs root and TUN: ignored where the build found neither.
#[test]
#[cfg_attr(
    not(rtt_emulation),
    ignore = "needs root, CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun and `ip`"
)]
fn a_bottleneck_run_records_its_queue_and_the_stages_capacity() {
    let scratch = Scratch::new("bottleneck");
    std::fs::write(
        scratch.0.join("spec.exp"),
        spec("structure = blk_conc\n    bottleneck = 10Mbps\n    queue = 64KB"),
    )
    .unwrap();
    let dir = run(&scratch.0);
    let read = |table: &str| {
        let path = dir.join("tables").join(table).join("trial=0").join("part-0.parquet");
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        exp_parquet::Reader::new(file).and_then(|r| r.read_all()).unwrap()
    };
    let queue = read("traffic_queue");
    assert!(queue.height() > 0, "queue samples every 10 ms");
    let stage = read("traffic_stage");
    assert_eq!(stage.height(), 1);
    let rate = stage.column("bottleneck_bit_per_s").unwrap().u64().unwrap().get(0);
    assert_eq!(rate, Some(10_000_000));
    let goodput = stage
        .column("stage_goodput_bit_per_s")
        .unwrap()
        .f64()
        .unwrap()
        .get(0)
        .unwrap();
    assert!(
        goodput > 10.0 * 10e6,
        "the stage forwards {goodput} bit/s, far above the link"
    );
}

/// How many established TCP sockets the process `pid` holds: its socket
/// inodes (/proc/<pid>/fd) among the established ones of /proc/<pid>/net/tcp.
fn established_sockets_of(pid: u32) -> usize {
    let inodes: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            Some(target.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .collect();
    let table = std::fs::read_to_string(format!("/proc/{pid}/net/tcp")).unwrap_or_default();
    table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|fields| fields.get(3) == Some(&"01") && fields.get(9).is_some_and(|inode| inodes.contains(*inode)))
        .count()
}
