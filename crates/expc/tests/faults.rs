//! Faults a run must survive or refuse cleanly, asserted from outside the
//! process: brokers that are not there or never answer, payloads no broker
//! takes, and a signal at every phase of a run. Every run here is bounded:
//! a hang fails the test instead of stalling the suite.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use crate::common;

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::common::{expc, run_dir, signal, spawn_run, text, Scratch};
use exp_results::manifest::{Manifest, RunStatus};

/// Waits for the child to exit; kills it and fails after `limit`, saying
/// what each of its threads was doing.
fn exit_within(child: &mut Child, limit: Duration) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let threads = thread_states(child.id());
            let _ = child.kill();
            let _ = child.wait();
            panic!("expc did not exit within {limit:?}; its threads (name, state, kernel wait):\n{threads}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Each thread of `pid`: its name, state and where in the kernel it waits.
fn thread_states(pid: u32) -> String {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten();
    tasks
        .map(|task| {
            let read = |file: &str| std::fs::read_to_string(task.path().join(file)).unwrap_or_default();
            let stat = read("stat");
            let state = stat
                .rsplit(") ")
                .next()
                .and_then(|s| s.split(' ').next())
                .unwrap_or("?")
                .to_string();
            format!("  {} {} {}", read("comm").trim(), state, read("wchan").trim())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn fleet_spec(broker: &str, payload: &str, duration: &str) -> String {
    format!(
        r#"
experiment "faults" {{
  duration = {duration}
  fleet "plant" {{
    devices = 5
    gap     = constant(100ms)
    payload = {payload}
    {broker}
  }}
}}
"#
    )
}

fn write_spec(scratch: &Scratch, text: &str) -> PathBuf {
    let path = scratch.0.join("spec.exp");
    std::fs::write(&path, text).unwrap();
    path
}

const JSON: &str = "json(size = 128B, fields = [temperature])";

#[test]
fn an_unreachable_broker_is_a_preflight_error_naming_the_url() {
    let scratch = Scratch::new("faults-unreachable");
    // A port nobody listens on: bound, then released.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("mqtt://127.0.0.1:{port}");
    let spec = write_spec(
        &scratch,
        &fleet_spec(&format!("broker {{ url = \"{url}\" }}"), JSON, "3s"),
    );
    let out = scratch.0.join("runs");
    for dry in [true, false] {
        let mut command = expc();
        command.arg("run").arg(&spec).arg("--out").arg(&out);
        if dry {
            command.arg("--dry-run");
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("E1006") && stderr.contains(&url), "{stderr}");
        assert!(!out.exists(), "nothing written");
    }
}

#[test]
fn a_payload_no_packet_holds_is_a_preflight_error() {
    let scratch = Scratch::new("faults-payload");
    let spec = write_spec(&scratch, &fleet_spec("", "raw(size = 1TB)", "3s"));
    let output = expc()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(scratch.0.join("runs"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("E1007") && stderr.contains("max_packet_bytes"),
        "{stderr}"
    );
}

/// A "broker" that accepts connections and never answers: devices wait
/// for a CONNACK that never comes. Ctrl-C must still end the run, with its
/// manifest and tables, long before the trial would.
#[test]
fn ctrl_c_ends_a_run_whose_broker_never_answers() {
    let scratch = Scratch::new("faults-silent");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = accepted.clone();
    let silent = std::thread::spawn(move || {
        listener.set_nonblocking(true).unwrap();
        let mut held = Vec::new();
        let started = Instant::now();
        // Bounded: gives up after two minutes whatever happens.
        while started.elapsed() < Duration::from_secs(120) {
            match listener.accept() {
                Ok((stream, _)) => {
                    held.push(stream);
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
            if held.len() >= 5 {
                break;
            }
        }
        // Reads nothing, answers nothing, until the runner hangs up.
        for mut stream in held {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
            let mut sink = Vec::new();
            let _ = stream.read_to_end(&mut sink);
        }
    });
    let spec = write_spec(
        &scratch,
        &fleet_spec(
            &format!("broker {{ url = \"mqtt://127.0.0.1:{port}\" }}"),
            JSON,
            "10min",
        ),
    );
    let out = scratch.0.join("runs");
    let mut child = spawn_run(&spec, &out);
    // Once a device is stuck connecting: past preflight's reachability
    // probe (one connection), the trial's devices connect and get no answer.
    let started = Instant::now();
    while !out.exists() || accepted.load(std::sync::atomic::Ordering::SeqCst) < 2 {
        assert!(started.elapsed() < Duration::from_secs(60), "the run never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(&child, "INT");
    let status = exit_within(&mut child, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130));
    let manifest = Manifest::read(&run_dir(&out).unwrap()).unwrap();
    assert_eq!(manifest.status, RunStatus::Interrupted);
    silent.join().unwrap();
}

/// SIGINT or SIGTERM at any moment of a run — while it compiles, during
/// preflight, while the embedded broker starts, devices connect, messages
/// flow, between trials and at the very end — ends it within a bound: 130
/// and a manifest saying `interrupted` if the run had begun, nothing
/// written if it had not, and never a hang or a crash.
#[test]
fn a_signal_at_any_phase_ends_the_run_cleanly() {
    let scratch = Scratch::new("faults-phases");
    let spec = write_spec(
        &scratch,
        r#"
experiment "phases" {
  duration = 1500ms
  pause    = 500ms
  repeat   = 2
  fleet "plant" {
    devices = 20
    gap     = constant(50ms)
    payload = json(size = 128B, fields = [temperature])
  }
  anomaly "leak" {
    kind  = memleak
    size  = 1MiB
    rate  = 10/s
    limit = 8MiB
  }
  monitor { interval = 200ms }
}
"#,
    );
    for (i, delay_ms) in [0u64, 20, 60, 150, 400, 900, 1600, 2100, 3400].into_iter().enumerate() {
        for name in ["INT", "TERM"] {
            let out = scratch.0.join(format!("runs-{i}-{name}"));
            let mut child = expc()
                .arg("run")
                .arg(&spec)
                .arg("--out")
                .arg(&out)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(delay_ms));
            // The run may have ended already at the last delays: then there is no one to signal.
            if child.try_wait().unwrap().is_none() {
                let _ = Command::new("kill")
                    .arg(format!("-{name}"))
                    .arg(child.id().to_string())
                    .status();
            }
            eprintln!("SIG{name} after {delay_ms} ms");
            let status = exit_within(&mut child, Duration::from_secs(60));
            let mut stderr = String::new();
            child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            let what = format!("SIG{name} after {delay_ms} ms: {status:?}\n{stderr}");
            assert!(!stderr.contains("panicked"), "{what}");
            match status.code() {
                // Interrupted, or finished before the signal arrived.
                Some(130) | Some(0) => {
                    if out.exists() {
                        let dir = run_dir(&out).unwrap();
                        let manifest = Manifest::read(&dir).unwrap();
                        assert!(
                            matches!(manifest.status, RunStatus::Interrupted | RunStatus::Complete),
                            "{what}"
                        );
                        assert!(
                            !dir.file_name().unwrap().to_string_lossy().ends_with(".partial"),
                            "{what}"
                        );
                    }
                }
                // Killed by the signal before expc installed its handler
                // (while the process starts): nothing may be written yet.
                None => assert!(!out.exists(), "{what}"),
                Some(code) => panic!("exit {code}: {what}"),
            }
        }
    }
}

#[test]
fn time_scales_out_of_range_are_refused_before_anything_runs() {
    let scratch = Scratch::new("faults-scale");
    let spec = write_spec(&scratch, &fleet_spec("", JSON, "3s"));
    let out = scratch.0.join("runs");
    for (scale, shown) in [
        ("0", "0"),
        ("-1", "-1"),
        ("NaN", "NaN"),
        ("inf", "inf"),
        ("1e300", "1e300"),
    ] {
        for dry in [true, false] {
            let mut command = expc();
            command
                .arg("run")
                .arg(&spec)
                .arg("--out")
                .arg(&out)
                .arg(format!("--time-scale={scale}"));
            if dry {
                command.arg("--dry-run");
            }
            let output = command.output().unwrap();
            assert_eq!(output.status.code(), Some(1), "{scale}: {}", text(&output));
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains(&format!(
                    "--time-scale must be a number above 0 and at most 1000, not {shown}"
                )),
                "{stderr}"
            );
            assert!(!out.exists());
        }
    }
}

#[test]
fn an_out_that_is_a_file_is_named_as_one() {
    let scratch = Scratch::new("faults-out-file");
    let spec = write_spec(&scratch, &fleet_spec("", JSON, "3s"));
    let file = scratch.0.join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let output = expc().arg("run").arg(&spec).arg("--out").arg(&file).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("--out {} is a file, not a directory", file.display())),
        "{stderr}"
    );
}

/// Two runs of one plan started at once each get their own run id and
/// directory (ids are per second: the second gets `-2`).
#[test]
fn runs_started_together_do_not_collide() {
    let scratch = Scratch::new("faults-ids");
    let spec = write_spec(
        &scratch,
        "experiment \"ids\" {\n  duration = 300ms\n  anomaly \"leak\" {\n    kind = memleak\n    size = 1MiB\n    limit = 2MiB\n  }\n}\n",
    );
    let out = scratch.0.join("runs");
    let children: Vec<Child> = (0..3)
        .map(|_| {
            expc()
                .arg("run")
                .arg(&spec)
                .arg("--out")
                .arg(&out)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output));
    }
    let runs: Vec<String> = std::fs::read_dir(out.join("ids"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(runs.len(), 3, "{runs:?}");
}

/// A plan read from a file is held to the compiler's limits: a QoS level
/// MQTT does not have, a gap of 0 and a window of 1 ns every 2 ns (which
/// no spec compiles to) are refused by preflight, dry or real, before a
/// schedule is expanded or a run directory made.
#[test]
fn a_hand_edited_plan_is_held_to_the_compilers_limits() {
    let scratch = Scratch::new("faults-hand-edited");
    let mut plan = compiled_plan(&scratch, &fleet_spec("", JSON, "1h"));
    let variant = &mut plan["workloads"][0]["variants"][0];
    variant["window"]["period"] = serde_json::json!({"every_ns": 2, "active_ns": 1});
    variant["config"]["fleet"]["qos"] = serde_json::json!(7);
    variant["config"]["fleet"]["gap"]["value"] = serde_json::json!(0.0);
    // A ramp of one device per 10^300 s would overflow a duration.
    variant["config"]["fleet"]["connect_rate_per_s"] = serde_json::json!(1e-300);
    variant["config"]["fleet"]["broker"]["max_inflight"] = serde_json::json!(0);
    for (dry, log) in refused_plan(&scratch, &plan) {
        for property in ["connect_rate_per_s", "max_inflight"] {
            assert!(
                log.contains("E1007") && log.contains(&format!("`{property}` is")),
                "dry {dry}, {property}: {log}"
            );
        }
        assert!(
            log.contains("E0606") && log.contains("`active` is 1 ns"),
            "dry {dry}, the period: {log}"
        );
        assert!(log.contains("mean gap is 0 ns"), "dry {dry}, the gap: {log}");
        assert!(
            log.contains("E1006") && log.contains("QoS 7"),
            "dry {dry}, the QoS: {log}"
        );
    }
}

/// Hand-edited anomaly, traffic, xml, monitor and timing settings no spec
/// compiles to are refused by preflight, named: they aborted the run (a
/// 152 TB allocation for 10^12 synthetic connections), started four billion
/// threads, waited for ever (a duration of 2^64 − 1 ns), or were silently
/// taken for something else (`network = "bogus"` ran on loopback).
#[test]
fn hand_edited_anomaly_traffic_and_xml_settings_are_refused() {
    let scratch = Scratch::new("faults-hand-edited-kinds");
    let corpus = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../specs/xml/corpus");
    let spec = format!(
        r#"
experiment "kinds" {{
  duration = 3s
  anomaly "hog" {{ kind = cpuoccupy  utilization = 50% }}
  traffic "t" {{
    vectors = synthetic(connections = 20, arrival = constant(50ms), request = 1KB, response = 1KB)
  }}
  xml "x" {{
    corpus    = "{}"
    split_at  = "event"
    documents = 5
  }}
  monitor {{}}
}}
"#,
        corpus.display()
    );
    let mut plan = compiled_plan(&scratch, &spec);
    let config = |plan: &mut serde_json::Value, w: usize| plan["workloads"][w]["variants"][0]["config"].take();
    let (mut anomaly, mut traffic, mut xml) = (config(&mut plan, 0), config(&mut plan, 1), config(&mut plan, 2));
    anomaly["anomaly"]["params"]["cpuoccupy"]["utilization_ratio"] = serde_json::json!(5.0);
    traffic["traffic"]["vectors"]["synthetic"]["connections"] = serde_json::json!(1_000_000_000_000u64);
    traffic["traffic"]["source_addresses"] = serde_json::json!(0);
    traffic["traffic"]["network"] = serde_json::json!("bogus");
    xml["xml"]["threads"] = serde_json::json!(u32::MAX);
    xml["xml"]["documents"] = serde_json::json!(0);
    for (w, config) in [anomaly, traffic, xml].into_iter().enumerate() {
        plan["workloads"][w]["variants"][0]["config"] = config;
    }
    // Times past the language's 2^53 − 1 ns: the trial waited for ever.
    plan["experiment"]["duration_ns"] = serde_json::json!(u64::MAX);
    plan["workloads"][0]["variants"][0]["window"]["start_ns"] = serde_json::json!(u64::MAX);
    plan["monitor"]["variants"][0]["interval_ns"] = serde_json::json!(0);
    for (dry, log) in refused_plan(&scratch, &plan) {
        for expected in [
            "anomaly `hog`: invalid anomaly configuration: utilization must be between 0 and 1, not 5",
            "traffic `t`: `connections` is 1000000000000, outside 1 to 10000000",
            "traffic `t`: `source_addresses` is 0, outside 1 to 254",
            "traffic `t`: `network` is `bogus`",
            "xml `x`: `threads` is 4294967295, outside 0 to 1024",
            "xml `x`: `documents` is 0, outside 1 to",
            "experiment: `duration_ns` is 18446744073709552000, outside 1 to 9007199254740991",
            "experiment: `monitor interval_ns` is 0, outside 10000000 to 3600000000000",
            "workload `hog`: `window start_ns` is 18446744073709552000, outside 0 to",
        ] {
            assert!(log.contains(expected), "dry {dry}: {expected}\n{log}");
        }
        assert_eq!(log.matches("E1005").count(), 9, "dry {dry}: {log}");
    }
}

/// An xml workload asked for more documents than it can write stops at the
/// trial's end, and on Ctrl-C when the trial has no end: generation ran on,
/// deaf to both, and wrote 8.9 million files before it was killed.
#[test]
fn xml_generation_stops_at_the_trials_end_and_on_ctrl_c() {
    let scratch = Scratch::new("faults-xml-stop");
    let corpus = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("../../specs/xml/corpus");
    let spec = |duration: &str| {
        format!(
            "experiment \"endless\" {{\n  {duration}\n  xml \"x\" {{\n    corpus = \"{}\"\n    split_at = \"event\"\n    documents = 1000000000000\n    per_file = 1000\n    compare = false\n    {}\n  }}\n}}\n",
            corpus.display(),
            if duration.is_empty() { "" } else { "at = 1s" }
        )
    };
    // The timed run also starts its xml workload at `at = 1s`.
    for (duration, signalled) in [("duration = 3s", false), ("", true)] {
        let spec = write_spec(&scratch, &spec(duration));
        let out = scratch.0.join(if signalled { "signalled" } else { "timed" });
        let mut child = spawn_run(&spec, &out);
        if signalled {
            let started = Instant::now();
            // Once documents are being written.
            while common::files(&out)
                .iter()
                .all(|f| !f.to_string_lossy().contains("/documents/"))
            {
                assert!(started.elapsed() < Duration::from_secs(60), "no document written");
                std::thread::sleep(Duration::from_millis(50));
            }
            signal(&child, "INT");
        }
        let status = exit_within(&mut child, Duration::from_secs(60));
        let manifest = Manifest::read(&run_dir(&out).unwrap()).unwrap();
        let expected = if signalled {
            (Some(130), RunStatus::Interrupted)
        } else {
            (Some(0), RunStatus::Complete)
        };
        assert_eq!((status.code(), manifest.status), expected, "{duration:?}");
        if !signalled {
            let started = manifest.trials[0].started_at_unix_ns.unwrap();
            let first_written = common::files(&out)
                .iter()
                .filter(|f| f.to_string_lossy().contains("/documents/"))
                .map(|f| std::fs::metadata(f).unwrap().modified().unwrap())
                .min()
                .expect("documents were written");
            let after = exp_results::unix_ns(first_written).saturating_sub(started);
            assert!(
                after >= 1_000_000_000,
                "the first document {after} ns after the start, before `at`"
            );
        }
    }
}

/// Every value of a field is checked, not only the variant's.
#[test]
fn a_hand_edited_field_value_is_checked_like_a_variant() {
    let scratch = Scratch::new("faults-hand-edited-field");
    let spec = fleet_spec("", JSON, "1h")
        .replace(
            "duration = 1h",
            "duration = 1h\n  sweep {\n    n = [1, 2]\n    q = [0, 1]\n  }",
        )
        .replace("devices = 5", "devices = n\n    qos = q");
    let mut plan = compiled_plan(&scratch, &spec);
    let fields = plan["workloads"][0]["fields"].as_array_mut().unwrap();
    for field in fields.iter_mut() {
        match field["pointers"][0].as_str().unwrap() {
            "/config/fleet/qos" => field["values"][1] = serde_json::json!(7),
            "/config/fleet/devices" => field["values"][1] = serde_json::json!("lots"),
            _ => {}
        }
    }
    for (dry, log) in refused_plan(&scratch, &plan) {
        assert!(
            log.contains("E1006") && log.contains("QoS 7"),
            "dry {dry}, the QoS: {log}"
        );
        assert!(
            log.contains("E1005") && log.contains("field `/config/fleet/devices` value 1 does not fit"),
            "dry {dry}, the devices: {log}"
        );
    }
}

/// `expc plan SPEC` as JSON.
fn compiled_plan(scratch: &Scratch, spec: &str) -> serde_json::Value {
    let spec = write_spec(scratch, spec);
    let plan_path = scratch.0.join("compiled.json");
    let compiled = expc()
        .arg("plan")
        .arg(&spec)
        .arg("-o")
        .arg(&plan_path)
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{}", text(&compiled));
    serde_json::from_slice(&std::fs::read(&plan_path).unwrap()).unwrap()
}

/// Runs `plan` with and without `--dry-run`, asserts each is refused before
/// anything is written (exit 1, no run directory) and returns the logs.
fn refused_plan(scratch: &Scratch, plan: &serde_json::Value) -> Vec<(bool, String)> {
    let plan_path = scratch.0.join("plan.json");
    std::fs::write(&plan_path, serde_json::to_vec(plan).unwrap()).unwrap();
    let out = scratch.0.join("runs");
    let mut logs = Vec::new();
    for dry in [true, false] {
        let mut command = expc();
        command.arg("run").arg(&plan_path).arg("--out").arg(&out);
        if dry {
            command.arg("--dry-run");
        }
        // Output to files: a pipe nobody reads could block the child.
        let (stdout, stderr) = (scratch.0.join("stdout"), scratch.0.join("stderr"));
        let mut child = command
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let status = exit_within(&mut child, Duration::from_secs(60));
        let log = format!(
            "--- stdout\n{}\n--- stderr\n{}",
            std::fs::read_to_string(&stdout).unwrap(),
            std::fs::read_to_string(&stderr).unwrap()
        );
        assert_eq!(status.code(), Some(1), "dry {dry}: {log}");
        assert!(!out.exists(), "nothing written: {}", out.display());
        logs.push((dry, log));
    }
    logs
}
