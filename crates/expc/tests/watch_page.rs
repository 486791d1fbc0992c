//! `expc run --watch`: the live page of a fleet beside an anomaly, opened
//! in headless Chromium twice while the trial runs. The second load shows
//! more data than the first (points of the figures' series), the page
//! fetched nothing but its own server (every host name unresolvable, the
//! console silent), and a request without the token is refused.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use crate::common::{expc, text, wait_for, Scratch};

const SPEC: &str = r#"
experiment "watch-page" {
  duration = 25s
  fleet "sensors" {
    devices = 10
    gap     = constant(20ms)
    qos     = 1
  }
  anomaly "cpu" {
    kind        = cpuoccupy
    utilization = 50%
    at          = 3s
    for         = 10s
  }
  monitor { interval = 500ms }
}
"#;

/// The status code and body of `GET path` from `address` (`127.0.0.1:PORT`).
fn get(address: &str, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).unwrap().parse().unwrap();
    (status, response.split_once("\r\n\r\n").unwrap().1.to_string())
}

fn status(address: &str, path: &str) -> u16 {
    get(address, path).0
}

/// The page's DOM after Chromium ran its script for a few (virtual)
/// seconds, offline: every host but 127.0.0.1 fails to resolve, and any
/// failed or refused load would be logged to the console, which must stay
/// silent.
fn dump(scratch: &Scratch, url: &str) -> String {
    let output = std::process::Command::new("/usr/bin/chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-proxy-server",
        ])
        // Every host but the page's own fails (the rule covers addresses too).
        .arg("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
        .args(["--enable-logging=stderr", "--v=0"])
        .arg("--virtual-time-budget=5000")
        .arg(format!("--user-data-dir={}", scratch.0.join("profile").display()))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "the page logged to its console: {console:#?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Points drawn in the page's figures: the vertices of every polyline and
/// path, and every circle.
fn drawn_points(dom: &str) -> usize {
    let attribute = |name: &str| {
        dom.match_indices(name)
            .map(|(at, _)| {
                let rest = &dom[at + name.len()..];
                let value = &rest[..rest.find('"').unwrap_or(0)];
                value.split([' ', 'L', 'M']).filter(|p| p.contains(',')).count()
            })
            .sum::<usize>()
    };
    attribute(" points=\"") + attribute(" d=\"") + dom.matches("<circle").count()
}

#[test]
#[cfg_attr(not(chromium), ignore = "needs Debian's chromium")]
fn the_watch_page_grows_while_the_trial_runs_and_needs_its_token() {
    let scratch = Scratch::new("watch-page");
    let spec = scratch.0.join("watch.exp");
    std::fs::write(&spec, SPEC).unwrap();
    let mut run = expc()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(scratch.0.join("runs"))
        .arg("--watch")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (lines_tx, lines) = mpsc::channel();
    let stderr = run.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line.clone());
            all.push(line);
        }
        all
    });
    let url = loop {
        let line = lines
            .recv_timeout(Duration::from_secs(20))
            .expect("expc prints the watch URL");
        if let Some(url) = line.strip_prefix("watch: ") {
            break url.to_string();
        }
    };
    let (address, token) = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split_once("/?token="))
        .unwrap();
    assert!(address.starts_with("127.0.0.1:"), "loopback by default: {url}");
    assert_eq!(token.len(), 32, "128 random bits: {url}");

    // The token is required, on every path.
    assert_eq!(status(address, "/"), 403);
    assert_eq!(status(address, "/state"), 403);
    assert_eq!(status(address, &format!("/?token={}", "0".repeat(32))), 403);
    assert_eq!(status(address, &format!("/state?token={token}")), 200);

    // Once the running trial's first rows are checkpointed (every 2 s),
    // then a few seconds later.
    let latency_figure = "id=\"fleet-latency-over-time-trial-0\"";
    wait_for("the running trial's figures", Duration::from_secs(30), || {
        get(address, &format!("/state?token={token}"))
            .1
            .contains(latency_figure)
            .then_some(())
    });
    let first = dump(&scratch, &url);
    std::thread::sleep(Duration::from_secs(4));
    let second = dump(&scratch, &url);
    for dom in [&first, &second] {
        assert!(
            dom.contains("<h2>Trial order</h2>") && dom.contains("<h2>Validity flags</h2>"),
            "{dom}"
        );
        assert!(dom.contains(latency_figure), "the running trial's figures: {dom}");
        assert!(
            !dom.contains("data-updates=\"0\""),
            "the page's script fetched its state again at least once"
        );
    }
    // Nothing in the page names another place than its own server (the SVG
    // namespace is a name, never fetched).
    for (at, _) in second.match_indices("http") {
        let rest = &second[at..];
        assert!(
            rest.starts_with("http://www.w3.org/") || rest.starts_with(&format!("http://{address}/")),
            "the page names {}",
            &rest[..rest.len().min(60)]
        );
    }
    let (before, after) = (drawn_points(&first), drawn_points(&second));
    eprintln!("points drawn: {before}, then {after}");
    assert!(
        after > before,
        "the second load shows more data: {before} points, then {after}"
    );

    let status = run.wait().unwrap();
    let stderr = reader.join().unwrap().join("\n");
    assert!(status.success(), "{stderr}");
}
