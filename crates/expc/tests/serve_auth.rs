//! `expc serve` in its own process on loopback, with a secret: connections
//! without a MAC, with a wrong one, replayed from another run or asking
//! more than the limit are refused without a byte of payload and counted;
//! a signed replay through `expc run` passes; the secret is nowhere in the
//! run directory, the output or the command lines; a public bind without a
//! secret does not start.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use crate::common::files;

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use exp_traffic::cvec::{Adu, Mode, Side};
use exp_traffic::replay::preamble::{encode, encode_signed, Script};
use exp_traffic::replay::{ClientSession, Secret};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(20);

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("expc-serve-{name}-{}", std::process::id()));
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

/// A running `expc serve`, killed if the test ends early.
struct Server {
    child: Option<Child>,
    address: SocketAddr,
}

impl Server {
    /// Starts `expc serve --bind 127.0.0.1:0 ARGS` with the secret in its
    /// environment (or none) and reads the address it prints.
    fn start(secret: Option<&str>, args: &[&str]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_expc"));
        command
            .args(["serve", "--bind", "127.0.0.1:0", "--for", "120s"])
            .args(args)
            .env_remove("EXPC_SERVE_SECRET")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(secret) = secret {
            command.env("EXPC_SERVE_SECRET", secret);
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("an address, got {line:?}"));
        Server {
            child: Some(child),
            address,
        }
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Stops it with SIGINT and returns its stdout and stderr.
    fn stop(mut self) -> (String, String) {
        let mut child = self.child.take().unwrap();
        let interrupted = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(interrupted.success());
        let (mut out, mut err) = (String::new(), String::new());
        child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{err}");
        (out, err)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The initiator sends 100 bytes; the acceptor answers with `answer` bytes.
fn script(id: u64, answer: u64) -> Script {
    let adu = |side, bytes| Adu {
        side,
        send_wait_us: 0,
        recv_wait_us: 0,
        bytes,
    };
    Script {
        id,
        mode: Mode::Sequential,
        window: None,
        adus: vec![adu(Side::Initiator, 100), adu(Side::Acceptor, answer)],
    }
}

/// Sends `preamble` and the initiator's 100 bytes, and counts what comes
/// back until the acceptor closes (a reset counts as closed).
async fn exchange(address: SocketAddr, preamble: &[u8]) -> u64 {
    let run = async {
        let mut stream = TcpStream::connect(address).await.unwrap();
        let mut sent = stream.write_all(preamble).await;
        if sent.is_ok() {
            sent = stream.write_all(&[0u8; 100]).await;
        }
        if sent.is_ok() {
            let _ = stream.shutdown().await;
        }
        let mut received = 0u64;
        let mut buf = [0u8; 64 << 10];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break received,
                Ok(n) => received += n as u64,
            }
        }
    };
    tokio::time::timeout(WAIT, run)
        .await
        .expect("the acceptor closes the connection")
}

fn count(report: &str, what: &str) -> Option<u64> {
    let at = report.find(what)? + what.len();
    report[at..]
        .trim_start_matches([':', ' '])
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_get_no_payload_and_are_counted() {
    let text = Secret::generate().unwrap();
    let secret = || Secret::from_text(&text).unwrap();
    let server = Server::start(Some(&text), &["--max-bytes-per-connection", "1MB"]);
    let address = server.address;

    // Run A: a correct connection, whose preamble an attacker captures.
    let run_a = ClientSession::open(address, secret(), WAIT).await.unwrap();
    let captured = encode_signed(&script(0, 5_000), &run_a);
    assert_eq!(exchange(address, &captured).await, 5_000, "a signed preamble is served");

    // No MAC: an unsigned preamble.
    assert_eq!(exchange(address, &encode(&script(1, 5_000))).await, 0, "no MAC");
    // A wrong MAC: one bit of the tag flipped.
    let mut forged = encode_signed(&script(2, 5_000), &run_a);
    *forged.last_mut().unwrap() ^= 1;
    assert_eq!(exchange(address, &forged).await, 0, "wrong MAC");
    // Run B: the preamble captured from run A, replayed.
    let run_b = ClientSession::open(address, secret(), WAIT).await.unwrap();
    assert_eq!(exchange(address, &captured).await, 0, "replayed from another run");
    // A signed preamble asking 2 MB of a 1 MB limit.
    assert_eq!(
        exchange(address, &encode_signed(&script(3, 2_000_000), &run_b)).await,
        0,
        "over the limit"
    );
    // A wrong secret cannot open a session.
    let impostor = Secret::from_text("not the secret, but long enough").unwrap();
    assert!(ClientSession::open(address, impostor, WAIT).await.is_err());

    // The captured preamble at another acceptor process: not its session.
    let other = Server::start(Some(&text), &[]);
    assert_eq!(exchange(other.address, &captured).await, 0, "another acceptor's run");
    let (_, other_log) = stopped(other).await;
    let other_summary = other_log.lines().last().unwrap();
    assert_eq!(count(other_summary, "unknown session"), Some(1), "{other_log}");

    let (_, log) = stopped(server).await;
    let summary = log.lines().last().unwrap();
    assert!(
        summary.contains("1 connections (1 complete, 0 short, 0 failed)"),
        "{log}"
    );
    assert!(summary.contains(", 2 sessions, 5 refused"), "{log}");
    for (reason, n) in [
        ("no MAC", 1),
        ("wrong MAC", 2), // the forged preamble and the impostor's hello
        ("replayed", 1),
        ("over the per-connection byte limit", 1),
    ] {
        assert_eq!(count(summary, reason), Some(n), "{reason}: {log}");
    }
    assert!(
        summary.ends_with("5000 sent"),
        "only the served connection's bytes: {log}"
    );
}

/// Stops `server` (SIGINT; it tallies what is left) and returns its output.
async fn stopped(server: Server) -> (String, String) {
    tokio::task::spawn_blocking(move || server.stop()).await.unwrap()
}

#[test]
fn a_public_bind_without_a_secret_does_not_start() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_expc"))
        .args(["serve", "--bind", "0.0.0.0:0"])
        .env_remove("EXPC_SERVE_SECRET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > WAIT {
            let _ = child.kill();
            panic!("expc serve --bind 0.0.0.0:0 started without a secret");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(!status.success());
    assert!(out.is_empty(), "no address printed: {out}");
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without a secret") && err.contains("EXPC_SERVE_SECRET"),
        "{err}"
    );
}

/// The spec's connections: 20, 50 ms apart, against `address`.
fn spec(address: SocketAddr) -> String {
    format!(
        r#"experiment "signed" {{
  seed     = 3
  duration = 3s
  traffic "web" {{
    vectors = synthetic(
      connections = 20,
      arrival = constant(50ms),
      epochs = 1,
      request = 300B,
      response = 20KB,
    )
    server     = "{address}"
    secret_env = "EXPC_TEST_REPLAY_SECRET"
  }}
}}
"#
    )
}

fn cmdline(pid: u32) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/cmdline")).unwrap()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_signed_replay_passes_and_the_secret_appears_nowhere() {
    let scratch = Scratch::new("secret");
    // The acceptor's secret comes from a file it creates; the initiator's
    // spec reads the same secret from its environment.
    let secret_file = scratch.0.join("serve.secret");
    let file_arg = secret_file.to_str().unwrap();
    let server = Server::start(None, &["--secret-file", file_arg, "--max-connections", "20"]);
    let text = std::fs::read_to_string(&secret_file).unwrap();
    let secret = text.trim().as_bytes().to_vec();
    assert_eq!(secret.len(), 64);
    let serve_cmdline = cmdline(server.pid());

    std::fs::write(scratch.0.join("spec.exp"), spec(server.address)).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_expc"))
        .current_dir(&scratch.0)
        .args(["run", "spec.exp", "--out", "runs"])
        .env("EXPC_TEST_REPLAY_SECRET", text.trim())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run_cmdline = cmdline(run.id());
    let run_output = run.wait_with_output().unwrap();
    let run_log = [run_output.stdout.as_slice(), &run_output.stderr].concat();
    assert!(run_output.status.success(), "{}", String::from_utf8_lossy(&run_log));
    let (serve_out, serve_err) = server.stop();
    assert!(
        serve_err.contains("20 connections (20 complete, 0 short, 0 failed), 1 sessions, 0 refused"),
        "{serve_err}"
    );

    let mut searched: Vec<(String, Vec<u8>)> = vec![
        ("expc serve's command line".into(), serve_cmdline),
        ("expc run's command line".into(), run_cmdline),
        ("expc run's output".into(), run_log),
        (
            "expc serve's output".into(),
            [serve_out.as_bytes(), serve_err.as_bytes()].concat(),
        ),
    ];
    let runs = scratch.0.join("runs");
    let run_files = files(&runs);
    assert!(run_files.iter().any(|f| f.ends_with("plan.json")));
    assert!(run_files.iter().any(|f| f.ends_with("manifest.json")));
    for file in run_files {
        let name = file.strip_prefix(&scratch.0).unwrap().display().to_string();
        searched.push((name, std::fs::read(&file).unwrap()));
    }
    for (what, bytes) in &searched {
        assert!(!contains(bytes, &secret), "the secret is in {what}");
    }
    // The plan names the variable, not its value.
    let plan = std::fs::read_to_string(files(&runs).into_iter().find(|f| f.ends_with("plan.json")).unwrap()).unwrap();
    assert!(plan.contains("\"secret_env\": \"EXPC_TEST_REPLAY_SECRET\""), "{plan}");
}
