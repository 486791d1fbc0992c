//! Issue 39 §4: every file a user names or a spec imports is read by one
//! bounded reader (`exp_files::read`): a regular file only, opened without
//! blocking, up to a cap. Each case was a hang, an unbounded read or a
//! misleading answer: `serve --secret-file FIFO` blocked in `open()`,
//! `--secret-file /dev/zero` was told to `chmod 600`, a 300 MB file was
//! taken as a secret, `xml extract /dev/zero` read for ever, a TLS
//! `ca_file` FIFO blocked the preflight. Asserted from outside, each run
//! bounded: a blocked reader fails the test instead of hanging it.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::hostile_files::{assert_refused, devices, expc, expc_within, fifo, link, p, sparse, Scratch};

/// Longest any refusal may take: an open that blocks is caught here.
const REFUSED_WITHIN: Duration = Duration::from_secs(30);

#[test]
fn serve_refuses_a_fifo_a_device_and_a_large_secret_file_at_once() {
    let scratch = Scratch::new("in-secret");
    let serve = |secret: &std::path::Path| {
        expc_within(
            REFUSED_WITHIN,
            &[
                p("serve"),
                p("--bind"),
                p("127.0.0.1:0"),
                p("--for"),
                p("1s"),
                p("--secret-file"),
                secret,
            ],
        )
    };
    let pipe = fifo(&scratch.join("secret.fifo"));
    assert_refused(&serve(&pipe), "not a regular file but a FIFO", "a FIFO secret");
    // The type is checked before the mode: no advice to chmod a device.
    let zero = link(p("/dev/zero"), &scratch.join("zero"));
    let result = serve(&zero);
    assert_refused(
        &result,
        "not a regular file but a character device",
        "/dev/zero as a secret",
    );
    assert!(!result.stderr.contains("chmod"), "{}", result.stderr);
    let large = sparse(&scratch.join("large.secret"), 300 << 20);
    assert_refused(
        &serve(&large),
        "314,572,800 bytes, more than the 4 KiB a secret file may have",
        "a 300 MB secret",
    );
    // A link to nothing is refused, not followed to create a secret.
    let dangling = link(p("made-now"), &scratch.join("dangling"));
    assert_refused(&serve(&dangling), "is a symbolic link to nothing", "a dangling link");
    assert!(!scratch.join("made-now").exists());
    assert_refused(&serve(&scratch.0), "not a regular file but a directory", "a directory");
}

#[test]
fn xml_extract_refuses_devices_and_fifos_named_as_inputs() {
    let scratch = Scratch::new("in-xml");
    let pipe = fifo(&scratch.join("corpus.xml"));
    let zero = link(p("/dev/zero"), &scratch.join("zero.xml"));
    let good = scratch.file("good.xml", "<a><b>1</b></a>");
    let cases = [
        (p("/dev/zero"), "`/dev/zero`: not a regular file but a character device"),
        (zero.as_path(), "zero.xml`: not a regular file but a character device"),
        (pipe.as_path(), "corpus.xml`: not a regular file but a FIFO"),
    ];
    for (input, message) in cases {
        let set = scratch.join("set");
        // Also after a good input: refused before anything is read.
        let result = expc_within(
            REFUSED_WITHIN,
            &[
                p("xml"),
                p("extract"),
                &good,
                input,
                p("-o"),
                &set,
                p("--threads"),
                p("1"),
            ],
        );
        assert_refused(&result, message, &input.display().to_string());
        assert!(!set.exists(), "no set written");
    }
    // A map or a set that is not what it should be.
    let result = expc_within(
        REFUSED_WITHIN,
        &[
            p("xml"),
            p("reveal"),
            &good,
            p("--map"),
            &pipe,
            p("-o"),
            &scratch.join("out.xml"),
        ],
    );
    assert_refused(&result, "not a regular file but a FIFO", "a FIFO as the map");
    let result = expc(&[
        p("xml"),
        p("generate"),
        p("/dev/null"),
        p("--documents"),
        p("1"),
        p("-o"),
        &scratch.join("g"),
    ]);
    assert_refused(
        &result,
        "is a character device, not a set directory",
        "/dev/null as a set",
    );
}

#[test]
fn plan_files_are_read_bounded() {
    let scratch = Scratch::new("in-plan");
    let pipe = fifo(&scratch.join("fifo.json"));
    let zero = link(p("/dev/zero"), &scratch.join("zero.json"));
    let huge = sparse(&scratch.join("huge.json"), 300 << 20);
    let cases = [
        (pipe, "not a regular file but a FIFO"),
        (zero, "not a regular file but a character device"),
        (huge, "314,572,800 bytes, more than the 256 MiB a plan file may have"),
        (scratch.join("folder.json"), "not a regular file but a directory"),
    ];
    std::fs::create_dir(scratch.join("folder.json")).unwrap();
    for (plan, message) in cases {
        let result = expc_within(REFUSED_WITHIN, &[p("run"), &plan, p("--dry-run")]);
        assert_refused(&result, message, &plan.display().to_string());
    }
}

#[test]
fn tls_files_and_imports_are_read_bounded() {
    let scratch = Scratch::new("in-tls");
    fifo(&scratch.join("ca.pem"));
    link(p("/dev/zero"), &scratch.join("zero.pem"));
    for (file, message) in [
        ("ca.pem", "not a regular file but a FIFO"),
        ("zero.pem", "not a regular file but a character device"),
    ] {
        let spec = scratch.file(
            "tls.exp",
            &format!(
                "experiment \"x\" {{\n  duration = 2s\n  fleet \"f\" {{\n    devices = 1\n    gap = 1s\n    \
                 broker {{\n      url = \"mqtts://127.0.0.1:8883\"\n      ca_file = \"{file}\"\n    }}\n  }}\n}}\n"
            ),
        );
        let result = expc_within(
            REFUSED_WITHIN,
            &[p("run"), &spec, p("--dry-run"), p("--out"), &scratch.join("runs")],
        );
        assert_refused(&result, message, file);
        assert!(result.stderr.contains("[E1006]"), "{}", result.stderr);
    }
    // An import through a link to a device, and of /dev/null's twin: refused
    // (the language server read /dev/null as an empty module).
    if let Some((null, _, _)) = devices(&scratch.0) {
        link(&null, &scratch.join("null.exp"));
    }
    link(p("/dev/zero"), &scratch.join("zero.exp"));
    for module in ["zero.exp", "null.exp"].iter().filter(|m| scratch.join(m).exists()) {
        let spec = scratch.file(
            "root.exp",
            &format!("import \"./{module}\" as m\nexperiment \"x\" {{ duration = 1s }}\n"),
        );
        let result = expc_within(REFUSED_WITHIN, &[p("check"), &spec]);
        assert_refused(&result, "not a regular file but a character device", module);
        assert!(result.stderr.contains("[E0204]"), "{}", result.stderr);
    }
}
