//! `expc run` of a fleet over `mqtts://` end to end: Mosquitto with a TLS
//! listener, certificates made by the `openssl` tool at test time
//! (`apt-get install mosquitto openssl`), results read back through exp-results.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{Mosquitto, Scratch};

use exp_report::summarize;
use exp_results::manifest::{Manifest, RunStatus, TrialStatus};
use exp_results::open_run;

fn openssl(dir: &Path, args: &str) {
    let out = Command::new("openssl")
        .args(args.split_whitespace())
        .current_dir(dir)
        .output()
        .expect("cannot run `openssl`: apt-get install openssl");
    assert!(
        out.status.success(),
        "openssl {args}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `ca.pem` and `server.pem`/`server.key` (for 127.0.0.1, signed by the CA) in `dir`.
fn make_certificates(dir: &Path) {
    openssl(
        dir,
        "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout ca.key -out ca.pem \
         -subj /CN=expc-fleet-test-CA -addext basicConstraints=critical,CA:TRUE \
         -addext keyUsage=critical,keyCertSign,cRLSign",
    );
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n\
         subjectAltName=IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(
        dir,
        "req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \
         -subj /CN=127.0.0.1",
    );
    openssl(
        dir,
        "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -set_serial 2 -days 2 -extfile server.ext \
         -out server.pem",
    );
}

/// Mosquitto with a TLS listener using the certificates of [`make_certificates`].
fn start_tls(dir: &Path) -> Mosquitto {
    let file = |name: &str| dir.join(name).display().to_string();
    // `user root`: started as root, Mosquitto would drop to `mosquitto` before reading the key.
    Mosquitto::start_with(
        dir,
        &format!(
            "cafile {}\ncertfile {}\nkeyfile {}\nuser root\n",
            file("ca.pem"),
            file("server.pem"),
            file("server.key")
        ),
    )
}

/// A 1 s fleet of 5 devices publishing QoS 1 to `broker`, with a subscriber.
fn spec(broker: &str) -> String {
    format!(
        r#"
experiment "fleet_tls" {{
  duration = 1s
  fleet "plant" {{
    devices   = 5
    gap       = constant(50ms)
    qos       = 1
    subscribe = true
    broker {{
      {broker}
    }}
  }}
}}
"#
    )
}

/// `expc run` of `text` written to `spec.exp` in the scratch dir (paths in it are relative to it).
fn expc_run(scratch: &Scratch, text: &str, env: &[(&str, &Path)]) -> (Output, PathBuf) {
    let spec = scratch.0.join("spec.exp");
    std::fs::write(&spec, text).unwrap();
    let out = scratch.0.join("runs");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_expc"));
    cmd.arg("run").arg(&spec).arg("--out").arg(&out);
    for (k, v) in env {
        cmd.env(k, v);
    }
    (cmd.output().unwrap(), out)
}

/// The run succeeded and every message was acknowledged and delivered.
fn assert_all_acked(output: &Output, out: &Path) {
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{log}");
    let experiment = std::fs::read_dir(out).unwrap().flatten().next().unwrap().path();
    let dir = std::fs::read_dir(experiment).unwrap().flatten().next().unwrap().path();
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.status, RunStatus::Complete, "{log}");
    assert_eq!(manifest.trials[0].status, TrialStatus::Complete, "{log}");
    assert_eq!(manifest.trials[0].metrics["messages_lost"], 0.0, "{log}");
    let summary = summarize(&open_run(&dir).unwrap());
    let messages = summary
        .tables
        .iter()
        .find(|t| t.table == "mqtt_messages")
        .expect("no mqtt_messages table")
        .trials[0]
        .clone();
    // 5 devices × 20 sends in 1 s, less what setup and the end cut off.
    assert!(messages.rows >= 50, "{} messages", messages.rows);
    let count = |column: &str| messages.columns.iter().find(|c| c.column == column).unwrap().count;
    assert_eq!(count("ack_latency_ns"), messages.rows, "every message acknowledged");
    assert!(count("delivery_latency_ns") >= messages.rows * 9 / 10);
}

#[test]
fn fleet_over_tls() {
    let scratch = Scratch::new("ca-file");
    make_certificates(&scratch.0);
    let mosquitto = start_tls(&scratch.0);
    let broker = format!(
        "url = \"mqtts://127.0.0.1:{}\"\n      ca_file = \"ca.pem\"",
        mosquitto.port
    );
    let (output, out) = expc_run(&scratch, &spec(&broker), &[]);
    assert_all_acked(&output, &out);
}

#[test]
fn fleet_over_tls_trusts_the_system_roots_without_ca_file() {
    let scratch = Scratch::new("system-roots");
    make_certificates(&scratch.0);
    let mosquitto = start_tls(&scratch.0);
    let broker = format!("url = \"mqtts://127.0.0.1:{}\"", mosquitto.port);
    // The system store as OpenSSL would find it: here, only the test CA.
    let ca = scratch.0.join("ca.pem");
    let empty = scratch.0.join("no-cert-dir");
    std::fs::create_dir_all(&empty).unwrap();
    let env = [("SSL_CERT_FILE", ca.as_path()), ("SSL_CERT_DIR", empty.as_path())];
    let (output, out) = expc_run(&scratch, &spec(&broker), &env);
    assert_all_acked(&output, &out);
}

#[test]
fn unusable_tls_files_are_refused_before_anything_starts() {
    let scratch = Scratch::new("refused");
    let broker = "url = \"mqtts://127.0.0.1:8883\"\n      ca_file = \"missing-ca.pem\"\n      client_key = \"key.pem\"";
    let (output, out) = expc_run(&scratch, &spec(broker), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    // The half client identity is found first; after it, the missing file would be.
    assert!(stderr.contains("E1006") && stderr.contains("client_cert"), "{stderr}");
    assert!(!out.exists());
    let broker = "url = \"mqtts://127.0.0.1:8883\"\n      ca_file = \"missing-ca.pem\"";
    let (output, out) = expc_run(&scratch, &spec(broker), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("E1006") && stderr.contains("missing-ca.pem"),
        "{stderr}"
    );
    assert!(!out.exists());
}
